"""WAIR's decision on a seeded scenario with sparse pruning equals the one made with dense
pruning: same partitions, same groups, same predicted saving.

The golden file was written by ``python -m tests.helpers.scale_scenario`` with the dense pruning
and per-query savings. Partitions and groups must match exactly; the saving to 1e-12
relative, because identical queries are folded once with their summed read times (eq. 3 is linear in
t_read), which reorders floating-point additions.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.policy.wair.savings import breakdown_for_window
from engine.scan.pruning import analyze_fragment_dense
from tests.helpers.scale_scenario import GOLDEN, SETTINGS, decision, window, zonemaps


def dense_list(zm, frags):
    """The pre-rewrite input: one dense scan per fragment, no deduplication."""
    return [analyze_fragment_dense(zm, f) for f in frags]


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("scans_of", ["sparse", "dense"])
def test_decision_identical_to_golden(golden: dict, scans_of: str) -> None:
    got = decision() if scans_of == "sparse" else decision(dense_list)
    assert got["partitions"] == golden["partitions"]
    assert [(g["layout"], g["columns"], g["partitions"]) for g in got["groups"]] == \
        [(g["layout"], g["columns"], g["partitions"]) for g in golden["groups"]]
    assert got["predicted_saving"].keys() == golden["predicted_saving"].keys()
    for k, v in golden["predicted_saving"].items():
        assert got["predicted_saving"][k] == pytest.approx(v, rel=1e-12, abs=0), k
    assert got["estimated_cost_cpu_s"] == pytest.approx(golden["estimated_cost_cpu_s"], rel=1e-12)


def test_streamed_breakdown_equals_per_query_breakdown() -> None:
    """Folding distinct outcomes with counts gives the per-query sums: every array of
    the breakdown, including hits (an integer count) exactly."""
    from engine.scan.pruning import analyze_workload

    zm, frags = zonemaps(), window()
    lazy = analyze_workload(zm, frags)
    assert sum(len(p) for _, p in lazy.distinct()) == len(frags) > len(list(lazy.distinct()))
    a = breakdown_for_window(zm, lazy, frags, SETTINGS, beta=0.001)
    b = breakdown_for_window(zm, dense_list(zm, frags), frags, SETTINGS, beta=0.001)
    assert a.columns == b.columns and a.queries == b.queries == len(frags)
    assert np.array_equal(a.hits, b.hits) and a.hits.sum() > 0
    for name in ("saving_cpu", "bonus", "bytes_saved", "prunable", "per_column"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, atol=0)
