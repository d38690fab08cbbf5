"""Apply a policy's plan groups to a :class:`SimTable`, in memory.

The same operation as the Spark executor (``engine.spark.executor``): for each group, read its
partitions, fit the group's :mod:`engine.layout` ordering on their rows (sort, Z-order,
Hilbert, Qd-tree, PAW), order the rows, cut them into ``ceil(rows / target_rows)`` near-equal
partitions (a Qd-tree's or a PAW tree's leaves each on their own), and replace the group's
partitions with them; a PAW group with ``n_mbr`` > 0 gets each file's rows in STR order as
``n_mbr`` row groups (:func:`str_row_groups`), which the simulator prices.

A rewrite is priced by :func:`rewrite_seconds`, as the engine that runs it pays:

* ``fixed_per="plan"`` (the default; the Spark executor, one job per plan): :func:`engine.policy.costmodel.plan_rewrite_cost`, the function the policies'
  :func:`~engine.policy.costmodel.groups_rewrite_cost` prices a proposal with, so
  ``rewrite_fixed_s`` once per plan, each group's read and sort (k_max splitting), and the
  calibrated layout terms (fitted job, key function, ``file_s`` per output partition). The
  simulator's one difference is the file count: the partitions it actually cut, where the
  policies estimate them with :func:`~engine.policy.costmodel.group_files`.
* the size of a group is the one plans price: its rows x columns x
  ``rewrite_cell_bytes`` once calibrated (:func:`engine.policy.costmodel.work_bytes`), its
  compressed bytes before; so a Spark calibration's per-cell rates are applied to cells, as
  in the plan and in WAIR's cut, not to the simulator's modelled compressed bytes.
* ``fixed_per="group"``: ``rewrite_fixed_s`` per group (one DuckDB ``COPY ... ORDER BY`` per
  group), for the presets' DuckDB-measured economics (:mod:`engine.sim.economics`), which
  measured the fixed cost per statement: charging it once per plan under those economics
  would make multi-group plans look cheaper than DuckDB runs them (bench/sim/README.md), so
  ``simulate()`` keeps it per group there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.design.paw.descriptors import str_order
from engine.layout.groups import ordering_for_group
from engine.policy.base import PlanGroup, RowSampler
from engine.policy.costmodel import (RewriteTerms, layout_seconds, money, plan_rewrite_cost, recluster_cost,
                                     work_bytes)

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.sim.table import SimTable


@dataclass
class ApplyResult:
    """What a rewrite did: partitions in and out, bytes, priced cost."""

    old_pids: np.ndarray
    new_pids: np.ndarray
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    cpu_seconds: float = 0.0
    money: float = 0.0
    groups: int = 0
    layouts: dict[str, int] = field(default_factory=dict)  # layout -> partitions rewritten


QDTREE_FIT_ROWS = 200_000  # Qd-trees are fitted on a sample of at most this many rows
TREE_LAYOUTS = ("qdtree", "paw")  # layouts whose leaves are cut on their own (leaf starts)
#: where a rewrite's fixed cost is paid (module docstring): once per plan, or per group
FIXED_PER = ("plan", "group")


def rewrite_seconds(group_bytes: Sequence[float], layouts: Sequence[str], files: Sequence[int],
                    settings: "Settings", fixed_per: str = "plan") -> float:
    """Seconds of a rewrite of groups of ``group_bytes`` bytes in ``layouts``, written into
    ``files`` partitions each (module docstring for ``fixed_per``); ``group_bytes`` are the
    groups' work bytes (:func:`engine.policy.costmodel.work_bytes`, as :func:`apply_groups`
    passes them).

    >>> from engine.core.config import Settings
    >>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0, file_s=0.5)
    >>> rewrite_seconds([100, 200], ["sort", "sort"], [1, 2], s)  # 2 + 3 + 6 + 3 x 0.5
    12.5
    >>> rewrite_seconds([100, 200], ["sort", "sort"], [1, 2], s, "group")  # one more fixed cost
    14.5
    """
    if fixed_per not in FIXED_PER:
        raise InvalidParameterError(f"fixed_per must be one of {', '.join(FIXED_PER)}, got {fixed_per!r}")
    if not group_bytes:
        return 0.0
    if fixed_per == "plan":
        return plan_rewrite_cost(list(group_bytes), settings, list(layouts), list(files)).cpu_seconds
    return sum(recluster_cost(float(b), settings).cpu_seconds for b in group_bytes) + layout_seconds(
        list(layouts), list(group_bytes), list(files), RewriteTerms.from_settings(settings))


def dataset_sampler(data: Mapping[str, np.ndarray]) -> RowSampler:
    """A :data:`~engine.policy.base.RowSampler` over a simulated table whose rows are ``data``.

    A :class:`~engine.sim.table.SimTable` holds exactly the first ``n`` rows of its dataset
    (ingestion appends rows in order; a rewrite permutes its partitions' rows and never adds
    or drops one), so a uniform sample of all its live partitions is a uniform sample of
    rows ``[0, n)`` with ``n = zonemaps.rows.sum()``. Meant for whole-table designs (PAW):
    ``zonemaps`` must be every live partition.

    >>> from types import SimpleNamespace
    >>> s = dataset_sampler({"x": np.arange(100.0)})
    >>> out = s(SimpleNamespace(rows=np.array([5, 5])), ["x"], 4, 0)["x"]
    >>> len(out), bool((out < 10).all()), len(set(out.tolist()))
    (4, True, 4)
    >>> s(SimpleNamespace(rows=np.array([3])), ["x"], 4, 0)["x"].tolist()
    [0.0, 1.0, 2.0]
    """
    def sample(zonemaps: Any, columns: Sequence[str], max_rows: int, seed: int) -> dict[str, np.ndarray]:
        n = int(np.asarray(zonemaps.rows).sum())
        size = min(len(a) for a in data.values()) if data else 0
        missing = [c for c in columns if c not in data]
        if missing or n > size:
            raise InvalidParameterError(f"the simulated table has no data for {missing or 'rows beyond ' + str(size)}")
        idx = np.arange(n) if n <= max_rows else np.sort(
            np.random.default_rng(seed).choice(n, size=int(max_rows), replace=False))
        return {c: np.asarray(data[c][idx], dtype=np.float64) for c in columns}
    return sample


def order_rows(table: "SimTable", rows: np.ndarray, layout: str, columns: Sequence[str],
               params: Mapping[str, Any] | None = None, seed: int = 0,
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """``rows`` permuted into the layout's order, and for a Qd-tree or a PAW tree the start
    offsets of its segments: a Qd-tree's leaves (each cut on its own into partitions of at
    least the target size, the Qd-tree's minimum block), a PAW tree's *files* as the
    executor writes them (:func:`paw_file_starts`).

    The ordering is the group's :func:`engine.layout.groups.ordering_for_group`, as on
    Spark; a sort key (and a one-column curve) is an exact lexicographic sort. A Qd-tree is
    fitted on a sample of at most :data:`QDTREE_FIT_ROWS` rows, then routes every row.
    """
    cols = [c for c in columns if c in table.data]
    if not cols:
        raise InvalidParameterError(f"layout {layout} over {list(columns)}: no column with data")
    data = {c: table.data[c][rows] for c in cols}
    if layout == "sort" or len(cols) == 1 and layout in ("hilbert", "zorder"):
        keys = [data[c] for c in reversed(cols)]
        return rows[np.lexsort(keys)], None
    group = PlanGroup((), layout, tuple(cols), layout_params=dict(params or {}))
    n = len(rows)
    fit = data
    if layout == "qdtree" and n > QDTREE_FIT_ROWS:
        pick = np.sort(np.random.default_rng(seed).choice(n, size=QDTREE_FIT_ROWS, replace=False))
        fit = {c: a[pick] for c, a in data.items()}
    ordering = ordering_for_group(group, table.types, fit, group_rows=n,
                                  default_leaf_rows=table.target_rows)
    perm = ordering.order(data)
    if layout not in TREE_LAYOUTS:
        return rows[perm], None
    leaf = ordering.keys(data)[perm]
    starts = np.flatnonzero(np.r_[True, leaf[1:] != leaf[:-1]])
    if layout == "paw":
        starts = paw_file_starts(starts, n, table.target_rows)
    return rows[perm], starts


def paw_file_starts(leaf_starts: np.ndarray, n_rows: int, target_rows: int) -> np.ndarray:
    """The files the executor writes for PAW leaves: in each leaf (rows in leaf, then first
    column order), full files of ``target_rows`` rows and one remainder, as Spark's
    ``maxRecordsPerFile`` cuts them; no file holds two leaves (measured against written
    files by ``bench/paw/paw_real.py``).

    >>> paw_file_starts(np.array([0, 5]), 12, 3).tolist()
    [0, 3, 5, 8, 11]
    """
    ends = np.append(leaf_starts[1:], n_rows)
    return np.concatenate([np.arange(a, b, max(1, int(target_rows)), dtype=np.int64)
                           for a, b in zip(leaf_starts, ends)]) if len(leaf_starts) else leaf_starts


def str_row_groups(table: "SimTable", rows: np.ndarray, file_starts: np.ndarray, columns: Sequence[str],
                   n_mbr: int) -> tuple[np.ndarray, np.ndarray]:
    """Each file's rows put in STR order over ``columns`` as ``n_mbr`` row groups, as the
    executor writes a ``paw`` group with ``n_mbr`` > 0 (:mod:`engine.spark.str_rowgroups`,
    the same :func:`~engine.design.paw.descriptors.str_order`); returns the rows and the row
    groups' start offsets (seed 001 §V-A).

    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(data={"x": np.array([0.0, 9, 1, 10, 5])})
    >>> r, s = str_row_groups(t, np.arange(5), np.array([0, 4]), ["x"], 2)
    >>> r.tolist(), s.tolist()
    ([0, 2, 1, 3, 4], [0, 2, 4])
    """
    cols = [c for c in columns if c in table.data]
    ends = np.append(file_starts[1:], len(rows))
    out, starts = [], []
    for a, b in zip(file_starts, ends):
        part = rows[a:b]
        x = np.column_stack([np.asarray(table.data[c][part], dtype=np.float64) for c in cols])
        at = int(a)
        for tile in str_order(x, n_mbr):
            if len(tile):
                out.append(part[tile])
                starts.append(at)
                at += len(tile)
    return (np.concatenate(out) if out else rows), np.asarray(starts, dtype=np.int64)


def apply_groups(table: "SimTable", groups: Sequence["PlanGroup"], settings: "Settings",
                 fixed_per: str = "plan") -> ApplyResult:
    """Rewrite each group's partitions in its layout; partitions named twice are rewritten
    once. Priced by :func:`rewrite_seconds` with ``fixed_per``."""
    seen: set[int] = set()
    live = set(int(p) for p in table.live_pids)
    old_all, new_all = [], []
    res = ApplyResult(np.zeros(0, np.int64), np.zeros(0, np.int64))
    priced: list[tuple[float, str, int]] = []  # (bytes, layout, output partitions) per group
    for g in groups:
        pids = []
        for path in g.partitions:
            pid = table.pid_of(path)
            if pid not in live:
                raise InvalidParameterError(f"plan group names {path}, which is not a live partition")
            if pid not in seen:
                seen.add(pid)
                pids.append(pid)
        if not pids:
            continue
        rows = table.gather(pids)
        nbytes = float(table.zonemaps_of(np.asarray(pids)).bytes.sum())
        ordered, segments = order_rows(table, rows, g.layout, g.columns, dict(g.layout_params))
        n_mbr = int(g.layout_params.get("n_mbr") or 0) if g.layout == "paw" else 0
        row_groups = None
        if n_mbr > 0 and segments is not None:
            ordered, row_groups = str_row_groups(table, ordered, segments, g.columns, n_mbr)
        new = table.replace(pids, ordered, segments, row_groups)
        # priced at the size the policies' plan is priced at (rows x columns x the
        # calibration's bytes per cell once calibrated, else the compressed bytes)
        priced.append((work_bytes(len(rows), nbytes, len(table.schema.columns), settings),
                       g.layout, len(new)))
        res.bytes_read += nbytes
        res.bytes_written += float(table.zonemaps_of(new).bytes.sum())
        res.groups += 1
        res.layouts[g.layout] = res.layouts.get(g.layout, 0) + len(pids)
        old_all.append(np.asarray(pids, dtype=np.int64))
        new_all.append(new)
    if old_all:
        res.old_pids = np.concatenate(old_all)
        res.new_pids = np.concatenate(new_all)
        nbytes, layouts, files = zip(*priced)
        cpu = rewrite_seconds(nbytes, layouts, files, settings, fixed_per)
        res.cpu_seconds, res.money = cpu, money(cpu, settings)
    return res
