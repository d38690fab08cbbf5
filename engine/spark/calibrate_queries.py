"""The query side of ``layout-advisor calibrate``: DuckDB's cost of a query in the workload's
shape, as a per-query fixed cost, a cost per file scanned and a rate per projected byte.

WAIR (section 4.2) values a rewrite by the scan time it saves, ``t_read(Q)``, "when a
query's measured duration is not known" priced from the bytes the query reads. A
query over files that survived pruning pays

    t_query = query_fixed_s + files x query_file_s + projected_bytes / query_scan_bytes_per_s

* ``query_fixed_s``: parsing, planning, the aggregate's result: paid once per query;
* ``query_file_s``: opening a file, its footer, one column chunk reader per projected
  column: paid per file that survives pruning, whatever its size;
* ``query_scan_bytes_per_s``: decompressing and aggregating the projected column chunks
  (the bytes :meth:`engine.table.model.ZoneMaps.read_bytes` counts, what the simulator and
  the policies charge a query).

Why three terms, and on these shapes (bench/replay/README.md): a model ``fixed + whole-file
bytes / rate`` fitted on one query form (``count(*)`` and the sum of one double under a date
filter) under-prices real queries, which filter and aggregate every projected column
(strings included) over hundreds of files, several fold. So the probe here measures
shapes like a workload's queries: a filter on a date column and an aggregate of every
projected column (``SUM`` of the numbers, ``MAX`` of the rest), over a narrow, a medium and
an all-column projection of a TPC-H lineitem-like table (16 columns, the paper's benchmark
table), over a range of file counts of two file sizes (:data:`FILE_ROWS`), so that the per
file term and the per byte term are separable (files and bytes vary independently). The
three terms are fitted by non-negative least squares on the medians.

DuckDB runs on one thread with its object cache off: one query's CPU-seconds on one core,
each file's footer read by the query that opens it, as the replay measures them.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import duckdb
import numpy as np
from scipy.optimize import nnls

from engine.table.footers import read_partitions
from engine.workload.sql.render import sql_identifier, sql_literal

if TYPE_CHECKING:
    from engine.workload.model import ScanFragment

#: the terms the probe fits (Settings fields), in the order ``calibrate --show`` shows them
QUERY_KEYS = ("query_fixed_s", "query_file_s", "query_scan_bytes_per_s")
#: rows per file of the two file sizes, and the file counts queried of each: small files
#: (as a table ingested in small batches, or cut fine for pruning) and large ones
FILE_ROWS = (5_000, 50_000)
FILE_COUNTS = {5_000: (1, 16, 64, 256), 50_000: (1, 4, 16, 32)}
#: a lineitem-like table: (column, DuckDB expression over the row number ``i`` and ``n``)
_COLUMNS = (
    ("l_orderkey", "i // 4"),
    ("l_partkey", "(hash(i) % 200000)::BIGINT"),
    ("l_suppkey", "(hash(i + 1) % 10000)::BIGINT"),
    ("l_linenumber", "(i % 7 + 1)::INTEGER"),
    ("l_quantity", "((hash(i + 2) % 50) + 1)::DECIMAL(12,2)"),
    ("l_extendedprice", "((hash(i + 3) % 10000000) / 100.0)::DECIMAL(12,2)"),
    ("l_discount", "((hash(i + 4) % 11) / 100.0)::DECIMAL(12,2)"),
    ("l_tax", "((hash(i + 5) % 9) / 100.0)::DECIMAL(12,2)"),
    ("l_returnflag", "['A', 'N', 'R'][(hash(i + 6) % 3)::BIGINT + 1]"),
    ("l_linestatus", "['F', 'O'][(hash(i + 7) % 2)::BIGINT + 1]"),
    ("l_shipdate", "DATE '1992-01-02' + (i * 2500 // n + (hash(i + 8) % 120)::BIGINT)::INTEGER"),
    ("l_commitdate", "DATE '1992-01-31' + (i * 2500 // n + (hash(i + 9) % 90)::BIGINT)::INTEGER"),
    ("l_receiptdate", "DATE '1992-01-03' + (i * 2500 // n + (hash(i + 10) % 150)::BIGINT)::INTEGER"),
    ("l_shipinstruct", "['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN']"
                       "[(hash(i + 11) % 4)::BIGINT + 1]"),
    ("l_shipmode", "['AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK'][(hash(i + 12) % 7)::BIGINT + 1]"),
    ("l_comment", "substr(md5((hash(i + 13) % 1000000)::VARCHAR), 1, 8 + (hash(i + 14) % 20)::INTEGER)"
                  " || ' ' || ['carefully', 'quickly', 'final', 'regular', 'ironic', 'pending']"
                  "[(hash(i + 15) % 6)::BIGINT + 1]"),
)
#: on a table, at most this many files are queried at once, and this many of its queries
TABLE_MAX_FILES = 512
TABLE_SHAPES = 12
NUMERIC = ("l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity",
           "l_extendedprice", "l_discount", "l_tax")
#: the projections queried (each with the filter column): narrow, TPC-H Q1-like, every column
PROJECTIONS = (("l_shipdate", "l_extendedprice"),
               ("l_shipdate", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
                "l_returnflag", "l_linestatus"),
               tuple(c for c, _ in _COLUMNS))
__all__ = ["FILE_COUNTS", "FILE_ROWS", "PROJECTIONS", "QUERY_KEYS", "fit_query_terms",
           "make_files", "measure", "measure_fragments", "query_sql", "spread", "table_counts"]


def make_files(con: Any, root: Path, rows_per_file: int, files: int) -> list[str]:
    """``files`` Parquet files of ``rows_per_file`` lineitem-like rows each in ``root``, in
    ingestion order (the dates wander forward over the files, as a table's appends do)."""
    root.mkdir(parents=True, exist_ok=True)
    n = rows_per_file * files
    select = ", ".join(f"{expr} AS {name}" for name, expr in _COLUMNS)
    paths = []
    for k in range(files):
        path = root / f"part-{k:05d}.parquet"
        a = k * rows_per_file
        con.execute(f"COPY (SELECT {select} FROM (SELECT range AS i, {int(n)} AS n "
                    f"FROM range({int(a)}, {int(a + rows_per_file)}))) TO {sql_literal(str(path))} "
                    "(FORMAT parquet)")
        paths.append(str(path))
    return paths


def query_sql(paths: Sequence[str], columns: Sequence[str], numeric: Sequence[str] = NUMERIC,
              where: str = "l_shipdate >= DATE '1992-03-01'") -> str:
    """A query of the workload's shape over ``paths``: a filter (which keeps most rows: the
    files are the ones that survived pruning) and an aggregate of every projected column
    (``SUM`` of the ``numeric`` ones, ``MAX`` of the rest). Columns are quoted identifiers
    and paths quoted literals (:mod:`engine.workload.sql.render`); ``where`` is SQL text
    built the same way (:func:`engine.spark.exact.fragment_sql`).

    Example:
    >>> print(query_sql(["a.parquet"], ["l_shipdate", "l_tax"]))
    SELECT COUNT(*), MAX("l_shipdate"), SUM("l_tax") FROM read_parquet(['a.parquet']) WHERE l_shipdate >= DATE '1992-03-01'
    """
    aggs = ", ".join(f"SUM({sql_identifier(c)})" if c in numeric else f"MAX({sql_identifier(c)})"
                     for c in columns)
    files = ", ".join(sql_literal(str(p)) for p in paths)
    return f"SELECT COUNT(*), {aggs} FROM read_parquet([{files}]) WHERE {where}"


def fit_query_terms(points: Sequence[dict[str, float]]) -> dict[str, float]:
    """``query_fixed_s``, ``query_file_s`` and ``query_scan_bytes_per_s`` from measured
    (files, projected bytes, seconds) points: non-negative least squares of
    ``seconds = fixed + files x per_file + bytes x per_byte`` (a rate whose slope is 0 is
    stored as 0: not separable, the default scan rate applies).

    Example (exactly 5 ms + 0.5 ms per file + 100 MB/s):
    >>> pts = [{"files": f, "bytes": b, "seconds": 0.005 + f * 0.0005 + b / 1e8}
    ...        for f, b in ((1, 1e6), (10, 2e6), (100, 5e6), (10, 4e7))]
    >>> t = fit_query_terms(pts)
    >>> round(t["query_fixed_s"], 6), round(t["query_file_s"], 6), round(t["query_scan_bytes_per_s"])
    (0.005, 0.0005, 100000000)
    """
    a = np.array([[1.0, p["files"], p["bytes"]] for p in points], dtype=np.float64)
    y = np.array([p["seconds"] for p in points], dtype=np.float64)
    scale = np.maximum(np.abs(a).max(axis=0), 1e-300)  # conditioning: bytes are ~1e7x files
    coef, _ = nnls(a / scale, y)
    fixed, per_file, per_byte = coef / scale
    return {"query_fixed_s": round(float(fixed), 6), "query_file_s": round(float(per_file), 7),
            "query_scan_bytes_per_s": 1.0 / float(per_byte) if per_byte > 1e-15 else 0.0}


def timed_median(con: Any, sql: str, repeat: int) -> float:
    """Median seconds of ``sql`` over ``repeat`` runs after one untimed run (files cached)."""
    con.execute(sql).fetchall()
    times = []
    for _ in range(max(1, int(repeat))):
        t = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def table_counts(n_files: int, top: int = TABLE_MAX_FILES) -> tuple[int, ...]:
    """File counts a query that keeps ``n_files`` files is timed over on its table: its own
    count (at most ``top``), half and a quarter of it, and 1 (the per-query fixed cost). The
    workload's shapes, not a geometric sweep: a sweep 1, 4, 16, 64, ... spends most of its
    points below 64 files, where a file costs more (footer and first-chunk overheads are not
    amortised), and the fit's per-file term then moves between runs.

    Example:
    >>> table_counts(300), table_counts(3), table_counts(5000)
    ((1, 75, 150, 300), (1, 2, 3), (1, 128, 256, 512))
    """
    top = max(1, min(int(n_files), int(top)))
    return tuple(sorted({1, max(1, -(-top // 4)), max(1, -(-top // 2)), top}))


def spread(values: Sequence[float]) -> dict[str, float]:
    """min, median and max of ``values`` (the terms fitted on each round alone).

    >>> spread([3.0, 1.0, 2.0])
    {'min': 1.0, 'median': 2.0, 'max': 3.0}
    """
    return {"min": float(min(values)), "median": float(statistics.median(values)),
            "max": float(max(values))}


def _rounds(con: Any, shapes: Sequence[dict[str, Any]], rounds: int) -> list[list[float]]:
    """Seconds of each shape's ``sql`` in ``rounds`` interleaved rounds (every shape once per
    round, after one untimed pass over all of them: the files in the page cache), so a burst
    of load on a shared machine lands on one round of many shapes, not on every repeat of
    one shape (a shape's median then drops it)."""
    for sh in shapes:
        con.execute(sh["sql"]).fetchall()
    times: list[list[float]] = [[] for _ in shapes]
    for _ in range(max(1, int(rounds))):
        for k, sh in enumerate(shapes):
            t = time.perf_counter()
            con.execute(sh["sql"]).fetchall()
            times[k].append(time.perf_counter() - t)
    return times


def _probe(con: Any, points: list[dict[str, Any]], paths: Sequence[str], parts: Sequence[Any],
           counts: Sequence[int], projections: Sequence[Sequence[str]], numeric: Sequence[str],
           where: Any, repeat: int, label: Any) -> None:
    """Time each (file count, projection) over the first files of ``paths`` into ``points``;
    ``where(columns)`` gives each projection's filter."""
    for n in sorted(set(counts)):
        for cols in projections:
            nbytes = sum(p.columns[c].compressed_bytes for p in parts[:n] for c in cols
                         if c in p.columns)
            secs = timed_median(con, query_sql(paths[:n], cols, numeric, where(cols)), repeat)
            points.append({"file_rows": label, "files": n, "columns": len(cols),
                           "bytes": int(nbytes), "seconds": round(secs, 6)})


def _connect() -> Any:
    """DuckDB on one thread, object cache off (module docstring)."""
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute("SET enable_object_cache = false")
    return con


def measure(work: Path, repeat: int = 3, file_rows: Sequence[int] | None = None,
            file_counts: dict[int, Sequence[int]] | None = None) -> dict[str, Any]:
    """The synthetic probe: write lineitem-like files under ``work``, time every (file size,
    file count, projection) shape, fit the terms:
    ``{"rates": {QUERY_KEYS...}, "points": [...], "source": ...}``."""
    counts = file_counts or FILE_COUNTS
    file_rows = file_rows or FILE_ROWS
    con = _connect()
    points: list[dict[str, Any]] = []
    try:
        for rows in file_rows:
            paths = make_files(con, work / f"q-{rows}", int(rows), max(counts[rows]))
            _, parts = read_partitions(paths)
            _probe(con, points, paths, parts, counts[rows], PROJECTIONS, NUMERIC,
                   lambda cols: "l_shipdate >= DATE '1992-03-01'", repeat, int(rows))
    finally:
        con.close()
    return {"rates": fit_query_terms(points), "points": points,
            "source": "synthetic lineitem-like files (TPC-H shapes)"}


def measure_fragments(paths: Sequence[str], fragments: Sequence["ScanFragment"], repeat: int = 3,
                      sample: int = TABLE_SHAPES, label: str = "table") -> dict[str, Any]:
    """The probe on a table's own files and its workload's own queries (e.g. the imported
    log's fragments): for up to ``sample`` queries spread over ``fragments``, the query's
    predicate (:func:`engine.spark.exact.fragment_sql`) and an aggregate of its projected
    columns over the files its zonemap pruning keeps, all of them and the first half,
    quarter and one (:func:`table_counts`), and the half and all of them projecting only the
    predicated columns: within one query's files the bytes grow with the files (a fixed
    projection), so without a second projection over the same files the per-file and the
    per-byte terms are not separable and their split moves with the noise. Timed in ``repeat`` interleaved rounds
    (:func:`_rounds`); the terms are fitted on each shape's median, and on each round alone
    for their ``spread`` (min, median, max), which shows how far one run's terms can move.
    The rates then carry the table's compression and types and the queries' selectivity, which a rate per projected byte depends on: DuckDB decodes the
    other projected columns only where the filter keeps rows (bench/replay/README.md)."""
    from engine.scan.pruning import analyze_fragment  # the scan layer; only this mode needs it
    from engine.spark.exact import fragment_sql
    from engine.table.model import ZoneMaps

    if not paths or not fragments:
        raise ValueError("the query probe needs files and at least one query")
    schema, parts = read_partitions(list(paths))
    zm = ZoneMaps.from_partitions(schema, parts)
    types = dict(schema.columns)
    numeric = [c for c, t in types.items() if t in ("int", "float", "decimal")]
    pick = np.unique(np.linspace(0, len(fragments) - 1, min(int(sample), len(fragments))).round()
                     .astype(int))
    shapes: list[dict[str, Any]] = []
    for i in pick.tolist():
        frag = fragments[i]
        cols = [c for c in frag.columns if c in types] or [schema.columns[0][0]]
        kept = np.flatnonzero(analyze_fragment(zm, frag).scanned)
        if not kept.size:
            continue
        chosen = [parts[k] for k in kept]
        where = fragment_sql(frag)
        narrow = [c for c in cols if c in frag.predicated_columns] or cols[:1]
        counts = table_counts(len(chosen))
        for proj, ns in ((cols, counts), (narrow, counts[-2:] if len(narrow) < len(cols) else ())):
            for n in ns:
                shapes.append({"file_rows": label, "files": n, "columns": len(proj),
                               "bytes": int(sum(p.columns[c].compressed_bytes for p in chosen[:n]
                                                for c in proj if c in p.columns)),
                               "sql": query_sql([p.path for p in chosen[:n]], proj, numeric, where)})
    if len(shapes) < 3:
        raise ValueError("the workload's queries keep too few files to fit the query terms")
    con = _connect()
    try:
        times = _rounds(con, shapes, repeat)
    finally:
        con.close()
    points = [{**{k: v for k, v in sh.items() if k != "sql"},
               "seconds": round(statistics.median(ts), 6), "rounds": [round(t, 6) for t in ts]}
              for sh, ts in zip(shapes, times)]
    per_round = [fit_query_terms([{**p, "seconds": p["rounds"][r]} for p in points])
                 for r in range(len(times[0]))]
    return {"rates": fit_query_terms(points), "points": points,
            "spread": {k: spread([t[k] for t in per_round]) for k in QUERY_KEYS},
            "rounds": len(times[0]), "source": f"{label}: {len(paths)} files, {len(pick)} of its queries"}
