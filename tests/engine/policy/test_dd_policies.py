"""DD and DD-EP as policies: selection, key choice, proposal, and that sorting what they pick
really lowers the depth (simulated on the rows, zonemaps recomputed)."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pytest

from engine.core.config import Settings
from engine.core.errors import ColumnNotFoundError, InvalidParameterError
from engine.metrics.overlap import column_clustering
from engine.policy.base import PolicyContext
from engine.policy.costmodel import recluster_cost
from engine.policy.dd import DDPolicy, choose_key
from engine.policy.dd_ep import DDEPPolicy
from engine.policy.registry import make_policy
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("a", "int"), ("b", "int"), ("flag", "bool")))
ROWS = 50


def make_table(seed=0, n_sorted=40, n_messy=24):
    """Rows per partition for column a (sorted prefix + an ingestion-ordered messy tail whose
    a values scatter over one region) and column b (always scattered)."""
    rng = np.random.default_rng(seed)
    parts = []
    for i in range(n_sorted):
        parts.append(np.arange(i * ROWS, (i + 1) * ROWS))
    for _ in range(n_messy):
        parts.append(rng.integers(500, 1500, ROWS))
    b = [rng.integers(0, 10_000, ROWS) for _ in parts]
    return parts, b


def zonemaps_from(a_parts, b_parts):
    parts = []
    for i, (a, b) in enumerate(zip(a_parts, b_parts)):
        parts.append(Partition(f"/t/p{i:03d}.parquet", ROWS, 1000 * ROWS, {
            "a": ColumnStats(int(a.min()), int(a.max()), 0, 400 * ROWS),
            "b": ColumnStats(int(b.min()), int(b.max()), 0, 400 * ROWS),
            "flag": ColumnStats(False, True, 0, 10),
        }, created_seq=i))
    return ZoneMaps.from_partitions(SCHEMA, parts)


def context(zm, window=(), settings=None):
    window = list(window)
    return PolicyContext(table="t", snapshot_id="1", zonemaps=zm, window=window,
                         scans=analyze_workload(zm, window), settings=settings or Settings(),
                         queries_seen=len(window))


def recluster(a_parts, b_parts, chosen_paths, zm):
    """Sort the chosen partitions' rows by a and cut them back into as many partitions."""
    idx = [i for i, p in enumerate(zm.paths) if p in set(chosen_paths)]
    rows = np.concatenate([np.stack([a_parts[i], b_parts[i]], axis=1) for i in idx])
    rows = rows[np.argsort(rows[:, 0], kind="stable")]
    a2, b2 = list(a_parts), list(b_parts)
    for k, i in enumerate(idx):
        chunk = rows[k * ROWS:(k + 1) * ROWS]
        a2[i], b2[i] = chunk[:, 0], chunk[:, 1]
    return a2, b2


def frag(qid, column, lo, hi):
    return ScanFragment(qid, "t", ({column: Range(lo, hi)},), ("a", "b"))


def test_dd_picks_the_deepest_partitions_up_to_k_and_sorting_them_helps():
    a, b = make_table()
    zm = zonemaps_from(a, b)
    before = column_clustering(zm, "a")
    pol = DDPolicy(key="a", depth_threshold=4, max_partitions=10)
    prop = pol.propose(context(zm))
    assert prop is not None and prop.policy == "dd"
    (group,) = prop.groups
    assert group.layout == "sort" and group.columns == ("a",)
    assert len(group.partitions) == 10
    chosen = np.isin(zm.paths, group.partitions)
    depths = before.depths
    assert depths[chosen].min() >= depths[~chosen].max()  # the K deepest
    assert (depths[chosen] > 4).all()
    assert not chosen[:20].any()  # the sorted prefix far from the messy range is left alone
    assert prop.estimated_cost == recluster_cost(float(zm.bytes[chosen].sum()), Settings())
    a2, b2 = recluster(a, b, group.partitions, zm)
    after = column_clustering(zonemaps_from(a2, b2), "a")
    assert after.average_depth < before.average_depth


def test_dd_nothing_to_do_on_a_sorted_table():
    a = [np.arange(i * ROWS, (i + 1) * ROWS) for i in range(10)]
    zm = zonemaps_from(a, a)
    pol = DDPolicy(key="a", depth_threshold=2)
    assert pol.propose(context(zm)) is None
    assert "no partition is deeper" in pol.last_decision["reason"]


def test_choose_key_depth_weighted_by_use_among_predicated_columns():
    a, b = make_table()
    zm = zonemaps_from(a, b)
    da = column_clustering(zm, "a").average_depth
    db = column_clustering(zm, "b").average_depth
    assert db > 2 * da  # b is scattered everywhere, a only in the messy tail
    # only a is queried: a, although b is deeper
    assert choose_key(context(zm, [frag("q", "a", 0, 10)]), None) == "a"
    # equal use: the deeper one
    assert choose_key(context(zm, [frag("q", "a", 0, 10), frag("r", "b", 0, 10)]), None) == "b"
    # a queried often enough outweighs b's depth
    uses_a = int(db / da) + 1
    window = [frag(f"q{i}", "a", 0, 10) for i in range(uses_a)] + [frag("r", "b", 0, 10)]
    assert choose_key(context(zm, window), None) == "a"
    assert choose_key(context(zm), None) == "b"  # no workload: all orderable columns
    with pytest.raises(ColumnNotFoundError):
        choose_key(context(zm), "zzz")
    with pytest.raises(InvalidParameterError):
        choose_key(context(zm), "flag")


def test_predicted_saving_from_the_window():
    a, b = make_table()
    zm = zonemaps_from(a, b)
    window = [frag(f"q{i}", "a", 800, 900) for i in range(4)] + [frag("qb", "b", 0, 100)]
    ctx = context(zm, window)
    prop = DDPolicy(key="a", max_partitions=30).propose(ctx)
    chosen = np.isin(zm.paths, prop.partitions)
    # only the four queries on the sort key can profit
    expect = sum(float(((1 - s.utilization) * s.read_bytes)[chosen & s.scanned].sum())
                 for s in ctx.scans[:4])
    assert expect > 0
    assert prop.predicted_saving["bytes"] == pytest.approx(expect)
    assert prop.predicted_saving["window_queries"] == 5
    assert prop.break_even_queries == pytest.approx(
        prop.estimated_cost.cpu_seconds / (prop.predicted_saving["cpu_seconds"] / 5))
    # read_bytes is projection-aware: a and b columns only
    assert ctx.scans[0].read_bytes[0] == 800 * ROWS


def test_dd_ep_selects_ep_files_over_the_deepest_subrange():
    a, b = make_table(seed=3)
    zm = zonemaps_from(a, b)
    before = column_clustering(zm, "a")
    pol = DDEPPolicy(key="a", partition_threshold=16, ep_file_partitions=4)
    prop = pol.propose(context(zm))
    assert prop is not None and prop.policy == "dd-ep"
    rounds = prop.details["rounds"]
    assert len(rounds) == 1 and rounds[0]["partitions"] <= 16
    chosen = np.isin(zm.paths, prop.partitions)
    assert chosen.sum() == rounds[0]["partitions"]
    # EP files of the messy tail (partitions 40..63) hold the deepest sub-range
    assert chosen[40:].sum() == chosen.sum()
    a2, b2 = recluster(a, b, prop.partitions, zm)
    after = column_clustering(zonemaps_from(a2, b2), "a")
    assert after.average_depth < before.average_depth


def test_dd_ep_rounds_and_convergence():
    a, b = make_table(seed=5)
    zm = zonemaps_from(a, b)
    # threshold 9: two EP files of 4 partitions (8) are "less than" it (paragraph 107); at 8
    # every round keeps one EP file, sorts it on its own, and the overlaps between EP files
    # never resolve (test_dd_ep_less_than_keeps_one_file_at_an_exact_multiple)
    one = DDEPPolicy(key="a", partition_threshold=9, ep_file_partitions=4, rounds=1)
    three = DDEPPolicy(key="a", partition_threshold=9, ep_file_partitions=4, rounds=3)
    p1, p3 = one.propose(context(zm)), three.propose(context(zm))
    assert set(p1.partitions) < set(p3.partitions)
    assert len(p3.details["rounds"]) == 3
    picked = [set(r["selected_ep_files"]) for r in p3.details["rounds"]]
    assert not (picked[0] & picked[1]) and not (picked[1] & picked[2])
    # repeated rounds of select + sort drive the table towards nothing to do
    for _ in range(30):
        prop = three.propose(context(zm))
        if prop is None:
            break
        a, b = recluster(a, b, prop.partitions, zm)
        zm = zonemaps_from(a, b)
    assert prop is None, "DD-EP should converge on a table it keeps sorting"
    assert "no sub-range" in three.last_decision["reason"]


def test_registry_builds_both_with_their_params():
    pol = make_policy("dd", {"key": "a", "max_partitions": 5})
    assert isinstance(pol, DDPolicy) and pol.max_partitions == 5
    pol = make_policy("dd-ep", {"partition_threshold": 50, "rounds": 2})
    assert isinstance(pol, DDEPPolicy) and pol.rounds == 2
    with pytest.raises(InvalidParameterError):
        make_policy("dd", {"max_partitions": 0})
    with pytest.raises(InvalidParameterError):
        make_policy("dd-ep", {"alpha": 1})


@pytest.mark.parametrize("ltype", ["string", "date", "timestamp", "decimal", "float"])
def test_both_policies_on_other_key_types(ltype):
    """Keys of every orderable type: values of different widths (strings), dates..."""

    def conv(v):
        return {"string": lambda x: "k" * (1 + x % 3) + f"{x:06d}",  # varying widths
                "date": lambda x: dt.date(2000, 1, 1) + dt.timedelta(days=int(x)),
                "timestamp": lambda x: dt.datetime(2000, 1, 1) + dt.timedelta(minutes=int(x)),
                "decimal": lambda x: decimal.Decimal(int(x)) / 100,
                "float": lambda x: float(x) / 3}[ltype](v)

    a, _ = make_table(seed=9)
    schema = TableSchema((("a", ltype),))
    parts = []
    for i, vals in enumerate(a):
        if ltype == "string":
            svals = sorted(conv(int(v)) for v in vals)
            mn, mx = svals[0], svals[-1]
        else:
            mn, mx = conv(int(vals.min())), conv(int(vals.max()))
        parts.append(Partition(f"/t/p{i:03d}.parquet", ROWS, 1000, {"a": ColumnStats(mn, mx, 0, 500)}, i))
    zm = ZoneMaps.from_partitions(schema, parts)
    dd = DDPolicy(max_partitions=8).propose(context(zm))
    ep = DDEPPolicy(partition_threshold=12, ep_file_partitions=4).propose(context(zm))
    assert dd is not None and len(dd.partitions) == 8 and dd.groups[0].columns == ("a",)
    assert ep is not None and 0 < len(ep.partitions) <= 12
    sub = ep.details["rounds"][0]["deepest_subrange"]
    assert sub[0] is not None and sub[1] is not None
    if ltype == "string":  # decoded bounds keep their full width
        assert max(len(s) for s in sub[:2]) >= 7


def test_dd_prices_its_saving_with_the_files_as_the_bill_does():
    """Hand case: one query on a in [0, 49] scans 4 files of 50,000 projected
    bytes each (a: 40,000 + b: 10,000): t_read = 4 x 10 ms + 200,000 B at 1 MB/s = 0.24 s,
    1.2 us per byte read. DD sorts the three files spanning [0, 199] (u = 0.25 each): they
    waste 3 x 0.75 x 50,000 = 112,500 B, worth 0.135 s. Counting bytes only (the old rule)
    gave 112,500 B / 1 MB/s = 0.1125 s."""
    schema = TableSchema((("a", "int"), ("b", "int")))
    spans = [(0, 99), (100, 199), (0, 199), (0, 199), (0, 199)]
    parts = [Partition(f"/t/p{i}.parquet", 100, 100_000, {
        "a": ColumnStats(lo, hi, 0, 40_000), "b": ColumnStats(0, 9, 0, 10_000)}, created_seq=i)
        for i, (lo, hi) in enumerate(spans)]
    zm = ZoneMaps.from_partitions(schema, parts)
    window = [ScanFragment("q", "t", ({"a": Range(0, 49)},), ("a", "b"))]
    settings = Settings(query_file_s=0.01, query_scan_bytes_per_s=1e6)
    prop = DDPolicy(key="a", depth_threshold=1, max_partitions=3).propose(
        context(zm, window, settings))
    assert sorted(prop.partitions) == ["/t/p2.parquet", "/t/p3.parquet", "/t/p4.parquet"]
    assert prop.predicted_saving["bytes"] == pytest.approx(112_500)
    assert prop.predicted_saving["cpu_seconds"] == pytest.approx(0.135)
    # uncalibrated (no per-file cost) it is the bytes at the scan rate, as before
    plain = DDPolicy(key="a", depth_threshold=1, max_partitions=3).propose(
        context(zm, window, Settings(query_scan_bytes_per_s=1e6)))
    assert plain.predicted_saving["cpu_seconds"] == pytest.approx(0.1125)
