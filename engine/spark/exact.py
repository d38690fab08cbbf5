"""Exact utilization: true matching-row counts of every fragment, in ONE Spark job.

The snapshot's files are dealt to the executors; each reads only the predicated columns
of its files with pyarrow and evaluates every fragment's boxes (OR of ANDs of ranges,
NULL never matching) vectorized with numpy per Arrow batch, values encoded by
:mod:`engine.core.logical_types` like the estimate; one small ``groupBy`` sums the per-file counts.
Utilization of a scanned partition is ``matches / rows``; which partitions are scanned,
pruned or fully covered still comes from the zonemaps (that is what the engine's pruning
does), so the exact pass only replaces the uniform estimate and only evaluates a fragment
on the files it scans without fully covering them.

:func:`fragment_sql` renders the same condition as SQL text (DuckDB dialect), used by the
benchmark to have DuckDB compute the same counts.
"""

from __future__ import annotations

import decimal
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyarrow.types as pat

from engine.core.errors import ColumnNotFoundError
from engine.core.logical_types import encode_arrow, encode_scalar, logical_type_of_arrow
from engine.scan import rowgroups
from engine.scan.pruning import FragmentScan, analyze_fragment
from engine.table import fs
from engine.workload.sql.render import sql_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.scan.rowgroups import RowGroupMaps
    from engine.table.model import Snapshot
    from engine.workload.model import Range, ScanFragment

FILE_COLUMN = "__la_file"


def canonical_path(path: str) -> str:
    """One spelling for a path as Spark reports it (``file:/x%20y``) and as snapshots store
    it (``/x y``): ``file:`` scheme stripped, percent-escapes decoded, local paths absolute."""
    p = urllib.parse.unquote(str(path))
    if p.lower().startswith("file:"):
        p = p[5:]
        while p.startswith("//"):
            p = p[1:]
        return fs.normalize(p)
    return fs.normalize(p)


def _resolve(fields: Sequence[str], fragment: "ScanFragment", column: str) -> str:
    lower = {k.lower(): k for k in fields}
    name = column if column in fields else lower.get(column.lower())
    if name is None:
        raise ColumnNotFoundError(
            f"query {fragment.query_id}: column {column!r} is not in the table's files")
    return name


def _compile(fields: Sequence[str], fragments: Sequence["ScanFragment"]) -> list[Any]:
    """Per fragment: None (no boxes: every row) or its boxes as [(column, Range), ...]."""
    plan: list[Any] = []
    for frag in fragments:
        if not frag.boxes:
            plan.append(None)
            continue
        plan.append([[(_resolve(fields, frag, c), r) for c, r in box.items()] for box in frag.boxes])
    return plan


def _range_mask(array: Any, encoded: Any, rng: "Range") -> np.ndarray:
    """Rows of one column inside ``rng`` (NULL never inside). Values are compared encoded
    with :mod:`engine.core.logical_types` like the estimate does, except decimals: Arrow's decimal to
    float cast is not correctly rounded, so they are compared exactly by Arrow."""
    if pat.is_decimal(array.type):
        mask = pc.is_valid(array)
        if rng.min is not None:
            lo = pa.scalar(decimal.Decimal(str(rng.min)))
            mask = pc.and_(mask, (pc.greater_equal if rng.min_inclusive else pc.greater)(array, lo))
        if rng.max is not None:
            hi = pa.scalar(decimal.Decimal(str(rng.max)))
            mask = pc.and_(mask, (pc.less_equal if rng.max_inclusive else pc.less)(array, hi))
        return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)
    if encoded is None:
        return np.zeros(len(array), bool)
    ltype, values, valid, indices = encoded
    mask = None
    if rng.min is not None:
        lo = encode_scalar(ltype, rng.min)
        mask = (values >= lo) if rng.min_inclusive else (values > lo)
    if rng.max is not None:
        hi = encode_scalar(ltype, rng.max)
        m = (values <= hi) if rng.max_inclusive else (values < hi)
        mask = m if mask is None else (mask & m)
    mask = valid if mask is None else (mask & valid)
    # strings are compared on the batch's dictionary, then looked up per row
    return mask if indices is None else mask[indices]


def _file_counter(paths: Sequence[str], plan: list[Any], need: np.ndarray | None):
    """The mapInArrow function over rows of file indexes: each executor reads its files'
    predicated columns with pyarrow (through the table location, like the footers are read)
    and, per Arrow batch, evaluates every fragment vectorized (a boolean mask per box,
    OR-ed) and counts its rows. Emits small (file, fragment, count) rows, fragment -1
    being the file's row count. ``need[file, fragment]`` False skips the work (a file the
    zonemaps prune, or fully cover, for that fragment); a file no fragment needs is not read.
    """
    def count(batches: Any) -> Any:
        for batch in batches:
            out_f: list[int] = []
            out_j: list[int] = []
            out_n: list[int] = []
            for k in batch.column("k").to_pylist():
                js = list(range(len(plan))) if need is None else np.flatnonzero(need[k]).tolist()
                filesystem, inner = fs.filesystem(paths[k])
                pf = pq.ParquetFile(filesystem.open_input_file(inner),
                                    coerce_int96_timestamp_unit="us")
                rows = pf.metadata.num_rows
                out_f.append(k), out_j.append(-1), out_n.append(rows)
                work = [j for j in js if plan[j] is not None]
                for j in js:
                    if plan[j] is None and rows:
                        out_f.append(k), out_j.append(j), out_n.append(rows)
                if not work or not rows:
                    continue
                names = pf.schema_arrow.names
                lower = {n.lower(): n for n in names}
                wanted = dict.fromkeys(c for j in work for box in plan[j] for c, _ in box)
                in_file = {c: (c if c in names else lower.get(c.lower())) for c in wanted}
                hits = np.zeros(len(work), np.int64)
                for rb in pf.iter_batches(batch_size=131072, use_threads=False,
                                          columns=[v for v in dict.fromkeys(in_file.values()) if v]):
                    cache: dict[str, Any] = {}

                    def column(name: str) -> Any:
                        if name not in cache:
                            actual = in_file[name]
                            col = rb.column(actual) if actual else pa.nulls(rb.num_rows)
                            ltype = logical_type_of_arrow(col.type) or "string"
                            if pa.types.is_decimal(col.type):
                                enc = None
                            elif ltype == "string":  # encode the (small) dictionary only
                                d = pc.dictionary_encode(col.cast(pa.string()), null_encoding="encode")
                                idx = np.asarray(d.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
                                enc = (ltype, *encode_arrow(ltype, d.dictionary), idx)
                            else:
                                enc = (ltype, *encode_arrow(ltype, col), None)
                            cache[name] = (col, enc)
                        return cache[name]

                    for i, j in enumerate(work):
                        mask = None
                        for box in plan[j]:
                            m = None
                            for name, rng in box:
                                r = _range_mask(*column(name), rng)
                                m = r if m is None else (m & r)
                            if m is None:  # an empty box: every row
                                m = np.ones(rb.num_rows, bool)
                            mask = m if mask is None else (mask | m)
                        hits[i] += np.count_nonzero(mask)
                for i, j in enumerate(work):
                    if hits[i]:
                        out_f.append(k), out_j.append(j), out_n.append(int(hits[i]))
            yield pa.RecordBatch.from_arrays(
                [pa.array(out_f, pa.int64()), pa.array(out_j, pa.int64()),
                 pa.array(out_n, pa.int64())], names=["file", "frag", "n"])

    return count


def exact_counts(spark: "SparkSession", paths: Sequence[str],
                 fragments: Sequence["ScanFragment"], zonemaps: Any = None
                 ) -> tuple[dict[str, int], np.ndarray]:
    """({canonical path: rows}, matches[file, fragment]) in one Spark job over ``paths``;
    rows of the matrix follow ``paths``.

    The files are spread over the executors (round-robin, several tasks per core so both
    stay busy); each reads only the predicated columns with pyarrow and counts with numpy
    (measured: Spark's row-wise reader feeding one 0/1 aggregate per fragment, or feeding
    ``mapInArrow``, spent most of its time converting rows). One small ``groupBy`` sums
    the (file, fragment, count) rows. With ``zonemaps`` (rows following ``paths``) a
    fragment is only evaluated on the files the zonemaps say it scans but does not fully
    cover: pruned files count 0, fully covered files all their rows, as the pruning proves."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    paths = [str(p) for p in paths]
    filesystem, inner = fs.filesystem(paths[0]) if paths else (None, None)
    fields = pq.read_schema(filesystem.open_input_file(inner)).names if paths else []
    plan = _compile(fields, fragments)
    need = covered = None
    if zonemaps is not None:
        need = np.zeros((len(paths), len(fragments)), bool)
        covered = np.zeros_like(need)
        for j, frag in enumerate(fragments):
            est = analyze_fragment(zonemaps, frag)
            covered[:, j] = est.fully_covered & est.scanned
            need[:, j] = est.scanned & ~covered[:, j]
    matches = np.zeros((len(paths), len(fragments)), dtype=np.int64)
    counts = np.zeros(len(paths), dtype=np.int64)
    if not paths:
        return {}, matches
    slices = max(1, min(len(paths), 4 * spark.sparkContext.defaultParallelism))
    order = sorted(range(len(paths)), key=lambda k: (k % slices, k))  # round-robin
    files = spark.sparkContext.parallelize([(k,) for k in order], slices).toDF("k long")
    counter = _file_counter(paths, plan, need)
    result = (files.mapInArrow(counter, "file long, frag long, n long")
              .groupBy("file", "frag").agg(F.sum("n").alias("n")).collect())
    for r in result:
        k, j, n = int(r["file"]), int(r["frag"]), int(r["n"] or 0)
        if j < 0:
            counts[k] += n
        else:
            matches[k, j] += n
    if covered is not None:
        matches = np.where(covered, counts[:, None], matches)
    rows = {canonical_path(paths[k]): int(counts[k]) for k in range(len(paths))}
    return rows, matches


def exact_scans(spark: "SparkSession", snapshot: "Snapshot",
                fragments: Sequence["ScanFragment"],
                row_groups: "RowGroupMaps | None" = None) -> list[FragmentScan]:
    """:class:`FragmentScan` per fragment with utilization from true matching-row counts.

    With ``row_groups`` (:func:`engine.scan.rowgroups.for_snapshot`) the files scanned, the
    bytes charged and the row groups read are the row-group level's
    (:func:`engine.scan.rowgroups.refine`); utilization stays the true share of each file's
    rows that match. A file the row groups prune holds no matching row (the test is
    conservative), so the counts need no change."""
    zm = snapshot.zonemaps()
    paths = [str(p) for p in zm.paths]
    if not fragments or not paths:
        return [rowgroups.refine(analyze_fragment(zm, f), row_groups, f, zm.rows) for f in fragments]
    _, matches = exact_counts(spark, paths, fragments, zm)
    rows = zm.rows.astype(np.float64)
    out: list[FragmentScan] = []
    for i, frag in enumerate(fragments):
        est = rowgroups.refine(analyze_fragment(zm, frag), row_groups, frag, zm.rows)
        util = np.divide(matches[:, i], rows, out=np.zeros(len(rows)), where=rows > 0)
        out.append(FragmentScan.sparse(est.query_id, est.n, est.index, est.covered,
                                       np.clip(util[est.index], 0.0, 1.0), est.read_bytes,
                                       est.predicated_columns, est.charged, est.row_groups))
    return out


# -- SQL text (DuckDB dialect), for the benchmark and cross-checks ------------------------
def fragment_sql(fragment: "ScanFragment", quote: str = '"') -> str:
    """The fragment's boxes as a SQL boolean expression (TRUE without boxes). Each column
    is an identifier between ``quote`` characters, the character doubled inside (``"`` for
    DuckDB, a back quote for Spark): a column's name is data and never ends the name."""
    if not fragment.boxes:
        return "TRUE"
    boxes = []
    for box in fragment.boxes:
        terms = []
        for column, rng in box.items():
            c = quote + str(column).replace(quote, quote * 2) + quote
            terms.append(f"{c} IS NOT NULL")
            if rng.min is not None:
                terms.append(f"{c} {'>=' if rng.min_inclusive else '>'} {sql_literal(rng.min)}")
            if rng.max is not None:
                terms.append(f"{c} {'<=' if rng.max_inclusive else '<'} {sql_literal(rng.max)}")
        boxes.append("(" + " AND ".join(terms or ["TRUE"]) + ")")
    return "(" + " OR ".join(boxes) + ")"


def duckdb_counts(paths: Sequence[str], fragments: Sequence["ScanFragment"],
                  con: Any = None) -> tuple[dict[str, int], np.ndarray]:
    """The same counts as :func:`exact_counts`, computed by DuckDB in one pass."""
    import duckdb  # costly import: only the benchmark and cross-checks count with DuckDB

    con = con or duckdb.connect()
    sums = ", ".join(f"SUM(CASE WHEN {fragment_sql(f)} THEN 1 ELSE 0 END) AS m{i}"
                     for i, f in enumerate(fragments))
    files = "[" + ", ".join(sql_literal(fs.local_path(p)) for p in paths) + "]"
    q = (f"SELECT filename, COUNT(*) AS n{', ' + sums if sums else ''} "
         f"FROM read_parquet({files}, filename = true) GROUP BY filename")
    result = con.execute(q).fetchall()
    index: Mapping[str, int] = {canonical_path(p): k for k, p in enumerate(paths)}
    matches = np.zeros((len(paths), len(fragments)), dtype=np.int64)
    rows: dict[str, int] = {}
    for r in result:
        k = index[canonical_path(r[0])]
        rows[canonical_path(paths[k])] = int(r[1])
        matches[k] = [int(v or 0) for v in r[2:]]
    return rows, matches
