"""Row-group pruning: charge a query only the row groups it meets (PAW §V-A, physically).

File-level pruning reads a whole file as soon as its min/max might match. A Parquet
reader (DuckDB, Spark, pyarrow) then skips the row groups whose own min/max cannot match,
so a file written in STR order with ``n_mbr`` row groups (PAW's precise descriptor,
§V-A; ``engine.spark.str_rowgroups``) costs only the row groups a query meets. This
module refines a file-level :class:`~engine.scan.fragment_scan.FragmentScan` with the row
groups' statistics:

* a scanned file with several row groups stays scanned only if some row group might
  match (the same conservative test as for files, :func:`engine.scan.estimate.evaluate_boxes`);
  otherwise it is pruned;
* it is charged the projection-aware bytes of the row groups met: the compressed sizes of
  the queried columns' chunks in those row groups, from the footers (the native store keeps
  them in its ``.rowgroups.parquet``). Where a row group's sizes are not
  known (a row-group file without them), the file's projection-aware bytes are shared
  among its row groups by rows, ``read_bytes * (rows of the row groups met) / rows``;
* it is fully covered when every row group is covered, and its utilization is the
  row-weighted sum of its row groups' utilizations (still the share of the file's rows
  that match, so ``util * rows`` keeps meaning matching rows).

Files with one row group are left as the file-level analysis has them, and only files
with more than one are held here (a table of 1,000,000 one-row-group files adds
nothing). Everything is arrays: the row groups of the scanned files are gathered
by a CSR offset per file and aggregated with ``np.add.reduceat``.

A snapshot never changes, so :func:`for_snapshot` computes its row groups once: kept on
the snapshot object (a process that analyses it again, e.g. the dashboard) and on disk
beside the zonemap cache (:mod:`engine.table.zonemap_cache`'s format, in
``<home>/cache/zonemaps/<table>/.rowgroups/``), so a fresh process memory-maps them
instead of reading the row-group files and matching 10^6 paths again (a tenth of the cold cost;
bench/paw/README.md). For an
open format, a data file whose footer could not be read when the entry was written stays
file-level for that snapshot.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.scan.batched import ragged_ranges
from engine.scan.estimate import cached_read_bytes, evaluate_boxes
from engine.scan.fragment_scan import FragmentScan
from engine.table import footers, manifest, zonemap_cache
from engine.table.model import ZoneMaps

if TYPE_CHECKING:
    from engine.table.model import Snapshot, TableSchema
    from engine.table.store import TableStore
    from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class RowGroupMaps:
    """The row groups of a snapshot's files that have more than one.

    ``zonemaps`` holds one entry per row group, grouped by file in snapshot order;
    the row groups of the file at position ``p`` are ``zonemaps[start[p]:start[p + 1]]``
    (an empty slice for a file with at most one), and ``zonemaps.created_seq`` holds that
    position ``p`` (what the disk cache rebuilds ``start`` from). ``total`` is the number
    of row groups of the whole table (a file with one counts one).
    """

    zonemaps: "ZoneMaps"
    start: np.ndarray  # int64, len(files) + 1
    total: int

    @classmethod
    def build(cls, files: "ZoneMaps", groups: "ZoneMaps", owner: np.ndarray) -> "RowGroupMaps | None":
        """From the row groups ``groups`` whose file is at ``owner[i]`` in ``files`` (any
        order, owner -1 = a file not in the snapshot); None when no file has more than one."""
        owner = np.asarray(owner, dtype=np.int64)
        keep = owner >= 0
        counts = np.bincount(owner[keep], minlength=len(files)) if keep.any() else np.zeros(len(files), np.int64)
        multi = counts > 1
        if not multi.any():
            return None
        keep &= multi[np.where(owner >= 0, owner, 0)]
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(owner[idx], kind="stable")]
        start = np.zeros(len(files) + 1, dtype=np.int64)
        np.cumsum(np.where(multi, counts, 0), out=start[1:])
        total = int(np.where(multi, counts, 1).sum())
        kept = dataclasses.replace(groups.subset(idx), created_seq=owner[idx])
        return cls(kept, start, total)

    @classmethod
    def from_owned(cls, n_files: int, zonemaps: ZoneMaps) -> "RowGroupMaps | None":
        """Back from :attr:`zonemaps` alone (their ``created_seq`` = owner position, sorted):
        what the disk cache stores; None for an empty one (no file has several)."""
        if not len(zonemaps):
            return None
        counts = np.bincount(np.asarray(zonemaps.created_seq, dtype=np.int64), minlength=n_files)
        start = np.zeros(n_files + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        return cls(zonemaps, start, int(n_files - int((counts > 0).sum()) + len(zonemaps)))

    @classmethod
    def of(cls, files: "ZoneMaps", groups: "ZoneMaps | None") -> "RowGroupMaps | None":
        """From row-group zonemaps whose ``paths`` name their file
        (``TableStore.row_group_zonemaps``); row groups of files not in ``files`` are
        ignored. Paths are matched by Arrow (``index_in``), not a Python dict."""
        if groups is None or not len(groups):
            return None
        owner = pc.index_in(pa.array(groups.paths, pa.string()),
                            value_set=pa.array(files.paths, pa.string()))
        owner = np.asarray(pc.fill_null(owner, -1).to_numpy(), dtype=np.int64)
        return cls.build(files, groups, owner)

    def __len__(self) -> int:
        return len(self.zonemaps)


def refine(scan: FragmentScan, groups: RowGroupMaps | None, fragment: "ScanFragment",
           rows: np.ndarray) -> FragmentScan:
    """``scan`` (file level) with its multi-row-group files charged by the row groups met.

    ``rows`` are the files' row counts (``ZoneMaps.rows``). A fragment without boxes reads
    everything: only the row-group count is added.
    """
    if groups is None:
        return scan
    index = scan.index
    lengths = groups.start[index + 1] - groups.start[index]
    has = lengths > 0
    read = scan.read_bytes[index]
    single = int((~has).sum())
    if not fragment.boxes or not has.any():
        return FragmentScan.sparse(scan.query_id, scan.n, index, scan.covered, scan.util,
                                   scan.read_bytes, scan.predicated_columns, read.astype(np.float64),
                                   (single + int(lengths.sum()), groups.total))
    sel = ragged_ranges(groups.start[index[has]], lengths[has])
    met, cov, util = evaluate_boxes(groups.zonemaps, fragment, sel)
    rg_rows = groups.zonemaps.rows[sel].astype(np.float64)
    firsts = np.concatenate(([0], np.cumsum(lengths[has])[:-1]))
    met_rows = np.add.reduceat(np.where(met, rg_rows, 0.0), firsts)
    # bytes of the row groups met, from their own sizes; a file with a row group of unknown
    # size (a row-group file written before the sizes were kept) shares its bytes by rows
    rg_read = cached_read_bytes(groups.zonemaps, tuple(dict.fromkeys([*fragment.columns,
                                                                       *fragment.predicated_columns])))[sel]
    known = np.add.reduceat((groups.zonemaps.bytes[sel] > 0).astype(np.int64), firsts) == lengths[has]
    met_bytes = np.add.reduceat(np.where(met, rg_read, 0.0), firsts)
    n_met = np.add.reduceat(met.astype(np.int64), firsts)
    all_cov = np.add.reduceat((cov & met).astype(np.int64), firsts) == lengths[has]
    used = np.add.reduceat(np.where(met, util * rg_rows, 0.0), firsts)
    part_rows = rows[index[has]].astype(np.float64)
    denom = np.where(part_rows > 0, part_rows, 1.0)

    charged = read.astype(np.float64).copy()
    covered = scan.covered.copy()
    utils = scan.util.copy()
    charged[has] = np.where(known, met_bytes, read[has] * np.minimum(met_rows / denom, 1.0))
    covered[has] = all_cov
    utils[has] = np.where(all_cov, 1.0, np.minimum(used / denom, 1.0))
    alive = np.ones(len(index), dtype=bool)
    alive[has] = n_met > 0
    count = single + int(n_met.sum())
    return FragmentScan.sparse(scan.query_id, scan.n, index[alive], covered[alive], utils[alive],
                               scan.read_bytes, scan.predicated_columns, charged[alive],
                               (count, groups.total))


#: an open-format table (Iceberg, Delta) keeps no row-group statistics in its metadata: up to
#: this many files, their Parquet footers are read (cached by path and size in
#: ``engine.table.footers``); a larger one stays file-level
MAX_FOOTER_FILES = 10_000


#: bumped whenever what a row-group cache entry holds changes (part of its key)
CACHE_VERSION = 1


def if_enabled(store: "TableStore", table: str, snapshot: "Snapshot") -> RowGroupMaps | None:
    """``snapshot``'s row groups (:func:`for_snapshot`) when the store's
    ``settings.prune_row_groups`` asks for the row-group scan analysis, else None (file
    level): the one switch every view, plan and report charges its scans by."""
    if not store.settings.prune_row_groups:
        return None
    return for_snapshot(store, table, snapshot)


def for_snapshot(store: "TableStore", table: str, snapshot: "Snapshot",
                 max_footer_files: int = MAX_FOOTER_FILES) -> RowGroupMaps | None:
    """The row groups of ``snapshot``'s multi-row-group files: from the native store's
    row-group files, or for an open format from the data files' footers (at most
    ``max_footer_files`` files); None when every file holds one row group.

    Computed once per snapshot: remembered on the snapshot object and stored on disk
    (see the module docstring); a cache that cannot be written only loses the speed-up."""
    memo = snapshot.__dict__.setdefault("_row_group_maps", {})
    if max_footer_files in memo:
        return memo[max_footer_files]
    info = store.info(table)
    files = snapshot.zonemaps()
    native = info.format == "native"
    if not native and len(files) > max_footer_files:
        memo[max_footer_files] = None
        return None
    path = _cache_path(store, info, snapshot, files, native, max_footer_files)
    cached = zonemap_cache.load(path, snapshot.schema)
    if cached is not None and (not len(cached) or int(cached.created_seq.max()) < len(files)):
        out = RowGroupMaps.from_owned(len(files), cached)
    else:
        if native:
            out = RowGroupMaps.of(files, store.row_group_zonemaps(table, snapshot.id))
        else:
            out = RowGroupMaps.of(files, footer_row_groups(list(snapshot.partitions), snapshot.schema))
        zonemap_cache.store(path, snapshot.schema, out.zonemaps if out is not None
                            else files.subset(np.zeros(0, dtype=np.int64)))
    memo[max_footer_files] = out
    return out


def _cache_path(store: "TableStore", info, snapshot: "Snapshot", files: ZoneMaps, native: bool,
                max_footer_files: int):
    """The disk entry of ``snapshot``'s row groups. A native snapshot is immutable and its id
    unique within a registration (location, creation time), as for the zonemap cache; an
    open format's snapshot id is the format's (a Delta table created again in place starts
    at version 0 again), so its files' paths, rows and sizes are part of the key too."""
    identity = ["rowgroups", CACHE_VERSION, info.location, info.created_at, info.format,
                snapshot.id, len(files)]
    digest = hashlib.sha256(np.ascontiguousarray(files.rows).tobytes())
    digest.update(np.ascontiguousarray(files.bytes).tobytes())
    if not native:
        identity.append(max_footer_files)
        digest.update("\0".join(map(str, files.paths)).encode())
    identity.append(digest.hexdigest())
    return zonemap_cache.cache_path(store.settings.home, f"{info.name}/.rowgroups", identity)


def footer_row_groups(partitions: list, schema: "TableSchema") -> "ZoneMaps | None":
    """Row-group zonemaps of the ``partitions`` of several row groups, from their footers
    (``footers.row_groups_for``; a file that cannot be read stays file-level)."""
    groups = {path: g for path, g in footers.row_groups_for(partitions, schema).items() if len(g) > 1}
    if not groups:
        return None
    return manifest.row_groups_to_zonemaps(schema, manifest.row_groups_table(schema, groups))
