"""Workload generator (WAIR section 6.1): periods of batches over a growing table.

A scenario is a sequence of **periods**, each a sequence of **batches**. Every batch has an
ingestion phase (a slice of rows in natural order), a query phase (a query mix) and then the
policy's optional reclustering phase. Per period: the predicated column or a weighted mix of
columns (``{"l_shipdate": 2, "l_commitdate": 1}``), the **shifting rate** (the share of the
live queries regenerated between consecutive batches; the others repeat verbatim), whether
queries run and whether reclustering is allowed (the first periods form the initial pool).

A query mix is made of **sub-workloads** (TPC-H's ``global`` and ``local``), each a list of
templates and a predicate **distribution**:

* ``uniform``: the window starts uniformly within the column's current domain;
* ``gaussian`` (``param`` = sigma in units): centred on the batch's reference value;
* ``zipf`` (``param`` = alpha): ``k`` units back from the reference with P(k) ~ (k+1)^-alpha,
  i.e. skewed toward recent data;
* ``distinct``: the window is aligned (``floor(v / window) * window``) around a value drawn
  uniformly among the distinct aligned values ingested so far (needle queries on subnets).

The window length (**selectivity**) is in the column's encoded units (days for dates, micro-
seconds for timestamps); ``unit`` is the skew step (a month of days for TPC-H).

Everything is drawn from one ``numpy`` generator seeded by the scenario's seed, so a
scenario is a pure function of its parameters. The data itself comes from a
:class:`Dataset` (see :mod:`engine.scenarios.presets`): encoded numpy columns in ingestion
order, batch offsets, and per-batch reference values ("now") for each predicable column.

Example:
>>> from engine.scenarios.presets import build_scenario
>>> sc = build_scenario("tpch", rows=20_000, seed=1, overrides={"periods": 3, "batches_per_period": 2})
>>> [(b.period, b.batch, b.recluster, len(b.fragments)) for b in sc.batches][:3]
[(1, 1, False, 0), (1, 2, False, 0), (2, 1, False, 16)]
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table.model import TableSchema
from engine.workload.model import Range, ScanFragment
from engine.workload.sql.render import sql_literal

DISTRIBUTIONS = ("uniform", "gaussian", "zipf", "distinct")


@dataclass(frozen=True)
class Distribution:
    """Where a query's window lands. ``param``: sigma (gaussian, in units) or alpha (zipf)."""

    kind: str = "uniform"
    param: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in DISTRIBUTIONS:
            raise InvalidParameterError(
                f"unknown distribution {self.kind!r}; choose one of {', '.join(DISTRIBUTIONS)}")
        if self.kind == "gaussian" and not self.param > 0:
            raise InvalidParameterError(f"gaussian sigma must be > 0, got {self.param}")
        if self.kind == "zipf" and not self.param > 0:
            raise InvalidParameterError(f"zipf alpha must be > 0, got {self.param}")

    @property
    def label(self) -> str:
        return {"uniform": "U", "gaussian": f"G({self.param:g})", "zipf": f"Z({self.param:g})",
                "distinct": "D"}[self.kind]


@dataclass(frozen=True)
class ExtraPredicate:
    """A template's additional predicate on another column.

    ``kind="range"``: a window of ``fraction`` of the column's whole domain, placed
    uniformly; ``kind="recent"``: a window of ``length`` units ending at most ``lookback``
    units before the batch's reference (narrow recent time windows).
    """

    column: str
    kind: str = "range"
    fraction: float = 0.1
    length: float = 0.0
    lookback: float = 0.0


@dataclass(frozen=True)
class QueryTemplate:
    """A query shape: projected columns plus extra predicates; the driving predicate is on
    the period's predicated column."""

    name: str
    columns: tuple[str, ...]
    extra: tuple[ExtraPredicate, ...] = ()


@dataclass(frozen=True)
class SubWorkload:
    name: str
    templates: tuple[QueryTemplate, ...]
    distribution: Distribution


@dataclass(frozen=True)
class PeriodSpec:
    """One period: its predicate mix, shifting rate, and the oracle key baselines are given."""

    batches: int
    predicate_mix: tuple[tuple[str, float], ...]
    shifting_rate: float
    queries: bool = True
    recluster: bool = True
    oracle_layout: str = "sort"
    oracle_columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.batches < 1:
            raise InvalidParameterError(f"a period needs at least 1 batch, got {self.batches}")
        if not 0.0 <= self.shifting_rate <= 1.0:
            raise InvalidParameterError(f"shifting rate must be within [0, 1], got {self.shifting_rate}")
        if not self.predicate_mix or any(w <= 0 for _, w in self.predicate_mix):
            raise InvalidParameterError("a period needs a predicate mix with positive weights")

    @property
    def label(self) -> str:
        total = sum(w for _, w in self.predicate_mix)
        if len(self.predicate_mix) == 1:
            return self.predicate_mix[0][0]
        return " + ".join(f"{w / total:.0%} {c}" for c, w in self.predicate_mix)


@dataclass(frozen=True)
class Dataset:
    """Synthetic table data in ingestion order (see :mod:`engine.scenarios.presets`).

    ``data`` holds encoded arrays for the columns that carry statistics; ``widths`` gives
    every column's compressed bytes per row (payload-only columns have no data and no
    zonemap). ``reference[col][b]`` is "now" for column ``col`` at batch ``b``.
    """

    table: str
    schema: TableSchema
    widths: Mapping[str, float]
    data: Mapping[str, np.ndarray]
    batch_offsets: np.ndarray  # B + 1 row offsets
    reference: Mapping[str, np.ndarray]
    clocks: Sequence[dt.datetime]  # wall-clock time of each batch (query timestamps)

    @property
    def n_batches(self) -> int:
        return len(self.batch_offsets) - 1

    @property
    def rows(self) -> int:
        return int(self.batch_offsets[-1])


@dataclass(frozen=True)
class ScenarioSpec:
    """All generator parameters of a scenario (presets fill them in)."""

    name: str
    periods: tuple[PeriodSpec, ...]
    workloads: tuple[SubWorkload, ...]
    window: Mapping[str, float]  # selectivity: window length per predicated column, encoded units
    unit: Mapping[str, float]  # skew/centre step per predicated column, encoded units
    seed: int = 0
    target_rows: int = 2000
    measure_from_period: int | None = None  # default: first reclustering period
    aligned: bool = False  # align driving windows to multiples of the window (subnets)
    description: str = ""

    @property
    def n_batches(self) -> int:
        return sum(p.batches for p in self.periods)

    @property
    def recluster_start(self) -> int | None:
        for i, p in enumerate(self.periods, start=1):
            if p.recluster:
                return i
        return None


@dataclass(frozen=True)
class Batch:
    """One batch: which rows it ingests, the queries it runs, whether policies may act."""

    index: int  # 0-based over the scenario
    period: int  # 1-based
    batch: int  # 1-based within the period
    row_start: int
    row_stop: int
    fragments: tuple[ScanFragment, ...]
    recluster: bool
    measured: bool
    regenerated: int  # queries regenerated for this batch (the rest repeat the previous batch)
    clock: dt.datetime


@dataclass
class Scenario:
    """A generated scenario: the dataset, its batches and the query log."""

    spec: ScenarioSpec
    dataset: Dataset
    batches: list[Batch]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def schema(self) -> TableSchema:
        return self.dataset.schema

    @property
    def table(self) -> str:
        return self.dataset.table

    def period(self, index: int) -> PeriodSpec:
        return self.spec.periods[index - 1]

    def fragments(self) -> list[ScanFragment]:
        return [f for b in self.batches for f in b.fragments]

    def summary(self) -> dict[str, Any]:
        """Period structure for display and tests."""
        out = []
        for i, p in enumerate(self.spec.periods, start=1):
            bs = [b for b in self.batches if b.period == i]
            out.append({"period": i, "batches": len(bs), "predicate": p.label,
                        "shifting_rate": p.shifting_rate, "queries": sum(len(b.fragments) for b in bs),
                        "recluster": p.recluster, "rows": sum(b.row_stop - b.row_start for b in bs),
                        "oracle_key": {"layout": p.oracle_layout, "columns": list(p.oracle_columns)}})
        return {"name": self.spec.name, "table": self.table, "rows": self.dataset.rows,
                "batches": len(self.batches), "queries": sum(len(b.fragments) for b in self.batches),
                "target_rows": self.spec.target_rows, "periods": out}

    def to_sql_log(self, path: str | Path) -> Path:
        """Write the query log as JSONL (``{"id", "ts", "sql"}`` per line), importable like
        any real log (``engine.workload.importer``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for f in self.fragments():
                fh.write(json.dumps({"id": f.query_id, "ts": f.ts, "sql": f.sql}) + "\n")
        return path


# --------------------------------------------------------------------------- generation


def _zipf_offsets(rng: np.random.Generator, alpha: float, n_max: int, size: int) -> np.ndarray:
    """``size`` draws of k in [0, n_max) with P(k) ~ (k + 1)^-alpha (truncated Zipf)."""
    n_max = max(1, int(n_max))
    p = (np.arange(1, n_max + 1, dtype=np.float64)) ** (-alpha)
    return rng.choice(n_max, size=size, p=p / p.sum())


def range_sql(column: str, r: Range) -> str:
    """SQL text for one bounded range (both ends inclusive -> BETWEEN)."""
    lo, hi = sql_literal(r.min), sql_literal(r.max)
    if r.min_inclusive and r.max_inclusive:
        return f"{column} BETWEEN {lo} AND {hi}"
    lo_op = ">=" if r.min_inclusive else ">"
    hi_op = "<=" if r.max_inclusive else "<"
    return f"{column} {lo_op} {lo} AND {column} {hi_op} {hi}"


class _Window:
    """Turns encoded [lo, hi] into a typed inclusive Range (integral types rounded inward)."""

    def __init__(self, schema: TableSchema) -> None:
        self.types = {n: t for n, t in schema.columns}

    def make(self, column: str, lo: float, hi: float) -> Range:
        ltype = self.types[column]
        if ltype in ("date", "int"):
            lo_i = int(np.ceil(lo))
            hi_i = max(lo_i, int(np.floor(hi)))
            return Range(logical_types.decode_scalar(ltype, float(lo_i)), logical_types.decode_scalar(ltype, float(hi_i)))
        if ltype == "timestamp":
            lo_s = float(np.ceil(lo / 1e6) * 1e6)
            hi_s = max(lo_s, float(np.floor(hi / 1e6) * 1e6))
            return Range(logical_types.decode_scalar(ltype, lo_s), logical_types.decode_scalar(ltype, hi_s))
        return Range(logical_types.decode_scalar(ltype, float(lo)), logical_types.decode_scalar(ltype, float(hi)))


@dataclass
class _LiveQuery:
    template: QueryTemplate
    column: str
    box: dict[str, Range]


class _Generator:
    """Stateful query generation over batches (one instance per scenario)."""

    def __init__(self, spec: ScenarioSpec, ds: Dataset) -> None:
        self.spec, self.ds = spec, ds
        self.rng = np.random.default_rng(spec.seed)
        self.win = _Window(ds.schema)
        self.types = dict(ds.schema.columns)
        # running domain per stats column after each batch (min/max of rows ingested so far)
        self.dom_lo: dict[str, np.ndarray] = {}
        self.dom_hi: dict[str, np.ndarray] = {}
        offs = ds.batch_offsets
        starts = offs[:-1]
        nonempty = offs[1:] > offs[:-1]
        for col, arr in ds.data.items():
            if arr.dtype.kind == "U":
                continue
            lo = np.full(ds.n_batches, np.inf)
            hi = np.full(ds.n_batches, -np.inf)
            if nonempty.any():
                lo[nonempty] = np.minimum.reduceat(arr, starts[nonempty])
                hi[nonempty] = np.maximum.reduceat(arr, starts[nonempty])
            self.dom_lo[col] = np.minimum.accumulate(lo)
            self.dom_hi[col] = np.maximum.accumulate(hi)
        self._distinct_cache: dict[tuple[str, int], np.ndarray] = {}

    # -- the driving predicate --------------------------------------------------------
    def _driving(self, col: str, dist: Distribution, b: int) -> tuple[float, float]:
        length = float(self.spec.window[col])
        unit = float(self.spec.unit.get(col, length))
        lo_d, hi_d = float(self.dom_lo[col][b]), float(self.dom_hi[col][b])
        ref = float(self.ds.reference[col][b]) if col in self.ds.reference else hi_d
        rng = self.rng
        if dist.kind == "uniform":
            span = max(0.0, hi_d - lo_d - length)
            start = lo_d + rng.uniform(0.0, span) if span > 0 else lo_d
        elif dist.kind == "gaussian":
            centre = ref + rng.normal(0.0, dist.param) * unit
            start = centre - length / 2.0
        elif dist.kind == "zipf":
            n_units = int(max(1.0, np.ceil((ref - lo_d) / unit)))
            k = int(_zipf_offsets(rng, dist.param, n_units, 1)[0])
            end = ref - (k + rng.uniform(0.0, 1.0)) * unit
            start = end - length
        else:  # distinct: uniform over distinct aligned values ingested so far
            key = (col, b)
            cells = self._distinct_cache.get(key)
            if cells is None:
                arr = self.ds.data[col][: int(self.ds.batch_offsets[b + 1])]
                cells = np.unique(np.floor(arr / length))
                self._distinct_cache.clear()
                self._distinct_cache[key] = cells
            start = float(cells[rng.integers(len(cells))]) * length
            return start, start + length - (1.0 if self.types[col] in ("int", "date") else 0.0)
        if self.spec.aligned:
            start = np.floor(start / length) * length
        end = start + length - (1.0 if self.types[col] in ("int", "date") else 0.0)
        return start, end

    def _extra(self, p: ExtraPredicate, b: int) -> tuple[float, float]:
        rng = self.rng
        last = self.ds.n_batches - 1
        if p.kind == "recent":
            ref = float(self.ds.reference[p.column][b]) if p.column in self.ds.reference \
                else float(self.dom_hi[p.column][b])
            end = ref - rng.uniform(0.0, max(p.lookback, 0.0))
            return end - p.length, end
        lo_d, hi_d = float(self.dom_lo[p.column][last]), float(self.dom_hi[p.column][last])
        width = (hi_d - lo_d) * p.fraction
        start = lo_d + rng.uniform(0.0, max(0.0, hi_d - lo_d - width))
        return start, start + width

    def new_query(self, sub: SubWorkload, t: QueryTemplate, period: PeriodSpec, b: int) -> _LiveQuery:
        cols = [c for c, _ in period.predicate_mix]
        w = np.array([w for _, w in period.predicate_mix], dtype=np.float64)
        col = cols[int(self.rng.choice(len(cols), p=w / w.sum()))] if len(cols) > 1 else cols[0]
        lo, hi = self._driving(col, sub.distribution, b)
        box = {col: self.win.make(col, lo, hi)}
        for p in t.extra:
            if p.column == col:
                continue
            elo, ehi = self._extra(p, b)
            box[p.column] = self.win.make(p.column, elo, ehi)
        return _LiveQuery(t, col, box)

    def fragment(self, q: _LiveQuery, sub: SubWorkload, b: int, period_idx: int, in_period: int,
                 seq: int, regenerated: bool, ts: dt.datetime) -> ScanFragment:
        projected = tuple(dict.fromkeys(list(q.template.columns) + list(q.box)))
        where = " AND ".join(range_sql(c, r) for c, r in q.box.items())
        sql = f"SELECT {', '.join(projected)} FROM {self.ds.table} WHERE {where}"
        qid = f"{self.spec.name}-b{b + 1:03d}-{sub.name}-{seq:02d}-{q.template.name}"
        return ScanFragment(query_id=qid, table=self.ds.table, boxes=(dict(q.box),), columns=projected,
                            ts=ts.isoformat(), sql=sql,
                            extra={"workload": sub.name, "template": q.template.name, "column": q.column,
                                   "period": period_idx, "batch": in_period, "batch_index": b,
                                   "regenerated": regenerated})


def generate(spec: ScenarioSpec, dataset: Dataset, params: Mapping[str, Any] | None = None) -> Scenario:
    """Build a :class:`Scenario`: batches with their row slices and query fragments."""
    if spec.n_batches != dataset.n_batches:
        raise InvalidParameterError(
            f"the periods have {spec.n_batches} batches but the dataset has {dataset.n_batches}")
    for p in spec.periods:
        for col, _ in p.predicate_mix:
            if col not in dataset.data:
                raise InvalidParameterError(f"predicated column {col!r} has no data in the dataset")
            if col not in spec.window:
                raise InvalidParameterError(f"no window length (selectivity) for column {col!r}")
    gen = _Generator(spec, dataset)
    measure_from = spec.measure_from_period or spec.recluster_start or 1
    live: dict[str, list[_LiveQuery]] = {}
    last_mix: tuple | None = None
    batches: list[Batch] = []
    b = 0
    for pi, period in enumerate(spec.periods, start=1):
        for j in range(1, period.batches + 1):
            clock = dataset.clocks[b]
            frags: list[ScanFragment] = []
            regenerated = 0
            if period.queries:
                full = last_mix != period.predicate_mix
                seq = 0
                for sub in spec.workloads:
                    current = live.get(sub.name)
                    n = len(sub.templates)
                    if full or current is None:
                        redo = set(range(n))
                    else:
                        k = int(round(period.shifting_rate * n))
                        redo = set(int(i) for i in gen.rng.choice(n, size=k, replace=False)) if k else set()
                    new_list: list[_LiveQuery] = []
                    for i, t in enumerate(sub.templates):
                        q = gen.new_query(sub, t, period, b) if i in redo else current[i]  # type: ignore[index]
                        new_list.append(q)
                        ts = clock + dt.timedelta(seconds=seq)
                        frags.append(gen.fragment(q, sub, b, pi, j, seq, i in redo, ts))
                        seq += 1
                    regenerated += len(redo)
                    live[sub.name] = new_list
                last_mix = period.predicate_mix
            batches.append(Batch(index=b, period=pi, batch=j, row_start=int(dataset.batch_offsets[b]),
                                 row_stop=int(dataset.batch_offsets[b + 1]), fragments=tuple(frags),
                                 recluster=period.recluster, measured=pi >= measure_from,
                                 regenerated=regenerated, clock=clock))
            b += 1
    return Scenario(spec=spec, dataset=dataset, batches=batches, params=dict(params or {}))


def month_starts(start: dt.date, n: int) -> list[dt.date]:
    """The first day of ``n`` consecutive months from ``start``'s month."""
    out = []
    y, m = start.year, start.month
    for _ in range(n + 1):
        out.append(dt.date(y, m, 1))
        m += 1
        if m > 12:
            y, m = y + 1, 1
    return out

