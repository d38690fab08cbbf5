"""What a plan will do to each query and each column, predicted from zonemaps alone.

Before a rewrite only the zonemaps are known, so the new files' zonemaps are predicted with
the assumption the pruning estimate already makes (values uniform within a partition's
``[min, max]``, :mod:`engine.scan.pruning`):

* on a group's key columns, rows are reordered: the group's values, a row-weighted mixture
  of uniform ranges, are cut at equal-row quantiles into the new files. One key column
  gives one slice per file (a sort); ``d`` key columns (Z-order, Hilbert, Qd-tree) give
  about ``files ** (1/d)`` slices per column (:func:`key_grid`: a grid of at most
  ``files`` cells, every cell a file), the grid those curves approximate;
* on every other column, the rewrite mixes the rows of the partitions that feed a new
  file: those whose key range overlaps the file's slice. Its range becomes the union of
  their ranges (the whole group's union when no key column can be cut). This is the side
  effect a sort on one column has on a column the old order served (the loss WAIR's
  savings do not count; the cost issue's "net of losses"), while a column correlated
  with the key keeps most of its clustering.

The prediction then scores every query of the window on both zonemaps (bytes and
partitions read before and after) and every filtered column's average depth. String key
columns keep the union (no interpolation between strings): a conservative prediction.

With row-group pruning on (``settings.prune_row_groups``, :mod:`engine.scan.rowgroups`)
both sides are charged as the scan analysis charges them: before with the snapshot's row
groups, after with :func:`predicted_with_row_groups` (untouched files keep theirs; new
files hold the row groups their group writes).

Example (two partitions of 100 rows, both spanning a = [0, 10]; b = [0, 1] and [2, 3]):
>>> import numpy as np
>>> from engine.policy.base import PlanGroup
>>> from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
>>> schema = TableSchema((("a", "float"), ("b", "float")))
>>> parts = [Partition(f"p{i}", 100, 1000, {"a": ColumnStats(0.0, 10.0), "b": ColumnStats(2.0 * i, 2.0 * i + 1)})
...          for i in range(2)]
>>> after = predicted_zonemaps(ZoneMaps.from_partitions(schema, parts),
...                            [PlanGroup(("p0", "p1"), "sort", ("a",))])
>>> after.column("a").lo.tolist(), after.column("a").hi.tolist()
([0.0, 5.0], [5.0, 10.0])
>>> after.column("b").lo.tolist(), after.column("b").hi.tolist()
([0.0, 0.0], [3.0, 3.0])
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.layout.output import OutputShape, WriteTarget, output_shape
from engine.metrics.mixture import equal_weight_cuts
from engine.metrics.overlap import column_clustering
from engine.policy.costmodel import scan_seconds, write_target_of
from engine.policy.file_sources import SourceMasks, file_slice, source_bounds
from engine.scan.pruning import analyze_workload, fragment_key
from engine.scan.rowgroups import RowGroupMaps
from engine.scan.window_bytes import window_bytes
from engine.table.model import ColumnZoneMap, ZoneMaps

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.policy.base import PlanGroup
    from engine.workload.model import ScanFragment


def predicted_zonemaps(zm: ZoneMaps, groups: Sequence["PlanGroup"],
                       target: WriteTarget | None = None) -> ZoneMaps:
    """``zm`` with each group's partitions replaced by the files the executor writes for
    it (:func:`engine.layout.output.output_shape` under the table's ``target``; None: a
    table that sets no size, so each group keeps its inputs' granularity), their zonemaps
    predicted as the module docstring says; untouched partitions keep theirs."""
    return _predict(zm, groups, target=target)[0]


def predicted_with_row_groups(zm: ZoneMaps, groups: Sequence["PlanGroup"],
                              row_groups: "RowGroupMaps | None",
                              target: WriteTarget | None = None) -> tuple[ZoneMaps, "RowGroupMaps | None"]:
    """:func:`predicted_zonemaps` and the row groups of its files, for the row-group scan
    analysis (``settings.prune_row_groups``, :mod:`engine.scan.rowgroups`).

    * an untouched file keeps its own row groups (``row_groups``, the snapshot's, matched
      by path), so a query that reads only untouched files is charged the same before and
      after;
    * a new file holds the row groups the executor writes for its group
      (:func:`engine.layout.output.output_shape`: PAW's ``n_mbr`` STR row groups (§V-A),
      PTO's row-group size, the table's, else the inputs' own row-group size). With several, the file's rows are cut along the group's first key
      column at equal-row quantiles of the same mixture the files are cut from (the order
      the executor writes a sorted file in; for a curve or PAW's tree the first key within
      the file's cell, an approximation); every other column keeps the file's range
      narrowed to the union over the partitions whose first-key range meets the row
      group's slice (as a file's range is narrowed to its slice's sources). A group whose
      first key cannot be cut (a string) keeps one row group per file.
    """
    after, new_rg, new_owner = _predict(zm, groups, with_row_groups=True, target=target,
                                        row_groups=row_groups)
    parts: list[ZoneMaps] = []
    owners: list[np.ndarray] = []
    if row_groups is not None and len(row_groups):
        kept = RowGroupMaps.of(after, row_groups.zonemaps)  # new files match no old path
        if kept is not None:
            parts.append(kept.zonemaps)
            owners.append(np.asarray(kept.zonemaps.created_seq, dtype=np.int64))
    if new_rg is not None and len(new_rg):
        parts.append(new_rg)
        owners.append(new_owner)
    if not parts:
        return after, None
    every = parts[0] if len(parts) == 1 else _concat(parts)
    return after, RowGroupMaps.build(after, every, np.concatenate(owners))


def _predict(zm: ZoneMaps, groups: Sequence["PlanGroup"], with_row_groups: bool = False,
             target: WriteTarget | None = None, row_groups: "RowGroupMaps | None" = None
             ) -> tuple[ZoneMaps, ZoneMaps | None, np.ndarray]:
    """The predicted zonemaps, and (``with_row_groups``) the zonemaps of the new files'
    row groups with each one's file as its position in the first (``owner``; None and
    empty when no new file holds several)."""
    target = target or WriteTarget()
    position = {str(p): i for i, p in enumerate(zm.paths)}
    touched = np.zeros(len(zm), dtype=bool)
    new_files: list[ZoneMaps] = []
    new_rg: list[ZoneMaps] = []
    owners: list[np.ndarray] = []
    count = 0  # new files so far
    for g, group in enumerate(groups):
        idx = np.array([position[p] for p in group.partitions if p in position], dtype=np.int64)
        if idx.size == 0:
            continue
        touched[idx] = True
        shape = output_shape(zm.rows[idx], int(zm.bytes[idx].sum()), target, group.layout_params,
                             group.layout, input_row_group_rows(zm, idx, row_groups))
        files, rgs, owner = _rewrite_group(zm, idx, tuple(group.columns), g, shape, with_row_groups)
        if rgs is not None:
            new_rg.append(rgs)
            owners.append(owner + count)
        new_files.append(files)
        count += len(files)
    keep = np.flatnonzero(~touched)
    kept = zm.subset(keep)
    if not count:
        return kept, None, np.zeros(0, dtype=np.int64)
    # the new files come after every kept one (_concat keeps the order only where every
    # part has one per entry, as before the rewrite)
    seq = int(kept.created_seq.max(initial=0)) + 1
    new = _concat(new_files)
    new = ZoneMaps(paths=new.paths, rows=new.rows, bytes=new.bytes, columns=new.columns,
                   created_seq=np.full(len(new), seq, dtype=np.int64))
    rg = _concat(new_rg) if new_rg else None
    owner = (np.concatenate(owners) + len(kept)) if owners else np.zeros(0, dtype=np.int64)
    return _concat([kept, new]), rg, owner


def _concat(parts: Sequence[ZoneMaps]) -> ZoneMaps:
    """The entries of ``parts`` one after the other (same columns; ``created_seq`` joined
    where every part has one per entry)."""
    first = parts[0]
    columns = {name: ColumnZoneMap(cz.ltype, *(np.concatenate([getattr(p.columns[name], f) for p in parts])
                                               for f in ("lo", "hi", "valid", "null_count", "compressed_bytes")))
               for name, cz in first.columns.items()}
    seqs = [p.created_seq for p in parts]
    seq = (np.concatenate(seqs) if all(len(q) == len(p.paths) for q, p in zip(seqs, parts))
           else np.zeros(0, dtype=np.int64))
    return ZoneMaps(paths=np.concatenate([p.paths for p in parts]),
                    rows=np.concatenate([p.rows for p in parts]),
                    bytes=np.concatenate([p.bytes for p in parts]), columns=columns, created_seq=seq)


def input_row_group_rows(zm: ZoneMaps, idx: np.ndarray, row_groups: "RowGroupMaps | None") -> int | None:
    """The median rows per row group of the files at ``idx`` (a file of one row group
    counts its rows), from the snapshot's row groups; None when they are not known."""
    if row_groups is None or not len(row_groups) or idx.size == 0:
        return None
    counts = np.maximum(row_groups.start[idx + 1] - row_groups.start[idx], 1)
    return max(1, int(round(float(np.median(zm.rows[idx] / counts)))))


def _rewrite_group(zm: ZoneMaps, idx: np.ndarray, keys: tuple[str, ...], g: int,
                   shape: OutputShape, with_row_groups: bool = False
                   ) -> tuple[ZoneMaps, ZoneMaps | None, np.ndarray]:
    """The group's new files (``shape.files`` of them, ``created_seq`` 0), and
    ``with_row_groups`` the row groups of its files when each holds several
    (:func:`predicted_with_row_groups`) with each one's file (its position among the
    group's new files). Columnar: O(files + partitions log partitions) per column, no
    per-file Python objects."""
    files = shape.files
    rows, nbytes = zm.rows[idx].astype(np.float64), zm.bytes[idx]
    radix = key_grid(files, len(keys))
    slices = radix[0] if radix else files  # the first key's slices
    file_rows, file_bytes = int(round(rows.sum() / files)), int(round(nbytes.sum() / files))
    cut_of: dict[str, np.ndarray] = {}
    for name in keys:
        cz = zm.columns.get(name)
        if cz is not None and bool(cz.valid[idx].all()) and cz.ltype != "string":
            cut_of[name] = _quantile_cuts(cz.lo[idx], cz.hi[idx], rows, radix[keys.index(name)])
    # each file's union of a non-key column over its sources, all files at once (a mask
    # per file is files x partitions bytes and as many passes: engine.policy.file_sources)
    keycuts = [(zm.columns[n].lo[idx].astype(np.float64), zm.columns[n].hi[idx].astype(np.float64),
                np.asarray(c, dtype=np.float64), keys.index(n)) for n, c in cut_of.items()]
    j = np.arange(files)
    columns: dict[str, ColumnZoneMap] = {}
    for name, cz in zm.columns.items():
        lo, hi, valid = cz.lo[idx], cz.hi[idx], cz.valid[idx]
        all_valid = bool(valid.all())
        union = (min(lo[valid].tolist()), max(hi[valid].tolist())) if valid.any() else (lo[0], hi[0])
        cuts = cut_of.get(name)
        nulls = int(cz.null_count[idx].sum()) if (cz.null_count[idx] >= 0).all() else -1
        file_nulls = -1 if nulls < 0 else int(round(nulls / files))
        file_cbytes = int(round(cz.compressed_bytes[idx].sum() / files))
        if cuts is not None:
            s = file_slice(j, keys.index(name), slices, radix)
            f_lo, f_hi = cuts[s].astype(cz.lo.dtype), cuts[s + 1].astype(cz.hi.dtype)
        else:
            f_lo, f_hi = np.full(files, union[0], dtype=cz.lo.dtype), np.full(files, union[1], dtype=cz.hi.dtype)
            if keycuts:
                bounds = source_bounds(keycuts, slices, files, lo, hi, valid, radix)
                f_lo[bounds.has], f_hi[bounds.has] = bounds.lo[bounds.has], bounds.hi[bounds.has]
        columns[name] = ColumnZoneMap(cz.ltype, f_lo, f_hi, np.full(files, all_valid, dtype=bool),
                                      np.full(files, file_nulls, dtype=np.int64),
                                      np.full(files, file_cbytes, dtype=np.int64))
    out = ZoneMaps(paths=np.array([f"<predicted group {g} file {i}>" for i in range(files)], dtype=object),
                   rows=np.full(files, file_rows, dtype=np.int64),
                   bytes=np.full(files, file_bytes, dtype=np.int64), columns=columns,
                   created_seq=np.zeros(files, dtype=np.int64))
    per_file = shape.row_groups_per_file if with_row_groups else 1
    rgs, owner = _file_row_groups(zm, idx, keys, cut_of, slices, out, per_file, rows)
    return out, rgs, owner


def _file_row_groups(zm: ZoneMaps, idx: np.ndarray, keys: tuple[str, ...], cut_of: dict[str, np.ndarray],
                     slices: int, files: ZoneMaps, per_file: int,
                     rows: np.ndarray) -> tuple[ZoneMaps | None, np.ndarray]:
    """The row groups of the new ``files`` when each holds several, and each one's file
    (its index in ``files``): the file's rows cut along the first key column at equal-row
    quantiles (``slices * k`` cuts of the group's mixture, ``k`` per slice), its other
    columns' ranges the file's, narrowed to the row group's sources
    (:func:`_row_group_bounds`), its rows and bytes shared equally. None when one row group each
    or the first key cannot be cut."""
    none = (None, np.zeros(0, dtype=np.int64))
    if not len(files) or not keys or keys[0] not in cut_of:
        return none
    file_rows, file_bytes = int(files.rows[0]), int(files.bytes[0])
    k = min(int(per_file), max(file_rows, 1))
    if k <= 1:
        return none
    key = keys[0]
    cz = zm.columns[key]
    k_lo, k_hi = cz.lo[idx], cz.hi[idx]
    fine = _quantile_cuts(k_lo, k_hi, rows, slices * k)
    owner = np.repeat(np.arange(len(files)), k)
    r = np.tile(np.arange(k), len(files))
    at = (owner % slices) * k + r  # the first key's slice (keys.index(key) = 0), then the row group
    base_rows, extra = divmod(file_rows, k)
    fine_cut = [(k_lo.astype(np.float64), k_hi.astype(np.float64), np.asarray(fine, dtype=np.float64), 0)]
    columns: dict[str, ColumnZoneMap] = {}
    for name, fz in files.columns.items():
        lo, hi = ((fine[at].astype(fz.lo.dtype), fine[at + 1].astype(fz.hi.dtype)) if name == key
                  else _row_group_bounds(zm.columns[name], idx, fine_cut, slices * k, at,
                                         fz.lo[owner], fz.hi[owner]))
        nulls, cbytes = int(fz.null_count[0]), int(fz.compressed_bytes[0])
        columns[name] = ColumnZoneMap(fz.ltype, lo, hi, fz.valid[owner],
                                      np.full(owner.size, -1 if nulls < 0 else int(round(nulls / k)), np.int64),
                                      np.full(owner.size, int(round(cbytes / k)), np.int64))
    rgs = ZoneMaps(paths=files.paths[owner], rows=(base_rows + (r < extra)).astype(np.int64),
                   bytes=np.full(owner.size, int(round(file_bytes / k)), dtype=np.int64), columns=columns,
                   created_seq=np.zeros(owner.size, dtype=np.int64))
    return rgs, owner


def _row_group_bounds(cz: ColumnZoneMap, idx: np.ndarray, fine_cut: list, fine_slices: int,
                      at: np.ndarray, file_lo: np.ndarray, file_hi: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """A non-key column's range in each row group (``at``: its slice of the first key's
    ``fine_slices`` equal-row slices): its file's range narrowed to the union over the
    group's partitions whose first-key range overlaps the row group's slice (the rule the
    file-level prediction applies to the file's slice, :mod:`engine.policy.file_sources`),
    so a column correlated with the sort key (a commit date beside a ship date) keeps its
    clustering inside the file as it does across files. Both ranges hold the row group's
    rows under the uniform-within-a-partition assumption, so their intersection does."""
    bounds = source_bounds(fine_cut, fine_slices, fine_slices, cz.lo[idx], cz.hi[idx], cz.valid[idx])
    has = bounds.has[at]
    s_lo, s_hi = bounds.lo[at], bounds.hi[at]
    lo, hi = file_lo.copy(), file_hi.copy()
    raise_lo = has & (s_lo > file_lo)
    lower_hi = has & (s_hi < file_hi)
    lo[raise_lo] = s_lo[raise_lo]
    hi[lower_hi] = s_hi[lower_hi]
    crossed = lo > hi  # the two approximations disagree: keep the file's range
    lo[crossed], hi[crossed] = file_lo[crossed], file_hi[crossed]
    return lo, hi


def _sources(zm: ZoneMaps, idx: np.ndarray, keys: tuple[str, ...], cut_of: dict[str, np.ndarray],
             slices: int, files: int, radix: Sequence[int] | None = None) -> "Sequence[np.ndarray] | None":
    """Per new file, which of the group's partitions can contribute rows to it: those whose
    range on every cut key column overlaps the file's slice. A non-key column's range in
    that file is the union over these partitions only, so a column correlated with the key
    (a commit date beside a ship date) keeps most of its clustering. None when no key
    column could be cut (then every partition may contribute). Each file's mask is made
    when asked for (:class:`engine.policy.file_sources.SourceMasks`): a list of them is
    files x partitions bytes, 10 GB for a group of 100,000 partitions."""
    if not cut_of:
        return None
    return SourceMasks([(zm.columns[name].lo[idx].astype(np.float64), zm.columns[name].hi[idx].astype(np.float64),
                         np.asarray(cuts, dtype=np.float64), keys.index(name)) for name, cuts in cut_of.items()],
                       slices, files, radix)


def key_grid(files: int, keys: int) -> list[int]:
    """The slices of each key column a group of ``keys`` key columns written as ``files``
    files is predicted in: one key, ``files`` slices; ``d`` keys (Z-order, Hilbert,
    Qd-tree), ``s = floor(files ** (1/d))`` slices on every key but the first and
    ``files // s ** (d - 1)`` on the first, so the grid holds at most ``files`` cells and
    every cell has a file (file ``j`` in cell ``j`` in mixed radix, the files past the
    grid's cells in the first cells again): the predicted files cover the group's whole key
    domain. (``ceil(files ** (1/d))`` per key left cells of the grid without a file when
    ``files`` is not a power: 20 files on two keys in a 5 x 5 grid left the top fifth of
    the second key in no file, and a query there was predicted to read nothing.)

    >>> key_grid(20, 1), key_grid(20, 2), key_grid(16, 2), key_grid(3, 2), key_grid(10, 3)
    ([20], [5, 4], [4, 4], [3, 1], [2, 2, 2])
    """
    files, keys = max(int(files), 1), max(int(keys), 1)
    if keys == 1:
        return [files]
    s = max(1, int(round(files ** (1.0 / keys))))
    while s > 1 and s ** keys > files:
        s -= 1
    while (s + 1) ** keys <= files:
        s += 1
    return [max(s, files // s ** (keys - 1))] + [s] * (keys - 1)


def _quantile_cuts(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray, slices: int) -> np.ndarray:
    """``slices + 1`` equal-weight cut points of the mixture of uniform ``[lo, hi]`` ranges,
    a zero-width range being a point mass: the inverse of the mixture's CDF, linear between
    range ends and jumping at point masses (one sweep over the sorted ends, O(n log n):
    :func:`engine.metrics.mixture.equal_weight_cuts`)."""
    return equal_weight_cuts(lo, hi, weights, slices)


def plan_impact(zm: ZoneMaps, groups: Sequence["PlanGroup"], fragments: Sequence["ScanFragment"],
                columns: Sequence[str], row_groups: "RowGroupMaps | None" = None,
                row_group_level: bool | None = None,
                target: WriteTarget | None = None) -> dict[str, list[dict[str, Any]]]:
    """Per query (partitions and bytes read before and after) and per column (average depth
    before and after) for the predicted rewrite; queries in ``fragments`` order.

    ``row_group_level`` (default: whether ``row_groups`` is given) charges each query as the
    row-group scan analysis does (``settings.prune_row_groups``): before with the snapshot's
    ``row_groups`` (:func:`engine.scan.rowgroups.for_snapshot`; None when every file holds
    one), after with :func:`predicted_with_row_groups`. Partitions then count the files a
    query still reads (a file none of whose row groups can match is pruned). ``target``:
    the table's own file sizes (:func:`engine.layout.output.output_shape`)."""
    level = row_groups is not None if row_group_level is None else row_group_level
    if level:
        after, after_rg = predicted_with_row_groups(zm, groups, row_groups, target)
    else:
        after, after_rg, row_groups = predicted_zonemaps(zm, groups, target), None, None
    queries = []
    for frag, b, a in zip(fragments, analyze_workload(zm, fragments, row_groups),
                          analyze_workload(after, fragments, after_rg)):
        queries.append({"query_id": frag.query_id,
                        "partitions_before": b.scanned_count, "partitions_after": a.scanned_count,
                        "bytes_before": float(b.bytes_scanned), "bytes_after": float(a.bytes_scanned)})
    depth = []
    for name in columns:
        before, later = column_clustering(zm, name), column_clustering(after, name)
        depth.append({"column": name, "depth_before": before.average_depth,
                      "depth_after": later.average_depth})
    return {"queries": queries, "columns": depth}


def rewrite_losses(zm: ZoneMaps, groups: Sequence["PlanGroup"], fragments: Sequence["ScanFragment"],
                   settings: "Settings", read_sizes: Sequence[float] | None = None,
                   with_depth: bool = True, row_groups: "RowGroupMaps | None" = None,
                   row_group_level: bool | None = None) -> dict[str, Any]:
    """The predicted loss of a rewrite: the queries of ``fragments`` that would read MORE
    bytes after it (a filter on a column whose clustering the rewrite mixes), per query
    and per filtered column ("net of losses"; WAIR's equation 3 counts only gains).

    Only the rewritten partitions can change, so each query is scored on their zonemaps
    before and on their predicted replacements (:func:`predicted_zonemaps`); a query's
    loss is ``max(0, bytes after - bytes before)`` on them, priced like equation 3:
    ``t_read(Q) * lost / size_read(Q)`` when the fragment has a measured duration and
    ``read_sizes[i]`` (size_read(Q) on the whole table) is given, else the bytes at scan
    rate. A query's loss is split equally over its predicated columns (section 4.4's
    convention). ``with_depth`` adds each losing column's average depth on the whole
    table before and after. ``row_groups`` / ``row_group_level`` as in
    :func:`plan_impact`: the rewritten files' own row groups before, the predicted ones
    after (so a file written with several row groups is not taken for a loss when its
    replacement would be written with as many).

    Returns ``{"bytes": total, "cpu_seconds": total, "queries": n, "columns": [{"column",
    "queries", "bytes_lost", "cpu_seconds_lost", "depth_before", "depth_after"}]}``,
    columns by bytes lost, largest first.
    """
    empty = {"bytes": 0.0, "cpu_seconds": 0.0, "queries": 0, "columns": []}
    level = row_groups is not None if row_group_level is None else row_group_level
    target = write_target_of(settings)
    score = score_rewrite(zm, groups, fragments, target, row_groups, bool(level))
    if score is None:
        return empty
    index = {id(f): i for i, f in enumerate(fragments)}
    per_col: dict[str, dict[str, float]] = {}
    total_b = total_s = 0.0
    n = 0
    for frag, b, a in zip(score.fragments, score.before.tolist(), score.after.tolist()):
        lost = a - b
        if lost <= 0:
            continue
        size = float(read_sizes[index[id(frag)]]) if read_sizes is not None else 0.0
        if frag.duration_ms and frag.duration_ms > 0 and size > 0:
            seconds = frag.duration_ms / 1000.0 * lost / size
        else:
            seconds = scan_seconds(lost, settings)
        n += 1
        total_b += lost
        total_s += seconds
        cols = frag.predicated_columns
        for c in cols:
            e = per_col.setdefault(c, {"queries": 0, "bytes_lost": 0.0, "cpu_seconds_lost": 0.0})
            e["queries"] += 1
            e["bytes_lost"] += lost / len(cols)
            e["cpu_seconds_lost"] += seconds / len(cols)
    if n == 0:
        return empty
    after = (None if not with_depth else predicted_zonemaps(zm, groups, target) if score.row_groups
             else _with_new_files(zm, score))
    columns = []
    for c, e in sorted(per_col.items(), key=lambda kv: -kv[1]["bytes_lost"]):
        row: dict[str, Any] = {"column": c, "queries": int(e["queries"]),
                               "bytes_lost": e["bytes_lost"],
                               "cpu_seconds_lost": e["cpu_seconds_lost"]}
        if after is not None and c in zm.columns:
            row["depth_before"] = column_clustering(zm, c).average_depth
            row["depth_after"] = column_clustering(after, c).average_depth
        columns.append(row)
    return {"bytes": total_b, "cpu_seconds": total_s, "queries": n, "columns": columns}


@dataclass(frozen=True)
class RewriteScore:
    """A window scored on a rewrite's partitions: ``old`` (the partitions ``touched``, in
    table order) before, ``new`` (their predicted replacements, row groups predicted when
    ``row_groups``: ``new_row_groups``) after, and the bytes each of ``fragments`` (the window's queries with
    a predicate) reads from them, ``before`` and ``after``, as the scan analysis charges
    them (:func:`engine.scan.window_bytes.window_bytes`)."""

    touched: np.ndarray
    old: ZoneMaps
    new: ZoneMaps
    row_groups: bool
    new_row_groups: "RowGroupMaps | None"
    fragments: tuple
    before: np.ndarray
    after: np.ndarray


def score_rewrite(zm: ZoneMaps, groups: Sequence["PlanGroup"], fragments: Sequence["ScanFragment"],
                  target: WriteTarget, row_groups: "RowGroupMaps | None" = None,
                  level: bool | None = None) -> RewriteScore | None:
    """The window ``fragments`` scored before and after the rewrite of ``groups`` (None
    when no partition of theirs is in ``zm`` or no fragment has a predicate): what the
    predicted losses (:func:`rewrite_losses`) and the output check
    (:mod:`engine.policy.output_check`) both read. ``level``: charge the rewritten files'
    own row groups (from ``row_groups``) and predict the new files' (True), neither
    (False), or both when the rewritten files have row groups (None).

    The last score is remembered with what it was computed from (``zm`` itself, the groups,
    the target, the row groups, the window's fragments by :func:`fragment_key`), so a
    plan's losses and its output check scan the window once. O(partitions log partitions)
    per column plus O(log partitions) per one-range query; the rest through the exact
    evaluator."""
    position = {str(p): i for i, p in enumerate(zm.paths)}
    touched = np.array(sorted({position[p] for g in groups for p in g.partitions if p in position}),
                       dtype=np.int64)
    frags = tuple(f for f in fragments if f.predicated_columns)
    if touched.size == 0 or not frags:
        return None
    old = zm.subset(touched)
    old_rg = (RowGroupMaps.of(old, row_groups.zonemaps)
              if row_groups is not None and level is not False else None)
    with_rg = old_rg is not None if level is None else bool(level)
    key = (tuple(groups), target, with_rg, tuple(fragment_key(f) for f in frags))
    last = _LAST[0]  # one read: another thread may replace it
    if last is not None and last[0]() is zm and last[1] is row_groups and _same(last[2], key):
        return replace(last[3], fragments=frags)  # equal fragments, the caller's own objects
    if with_rg:
        new, new_rg = predicted_with_row_groups(old, groups, old_rg, target)
    else:
        new, new_rg = predicted_zonemaps(old, groups, target), None
    score = RewriteScore(touched, old, new, with_rg, new_rg, frags, window_bytes(old, frags, old_rg),
                         window_bytes(new, frags, new_rg))
    _LAST[0] = (weakref.ref(zm), row_groups, key, score)
    return score


#: the last score: (a weak reference to its zonemaps, its row groups, its key, the score);
#: one per process, so a long-lived process (the dashboard) holds at most one rewrite's
#: predicted files
_LAST: list[Any] = [None]


def _same(a: tuple, b: tuple) -> bool:
    """Whether two score keys are equal (False when a layout parameter cannot say:
    an array compared element-wise)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _with_new_files(zm: ZoneMaps, score: RewriteScore) -> ZoneMaps:
    """:func:`predicted_zonemaps` of the whole table from a score predicted without row
    groups: the untouched partitions, then the score's new files created after them (the
    same files: a group's files depend only on its own partitions)."""
    keep = np.ones(len(zm), dtype=bool)
    keep[score.touched] = False
    kept = zm.subset(np.flatnonzero(keep))
    seq = int(kept.created_seq.max(initial=0)) + 1
    new = score.new
    files = ZoneMaps(paths=new.paths, rows=new.rows, bytes=new.bytes, columns=new.columns,
                     created_seq=np.full(len(new), seq, dtype=np.int64))
    return _concat([kept, files])
