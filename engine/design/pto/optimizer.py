"""One PTO run for one table: candidates, Good-Turing, sample, labels, model, choice.

The pipeline of PTO section 3 (Figure 1) over the table's rows in memory:

1. workload statistics (:mod:`.stats`);
2. the average distinct sort-cluster size of every shortlisted column subset and every
   partition candidate (Algorithm 2, :mod:`.goodturing`);
3. candidates: partition columns, sort schemes, TFS x RGS (:mod:`.candidates`);
4. a Bernoulli sample at the largest convergence rate over all those column sets
   (we take the max; the pseudocode returns the last subset's),
   raised until the smallest downscaled row group holds ``MIN_RG_ROWS`` rows (ours);
5. labels of the 12 training layouts on the sample (Algorithm 3, :mod:`.labels`);
6. features (Figure 4), ``GradientBoostingRegressor``, predictions for every candidate
   and the choice (:mod:`.model`).

``lightweight=True`` is PTO's lightweight variant (section 4.5): labels use one fragment
per distinct filter-column set (the first occurrence).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.design.pto import candidates as cand
from engine.design.pto import goodturing, labels, model
from engine.design.pto.data import (FILE_SAMPLE_FACTOR, EncodedBox, TableData, column_ndv, load_file_sample,
                                    load_table)
from engine.design.pto.features import Featurizer
from engine.design.pto.goodturing import GtStep
from engine.design.pto.stats import WorkloadStats, distinct_counts
from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class PtoConfig:
    """PTO's parameters (defaults: section 4.1.3, and ours where the paper leaves one open)."""

    top_k: int = 3
    label: str = "cost"
    c_file: float = labels.C_FILE_ROWS
    c_rg: float = labels.C_RG_ROWS
    threshold: float = 0.05
    max_shortlist: int = cand.MAX_SHORTLIST
    rate_min: float = 1e-5
    gt_mode: str = "sizes"
    decimal_forces_sort: bool = True
    tfs_grid: tuple[int, ...] | None = None  # None: scaled to the table
    row_groups_per_file: tuple[int, ...] = cand.ROW_GROUPS_PER_FILE
    min_table_rows: int = 10_000
    min_parts: int = 10
    max_parts: int = 4_000
    lightweight: bool = False
    #: ours: at most this many rows in the label sample (None: Algorithm 2's rate, as the
    #: paper); small tables with near-unique column sets only converge at a 100% sample
    max_sample_rows: int | None = None
    #: ours: after prediction, label the ``verify_top`` best-ranked unlabelled candidates on
    #: the sample and rank again (0: the paper's choice from 12 labels). GBR's additive
    #: trees can predict an unlabelled layout above every measured one (bench/pto/README.md);
    #: the extra labels are in memory.
    verify_top: int = 0
    #: ours: label every (TFS, RGS) of the chosen (partition, sort) pair and choose again.
    #: The 12 training labels hold one random size per pair, so the size effect inside a
    #: pair is never observed (bench/pto/README.md)
    refine_sizes: bool = False
    #: ours: at least this many training labels, more random sizes of the (partition,
    #: sort) pairs when the pairs are fewer (0: one per pair, the paper). TPC-H orders has
    #: 2 partition candidates x 3 sorts = 6 pairs, and its 6 labels confound the sizes with
    #: the partition column (bench/pto/README.md)
    training_budget: int = 0
    #: ours: run the whole design (workload statistics, Algorithm 2, the label sample) on a
    #: Bernoulli sample of at most this many of the table's rows, the table's cardinality
    #: and size kept (None or 0: every row, as the paper); Algorithm 2 then takes the sample
    #: as its table (:func:`run`). The what-if on a user's table sets it
    #: (``PTO_DESIGN_ROWS`` of the what-if; bench/ui/README.md): the same choice in a
    #: fraction of the time.
    max_design_rows: int | None = None
    #: ours: scores within this of the best are tied and the tie
    #: rule (larger TFS, then larger RGS) decides; None (default): the model's own fitting
    #: residual on the training labels (:func:`model.fit_residual`); 0: exact comparison
    #: A boosted prediction equals a label only up to that residual
    #: (bench/pto/README.md)
    tie_tolerance: float | None = None
    #: the training draw's seed (None: ``seed``); the bench varies it alone, keeping the
    #: sample and Algorithm 2's draws (bench/pto/pto_regret.py)
    train_seed: int | None = None
    #: ours: two more features, the files and row groups each layout writes
    #: (counted from the partition sizes, :func:`labels.written_counts`; False: Figure 4's
    #: 17 + 2T). The cost label's open costs are c_file x files + c_rg x row groups, which
    #: the raw TFS / RGS carry only through the partition's sizes (bench/pto/README.md)
    size_features: bool = False
    #: ours (cost label only): the model learns the label *plus* the open cost of
    #: the files and row groups a fragment opens when only the partition column prunes,
    #: 100 x (c_file x files + c_rg x row groups) / |table| (:func:`open_cost`), and that
    #: cost is subtracted from its predictions again: the size effect, which dominates the
    #: cost label at small scale, is computed, not learnt from one random size per pair
    #: (False: the paper's)
    open_cost_offset: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise InvalidParameterError(f"top_k must be >= 1, got {self.top_k}")
        if self.training_budget < 0:
            raise InvalidParameterError(f"training_budget must be >= 0, got {self.training_budget}")
        cap = self.max_design_rows
        if cap is not None and not (isinstance(cap, (int, np.integer)) and not isinstance(cap, bool) and cap >= 0):
            raise InvalidParameterError(f"max_design_rows must be a whole number >= 0 (0: every row), "
                                        f"got {self.max_design_rows!r}")
        if self.tie_tolerance is not None and not self.tie_tolerance >= 0:
            raise InvalidParameterError(f"tie_tolerance must be >= 0, got {self.tie_tolerance}")
        if self.verify_top < 0:
            raise InvalidParameterError(f"verify_top must be >= 0, got {self.verify_top}")
        if self.label not in labels.LABELS:
            raise InvalidParameterError(f"label must be one of {', '.join(labels.LABELS)}, got {self.label!r}")


@dataclass
class Candidate:
    """One candidate layout with its prediction and, if labelled, its measured label."""

    layout: cand.Layout
    predicted: float
    measured: float | None = None
    verified: bool = False  # labelled after prediction (``verify_top``), not trained on

    @property
    def score(self) -> float:
        return self.measured if self.measured is not None else self.predicted

    def to_json(self) -> dict[str, Any]:
        return {**self.layout.describe(), "predicted": round(self.predicted, 4),
                "measured": None if self.measured is None else round(self.measured, 4),
                "training": self.measured is not None and not self.verified,
                "verified": self.verified}


@dataclass
class PtoRun:
    """Everything one run decided, with its evidence."""

    config: PtoConfig
    stats: WorkloadStats
    partitions: list[str | None]
    sorts: cand.SortCandidates
    tfs_grid: list[int]
    gt: dict[tuple[str, ...], list[GtStep]]
    sample: TableData
    label_fragments: list[list[EncodedBox]]
    candidates: list[Candidate]  # ranked, best first
    seconds: dict[str, float] = field(default_factory=dict)
    #: rows the design ran on: the table's, or its ``max_design_rows`` sample's
    design_rows: int = 0
    #: scores within this of the best were tied (``PtoConfig.tie_tolerance``)
    tie_tol: float = 0.0

    @property
    def choice(self) -> Candidate:
        return self.candidates[0]

    @property
    def sample_rate(self) -> float:
        return self.sample.n_rows / max(1, self.sample.n_table)

    def reason(self) -> str:
        c = self.choice
        how = "measured on the sample" if c.measured is not None else "predicted by the model"
        lay = c.layout
        return (f"PTO: partition by {lay.partition or 'nothing'}, {lay.sort.label}, files of "
                f"{lay.tfs_bytes / cand.MB:.3g} MB, row groups of {lay.rgs_bytes / cand.MB:.3g} MB: the "
                f"best {self.config.label} label ({c.score:.2f}%, {how}) of {len(self.candidates)} "
                f"candidates, {sum(x.measured is not None for x in self.candidates)} labelled")


def fragments_for_labels(stats: WorkloadStats, lightweight: bool) -> list[list[EncodedBox]]:
    """The fragments labels are measured on: all, or one per distinct filter-column set."""
    seen: set[frozenset[str]] = set()
    out = []
    for f in stats.fragments:
        if lightweight and f.columns in seen:
            continue
        seen.add(f.columns)
        out.append(list(f.boxes))
    return out


def sample_rate(gt: dict[tuple[str, ...], list[GtStep]], table: TableData, tfs_grid: Sequence[int],
                per_file: Sequence[int]) -> float:
    """The largest convergence rate, raised so that the smallest downscaled row group
    holds ``labels.MIN_RG_ROWS`` rows; at most 1. Rates are of the rows held (the table,
    or its ``max_design_rows`` sample, whose row groups are smaller by its share)."""
    rate = max((steps[-1].rate for steps in gt.values()), default=1.0)
    held = table.n_rows / max(1, table.n_table)
    min_rgs_rows = min(tfs_grid) / max(per_file) / (table.bytes_per_row or 1.0) * held
    return float(min(1.0, max(rate, labels.MIN_RG_ROWS / max(min_rgs_rows, 1e-9))))


def bernoulli_sample(table: TableData, rate: float, seed: int) -> TableData:
    if rate >= 1.0:
        return table
    keep = np.flatnonzero(np.random.default_rng(seed).random(table.n_rows) < rate)
    return table.take(keep)


def design_rows(table: TableData, config: PtoConfig) -> TableData:
    """The rows the design runs on: all, or a Bernoulli sample of about
    ``config.max_design_rows`` (its own random stream, not the label sample's)."""
    cap = config.max_design_rows
    if not cap or table.n_rows <= cap:
        return table
    keep = np.flatnonzero(np.random.default_rng([config.seed, 1]).random(table.n_rows) < cap / table.n_rows)
    return table.take(keep)


def run(table: TableData, fragments: Sequence[ScanFragment], config: PtoConfig = PtoConfig(),
        gt: dict[tuple[str, ...], list[GtStep]] | None = None,
        table_ndv: dict[str, int] | None = None) -> PtoRun:
    """PTO on ``table`` (its predicated columns, all rows) for ``fragments``.

    ``gt``: Algorithm 2's results of an earlier run on the same table with the same
    ``rate_min``, ``seed``, ``gt_mode`` and ``max_design_rows`` (reused and extended; the
    bench's variants). ``table_ndv``: the table's distinct counts when ``table`` holds only
    some of its rows (a file sample); the partition guardrail (10 <= NDV <= 4,000) and the
    human expert's partition count use the table's counts, never a design sample's."""
    t0 = time.perf_counter()
    seconds: dict[str, float] = {}
    rows = design_rows(table, config)
    if table_ndv is None and rows is not table:
        table_ndv = distinct_counts(table)  # every row is in memory: count on all of them
    # Algorithm 2 on a design sample takes the sample as the table: its escalation then
    # ends exact at 100% of the sample, where extrapolating to the table's cardinality
    # reads a near-unique column set (all singletons) as ~n_table/n_sample rows a cluster
    # (TPC-H lineitem SF 0.2 at 200k rows: the choice moved from zorder(l_shipdate,
    # l_commitdate) to a four-column sort; taking the sample as the table, it is the
    # full table's again). Algorithm 1 min-max normalises the sizes: a common scale is moot.
    gt_rows = rows.n_rows if rows is not table else table.n_table
    n_design = rows.n_rows
    table = rows
    stats = WorkloadStats.compute(table, fragments, table_ndv)
    partitions = cand.partition_candidates(stats, table.types, table.n_table, config.top_k,
                                           config.min_table_rows, config.min_parts, config.max_parts)
    seconds["stats"] = time.perf_counter() - t0
    gt = {} if gt is None else gt

    def clust(cols: tuple[str, ...]) -> float:
        if cols not in gt:
            gt[cols] = goodturing.avg_dist_clust_size(table.data, cols, gt_rows, config.rate_min,
                                                      config.seed, config.gt_mode, table.cache)
        return gt[cols][-1].avg_orig

    t1 = time.perf_counter()
    for p in partitions:
        if p is not None:
            clust((p,))
    sorts = cand.sort_candidates(stats, table.types, clust, config.top_k, config.threshold,
                                 config.max_shortlist, config.decimal_forces_sort)
    seconds["good_turing"] = time.perf_counter() - t1
    grid = list(config.tfs_grid or cand.scaled_tfs_grid(table.table_bytes))
    rate = sample_rate(gt, table, grid, config.row_groups_per_file)
    if config.max_sample_rows:
        rate = min(rate, config.max_sample_rows / max(1, table.n_rows))
    sample = bernoulli_sample(table, rate, config.seed)
    frags = fragments_for_labels(stats, config.lightweight)
    t2 = time.perf_counter()
    train_seed = config.seed if config.train_seed is None else config.train_seed
    train = cand.training_layouts(partitions, sorts.schemes, grid, config.row_groups_per_file, train_seed,
                                  config.training_budget)
    y = np.array([labels.label_layout(x, sample, frags, config.label, config.c_file, config.c_rg)
                  for x in train])
    seconds["labels"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    feats = Featurizer(stats, table.types, table.n_table,
                       {k: v[-1].avg_orig for k, v in gt.items()},
                       (lambda x: labels.written_counts(x, sample)) if config.size_features else None)
    space = cand.enumerate_layouts(partitions, sorts.schemes, grid, config.row_groups_per_file)
    off_train, off_space = (np.array([open_cost(x, sample, frags, config) for x in xs]) for xs in (train, space)) \
        if config.open_cost_offset and config.label == "cost" else (np.zeros(len(train)), np.zeros(len(space)))
    fitted = model.fit(feats.matrix(train), y + off_train, config.seed)
    predicted = fitted.predict(feats.matrix(space)) - off_space
    tol = model.fit_residual(fitted, feats.matrix(train), y + off_train) if config.tie_tolerance is None \
        else float(config.tie_tolerance)
    measured = {x: float(v) for x, v in zip(train, y)}
    cands = [Candidate(x, float(p), measured.get(x)) for x, p in zip(space, predicted)]
    order = verify(_ranked(cands, tol), config, sample, frags, tol)
    if config.refine_sizes:
        order = refine(order, config, sample, frags, tol)
    seconds["model"] = time.perf_counter() - t3
    seconds["total"] = time.perf_counter() - t0
    return PtoRun(config, stats, partitions, sorts, grid, gt, sample, frags, order, seconds, n_design, tol)


def open_cost(layout: cand.Layout, sample: TableData, frags: Sequence[Sequence[EncodedBox]],
              config: PtoConfig) -> float:
    """The cost label's open cost (percent of the table) of the files and row groups a
    fragment opens when only the partition column prunes, mean over the fragments
    (``open_cost_offset``; :func:`labels.partition_open_counts`)."""
    files, rgs = labels.partition_open_counts(layout, sample, frags)
    return 100.0 * (config.c_file * files + config.c_rg * rgs) / max(1, sample.n_table)


def run_on_files(paths: Sequence[str], types: dict[str, str], table_bytes: int,
                 fragments: Sequence[ScanFragment], config: PtoConfig = PtoConfig(),
                 file_rows: Sequence[int] | None = None) -> PtoRun:
    """PTO over a snapshot's Parquet files: only the columns the fragments filter on are
    read (the others can neither prune nor be candidates). With ``file_rows`` (the files'
    row counts, from the zonemaps) and ``config.max_design_rows``, only whole files drawn
    at random holding :data:`FILE_SAMPLE_FACTOR` times the design rows are read
    (:func:`load_file_sample`, whose docstring says what the sample means), not every row."""
    cols = sorted({c for f in fragments for c in f.predicated_columns if c in types})
    if not cols:
        raise InvalidParameterError("no fragment of the workload filters on a column of the table; "
                                    "PTO needs scan fragments with predicates (import a workload)")
    if file_rows is not None and config.max_design_rows:
        sample = load_file_sample(paths, file_rows, cols, types, table_bytes,
                                  FILE_SAMPLE_FACTOR * config.max_design_rows, config.seed)
        if sample.n_rows < sample.n_table:
            # the partition guardrail needs the table's NDV; a column whose sample already
            # holds more than max_parts values fails it whatever the table holds, unread
            seen = distinct_counts(sample)
            ndv = column_ndv(paths, [c for c in cols if types[c] in cand.PARTITION_TYPES
                                     and seen.get(c, 0) <= config.max_parts])
            return run(sample, fragments, config, table_ndv=ndv)
        return run(sample, fragments, config)
    return run(load_table(paths, cols, types, table_bytes), fragments, config)


def verify(ranked: list[Candidate], config: PtoConfig, sample: TableData,
           frags: list[list[EncodedBox]], tol: float = 0.0) -> list[Candidate]:
    """Label the ``config.verify_top`` best-ranked unlabelled candidates and rank again
    (a measured label replaces a prediction; ``verify_top=0`` keeps the paper's choice)."""
    todo = [c for c in ranked if c.measured is None][:config.verify_top]
    for c in todo:
        c.verified = True
        c.measured = labels.label_layout(c.layout, sample, frags, config.label, config.c_file, config.c_rg)
    return _ranked(ranked, tol) if todo else ranked


def refine(ranked: list[Candidate], config: PtoConfig, sample: TableData,
           frags: list[list[EncodedBox]], tol: float = 0.0) -> list[Candidate]:
    """Label every unlabelled size of the best candidate's (partition, sort) pair and rank
    again (``refine_sizes``)."""
    best = ranked[0].layout
    pair = [c for c in ranked if c.layout.partition == best.partition and c.layout.sort == best.sort]
    for c in pair:
        if c.measured is None:
            c.verified = True
            c.measured = labels.label_layout(c.layout, sample, frags, config.label, config.c_file, config.c_rg)
    return _ranked(ranked, tol)


def _ranked(cands: list[Candidate], tol: float = 0.0) -> list[Candidate]:
    """Best first by score (:func:`model.rank_key`), the choice first: among the scores
    within ``tol`` of the best, the tie rule's (:func:`model.choose`)."""
    order = sorted(cands, key=lambda c: model.rank_key(c.layout, c.score))
    if order:
        first = model.choose([c.layout for c in order], [c.score for c in order], tol)
        order.insert(0, order.pop(first))
    return order
