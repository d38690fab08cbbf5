"""Workload generator: preset structure, shifting rate and predicate distributions (seeded
statistical checks), determinism, SQL log export round trip."""

from __future__ import annotations

import datetime as dt

import json

import numpy as np
import pytest
from scipy import stats

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.scenarios.generator import Distribution
from engine.scenarios.presets import (MONTH_DAYS, build_scenario, list_presets,
                                      scenario_parameters)


def _enc(ltype, v):
    return logical_types.encode_scalar(ltype, v)


@pytest.fixture(scope="module")
def tpch():
    return build_scenario("tpch", rows=30_000, seed=3)


def test_tpch_period_structure(tpch):
    s = tpch.summary()
    assert s["batches"] == 72 and len(s["periods"]) == 6
    per = {p["period"]: p for p in s["periods"]}
    assert all(p["batches"] == 12 for p in per.values())
    # P1 is pure ingestion; P2 warm-up queries without reclustering; P3+ recluster
    assert per[1]["queries"] == 0 and not per[1]["recluster"]
    assert per[2]["queries"] == 12 * 16 and not per[2]["recluster"]
    assert all(per[i]["recluster"] and per[i]["queries"] == 192 for i in (3, 4, 5, 6))
    assert [per[i]["shifting_rate"] for i in (2, 3, 4, 5, 6)] == [0.25, 0.25, 0.75, 0.75, 0.75]
    assert per[4]["predicate"] == "l_shipdate" and per[5]["predicate"] == "l_commitdate"
    assert per[6]["oracle_key"] == {"layout": "hilbert", "columns": ["l_shipdate", "l_commitdate"]}
    assert per[3]["oracle_key"] == {"layout": "sort", "columns": ["l_shipdate"]}
    # measured from the first reclustering period
    assert [b.measured for b in tpch.batches if b.period == 2] == [False] * 12
    assert all(b.measured for b in tpch.batches if b.period >= 3)
    # global + local sub-workloads of the 8 templates each
    wl = [f.extra["workload"] for f in tpch.batches[40].fragments]
    assert wl.count("global") == 8 and wl.count("local") == 8
    # the queried column follows the period: P5 only commit date, P6 a mix near 2:1
    assert {f.extra["column"] for b in tpch.batches if b.period == 5 for f in b.fragments} == {"l_commitdate"}
    p6 = [f.extra["column"] for b in tpch.batches if b.period == 6 for f in b.fragments if f.extra["regenerated"]]
    share = p6.count("l_shipdate") / len(p6)
    assert stats.binomtest(p6.count("l_shipdate"), len(p6), 2 / 3).pvalue > 1e-3, share


def test_tpch_data_follows_the_widened_gap(tpch):
    ds = tpch.dataset
    assert ds.rows == 30_000 and int(ds.batch_offsets[-1]) == 30_000
    b = tpch.batches[20]
    ship = ds.data["l_shipdate"][b.row_start:b.row_stop]
    commit = ds.data["l_commitdate"][b.row_start:b.row_stop]
    month_start = ds.reference["l_shipdate"][19] + 1  # the day after the previous month end
    assert commit.min() >= month_start + 30 and commit.max() <= month_start + 31 + 90
    # ship dates trail order dates by 1..1000 days: one batch spans about 1000 days of them
    assert 950 < ship.max() - ship.min() <= 1000 + 31
    # ingestion is not in ship-date order
    assert not np.all(np.diff(ship) >= 0)


def test_shifting_rate_is_exact_per_batch_and_uniform_over_templates():
    sc = build_scenario("tpch", rows=20_000, seed=11,
                        overrides={"profile": "sensitivity", "shifting_rate": 0.5, "workload": "local"})
    counts = np.zeros(8)
    prev = None
    for b in sc.batches:
        frags = b.fragments
        if prev is not None:
            regen = [f.extra["regenerated"] for f in frags]
            assert sum(regen) == 4  # round(0.5 * 8), exactly, every batch
            for i, (f, p) in enumerate(zip(frags, prev)):
                if not f.extra["regenerated"]:
                    assert f.boxes == p.boxes  # the others repeat verbatim
                counts[i] += f.extra["regenerated"]
        prev = frags
    # which templates are regenerated is uniform (chi-square, fixed seed)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert abs(counts.sum() / (8 * (len(sc.batches) - 1)) - 0.5) < 1e-9


def _windows(sc, column):
    out = []
    for b in sc.batches:
        for f in b.fragments:
            if not f.extra["regenerated"] or f.extra["column"] != column:
                continue
            r = f.boxes[0][column]
            out.append((b.index, _enc("date", r.min), _enc("date", r.max)))
    return out


def test_uniform_predicates_cover_the_domain_uniformly():
    sc = build_scenario("tpch", rows=20_000, seed=5,
                        overrides={"profile": "sensitivity", "shifting_rate": 1.0, "workload": "global",
                                   "distribution": "uniform"})
    ship = sc.dataset.data["l_shipdate"]
    offs = sc.dataset.batch_offsets
    u = []
    for b, lo, hi in _windows(sc, "l_shipdate"):
        seen = ship[: offs[b + 1]]
        span = seen.max() - seen.min() - 61
        u.append((lo - seen.min()) / span)
    u = np.array(u)
    assert len(u) > 400
    assert stats.kstest(u, "uniform", args=(-0.01, 1.02)).pvalue > 1e-3


def test_zipf_predicates_are_skewed_to_recent_months():
    alpha = 2.0
    sc = build_scenario("tpch", rows=20_000, seed=6,
                        overrides={"profile": "sensitivity", "shifting_rate": 1.0, "workload": "local",
                                   "distribution": "zipf", "distribution_param": alpha})
    ref = sc.dataset.reference["l_shipdate"]
    ks = np.array([int((ref[b] - (hi + 1)) // MONTH_DAYS) for b, lo, hi in _windows(sc, "l_shipdate")])
    assert ks.min() >= 0
    # expected truncated Zipf: P(k) ~ (k+1)^-alpha; compare the cells k = 0, 1, 2, >= 3
    p = 1.0 / np.arange(1, 200) ** alpha
    p /= p.sum()
    expected = np.array([p[0], p[1], p[2], p[3:].sum()]) * len(ks)
    observed = np.array([(ks == 0).sum(), (ks == 1).sum(), (ks == 2).sum(), (ks >= 3).sum()])
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    assert observed[0] / len(ks) > 0.5  # most local queries hit the latest month


def test_gaussian_predicates_centre_on_the_reference_month():
    sc = build_scenario("dsb", rows=20_000, seed=7, overrides={"templates": 10})
    ref = sc.dataset.reference["ss_sold_date_sk"]
    z = []
    for b in sc.batches:
        for f in b.fragments:
            r = f.boxes[0]["ss_sold_date_sk"]
            centre = (_enc("date", r.min) + _enc("date", r.max) + 1) / 2.0
            z.append((centre - ref[b.index]) / MONTH_DAYS)
    z = np.array(z)
    assert len(z) > 400
    assert stats.kstest(z, "norm", args=(0.0, 2.0)).pvalue > 1e-3


def test_dsb_structure_and_extra_predicates():
    sc = build_scenario("dsb", rows=10_000, seed=1)
    s = sc.summary()
    assert len(s["periods"]) == 6 and all(p["shifting_rate"] == 1.0 for p in s["periods"])
    b = sc.batches[30]
    assert len(b.fragments) == 30 and b.regenerated == 30
    for f in b.fragments:
        others = [c for c in f.boxes[0] if c != "ss_sold_date_sk"]
        assert 2 <= len(others) <= 3


def test_dsb_refresh_runs_hold_the_dates_of_their_month():
    # as DSB's refresh runs: batch i sells within month i (in random order), so the
    # ingestion order follows the date; the initial dataset (a third of the rows) comes
    # first, with batch 0; "spread" spreads the refresh runs over the whole range
    sc = build_scenario("dsb", rows=12_000, seed=1)
    d, off = sc.dataset.data["ss_sold_date_sk"], sc.dataset.batch_offsets
    starts = np.array(off[:-1], dtype=np.int64)
    starts[0] += 4_000
    for i in (0, 1, 35, 71):
        month = dt.date(1998 + i // 12, i % 12 + 1, 1)
        nxt = dt.date(1998 + (i + 1) // 12, (i + 1) % 12 + 1, 1)
        part = d[starts[i]:off[i + 1]]
        assert part.min() >= _enc("date", month) and part.max() < _enc("date", nxt)
        assert not np.all(np.diff(part) >= 0)  # random order within the month
    assert off[1] - 4_000 == off[2] - off[1] == 8_000 // 72 + 1  # 8,000 rows over 72 runs
    spread = build_scenario("dsb", rows=12_000, seed=1, overrides={"refresh_dates": "spread"})
    first = spread.dataset.data["ss_sold_date_sk"][: spread.dataset.batch_offsets[1]]
    assert first.max() - first.min() > 365 * 5


def test_dsb_initial_dataset_is_in_the_generators_ticket_order():
    """The initial dataset (SF 240 of 720: a third of the rows) as the benchmark's generator
    writes it: tickets of 8-16 lines sharing a date, dates uniform over the whole six-year
    range, so every 2% slice spans most of the range (no clustering on the date)."""
    sc = build_scenario("dsb", rows=72_000, seed=1)
    d, off = sc.dataset.data["ss_sold_date_sk"], sc.dataset.batch_offsets
    init = d[:24_000]
    lo, hi = _enc("date", dt.date(1998, 1, 1)), _enc("date", dt.date(2004, 1, 1))
    assert init.min() >= lo and init.max() < hi
    runs = np.diff(np.flatnonzero(np.r_[True, np.diff(init) != 0, True]))
    assert runs[:-1].min() >= 8 and np.median(runs) == pytest.approx(12, abs=1)  # 8-16 lines a ticket
    for k in range(50):  # 480 rows, about 40 tickets
        part = init[k * 480:(k + 1) * 480]
        assert part.max() - part.min() > 0.7 * (hi - lo)
    assert off[1] == 24_000 + 667  # 48,000 refresh rows over 72 runs: 666 or 667 each
    old = build_scenario("dsb", rows=72_000, seed=1, overrides={"initial_pool": "refresh-runs"})
    assert old.dataset.batch_offsets[1] == 1_000  # no initial dataset: 72 runs of 1,000 rows
    with pytest.raises(InvalidParameterError, match="initial_pool must be one of generator, refresh-runs"):
        build_scenario("dsb", rows=1_000, overrides={"initial_pool": "sorted"})


def test_tpch2_queries_two_independent_columns_one_to_one():
    sc = build_scenario("tpch2", rows=30_000, seed=3)
    counts = {"l_shipdate": 0, "l_partkey": 0}
    for b in sc.batches:
        for f in b.fragments:
            for c in counts:
                counts[c] += c in f.boxes[0]
    assert counts["l_partkey"] > 0.4 * (counts["l_shipdate"] + counts["l_partkey"])
    assert counts["l_shipdate"] > 0.4 * (counts["l_shipdate"] + counts["l_partkey"])
    assert all(p.oracle_columns == ("l_shipdate", "l_partkey") for p in sc.spec.periods)
    # a part-key window is 2% of the part keys
    parts = sc.dataset.data["l_partkey"].max()
    r = next(f.boxes[0]["l_partkey"] for b in sc.batches for f in b.fragments
             if "l_partkey" in f.boxes[0])
    assert r.max - r.min + 1 == pytest.approx(0.02 * parts, abs=1)
    data = sc.dataset.data
    assert abs(np.corrcoef(data["l_shipdate"], data["l_partkey"])[0, 1]) < 0.05


def test_mirrors_needle_queries_are_selective():
    sc = build_scenario("mirrors", rows=60_000, seed=2)
    s = sc.summary()
    assert s["batches"] == 120 and [p["recluster"] for p in s["periods"]] == [False, True, True, True]
    ip, ts = sc.dataset.data["ip"], sc.dataset.data["ts"]
    sel = []
    for b in sc.batches[::7]:
        n = b.row_stop
        for f in b.fragments:
            box = f.boxes[0]
            r = box["ip"]
            m = (ip[:n] >= r.min) & (ip[:n] <= r.max)
            assert r.max - r.min == 65535 and r.min % 65536 == 0  # one /16 subnet
            if "ts" in box:
                t = box["ts"]
                m &= (ts[:n] >= _enc("timestamp", t.min)) & (ts[:n] <= _enc("timestamp", t.max))
            sel.append(m.mean())
    assert 0.0002 < float(np.mean(sel)) < 0.005  # about 0.1%, needle queries


def test_determinism_and_seed_sensitivity():
    a = build_scenario("tpch", rows=5_000, seed=9, overrides={"periods": 3, "batches_per_period": 3})
    b = build_scenario("tpch", rows=5_000, seed=9, overrides={"periods": 3, "batches_per_period": 3})
    c = build_scenario("tpch", rows=5_000, seed=10, overrides={"periods": 3, "batches_per_period": 3})
    assert [f.sql for f in a.fragments()] == [f.sql for f in b.fragments()]
    assert all(np.array_equal(a.dataset.data[k], b.dataset.data[k]) for k in a.dataset.data)
    assert [f.sql for f in a.fragments()] != [f.sql for f in c.fragments()]


def test_sql_log_round_trips_through_the_importer(tmp_path):
    from engine.workload.importer import extract_entries, read_log

    sc = build_scenario("tpch", rows=5_000, seed=4, overrides={"periods": 3, "batches_per_period": 2})
    path = sc.to_sql_log(tmp_path / "log.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == len(sc.fragments()) and set(lines[0]) == {"id", "ts", "sql"}
    frags, report = extract_entries(read_log(str(path)), "lineitem", sc.schema, str(path))
    assert not report.skipped and len(frags) == len(lines)
    types = dict(sc.schema.columns)
    for mine, theirs in zip(sc.fragments(), frags):
        assert mine.query_id == theirs.query_id
        for col, r in mine.boxes[0].items():
            t = theirs.boxes[0][col]
            assert _enc(types[col], r.min) == pytest.approx(_enc(types[col], t.min))
            assert _enc(types[col], r.max) == pytest.approx(_enc(types[col], t.max))


def test_parameters_are_validated():
    with pytest.raises(InvalidParameterError, match="unknown preset"):
        build_scenario("tpcds", rows=1000)
    with pytest.raises(InvalidParameterError, match="unknown scenario parameter"):
        build_scenario("tpch", rows=1000, overrides={"shifting": 0.5})
    with pytest.raises(InvalidParameterError, match="shifting_rate"):
        build_scenario("tpch", rows=1000, overrides={"shifting_rate": 1.5})
    with pytest.raises(InvalidParameterError, match="distribution"):
        Distribution("poisson")
    names = {p["name"] for p in scenario_parameters("tpch")}
    assert {"preset", "periods", "batches_per_period", "shifting_rate", "distribution",
            "distribution_param", "selectivity", "predicate_switch", "recluster_start"} <= names
    assert [p["name"] for p in list_presets()] == ["tpch", "dsb", "mirrors", "tpch2"]
