"""Dimension lookups over DuckDB: a registered table's live files answer a star query's
filter with the runs of matching keys (the port :class:`engine.workload.lookup.DimensionSource`).

The filter arrives as a :class:`~engine.workload.lookup.DimensionPredicate`: quoted
identifiers and named parameters only, so no text of the query log becomes SQL text here.
The file list and the run cap are parameters too. The runs are computed in DuckDB as gaps
and islands over the dimension's distinct keys: a run is a maximal sequence of matching keys
with no non-matching key between them (consecutive ranks among all distinct keys), so
``d_year = 2000`` is one run of ``d_date_sk`` whatever the key's type. Past ``limit`` runs,
DuckDB merges them across the smallest gaps (a gap is the number of the dimension's distinct
keys strictly between two runs, the difference of their ranks): merging two runs leaves every
other gap as it was, so the result keeps the ``limit - 1`` largest gaps (equal gaps: the one
at higher keys is kept) and joins the runs across the rest. Only the ranges (at most
``limit``, plus the count of runs and the overall bounds) come back to Python. Each dimension
snapshot is read from its files once, with its keys ranked, into a temporary table that every
lookup on that key then filters.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import duckdb

from engine.core.errors import AdvisorError
from engine.workload.lookup import (DimensionInfo, DimensionLookupError, DimensionPredicate,
                                    KeyRuns)
from engine.workload.sql.render import sql_identifier

if TYPE_CHECKING:
    from engine.table.store import TableStore

#: the rank of a row's key among the dimension's distinct keys (a column of the loaded copy)
RANK = "__layout_advisor_key_rank"
_RUNS_SQL = """
WITH matching AS (
  SELECT DISTINCT {key} AS k, {rank} AS r FROM {source}
  WHERE {key} IS NOT NULL AND coalesce(({predicate}), false)
), islands AS (
  SELECT k, r, r - row_number() OVER (ORDER BY r) AS g FROM matching
), runs AS (
  SELECT min(k) AS lo, max(k) AS hi, min(r) AS r_lo, max(r) AS r_hi FROM islands GROUP BY g
), gaps AS (
  SELECT lo, hi, r_lo, r_lo - lag(r_hi) OVER (ORDER BY r_lo) - 1 AS gap FROM runs
), kept AS (
  SELECT lo, hi, r_lo,
         CASE WHEN row_number() OVER (ORDER BY gap DESC NULLS FIRST, r_lo DESC) <= $limit
              THEN 1 ELSE 0 END AS starts
  FROM gaps
), merged AS (
  SELECT lo, hi, sum(starts) OVER (ORDER BY r_lo) AS m FROM kept
)
SELECT min(lo) AS lo, max(hi) AS hi, (SELECT count(*) FROM runs) AS total,
       (SELECT min(lo) FROM runs) AS first, (SELECT max(hi) FROM runs) AS last
FROM merged GROUP BY m ORDER BY lo
"""


class DuckDimensionSource:
    """Registered tables of ``tables`` read with DuckDB (one connection, one thread)."""

    def __init__(self, tables: "TableStore") -> None:
        self.tables = tables
        self._files: dict[tuple[str, str], list[str]] = {}
        self._loaded: dict[tuple[str, str, str], str] = {}  # (table, version, key) -> temp table
        self._con: duckdb.DuckDBPyConnection | None = None

    def describe(self, table: str) -> DimensionInfo | None:
        """The registered table ``table`` with its current snapshot, or None."""
        try:
            if not self.tables.exists(table):
                return None
            snap = self.tables.current_snapshot(table)
        except AdvisorError:
            return None
        self._files[(table, snap.id)] = [p.path for p in snap.partitions]
        files = hashlib.sha256(repr([(p.path, p.bytes, p.rows) for p in snap.partitions])
                               .encode()).hexdigest()[:16]
        return DimensionInfo(table, snap.schema, snap.id, f"{snap.id}@{snap.created_at}#{files}")

    def key_runs(self, info: DimensionInfo, key: str, predicate: DimensionPredicate,
                 limit: int) -> KeyRuns:
        """The runs of ``key`` whose rows satisfy ``predicate``, merged across the smallest
        gaps to at most ``limit`` ranges (see the module docs)."""
        files = self._files.get((info.table, info.snapshot))
        if files is None:
            files = [p.path for p in self.tables.snapshot(info.table, info.snapshot).partitions]
        if not files:
            return KeyRuns((), 0)
        try:
            source = self._load(info, key, files)
            sql = _RUNS_SQL.format(key=sql_identifier(key), predicate=predicate.sql, source=source,
                                   rank=sql_identifier(RANK))
            params = {**predicate.params, "limit": int(limit)}
            rows = self._connection().execute(sql, params).fetchall()
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DimensionLookupError(first) from None
        if not rows:
            return KeyRuns((), 0)
        return KeyRuns(tuple((lo, hi) for lo, hi, *_ in rows), int(rows[0][2]), rows[0][3],
                       rows[0][4])

    def _load(self, info: DimensionInfo, key: str, files: list[str]) -> str:
        """The dimension's snapshot as a temporary DuckDB table with each row's key ranked
        among the distinct keys, read from its files once per version and key (an import
        evaluates many filters on the same dimension)."""
        name = self._loaded.get((info.table, info.version, key))
        if name is None:
            name = f"dimension_{len(self._loaded)}"  # our own name: no text of the log
            self._connection().execute(
                f"CREATE TEMP TABLE {name} AS SELECT *, dense_rank() OVER (ORDER BY "
                f"{sql_identifier(key)}) AS {sql_identifier(RANK)} FROM read_parquet($files)",
                {"files": files})
            self._loaded[(info.table, info.version, key)] = name
        return name

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = duckdb.connect()
            self._con.execute("SET threads=1")
        return self._con
