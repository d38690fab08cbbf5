"""The table as PTO sees it: predicated columns in memory and fragments as encoded boxes.

Every column is encoded to float64 (:mod:`engine.core.logical_types`); strings become
ranks among the column's sorted distinct values, so min/max statistics, sorting and
Z-ordering work on one numeric representation. A fragment's boxes become per-column
closed or open intervals on that representation (a string bound becomes an inclusive
rank bound). NULLs are NaN: they never match a predicate, as in SQL.

Example:
>>> import pyarrow as pa
>>> t = TableData.from_arrow(pa.table({"s": ["b", "a", "c", "b"]}), {"s": "string"})
>>> t.data["s"].tolist(), t.n_rows
([1.0, 0.0, 2.0, 1.0], 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from engine.core import logical_types
from engine.table import fs
from engine.workload.model import Range, ScanFragment

#: one encoded box: column -> (low, low inclusive, high, high inclusive); +-inf for open ends
EncodedBox = Mapping[str, tuple[float, bool, float, bool]]


@dataclass
class TableData:
    """Encoded rows of some columns of a table, plus what PTO needs to know of the table."""

    data: dict[str, np.ndarray]
    types: dict[str, str]  # logical type of every column of the schema
    n_rows: int  # rows held here
    n_table: int = 0  # the table's cardinality (0: same as n_rows)
    table_bytes: int = 0  # the table's compressed size
    dictionaries: dict[str, np.ndarray] = field(default_factory=dict)  # string column -> sorted values
    #: derived arrays memoised per instance (row orders of the labels), never compared
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.n_table = self.n_table or self.n_rows

    @property
    def bytes_per_row(self) -> float:
        return self.table_bytes / self.n_table if self.n_table else 0.0

    @classmethod
    def from_arrow(cls, table: pa.Table, types: Mapping[str, str], n_table: int = 0,
                   table_bytes: int = 0) -> "TableData":
        data: dict[str, np.ndarray] = {}
        dicts: dict[str, np.ndarray] = {}
        for name in table.column_names:
            ltype = types.get(name)
            if ltype is None:
                continue
            if logical_types.is_string(ltype):
                data[name], dicts[name] = string_ranks(table.column(name))
            else:
                data[name] = logical_types.encode_arrow(ltype, table.column(name))[0]
        return cls(data, dict(types), table.num_rows, n_table, table_bytes, dicts)

    def take(self, rows: np.ndarray) -> "TableData":
        """The rows ``rows`` (a sample), keeping the table's cardinality and size."""
        return TableData({c: v[rows] for c, v in self.data.items()}, self.types, len(rows),
                         self.n_table, self.table_bytes, self.dictionaries)

    def encode_fragment(self, fragment: ScanFragment) -> list[dict[str, tuple[float, bool, float, bool]]]:
        """The fragment's boxes over the columns held here (others cannot prune: dropped);
        a fragment without a predicate is one unconstrained box (it reads everything)."""
        if not fragment.boxes:
            return [{}]
        out = []
        for box in fragment.boxes:
            enc = {c: self._encode_range(c, r) for c, r in box.items() if c in self.data}
            out.append(enc)
        return out

    def _encode_range(self, column: str, r: Range) -> tuple[float, bool, float, bool]:
        ltype = self.types[column]
        if logical_types.is_string(ltype):
            uniq = self.dictionaries.get(column, np.zeros(0, dtype=np.str_))
            lo, hi = -math.inf, math.inf
            if r.min is not None:
                side = "left" if r.min_inclusive else "right"
                lo = float(np.searchsorted(uniq, str(r.min), side=side))
            if r.max is not None:
                side = "right" if r.max_inclusive else "left"
                hi = float(np.searchsorted(uniq, str(r.max), side=side)) - 1.0
            return lo, True, hi, True
        lo = -math.inf if r.min is None else float(logical_types.encode_scalar(ltype, r.min))
        hi = math.inf if r.max is None else float(logical_types.encode_scalar(ltype, r.max))
        return lo, bool(r.min_inclusive), hi, bool(r.max_inclusive)


def string_ranks(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(each row's rank among the column's sorted distinct values, NaN for NULL; those
    sorted values). Hash-encoded by pyarrow, so only the distinct values are sorted and
    converted to numpy (6M TPC-H rows: seconds instead of a minute through ``np.unique``).

    >>> r, u = string_ranks(pa.array(["b", None, "a", "b"]))
    >>> r.tolist(), u.tolist()
    ([1.0, nan, 0.0, 1.0], ['a', 'b'])
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    enc = pc.dictionary_encode(column.cast(pa.large_string()))
    values = np.asarray(enc.dictionary.to_numpy(zero_copy_only=False), dtype=np.str_)
    order = np.argsort(values, kind="stable")
    rank = np.empty(len(values), dtype=np.float64)
    rank[order] = np.arange(len(values), dtype=np.float64)
    idx = pc.fill_null(enc.indices, 0).to_numpy(zero_copy_only=False)
    ranks = rank[idx] if len(values) else np.zeros(len(column))
    ranks[np.asarray(pc.is_null(enc.indices).to_numpy(zero_copy_only=False), dtype=bool)] = np.nan
    return ranks, values[order]


def load_table(paths: Sequence[str], columns: Sequence[str], types: Mapping[str, str],
               table_bytes: int = 0) -> TableData:
    """Read ``columns`` of the Parquet files ``paths`` (a snapshot's files) into memory."""
    parts = [pq.read_table(fs.local_path(p), columns=list(columns)) for p in paths]
    table = pa.concat_tables(parts) if parts else pa.table({c: [] for c in columns})
    return TableData.from_arrow(table, types, table.num_rows, table_bytes)


#: a design sample reads whole files drawn at random until they hold this many times the
#: design sample's rows; the design then draws its Bernoulli sample from them
#: (:func:`load_file_sample`). 2: half the rows read are kept, so two rows of one file are
#: about as likely together as under a Bernoulli sample of the table read at twice the rate
FILE_SAMPLE_FACTOR = 2


def load_file_sample(paths: Sequence[str], file_rows: Sequence[int], columns: Sequence[str],
                     types: Mapping[str, str], table_bytes: int, rows_wanted: int,
                     seed: int = 0) -> TableData:
    """``columns`` of whole files drawn at random without replacement until they hold more
    than ``rows_wanted`` rows (every file when the table holds no more), in the table's
    file order; the table's cardinality (``sum(file_rows)``) and size are kept.

    Why: reading every row to keep a sample of them (:func:`load_table`, then
    :func:`engine.design.pto.optimizer.design_rows`) cost ~10 of PTO's 25 s design on the
    SF 1 demo (3,001 files of one 2,000-row row group each: a row group is the smallest
    unit Parquet reads, so only fewer files read less).

    What the sample means: the files are a simple random sample of the table's files (a
    seeded permutation, its shortest prefix past ``rows_wanted`` rows), so every row is
    read with about the same probability, ``rows_wanted / n`` (exactly so when the files
    hold equal rows, as the advisor writes them), and means, fractions and a predicate's
    selectivity estimated on the rows read are unbiased; the design's Bernoulli sample
    drawn from them (``design_rows``) keeps each row read with one probability, so a row's
    overall chance stays the same. What differs from a Bernoulli sample of the table:
    rows of one file come together (a cluster sample), so a statistic that depends on
    which rows share a file (the distinct values of a column correlated with the file
    order) varies more between seeds; reading :data:`FILE_SAMPLE_FACTOR` times the rows
    kept halves that clustering. Deterministic for ``seed``.
    """
    n_files = len(paths)
    rows = np.asarray(file_rows, dtype=np.int64)
    if len(rows) != n_files:
        raise ValueError(f"{n_files} paths but {len(rows)} row counts")
    order = np.random.default_rng([seed, 2]).permutation(n_files)
    cum = np.cumsum(rows[order])
    take = min(n_files, int(np.searchsorted(cum, rows_wanted, side="right")) + 1)
    picked = np.sort(order[:take])
    parts = [pq.read_table(fs.local_path(paths[i]), columns=list(columns)) for i in picked]
    table = pa.concat_tables(parts) if parts else pa.table({c: [] for c in columns})
    return TableData.from_arrow(table, types, int(rows.sum()), table_bytes)


def column_ndv(paths: Sequence[str], columns: Sequence[str]) -> dict[str, int]:
    """Distinct non-NULL values of each of ``columns`` over every row of the Parquet files
    ``paths`` (the table's NDV when the design reads only a sample of its files), exact.
    One column is read at a time, across all files."""
    if not paths or not columns:
        return {}
    dataset = pads.dataset([fs.local_path(p) for p in paths], format="parquet")
    out = {}
    for c in columns:
        col = dataset.to_table(columns=[c]).column(c)
        out[c] = int(pc.count_distinct(col, mode="only_valid").as_py())
    return out


def boxes_key(boxes: Sequence[EncodedBox]) -> tuple:
    """A hashable key of a fragment's encoded boxes: the repeats of one statement (a
    dashboard panel refreshed all day) share it, so what depends on the boxes alone (a
    selectivity, a placement's scan) is computed once per distinct fragment, exactly.

    >>> boxes_key([{"a": (1.0, True, 2.0, False)}]) == boxes_key([{"a": (1.0, True, 2.0, False)}])
    True
    """
    return tuple(tuple(box.items()) for box in boxes)


def row_matches(data: Mapping[str, np.ndarray], boxes: Sequence[EncodedBox]) -> np.ndarray:
    """Rows matching any box (the fragment's rowsOut), exact."""
    n = len(next(iter(data.values()))) if data else 0
    hit = np.zeros(n, dtype=bool)
    for box in boxes:
        ok = np.ones(n, dtype=bool)
        for col, (lo, lo_in, hi, hi_in) in box.items():
            v = data[col]
            with np.errstate(invalid="ignore"):
                ok &= (v >= lo) if lo_in else (v > lo)
                ok &= (v <= hi) if hi_in else (v < hi)
        hit |= ok
    return hit
