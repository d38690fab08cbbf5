"""``plan verify`` scales a sample of a hybrid plan by its groups' predictions: a plan whose
sort group (a quarter of the prediction, half the bytes) is sampled and delivers exactly
its own prediction is verified at the plan's whole prediction, not at the sort group's
rate per byte (half of it). A plan without per-group predictions keeps the byte scaling."""

from __future__ import annotations

import dataclasses

from engine import api
from engine.policy.base import PlanGroup
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import sign_in


@dataclasses.dataclass
class _Measured:
    """A sample measurement as the executor returns it (what the fake rewrite "measured")."""

    groups: tuple
    input_bytes: int
    saving: float

    def to_json(self) -> dict:
        return {"groups": list(self.groups), "input_files": 4, "output_files": 4,
                "input_bytes": self.input_bytes, "rows": 2000, "queries": 10,
                "stats_bytes_before": 5 * self.saving, "stats_bytes_after": 4 * self.saving,
                "duck_bytes_before": 0.0, "duck_bytes_after": 0.0,
                "duck_seconds_before": 0.0, "duck_seconds_after": 0.0}


class _FakeExecutor:
    """Measures the sampled groups as delivering exactly their predicted saving (100 bytes
    when they predict none)."""

    def __init__(self, sizes: dict) -> None:
        self.sizes = sizes

    def verify_sample(self, plan, indices, fragments, spark=None):
        groups = [plan.groups[i] for i in indices]
        return _Measured(tuple(indices), sum(self.sizes[p] for g in groups for p in g.partitions),
                         sum(g.predicted_saving_bytes for g in groups) or 100.0)


def _verify(settings, snapshot, predicted: tuple[float, float]):
    paths = [p.path for p in snapshot.partitions]
    groups = [PlanGroup(tuple(paths[:4]), "sort", ("l_shipdate",),
                        predicted_saving_bytes=predicted[0]),
              PlanGroup(tuple(paths[4:8]), "hilbert", ("l_shipdate", "l_commitdate"),
                        predicted_saving_bytes=predicted[1])]
    plan_id = insert_plan(settings, snapshot, groups, predicted_bytes=sum(predicted) or 4000.0)
    ws = Workspace(settings)
    ws.executor = _FakeExecutor({p.path: p.bytes for p in snapshot.partitions})
    return api.verify_plan(ws, plan_id, sign_in(settings, "alice"), files=4)


def test_hybrid_sample_is_scaled_by_the_groups_predictions(settings):
    snapshot = make_table(settings)  # 8 files of 500 rows
    out = _verify(settings, snapshot, (1000.0, 3000.0))
    assert out.sample["groups"] == [0] and out.sample["scaled_by"] == "predicted"
    assert out.verified_bytes == 4000.0 and out.ratio == 1.0


def test_plan_without_group_predictions_is_scaled_by_input_bytes(settings):
    snapshot = make_table(settings, name="other")
    out = _verify(settings, snapshot, (0.0, 0.0))
    sizes = {p.path: p.bytes for p in snapshot.partitions}
    paths = [p.path for p in snapshot.partitions]
    share = sum(sizes[p] for p in paths[:8]) / sum(sizes[p] for p in paths[:4])
    assert out.sample["scaled_by"] == "bytes"
    assert share > 1.5 and abs(out.verified_bytes - 100.0 * share) < 1e-6
