"""WAIR: workload-aware incremental reclustering (the WAIR paper, sections 3-4), as a Policy.

One decision is a pipeline of small pure steps (each in its own module):

1. savings   (:mod:`engine.policy.wair.savings`): equation 3 per partition over the last
   ``window_size`` fragments, plus equation 6's beta bonus, and its per-column split;
2. cut       (:mod:`engine.policy.wair.cut`): Algorithm 2 over the partitions with a
   positive saving picks the cut minimising ``cost_r - saving`` and equation 4 tests it
   (``saving > alpha x cost_r``, ``cut_rule="paper"``, selectable); ``cut_rule="scaled"``
   (the default, a departure by choice) picks the cut minimising ``cost_r - saving / alpha``
   instead (equations 1 and 4): better or equal at every alpha measured but 2
   (:mod:`engine.policy.wair.cut`), and the rule the break-even explanation and the
   busier preview read (alpha / k is exactly "each query k times" only under it);
3. gates     (:mod:`engine.policy.wair.state`): act only if the best net is negative, the
   cost limit holds (equation 2 over the window: debt + cost < cost_limit) and the credit
   budget holds (equation 5: cost <= realized savings - past costs + c * |Q|, c in units
   of the window's mean query cost unless ``credit_unit="cpu_s"``);
4. layouts   (:mod:`engine.policy.wair.groups`): savings signatures -> DBSCAN -> anchors ->
   sort / Hilbert / Qd-tree groups (hybrid), or one key (the FK ablation);
5. chunks: each group in chunks of at most k_max partitions over neighbouring key ranges
   (k_max from the memory budget and the median partition unless set), without the chunks
   whose rewrite cannot change a zonemap (Algorithm 1's guard: a lone partition, ...);
6. losses (:func:`engine.policy.impact.rewrite_losses`, ``losses``, a departure by choice:
   the paper's equation 3 counts gains only): the window's queries that would read more
   after the rewrite (filters on columns whose clustering it mixes) are priced; with
   ``"net"`` (default) a plan whose saving net of them is not positive is refused, with
   ``"cost"`` the net saving must pass equation 4 (above alpha x cost), ``"off"`` is the
   paper's gains-only model. ("cost" is the stricter model; "net" is the default because
   on small demo tables, where a plan's gains beat its cost by a few percent, "cost"
   refuses plans whose regressions are a few percent of their gains.)

:meth:`WairPolicy.observe` books realized against predicted savings (credit, debt and the
tally of the window of queries in progress); :meth:`WairPolicy.decision_window` (called by
``propose`` with ``ctx.queries_seen``) closes completed windows and doubles or halves the
size -- once per window of queries as in section 4.2, with the deviations documented in
:mod:`engine.policy.wair.state` (idle windows double, a shortfall halves at once, an optional
tolerance). :meth:`WairPolicy.state` / :meth:`load_state` persist all of it.

Defaults (section 6.3 evaluates "the standard cost model and a hybrid layout"): alpha = 1,
beta = 0, no cost limit and no credit constraint (c = inf); the aggressive variant of
section 6.9 is ``alpha=0.5, credit_allowance_c=10``. The paper gives c without a unit
("a per-query allowance"); we read it as a multiple of the window's mean query cost
(``credit_unit="mean_query"``) so that it binds the same way at any scale, and keep CPU-s
selectable (``credit_unit="cpu_s"``). ``window_rule="paper"`` is section 4.2 as written,
``"adaptive"`` (default) the documented deviations of :mod:`engine.policy.wair.state`. The paper gives no initial window
size; 50 queries covers about three TPC-H batches of 16 queries (section 6.2.1) and adapts
from there. min_window = 10 stays: with idle windows doubling, the floor is no longer where
the policy gets stuck (raising it to 25 changed no preset's result by more than 0.1 point).
k_max = None derives it from the memory budget and the median partition
(:func:`engine.policy.wair.groups.derived_k_max`: 64 at 32 MB partitions and 2 GiB, section
6.3), so a chunk sorts in memory. eps = 0.1 (cosine), min_samples = 5 and blends of up to 3
columns are the clusterer's defaults.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.core.jsonable import finite_or_none
from engine.policy.breakeven import break_even
from engine.policy.base import Feedback, PlanGroup, Policy, PolicyContext, Proposal
from engine.policy.costmodel import groups_rewrite_cost, money, work_bytes_array
from engine.policy.impact import rewrite_losses
from engine.policy.wair.cut import CUT_RULES, algorithm2_cut, thin_curve
from engine.policy.wair.groups import (Assignment, assign_fixed, assign_hybrid,
                                       can_change_zonemaps, chunk_members, derived_k_max,
                                       qdtree_params, reason_text)
from engine.policy.wair.savings import (SavingsBreakdown, breakdown_for_window,
                                        partition_savings)
from engine.policy.wair.state import WairState
from engine.scan.pruning import WindowScans

__all__ = ["WairParams", "WairPolicy", "partition_savings", "algorithm2_cut"]

SCATTER_POINTS = 2000
TOP_PARTITIONS = 25
WINDOW_RULES = ("adaptive", "paper")
CREDIT_UNITS = ("mean_query", "cpu_s")
LOSS_RULES = ("net", "cost", "off")


@dataclass(frozen=True)
class WairParams:
    """WAIR's knobs (units in comments); see the module docstring for the defaults' sources."""

    window: int = 50  # initial sliding-window size, queries (fragments)
    min_window: int = 10
    max_window: int = 10_000
    window_tolerance: float = 0.0  # realized > (1 - tol) x predicted counts as accurate
    early_shrink: bool = True  # halve as soon as the window's feedback falls short
    alpha: float = 1.0  # eq. 4 aggressiveness: act if savings > alpha * cost
    cut_rule: str = "scaled"  # "scaled": argmin cost - savings/alpha; "paper": Alg. 2's cut, then eq. 4
    beta: float = 0.0  # eq. 6: CPU-seconds a user pays per extra pruned partition
    cost_limit: float = math.inf  # eq. 2: CPU-seconds of outstanding reclustering debt
    credit_allowance_c: float = math.inf  # eq. 5: allowance per query seen (credit_unit)
    credit_unit: str = "mean_query"  # c in mean query costs of the window, or "cpu_s"
    k_max: int | None = None  # partitions per sort (section 3.3); None: memory budget / partition
    window_rule: str = "adaptive"  # "paper" (section 4.2 as written) or "adaptive"
    losses: str = "net"  # predicted regressions: "net" > 0, "cost" in eq. 4, "off" (paper)
    eps: float = 0.1  # DBSCAN cosine radius on savings signatures
    min_samples: int = 5
    max_blend: int = 3  # largest column set of a blend anchor v_S
    adaptive_window: bool = True
    hybrid: bool = True
    fixed_key: str | None = None  # FK ablation: one sort key for everything
    fixed_partitions_per_batch: int | None = None  # FW ablation: always the top N, fixed window

    def __post_init__(self) -> None:
        def bad(msg: str) -> None:
            raise InvalidParameterError(f"WAIR parameter {msg}")

        def at_least(name: str, low: float) -> None:
            if getattr(self, name) < low:
                bad(f"{name} must be >= {low}, got {getattr(self, name)}")

        def above(name: str, low: float, unit: str = "") -> None:  # NaN fails too
            if not getattr(self, name) > low:
                bad(f"{name} must be > {low}{unit}, got {getattr(self, name)}")

        at_least("min_window", 1)
        if self.max_window < self.min_window:
            bad(f"max_window ({self.max_window}) must be >= min_window ({self.min_window})")
        if not self.min_window <= self.window <= self.max_window:
            bad(f"window must be within [{self.min_window}, {self.max_window}], got {self.window}"
                + (" (max_window raises the upper end)" if self.window > self.max_window else ""))
        if not 0.0 <= self.window_tolerance < 1.0:
            bad(f"window_tolerance must be in [0, 1), got {self.window_tolerance}")
        above("alpha", 0)
        if self.cut_rule not in CUT_RULES:
            bad(f"cut_rule must be one of {', '.join(CUT_RULES)}, got {self.cut_rule!r}")
        at_least("beta", 0)
        above("cost_limit", 0, " CPU-seconds")
        at_least("credit_allowance_c", 0)
        if self.k_max is not None:
            at_least("k_max", 1)
        if self.window_rule not in WINDOW_RULES:
            bad(f"window_rule must be one of {', '.join(WINDOW_RULES)}, got {self.window_rule!r}")
        if self.losses not in LOSS_RULES:
            bad(f"losses must be one of {', '.join(LOSS_RULES)}, got {self.losses!r}")
        if self.credit_unit not in CREDIT_UNITS:
            bad(f"credit_unit must be one of {', '.join(CREDIT_UNITS)}, got {self.credit_unit!r}")
        above("eps", 0)
        at_least("min_samples", 1)
        at_least("max_blend", 2)
        if self.fixed_partitions_per_batch is not None:
            at_least("fixed_partitions_per_batch", 1)

    def to_json(self) -> dict[str, Any]:
        """JSON-safe (infinite limits become None)."""
        return {k: finite_or_none(v) if isinstance(v, float) else v
                for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "WairParams":
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise InvalidParameterError(f"unknown WAIR parameter(s): {', '.join(unknown)}")
        clean = dict(data)
        for k in ("cost_limit", "credit_allowance_c"):
            if k in clean and clean[k] is None:
                clean[k] = math.inf
        return cls(**clean)


class WairPolicy(Policy):
    """Workload-aware incremental reclustering with hybrid layouts.

    Every knob is a keyword (units and defaults: :class:`WairParams`, which validates them);
    the learned state is ``state_`` (window, credit and debt) and ``last_decision_``.
    """

    name = "wair"

    def __init__(self, window: int = 50, min_window: int = 10, max_window: int = 10_000,
                 window_tolerance: float = 0.0, early_shrink: bool = True, alpha: float = 1.0,
                 cut_rule: str = "scaled", beta: float = 0.0, cost_limit: float = math.inf,
                 credit_allowance_c: float = math.inf, credit_unit: str = "mean_query",
                 k_max: int | None = None, window_rule: str = "adaptive",
                 losses: str = "net", eps: float = 0.1,
                 min_samples: int = 5, max_blend: int = 3, adaptive_window: bool = True,
                 hybrid: bool = True, fixed_key: str | None = None,
                 fixed_partitions_per_batch: int | None = None) -> None:
        self.window = window
        self.min_window = min_window
        self.max_window = max_window
        self.window_tolerance = window_tolerance
        self.early_shrink = early_shrink
        self.alpha = alpha
        self.cut_rule = cut_rule
        self.beta = beta
        self.cost_limit = cost_limit
        self.credit_allowance_c = credit_allowance_c
        self.credit_unit = credit_unit
        self.k_max = k_max
        self.window_rule = window_rule
        self.losses = losses
        self.eps = eps
        self.min_samples = min_samples
        self.max_blend = max_blend
        self.adaptive_window = adaptive_window
        self.hybrid = hybrid
        self.fixed_key = fixed_key
        self.fixed_partitions_per_batch = fixed_partitions_per_batch
        self.state_ = WairState(window_size=self.params.window)  # validates the keywords

    @property
    def params(self) -> WairParams:
        """The keywords as the validated record (raises InvalidParameterError if one is bad)."""
        return WairParams(**self.get_params())

    @property
    def window_size(self) -> int:
        """The current size of the adaptive window, in queries (section 4.2)."""
        return self.state_.window_size

    # ------------------------------------------------------------------ decide
    def propose(self, ctx: PolicyContext) -> Proposal | None:
        """One WAIR decision over the last ``window_size`` fragments of ``ctx.window``.

        Returns None (and says why in ``last_decision_``) when nothing pays off or a
        budget blocks it.
        """
        p = self.params
        if len(ctx.window) != len(ctx.scans):
            raise InvalidParameterError(
                f"context has {len(ctx.window)} fragments but {len(ctx.scans)} pruning results")
        w = self.decision_window(ctx.queries_seen)
        window, scans = list(ctx.window[-w:]), ctx.scans[-w:]  # scans stay lazy
        zm = ctx.zonemaps
        k_max = derived_k_max(p.k_max, zm, ctx.settings.memory_budget_bytes)
        br = breakdown_for_window(zm, scans, window, ctx.settings, p.beta)
        total = br.total
        candidates = np.flatnonzero(total > 0)
        allowance = self._allowance(p, br)
        debt = self.state_.window_debt(self.state_.last_seen, w)
        base = {"window_size": w, "window_queries": br.queries, "candidates": int(candidates.size),
                "debt_cpu_s": debt, "k_max": k_max,
                "mean_query_cpu_s": br.mean_query_seconds,
                "credit_cpu_s": finite_or_none(
                    self.state_.credit(self._queries(ctx), allowance))}
        if fixed_key := p.fixed_key:
            if fixed_key not in zm.columns:
                raise InvalidParameterError(
                    f"fixed_key {fixed_key!r} is not a column; columns are: {', '.join(zm.columns)}")
        if candidates.size == 0:
            return self._none("no boundary partition with a positive saving in the window", base)

        # priced as the plan will be (costmodel.work_bytes: per cell once calibrated), so
        # Algorithm 2's cut and groups_rewrite_cost below agree on a group's size
        part_bytes = work_bytes_array(zm.rows, zm.bytes, len(zm.columns), ctx.settings)
        order, cut, curve = algorithm2_cut(total[candidates], part_bytes[candidates],
                                           ctx.settings, k_max, p.alpha, p.cut_rule)
        best_net = curve[cut - 1][1]
        if p.fixed_partitions_per_batch is not None:
            cut = min(p.fixed_partitions_per_batch, candidates.size)
        elif best_net >= 0:
            cut_saving = float(total[candidates][order[:cut]].sum())
            return self._none(f"best cut {cut} has net cost {best_net:+.3g} CPU-s >= 0",
                              {**base, "cut": cut, "net_cpu_s": best_net,
                               "cut_saving_cpu_s": cut_saving,
                               "cut_cost_cpu_s": best_net + cut_saving / p.alpha,
                               "alpha": p.alpha,
                               "break_even": break_even([v for _, v in curve],
                                                        total[candidates][order], p.alpha,
                                                        br.queries)}, curve)
        selected = candidates[order[:cut]]

        assignment = _assign(p, br.per_column[selected], br.columns)
        groups, _, kept = _groups(ctx, k_max, window, br, selected, assignment)
        details = {**base, "cut": cut, "net_cpu_s": best_net,
                   "dropped_unchangeable": int(selected.size - kept.size), "alpha": p.alpha}
        if not groups:
            return self._none(
                f"none of the {selected.size} selected partitions can change a zonemap when "
                "rewritten (lone partitions, degenerate or already disjoint key ranges; "
                "Algorithm 1's guard)", details, curve)
        cost = groups_rewrite_cost(zm, groups, ctx.settings)
        saving_total = float(total[kept].sum())
        details["grouped_cost_cpu_s"] = cost.cpu_seconds
        details["grouped_saving_cpu_s"] = saving_total
        loss = self._losses(p, ctx, window, scans, groups)
        details["loss_cpu_s"] = loss["cpu_seconds"]
        if p.losses != "off":
            details["regressions"] = loss["columns"]
        net_saving = saving_total - loss["cpu_seconds"]
        bar = p.alpha * cost.cpu_seconds if p.losses == "cost" else 0.0
        if (p.fixed_partitions_per_batch is None and loss["cpu_seconds"] > 0
                and not net_saving > bar):
            what = (f"is not above alpha x cost {bar:.3g} CPU-s (eq. 4 net of losses)"
                    if p.losses == "cost" else "is not positive")
            return self._none(
                f"net of losses, saving {saving_total:.3g} - predicted loss "
                f"{loss['cpu_seconds']:.3g} = {net_saving:.3g} CPU-s {what}",
                {**details, "saving_cpu_s": saving_total, "cost_cpu_s": cost.cpu_seconds,
                 "alpha": p.alpha, "losses": p.losses}, curve)
        if p.fixed_partitions_per_batch is None and not saving_total > p.alpha * cost.cpu_seconds:
            return self._none(
                f"after grouping, saving {saving_total:.3g} CPU-s is not above alpha x cost "
                f"{p.alpha * cost.cpu_seconds:.3g} CPU-s (eq. 4)", details, curve)
        if not debt + cost.cpu_seconds < p.cost_limit:
            return self._none(
                f"cost limit: debt {debt:.3g} + cost {cost.cpu_seconds:.3g} CPU-s "
                f"is not below {p.cost_limit:.3g} (eq. 2)", details, curve)
        credit = self.state_.credit(self._queries(ctx), allowance)
        if cost.cpu_seconds > credit:
            return self._none(
                f"credit budget: cost {cost.cpu_seconds:.3g} CPU-s exceeds credit {credit:.3g} "
                f"CPU-s (eq. 5)", details, curve)

        cpu_saving = float(br.saving_cpu[kept].sum())
        queries = max(br.queries, 1)
        predicted = {"bytes": float(br.bytes_saved[kept].sum()), "cpu_seconds": cpu_saving,
                     "money": money(cpu_saving, ctx.settings), "window_queries": float(br.queries),
                     "bonus_cpu_seconds": float(br.bonus[kept].sum())}
        details.update(loss_bytes=float(loss["bytes"]), loss_queries=int(loss["queries"]),
                       net_saving_cpu_s=cpu_saving - float(loss["cpu_seconds"]))
        per_query = (cpu_saving - float(loss["cpu_seconds"])) / queries
        details.update(self._evidence(zm, br, selected, assignment, total))
        self.last_decision_ = {"action": "propose", "reason": f"{len(kept)} partitions, "
                              f"{len(groups)} groups, net {best_net:+.3g} CPU-s", **details}
        self.state_.proposed()
        return Proposal(policy=self.name, params=p.to_json(), groups=tuple(groups),
                        estimated_cost=cost, predicted_saving=predicted,
                        break_even_queries=(cost.cpu_seconds / per_query) if per_query > 0 else None,
                        curve=thin_curve(curve, cut), details=details)

    @staticmethod
    def _allowance(p: WairParams, br: SavingsBreakdown) -> float:
        """Equation 5's c in CPU-seconds per query: as given, or times the window's mean
        query cost (``credit_unit``)."""
        if math.isinf(p.credit_allowance_c) or p.credit_unit == "cpu_s":
            return p.credit_allowance_c
        return p.credit_allowance_c * br.mean_query_seconds

    @staticmethod
    def _losses(p: WairParams, ctx: PolicyContext, window: list, scans: Any,
                groups: list[PlanGroup]) -> dict[str, Any]:
        """The predicted regressions of the plan over the window (zero unless
        ``losses`` is "off"); size_read(Q) from the window's scans for eq. 3's pricing. The
        losses are charged at the level the gains are (``ctx.row_groups``: row groups when
        the scans were, else whole files)."""
        if p.losses == "off":
            return {"bytes": 0.0, "cpu_seconds": 0.0, "queries": 0, "columns": []}
        timed = any(f.duration_ms for f in window)
        sizes = (_bytes_read(scans) if timed else None)
        return rewrite_losses(ctx.zonemaps, groups, window, ctx.settings, sizes,
                              row_groups=ctx.row_groups)

    def _queries(self, ctx: PolicyContext) -> int:
        """|Q| for the allowance: queries seen, at least the window the policy was shown."""
        return max(int(ctx.queries_seen), len(ctx.window))

    def _none(self, reason: str, details: dict[str, Any],
              curve: list[tuple[int, float]] | None = None) -> None:
        self.last_decision_ = {"action": "none", "reason": reason, **details}
        if curve:
            self.last_decision_["curve"] = thin_curve(curve, int(details.get("cut", 0)))
        return None

    def _evidence(self, zm: Any, br: SavingsBreakdown, selected: np.ndarray,
                  assignment: Assignment, total: np.ndarray) -> dict[str, Any]:
        """What the dashboard shows: top partitions and the signature scatter."""
        top = selected[:TOP_PARTITIONS]  # selected is already ranked by saving
        top_rows = [{"path": str(zm.paths[i]), "saving_cpu_s": float(br.saving_cpu[i]),
                     "bonus_cpu_s": float(br.bonus[i]), "bytes_saved": float(br.bytes_saved[i]),
                     "boundary_hits": int(br.hits[i]), "bytes": int(zm.bytes[i])} for i in top]
        pick = np.arange(min(len(selected), SCATTER_POINTS))
        return {
            "columns": list(br.columns),
            "top_partitions": top_rows,
            "scatter": {
                "signatures": np.round(assignment.signatures[pick], 6).tolist(),
                "labels": assignment.labels[pick].astype(int).tolist(),
                "anchors": [assignment.anchors[i] for i in pick.tolist()],
                "columns": list(br.columns),
                "paths": [str(zm.paths[selected[i]]) for i in pick.tolist()],
                "saving_cpu_s": [float(total[selected[i]]) for i in pick.tolist()],
                "truncated": bool(len(selected) > SCATTER_POINTS),
            },
        }

    # ------------------------------------------------------------------ learn
    def observe(self, feedback: Feedback) -> None:
        """Book a run's realized saving: credit and debt at once, the window's tally for the
        comparison when the window of queries in progress completes (:meth:`decision_window`)."""
        self.state_.record(float(feedback.predicted_saving_cpu_s),
                           float(feedback.realized_saving_cpu_s),
                           float(feedback.recluster_cost_cpu_s), int(feedback.queries))

    def decision_window(self, queries_seen: int) -> int:
        """The window the next decision looks at: closes the windows of queries completed by
        ``queries_seen`` (section 4.2, :meth:`advance`) and returns the size. :meth:`propose`
        calls it; a caller calls it first to analyze only the fragments WAIR will see."""
        self.advance(queries_seen)
        return self.window_size

    def advance(self, queries_seen: int) -> int:
        """Close the windows of queries completed by ``queries_seen``, doubling or halving
        the size; returns the number of windows closed."""
        p = self.params
        adapt = p.adaptive_window and p.fixed_partitions_per_batch is None
        return self.state_.advance(int(queries_seen), adapt, p.min_window, p.max_window,
                                   p.window_tolerance, p.early_shrink, p.window_rule)

    def state(self) -> dict[str, Any]:
        """JSON-safe state for the plan store: the policy's name, its parameters and
        ``state_`` (:class:`WairState`), one flat object."""
        return {"policy": self.name, "params": self.params.to_json(), **self.state_.to_json()}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state` output (the current params are kept; the window is clamped
        to them)."""
        restored = WairState.from_json(state)
        p = self.params
        restored.window_size = min(p.max_window, max(p.min_window, restored.window_size))
        self.state_ = restored


def _assign(p: WairParams, per_column: np.ndarray, columns: list[str]) -> Assignment:
    """Section 4.4's hybrid layouts, or one key (the FK ablation, or a single column)."""
    if p.hybrid and p.fixed_key is None and len(columns) > 1:
        return assign_hybrid(per_column, columns, p.eps, p.min_samples, p.max_blend)
    return assign_fixed(per_column, columns, p.fixed_key)


def _groups(ctx: PolicyContext, k_max: int, window: list, br: SavingsBreakdown,
            selected: np.ndarray, assignment: Assignment
            ) -> tuple[list[PlanGroup], list[float], np.ndarray]:
    """The plan groups (each layout group in chunks of at most ``k_max`` partitions, without
    the chunks whose rewrite cannot change a zonemap), the bytes of each chunk (the cost
    model prices each as one sort), and the zonemap indices kept, in selection order."""
    zm = ctx.zonemaps
    types = {name: col.ltype for name, col in zm.columns.items()}
    groups: list[PlanGroup] = []
    chunk_bytes: list[float] = []
    kept: list[np.ndarray] = []
    for lg in assignment.groups:
        first = lg.columns[0] if lg.columns else None
        reason = reason_text(lg.members.size, lg.layout, lg.columns,
                             br.per_column[selected[lg.members]].sum(axis=0), br.columns)
        params: dict[str, Any] = {"anchor": lg.anchor}
        if lg.similarity is not None:
            params["similarity"] = lg.similarity
        if lg.layout == "qdtree":
            params.update(qdtree_params(window, lg.columns, types, _partition_rows(ctx)))
        chunks = [idx for idx in chunk_members(zm, selected, lg.members, first, k_max)
                  if can_change_zonemaps(zm, idx, lg.layout, lg.columns)]
        for i, idx in enumerate(chunks):
            kept.append(idx)
            chunk_bytes.append(float(zm.bytes[idx].sum()))
            note = reason if len(chunks) == 1 else f"{reason} (chunk {i + 1}/{len(chunks)})"
            groups.append(PlanGroup(partitions=tuple(str(x) for x in zm.paths[idx]),
                                    layout=lg.layout, columns=tuple(lg.columns), reason=note,
                                    layout_params=dict(params),
                                    predicted_saving_bytes=float(br.bytes_saved[idx].sum())))
    keep = set(np.concatenate(kept).tolist()) if kept else set()
    order = np.array([i for i in selected.tolist() if i in keep], dtype=np.int64)
    return groups, chunk_bytes, order


def _partition_rows(ctx: PolicyContext) -> int:
    """The table's micro-partition size in rows (the median partition; the setting if empty):
    a Qd-tree leaf smaller than one partition cannot be pruned on its own."""
    rows = ctx.zonemaps.rows
    return int(np.median(rows)) if len(rows) else int(ctx.settings.target_rows)


def _bytes_read(scans: Any) -> list[float]:
    """size_read(Q) of each query of the window. A lazy :class:`WindowScans` keeps these
    per distinct fragment, so a window beyond its memo is not pruned a second time
    (at warehouse scale a second pass would cost as much as the decision itself)."""
    if isinstance(scans, WindowScans):
        return scans.bytes_scanned().tolist()
    return [sc.bytes_scanned for sc in scans]

