"""A rewrite scored once for its predicted losses and its output check
(engine.policy.impact.score_rewrite): the same numbers as scoring every query with the
exact evaluator, a string column beside a cut key, and one scan shared by both."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.config import Settings
from engine.layout.output import WriteTarget
from engine.policy import impact
from engine.policy.base import PlanGroup
from engine.policy.impact import predicted_zonemaps, rewrite_losses, score_rewrite
from engine.policy.output_check import check_output
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
from engine.workload.model import Range, ScanFragment

SCHEMA = TableSchema((("a", "float"), ("b", "int"), ("s", "string")))


def table(rng: np.random.Generator, n: int) -> ZoneMaps:
    parts = []
    for i in range(n):
        a = float(rng.uniform(0, 100))
        b = int(rng.integers(0, 1000))
        s = sorted(f"k{int(x):03d}" for x in rng.integers(0, 300, 2))
        parts.append(Partition(f"p{i}", int(rng.integers(1, 500)), int(rng.integers(100, 10_000)), {
            "a": ColumnStats(a, a + float(rng.uniform(0, 20)), 0, int(rng.integers(1, 100))),
            "b": ColumnStats(b, b + int(rng.integers(0, 50)), 0, int(rng.integers(1, 100))),
            "s": ColumnStats(s[0], s[1], 0, int(rng.integers(1, 100)))}, i))
    return ZoneMaps.from_partitions(SCHEMA, parts)


def window(rng: np.random.Generator, q: int) -> list[ScanFragment]:
    out = []
    for j in range(q):
        col = ("a", "b", "s")[j % 3]
        if col == "a":
            lo = float(rng.uniform(0, 110))
            box = {"a": Range(lo, lo + float(rng.uniform(0, 10)), bool(j % 2), bool(j % 4))}
        elif col == "b":
            lo = int(rng.integers(0, 1000))
            box = {"b": Range(lo, lo + int(rng.integers(0, 30)))}
        else:
            lo = int(rng.integers(0, 300))
            box = {"s": Range(f"k{lo:03d}", f"k{lo + 5:03d}")}
        if j % 5 == 0:  # two columns: the exact evaluator
            box["a"] = Range(0.0, 60.0)
        out.append(ScanFragment(f"q{j}", "t", (box,), ("a", "b"), duration_ms=float(100 * (j % 3))))
    return out


def exact_losses(zm: ZoneMaps, groups: list[PlanGroup], frags: list[ScanFragment],
                 target: WriteTarget) -> list[tuple[str, float]]:
    """(query, bytes lost) with the exact evaluator, every query scanned partition by
    partition on the rewritten partitions before and on their predicted files after."""
    position = {p: i for i, p in enumerate(zm.paths)}
    old = zm.subset(np.array(sorted({position[p] for g in groups for p in g.partitions}), dtype=np.int64))
    new = predicted_zonemaps(old, groups, target)
    out = []
    for f, b, a in zip(frags, analyze_workload(old, frags), analyze_workload(new, frags)):
        if a.bytes_scanned > b.bytes_scanned:
            out.append((f.query_id, a.bytes_scanned - b.bytes_scanned))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([("a",), ("b",), ("a", "b"), ("b", "a")]),
       st.sampled_from([None, 300, 5_000]))
def test_losses_equal_the_exact_evaluator(seed: int, keys: tuple[str, ...], file_rows: int | None) -> None:
    rng = np.random.default_rng(seed)
    zm = table(rng, int(rng.integers(3, 120)))
    members = [p for p in zm.paths.tolist() if rng.uniform() < 0.7] or [zm.paths[0]]
    groups = [PlanGroup(tuple(members), "sort" if len(keys) == 1 else "zorder", keys)]
    frags = window(rng, 30)
    s = Settings(scan_bytes_per_s=1000.0, target_rows=file_rows or 0)
    target = impact.write_target_of(s)
    want = exact_losses(zm, groups, frags, target)
    got = rewrite_losses(zm, groups, frags, s)
    assert got["queries"] == len(want)
    assert got["bytes"] == sum(lost for _, lost in want)  # same floats, same order: to the bit
    check = check_output(zm, groups, frags, target)
    position = {p: i for i, p in enumerate(zm.paths)}
    old = zm.subset(np.array(sorted({position[p] for p in members}), dtype=np.int64))
    new = predicted_zonemaps(old, groups, target)
    assert check.bytes_before == float(sum(x.bytes_scanned for x in analyze_workload(old, frags)))
    assert check.bytes_after == float(sum(x.bytes_scanned for x in analyze_workload(new, frags)))


def test_a_string_column_beside_a_cut_key_takes_its_sources_union():
    """Four partitions: a = [0, 1], [1, 2], [2, 3], [3, 4]; s = "d", "c", "b", "a" each.
    A sort on a into two files: the first file's rows come from the partitions on
    a <= 2 (p0, p1, p2 touch its slice [0, 2]), so its s range is ["b", "d"]; the second
    from p1, p2, p3: ["a", "c"]."""
    schema = TableSchema((("a", "float"), ("s", "string")))
    parts = [Partition(f"p{i}", 100, 1000, {"a": ColumnStats(float(i), float(i + 1)),
                                            "s": ColumnStats("dcba"[i], "dcba"[i])}) for i in range(4)]
    zm = ZoneMaps.from_partitions(schema, parts)
    group = PlanGroup(("p0", "p1", "p2", "p3"), "sort", ("a",))
    after = predicted_zonemaps(zm, [group], WriteTarget(file_rows=200))
    assert after.column("a").lo.tolist() == [0.0, 2.0] and after.column("a").hi.tolist() == [2.0, 4.0]
    assert after.column("s").lo.tolist() == ["b", "a"]
    assert after.column("s").hi.tolist() == ["d", "c"]


def test_the_output_check_reuses_the_losses_scan(monkeypatch):
    """The policy's losses score the window; the output check of the same groups on the
    same window reads that score (no second scan); another window is scanned again."""
    rng = np.random.default_rng(3)
    zm = table(rng, 60)
    groups = [PlanGroup(tuple(zm.paths.tolist()[:40]), "sort", ("a",))]
    frags = window(rng, 20)
    s = Settings(scan_bytes_per_s=1000.0)
    calls = []
    real = impact.window_bytes
    monkeypatch.setattr(impact, "window_bytes", lambda *a, **k: calls.append(1) or real(*a, **k))
    rewrite_losses(zm, groups, frags, s)
    assert len(calls) == 2  # before and after
    first = check_output(zm, groups, list(frags), impact.write_target_of(s))
    assert len(calls) == 2
    score = score_rewrite(zm, groups, frags, impact.write_target_of(s), level=False)
    assert first.bytes_before == float(sum(score.before.tolist()))
    check_output(zm, groups, frags[:10], impact.write_target_of(s))
    assert len(calls) == 4
    assert score_rewrite(zm, groups, frags, WriteTarget(file_rows=7), level=False) is not None
    assert len(calls) == 6


def test_nothing_to_score():
    rng = np.random.default_rng(4)
    zm = table(rng, 5)
    unfiltered = [ScanFragment("q", "t", (), ("a",))]
    assert score_rewrite(zm, [PlanGroup(("p0",), "sort", ("a",))], unfiltered, WriteTarget()) is None
    assert score_rewrite(zm, [PlanGroup(("zz",), "sort", ("a",))], window(rng, 3), WriteTarget()) is None
    assert rewrite_losses(zm, [PlanGroup(("zz",), "sort", ("a",))], window(rng, 3),
                          Settings())["queries"] == 0
