"""``plan verify``: check a plan's promise on real files before anyone approves it.

A bounded sample of the plan's groups (all of a small plan: whole groups, in plan order,
until ``files`` input files) is rewritten by the executor exactly as the run would write
it, into a scratch folder that is never committed (:meth:`engine.plans.ports.Executor.
verify_sample`). The decision's window is measured on the sample's input files and on its
written files, by the written files' real footers and by DuckDB. The sample's measured
saving is scaled to the plan by the groups' predicted savings (a ratio estimator: the
sample delivers a share of what was predicted for its groups, the plan is credited that
share of its prediction):

    verified = (stats bytes before - stats bytes after on the sample)
               x (plan predicted saving / sample groups' predicted saving)

A hybrid plan's groups save differently per byte (a Hilbert curve over two filtered columns
saves more per byte rewritten than a sort on the hot date), so scaling by input bytes would
credit every group with the sampled group's rate. A plan without per-group predictions (or
with none for the sample's groups) is scaled by input bytes instead (pruning savings add up
over partitions); ``sample["scaled_by"]`` says which rule applied.

and stored with the plan beside the prediction and their ratio. With the setting
``require_verification`` a plan cannot be approved unverified, nor when its verified
saving is below ``min_verified_ratio`` of the predicted one (:func:`require_verified`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.core.errors import ApprovalError, InvalidParameterError
from engine.core.fmt import human_bytes
from engine.plans.feedback import window_fragments
from engine.plans.plan import APPROVED, PROPOSED, Plan
from engine.security.gate import require

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["DEFAULT_SAMPLE_FILES", "Verification", "require_verified", "sample_groups",
           "sample_scale", "verify_plan"]

#: input files a verification rewrites by default (whole groups, at least one group)
DEFAULT_SAMPLE_FILES = 64


@dataclass(frozen=True)
class Verification:
    """A plan's verification: the prediction, the verified saving scaled to the plan and
    their ratio (None when nothing was predicted), and the sample's measurements."""

    plan_id: int
    predicted_bytes: float
    verified_bytes: float
    ratio: float | None
    sample: Mapping[str, Any]
    verified_by: str

    def to_json(self) -> dict[str, Any]:
        return {"plan_id": self.plan_id, "predicted_saving_bytes": self.predicted_bytes,
                "verified_saving_bytes": self.verified_bytes, "ratio": self.ratio,
                "sample": dict(self.sample), "verified_by": self.verified_by}

    def line(self) -> str:
        """One line for the CLI and the dashboard."""
        s = self.sample
        ratio = f" ({self.ratio:.0%} of predicted)" if self.ratio is not None else ""
        duck = ""
        if s.get("duck_bytes_before"):
            duck = (f"; DuckDB on the sample read {human_bytes(s['duck_bytes_before'])} -> "
                    f"{human_bytes(s['duck_bytes_after'])}, {s['duck_seconds_before']:.3f} s -> "
                    f"{s['duck_seconds_after']:.3f} s")
        return (f"plan {self.plan_id} verified on {len(s['groups'])} group(s), "
                f"{s['input_files']} -> {s['output_files']} files: saving "
                f"{human_bytes(self.verified_bytes)} per window, predicted "
                f"{human_bytes(self.predicted_bytes)}{ratio}{duck}")


def sample_groups(plan: Plan, files: int) -> list[int]:
    """Whole groups in plan order until ``files`` input files (at least the first group).

    >>> from types import SimpleNamespace as S
    >>> plan = S(groups=[S(partitions=("a", "b")), S(partitions=("c",)), S(partitions=("d", "e"))])
    >>> sample_groups(plan, 3), sample_groups(plan, 1), sample_groups(plan, 100)
    ([0, 1], [0], [0, 1, 2])
    """
    out, taken = [], 0
    for i, g in enumerate(plan.groups):
        if out and taken + len(g.partitions) > files:
            break
        out.append(i)
        taken += len(g.partitions)
    return out


def sample_scale(groups: Sequence[Any], indices: Sequence[int], sizes: Mapping[str, int],
                 sample_bytes: float) -> tuple[float, str]:
    """``(factor, rule)``: what the sample's measured saving is multiplied by to stand for
    the plan (module docstring): the plan's predicted saving over the sampled groups' when
    every group carries its prediction (``predicted_saving_bytes``) and the sampled ones
    predict a positive saving, else the plan's input bytes over the sample's.

    >>> from types import SimpleNamespace as G
    >>> groups = [G(partitions=("a",), predicted_saving_bytes=10.0),
    ...           G(partitions=("b", "c"), predicted_saving_bytes=30.0)]
    >>> sizes = {"a": 100, "b": 100, "c": 100}
    >>> sample_scale(groups, [0], sizes, 100)
    (4.0, 'predicted')
    >>> sample_scale([G(partitions=g.partitions, predicted_saving_bytes=0.0) for g in groups],
    ...              [0], sizes, 100)
    (3.0, 'bytes')
    """
    predicted = [float(getattr(g, "predicted_saving_bytes", 0.0) or 0.0) for g in groups]
    sampled = sum(predicted[i] for i in indices)
    if sampled > 0 and all(v > 0 for v in predicted):
        return sum(predicted) / sampled, "predicted"
    plan_bytes = float(sum(sizes.get(p, 0) for g in groups for p in g.partitions))
    return (plan_bytes / sample_bytes if sample_bytes else 0.0), "bytes"


def verify_plan(ws: "Workspace", plan_id: int, actor: object = None,
                files: int = DEFAULT_SAMPLE_FILES, spark: Any = None) -> Verification:
    """Verify a proposed or approved plan (module docstring); stored and audited."""
    if files < 1:
        raise InvalidParameterError(f"--files must be at least 1, got {files}")
    name = require(ws, actor, "approve")
    plan = ws.plans.get(int(plan_id))
    if plan.status not in (PROPOSED, APPROVED):
        raise ApprovalError(f"plan {plan.id} is {plan.status}; only a proposed or approved "
                            "plan can be verified")
    indices = sample_groups(plan, files)
    predicted = plan.proposal.predicted_saving
    window = window_fragments(ws.workloads.fragments(plan.table),
                              int(predicted.get("window_queries", 0) or 0))
    measure = ws.executor.verify_sample(plan, indices, window, spark=spark)
    sample = measure.to_json()
    snapshot = ws.tables.snapshot(plan.table, plan.base_snapshot)
    sizes = {p.path: p.bytes for p in snapshot.partitions}
    scale, sample["scaled_by"] = sample_scale(plan.groups, indices, sizes, sample["input_bytes"])
    verified = (sample["stats_bytes_before"] - sample["stats_bytes_after"]) * scale
    pred = float(predicted.get("bytes", 0.0) or 0.0)
    out = Verification(plan.id, pred, verified, verified / pred if pred > 0 else None, sample, name)
    ws.control.save_verification(plan.id, name, out.to_json())
    ws.control.record(name, "verify", out.line(), plan_id=plan.id)
    return out


def require_verified(ws: "Workspace", plan: Plan) -> None:
    """With ``require_verification``: refuse to approve a plan without a verification, or
    whose verified saving is below ``min_verified_ratio`` of the predicted one."""
    settings = ws.settings
    if not settings.require_verification:
        return
    stored = ws.control.verification(plan.id)
    if stored is None:
        raise ApprovalError(f"plan {plan.id} is not verified and require_verification is on; "
                            f"run `layout-advisor plan verify {plan.id} --as NAME` first")
    ratio = stored.get("ratio")
    if ratio is None or ratio < settings.min_verified_ratio:
        shown = "no saving" if ratio is None else f"{ratio:.0%} of the predicted saving"
        raise ApprovalError(f"plan {plan.id} verified at {shown}, below min_verified_ratio "
                            f"{settings.min_verified_ratio:g}; it cannot be approved")
