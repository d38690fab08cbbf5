"""The ``pto`` policy: PTO's whole-table design proposed as one full-table rewrite.

PTO (seed 002, :mod:`engine.design.pto`) chooses <partition column, sort scheme, target
file size, row-group size> from the whole imported workload and a sample of the data; the
proposal rewrites every file of the snapshot in one group whose ``layout`` is the sort
scheme (``"sort"``, ``"zorder"`` or ``"binpack"``: input order, files packed to size) and
whose ``layout_params`` carry the physical design of the executor's contract
(:class:`engine.policy.base.PlanGroup`): ``partition_by`` (omitted for no partitioning),
``target_file_bytes`` and ``row_group_bytes``. The candidates table (predicted and, for
the labelled ones, measured labels) is in the proposal's ``details``.
"""

from __future__ import annotations

from typing import Any

from engine.design.pto.optimizer import PtoConfig, PtoRun, run_on_files
from engine.policy.base import Policy, PolicyContext, Proposal
from engine.policy.baselines import whole_table_proposal
from engine.policy.costmodel import groups_rewrite_cost


class PtoPolicy(Policy):
    """Propose PTO's layout for the whole table.

    ``top_k``: partition columns and sort schemes kept (section 4.1.3: 3); ``label``:
    ``"cost"`` (scan cost with file and row-group overheads) or ``"skip"``
    (the paper's skipped rows); ``lightweight``: label with one fragment per filter-column
    set (section 4.5); ``verify_top``: label that many of the best-ranked unlabelled
    candidates after prediction and choose again (ours; 0, the default, is the paper's
    choice); ``refine_sizes``: label every file and row-group size of the chosen
    (partition, sort) pair and choose again (ours; off by default); ``training_budget``: at
    least that many training labels, more random sizes per (partition, sort) pair when the
    pairs are fewer (ours; 0, the default, is the paper's one per pair);
    ``max_design_rows``: run the design (workload statistics, Algorithm 2, the label sample)
    on a Bernoulli sample of about that many of the table's rows (ours; None or 0, the
    default, is every row, the paper's procedure; :attr:`PtoConfig.max_design_rows`);
    ``seed``: sampling and training-set seed. A bad value is refused here, before any file
    is read. Learned: ``run_`` (the last run, not persisted: each decision starts afresh
    from the workload).
    """

    name = "pto"

    def __init__(self, top_k: int = 3, label: str = "cost", lightweight: bool = False,
                 verify_top: int = 0, refine_sizes: bool = False, training_budget: int = 0,
                 max_design_rows: int | None = None, open_cost_offset: bool = False,
                 seed: int = 0) -> None:
        self.top_k = top_k
        self.label = label
        self.lightweight = lightweight
        self.verify_top = verify_top
        self.refine_sizes = refine_sizes
        self.training_budget = training_budget
        self.max_design_rows = max_design_rows
        self.open_cost_offset = open_cost_offset
        self.seed = seed
        self.run_: PtoRun | None = None
        self.config()  # refuses a bad parameter now (one line), not after reading the table

    def decision_window(self, queries_seen: int) -> int | None:
        """The whole workload: PTO designs for every imported query (section 3.1)."""
        return max(1, queries_seen)

    def config(self) -> PtoConfig:
        return PtoConfig(top_k=int(self.top_k), label=str(self.label), lightweight=bool(self.lightweight),
                         verify_top=int(self.verify_top), refine_sizes=bool(self.refine_sizes),
                         training_budget=int(self.training_budget),
                         max_design_rows=self.max_design_rows,
                         open_cost_offset=bool(self.open_cost_offset),
                         seed=int(self.seed))

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        zm = ctx.zonemaps
        if not len(zm) or not ctx.window:
            self.last_decision_ = {"reason": "PTO needs a table with files and an imported workload"}
            return None
        types = {c: z.ltype for c, z in zm.columns.items()}
        if not any(c in types for f in ctx.window for c in f.predicated_columns):
            self.last_decision_ = {"reason": "PTO: no fragment of the workload filters on a column "
                                             "of the table, so no layout can skip anything"}
            return None
        run = run_on_files(list(zm.paths), types, int(zm.bytes.sum()), list(ctx.window), self.config(),
                           file_rows=zm.rows)  # with max_design_rows: only sampled files are read
        self.run_ = run
        lay = run.choice.layout
        params: dict[str, Any] = {"target_file_bytes": int(lay.tfs_bytes), "row_group_bytes": int(lay.rgs_bytes)}
        if lay.partition is not None:
            params["partition_by"] = lay.partition
        proposal = whole_table_proposal(ctx, self.name, lay.sort.kind, lay.sort.columns, list(zm.paths),
                                        run.reason(), layout_params=params, params=self.get_params())
        details = design_details(run)
        self.last_decision_ = {"reason": run.reason(), "choice": details["choice"]}
        return Proposal(proposal.policy, proposal.params, proposal.groups,
                        groups_rewrite_cost(zm, proposal.groups, ctx.settings),
                        proposal.predicted_saving, details=details)


def design_details(run: PtoRun) -> dict[str, Any]:
    """The evidence of a run as JSON: the choice, candidates, sample and timings."""
    return {
        "choice": run.choice.to_json(),
        "reason": run.reason(),
        "label": run.config.label,
        "verify_top": run.config.verify_top,
        "refine_sizes": run.config.refine_sizes,
        "training_budget": run.config.training_budget,
        "max_design_rows": run.config.max_design_rows,
        "open_cost_offset": run.config.open_cost_offset,
        "design_rows": run.design_rows,
        "tie_tolerance": run.tie_tol,
        "candidates": [c.to_json() for c in run.candidates],
        "partition_candidates": list(run.partitions),
        "sort_candidates": [s.label for s in run.sorts.schemes],
        "shortlist": list(run.sorts.shortlist),
        "shortlist_cut": list(run.sorts.cut),
        "tfs_grid": list(run.tfs_grid),
        "sample_rate": run.sample_rate,
        "sample_rows": run.sample.n_rows,
        "seconds": {k: round(v, 3) for k, v in run.seconds.items()},
    }
