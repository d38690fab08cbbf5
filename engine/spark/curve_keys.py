"""Hilbert and Z-order keys as native Spark expressions, equal to the fitted ordering's.

The scalar Arrow UDF of :func:`engine.spark.fitting.with_key` computes every fitted key
in a Python worker: each row crosses into it and back, most of a Hilbert rewrite's cost
beyond a bare ``orderBy`` (bench/executor/README.md). A grid ordering's key (:class:`engine.layout.base.GridOrdering`) is plain
arithmetic on the fitted state, so this module writes it as Column expressions that
whole-stage code generation compiles:

1. each key column's encoded value (:mod:`engine.core.logical_types`: a double; dates in
   days, timestamps in microseconds, NULL as NaN);
2. its rank among the fitted boundaries, ``searchsorted(boundaries, x, side="right")``
   (:class:`~engine.layout.base.RankCodec`), stretched over ``2**bits`` cells: for an
   integral column (ints, dates, bools) whose boundaries span at most
   :data:`LOOKUP_SPAN` whole numbers, ONE lookup in a literal table of every value's
   scaled rank (:func:`rank_table`, computed by ``RankCodec.scaled`` itself);
   for timestamps, floats and wide ints, a bucket table (:func:`bucket_table`: the value's bucket among equal-width buckets gives the boundaries below it and at
   most :data:`BUCKET_MAX` to compare, exact); otherwise a branch-free binary search over
   a literal array (one step per bit of the boundary count);
3. the curve: bit interleaving (Z-order, :func:`engine.layout.zorder.interleave_bits`); a
   2-D Hilbert key by a state machine over :data:`HILBERT_CHUNK` bits of each coordinate
   per table lookup (:func:`hilbert_table`, four lookups for 16 bits), any other
   Hilbert by Skilling's transform then interleaving (:func:`engine.layout.hilbert.hilbert_encode`,
   J. Skilling, AIP Conf. Proc. 707, 2004), step for step as the numpy code does it.

Every step that reads a value twice is its own projection (a column of a staged
``withColumns``): Spark does not collapse projections whose non-trivial expressions are
used twice, so the expression stays linear in the steps instead of doubling at each one.
Groups with the same curve, column count and bits share one chain: their boundaries (or
rank tables) lie in one literal array, each group's slice found by its offset (an O(1)
lookup by group id).

The written order is the UDF's: both compute the same integer for every row
(``tests/engine/spark/test_curve_keys.py`` checks expression = UDF = numpy on random data with nulls,
ties, negative numbers, dates and timestamps at 1 to 5 bits, and at the default 16 bits
over dates and ints; the state machine equals Skilling's curve at 1 to 31 bits). String
and decimal columns, and a one-column curve of more than 31 bits, stay on the UDF
(:func:`expressible`).

**The default is "auto"** (:attr:`engine.spark.options.ExecutorOptions.key_function`): the
expressions where they are a handful of projections (:func:`cheap`: ranks by tables, a
2-D Hilbert or a Z-order), the UDF elsewhere. The general chain (binary search and
Skilling's steps, about 70 projections at 16 bits) runs far slower than the UDF; the
cheap chain runs without the Python worker's Arrow round trip, which is most of the UDF's
cost (bench/executor/README.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from engine.layout.base import RankCodec
from engine.spark.hashing import long_array
from engine.spark.jobspec import GROUP_COLUMN, KEY_COLUMN, GroupSpec, q
from engine.spark.options import DEFAULT_OPTIONS, KEY_FUNCTIONS, ExecutorOptions

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from engine.table.model import TableSchema

#: layouts whose key is a grid curve over ranked columns
CURVES = ("hilbert", "zorder")
#: logical types whose encoding is a double computed by Spark exactly as by pyarrow. Not
#: decimals: Spark's cast to double and pyarrow's can differ in the last bit (found by the
#: property test: 28958385.7843 as decimal(14, 4) ranked 0 by Spark, 1 by numpy)
NUMERIC_KEYS = ("int", "float", "bool", "date", "timestamp")
#: logical types whose encoded values are whole numbers (a table can be indexed by them:
#: ``options.ranks`` "lookup", :func:`_rank_lookup`; "search" is the staged binary search,
#: :func:`_rank_scaled`, also the path of every other column)
INTEGRAL_KEYS = ("int", "date", "bool")
#: the most values between a column's first and last boundary that get a lookup table
#: (a literal array of that many longs; a date column spans a few thousand days)
LOOKUP_SPAN = 1 << 16
#: buckets per column (a literal table of ``BUCKETS + 2`` longs) for the ranks of every
#: other numeric key column (timestamps, floats, wide ints; ``options.bucketed``,
#: "expression" only: "auto" keeps these columns on the UDF, see :func:`cheap`): the bucket
#: table cuts the first-to-last boundary range into equal buckets (:func:`bucket_table`); a
#: row's bucket, computed by the same IEEE double arithmetic as numpy, gives the boundaries
#: before it and the few inside it, compared one by one in ONE projection (exact: a bucket
#: index that never decreases with the value sorts every boundary of an earlier bucket below
#: the row and of a later one above it). Used where no bucket holds more than
#: :data:`BUCKET_MAX` boundaries, else the staged binary search
BUCKETS = 1 << 16
#: the most boundaries one bucket may hold for :func:`bucket_fits` (comparisons per row)
BUCKET_MAX = 8
#: bits of each coordinate per table lookup of a 2-D Hilbert key (``options.hilbert_2d``
#: "table", :func:`_hilbert_2d`: ``bits / HILBERT_CHUNK`` lookups; "skilling" is Skilling's
#: transform step by step, the only way for 3 or more columns): the table holds
#: ``4 << 2 * HILBERT_CHUNK`` longs
HILBERT_CHUNK = 4
_TMP = "__la_ck"  # prefix of the staged helper columns (dropped at the end)


def expressible(spec: GroupSpec, schema: "TableSchema") -> bool:
    """Can this fitted group's key be a Spark expression? A Hilbert or Z-order group over
    non-string columns whose scaled ranks fit a long (``2 * bits <= 62``)."""
    if spec.group.layout not in CURVES or spec.ordering_json is None:
        return False
    state = spec.ordering_json.get("state") or {}
    cols = spec.ordering_json.get("columns") or []
    if not state or any(schema.type_of(c) not in NUMERIC_KEYS for c in cols):
        return False
    return 2 * int(state["bits"]) <= 62


def cheap(spec: GroupSpec, schema: "TableSchema",
          options: ExecutorOptions = DEFAULT_OPTIONS) -> bool:
    """Is this group's expression chain short (what "auto" asks)? Every key column's ranks
    come from a lookup table (:func:`lookup_fits`), and the curve is a Z-order (one
    expression) or a 2-D Hilbert (:func:`_hilbert_2d`). Timestamps, floats and wide ints
    take bucket tables (:func:`bucket_fits`), which are exact and beat the binary search
    but not the UDF (a 2-D Hilbert over a timestamp and a float:
    ``bench/executor/README.md``, ``bench/executor/bench_curve_keys.py``); Hilbert curves over 1 or 3+ columns take Skilling's
    steps. All of these stay on the UDF under "auto"."""
    if not expressible(spec, schema) or options.ranks != "lookup":
        return False
    cols = spec.ordering_json["columns"]
    if spec.group.layout == "hilbert" and (len(cols) != 2 or options.hilbert_2d != "table"):
        return False
    codecs = spec.ordering_json["state"]["codecs"]
    return all(lookup_fits({schema.type_of(c)}, [codec["boundaries"]])
               for c, codec in zip(cols, codecs))


def chosen(specs: Sequence[GroupSpec], schema: "TableSchema", function: str,
           options: ExecutorOptions = DEFAULT_OPTIONS) -> str:
    """"expression" or "udf": what ``function`` ("auto", "expression" or "udf":
    :attr:`engine.spark.options.ExecutorOptions.key_function`) computes
    the fitted groups of ``specs`` with; one way for all of them (one key column).
    ``options``: "auto"'s threshold and the ways :func:`cheap` asks about."""
    if function == "auto":
        big = sum(s.rows for s in specs) >= options.auto_min_rows
        return ("expression" if specs and big and all(cheap(s, schema, options) for s in specs)
                else "udf")
    if function == "expression" and all(expressible(s, schema) for s in specs):
        return "expression"
    return "udf"


def encoded(column: str, ltype: str, spark_type: str) -> "Column":
    """The column's encoded value as :func:`engine.core.logical_types.encode_arrow` gives
    it (a double, NULL as NaN): dates in days and timestamps in microseconds since the
    epoch; a timestamp without time zone from its wall-clock fields (no session zone)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    c = F.col(q(column))
    if ltype == "date":
        value = F.unix_date(c.cast("date")).cast("double")
    elif ltype == "timestamp" and spark_type == "timestamp_ntz":
        micros = (F.unix_date(c.cast("date")).cast("long") * 86_400_000_000
                  + F.hour(c).cast("long") * 3_600_000_000
                  + F.minute(c).cast("long") * 60_000_000
                  + (F.expr(f"date_part('SECOND', {q(column)})") * 1_000_000).cast("long"))
        value = micros.cast("double")
    elif ltype == "timestamp":
        value = F.unix_micros(c).cast("double")
    else:
        value = c.cast("double")
    return F.coalesce(value, F.lit(float("nan")))


def double_array(values: Sequence[float]) -> "Column":
    """A literal ``array<double>`` of exactly these values (shortest round-trip decimal
    text, parsed by the JVM to the same doubles), as ONE expression, constant-folded."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    if not len(values):
        return F.expr("CAST(array() AS array<double>)")
    return F.expr("array(" + ",".join(f"{float(v)!r}D" for v in values) + ")")


def with_curve_keys(df: "DataFrame", specs: Sequence[GroupSpec], schema: "TableSchema",
                    options: ExecutorOptions = DEFAULT_OPTIONS) -> "DataFrame":
    """``df`` with :data:`KEY_COLUMN`: each expressible group's curve key (:func:`expressible`;
    the caller sends the others to the UDF), 0 for every other row; ranks and 2-D Hilbert
    keys computed as ``options`` says."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    chains: dict[tuple[str, int, int], list[GroupSpec]] = {}
    for s in specs:
        if expressible(s, schema):
            state = s.ordering_json["state"]
            chains.setdefault((s.group.layout, len(state["codecs"]), int(state["bits"])),
                              []).append(s)
    spark_types = {f.name: f.dataType.typeName() for f in df.schema.fields}
    key = None
    for n, ((kind, d, bits), members) in enumerate(chains.items()):
        df, value = _chain(df, f"{_TMP}{n}", kind, d, bits, members, spark_types, schema,
                           options)
        cond = F.col(GROUP_COLUMN).isin([s.index for s in members])
        key = F.when(cond, value) if key is None else key.when(cond, value)
    key = F.lit(0).cast("long") if key is None else key.otherwise(F.lit(0).cast("long"))
    df = df.withColumn(KEY_COLUMN, key)
    return df.drop(*[c for c in df.columns if c.startswith(_TMP)])


def _chain(df: "DataFrame", tmp: str, kind: str, d: int, bits: int,
           members: Sequence[GroupSpec], spark_types: Mapping[str, str],
           schema: "TableSchema", options: ExecutorOptions) -> tuple["DataFrame", "Column"]:
    """Staged columns computing one (curve, d, bits) chain's key for its groups; returns
    the frame and the key's expression (valid on the chain's groups' rows)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    g = F.col(GROUP_COLUMN)
    xs = [f"{tmp}_x{i}" for i in range(d)]
    inputs = {}
    for i in range(d):  # each dimension's encoded value: the row's group's i-th column
        value = None
        for s in members:
            col = s.ordering_json["columns"][i]
            enc = encoded(col, schema.type_of(col), spark_types.get(col, ""))
            value = enc if len(members) == 1 else (
                F.when(g == s.index, enc) if value is None else value.when(g == s.index, enc))
        inputs[xs[i]] = value
    df = df.withColumns(inputs)
    looked_up = {}  # every table-ranked dimension in ONE projection
    for i in range(d):
        groups = [(s.index, s.ordering_json["state"]["codecs"][i]["boundaries"]) for s in members]
        ltypes = {schema.type_of(s.ordering_json["columns"][i]) for s in members}
        if options.ranks == "lookup" and lookup_fits(ltypes, [b for _, b in groups]):
            looked_up[xs[i]] = _rank_lookup(xs[i], bits, groups)
        elif (options.ranks == "lookup" and options.bucketed
              and bucket_fits([b for _, b in groups])):
            df = _rank_bucketed(df, xs[i], f"{tmp}_k{i}", bits, groups)
        else:
            df = _rank_scaled(df, xs[i], f"{tmp}_lo{i}", bits, groups)
    if looked_up:
        df = df.withColumns(looked_up)
    if kind == "hilbert" and d == 2 and options.hilbert_2d == "table":
        return _hilbert_2d(df, xs, bits, f"{tmp}_h")
    if kind == "hilbert":
        df = _skilling(df, xs, bits)
    return df, _interleave([F.col(x) for x in xs], bits)


def lookup_fits(ltypes: set[str], boundaries: Sequence[Sequence[float]]) -> bool:
    """Can the ranks come from a lookup table (:func:`_rank_lookup`)? Integral columns
    (ints, dates, bools: their encoded doubles are whole numbers) whose fitted boundaries
    span at most :data:`LOOKUP_SPAN` values in every group. A chain's table holds its
    groups' tables end to end (no cap on the sum: "auto" decides per group, and a chain
    falling back to the binary search would cost more than a long table)."""
    if not ltypes <= set(INTEGRAL_KEYS):
        return False
    spans = [int(b[-1]) - int(b[0]) + 1 if len(b) else 0 for b in boundaries]
    return max(spans, default=0) <= LOOKUP_SPAN


def rank_table(boundaries: Sequence[float], bits: int) -> tuple[int, list[int], int]:
    """``(lo, table, top)`` of one integral column's fitted boundaries: ``table[v - lo]``
    is the scaled rank (:meth:`RankCodec.scaled`, computed by it) of each whole number
    ``v`` from the first boundary to the last; below them the rank is 0, above them (and
    NaN, NULL) ``top``, the scaled rank of ``len(boundaries)``.

    Example (boundaries 10, 12, 13 on a 2-bit grid: ranks 1 1 2 3, stretched by 4/4):
    >>> rank_table([10.0, 12.0, 13.0], 2)
    (10, [1, 1, 2, 3], 3)
    """
    codec = RankCodec(np.asarray(boundaries, dtype=np.float64), False)
    top = int(codec.scaled(np.array([np.nan]), bits)[0])
    if not len(boundaries):
        return 0, [], top
    lo, hi = int(boundaries[0]), int(boundaries[-1])
    values = np.arange(lo, hi + 1, dtype=np.float64)
    return lo, [int(v) for v in codec.scaled(values, bits)], top


def _rank_lookup(x: str, bits: int, groups: Sequence[tuple[int, Sequence[float]]]) -> "Column":
    """The scaled rank of the encoded value in column ``x`` (a whole number, or NaN), read
    from the row's group's :func:`rank_table` in ONE literal array: an O(1) lookup instead
    of :func:`_rank_scaled`'s staged binary search (one projection, not one per bit). The
    arithmetic is SQL text: a few calls into the JVM, not one per operator."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    offsets, lows, highs, tops, flat = {}, {}, {}, {}, []
    for gid, b in groups:
        low, table, top = rank_table(b, bits)
        offsets[gid], lows[gid], tops[gid] = len(flat), low, top
        highs[gid] = low + len(table) - 1
        flat.extend(table)
    v, low, high, top = f"`{x}`", _lookup_sql(lows), _lookup_sql(highs), _lookup_sql(tops)
    at = (F.try_element_at(long_table(flat), F.expr(
        f"CAST({v} - {low} + {_lookup_sql(offsets)} + 1 AS INT)")) if flat
        else F.lit(0).cast("long"))
    scaled = (F.when(F.expr(f"isnan({v}) OR {v} > {high}"), F.expr(top))
              .when(F.expr(f"{v} < {low}"), F.lit(0).cast("long")).otherwise(at))
    return scaled


def bucket_table(boundaries: Sequence[float],
                 buckets: int = BUCKETS) -> tuple[float, float, list[int]]:
    """``(lo, scale, starts)`` of one column's fitted (sorted, distinct) boundaries: a value
    ``x`` in ``[lo, last boundary]`` falls in bucket ``k = floor((x - lo) * scale)`` (0 to
    :data:`BUCKETS`), and the boundaries of bucket ``k`` are ``starts[k]`` to
    ``starts[k + 1] - 1``. ``(x - lo) * scale`` is one IEEE subtraction and one
    multiplication, the same double in numpy and in the JVM. ``buckets``: :data:`BUCKETS`
    (other values only to show the table small).

    Example (boundaries 0, 1, 3 over 4 buckets of 3/4: ids 0, 1, 4):
    >>> bucket_table([0.0, 1.0, 3.0], buckets=4)
    (0.0, 1.3333333333333333, [0, 1, 2, 2, 2, 3])
    """
    b = np.asarray(boundaries, dtype=np.float64)
    if not len(b):
        return 0.0, 0.0, [0]
    lo, span = float(b[0]), float(b[-1] - b[0])
    scale = buckets / span if span > 0 else 0.0
    ids = np.minimum(np.floor((b - lo) * scale), buckets).astype(np.int64)
    starts = np.searchsorted(ids, np.arange(buckets + 2), side="left")
    return lo, scale, [int(v) for v in starts]


def bucket_fits(boundaries: Sequence[Sequence[float]]) -> bool:
    """Can the ranks come from :func:`_rank_bucketed`? Every group has boundaries (finite:
    RankCodec keeps finite values) and no bucket holds more than :data:`BUCKET_MAX`."""
    for b in boundaries:
        if not len(b):  # nothing to bucket: the binary search's one step
            return False
        span = float(b[-1]) - float(b[0])
        if not (np.isfinite(span) and np.isfinite(BUCKETS / span if span > 0 else 0.0)):
            return False  # (x - lo) * scale could overflow to inf or NaN
        starts = np.asarray(bucket_table(b)[2])
        if len(starts) > 1 and int(np.max(np.diff(starts))) > BUCKET_MAX:
            return False
    return True


def _rank_bucketed(df: "DataFrame", x: str, k: str, bits: int,
                   groups: Sequence[tuple[int, Sequence[float]]]) -> "DataFrame":
    """Replace the encoded value ``x`` by its scaled rank (:meth:`RankCodec.scaled`) from
    :func:`bucket_table`: the row's bucket gives the boundaries below it (``starts[k]``)
    and at most :data:`BUCKET_MAX` candidates, each compared once; two projections."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    los, scales, counts, s_off, b_off, starts, flat = {}, {}, {}, {}, {}, [], []
    for gid, b in groups:
        lo, scale, st = bucket_table(b)
        los[gid], scales[gid], counts[gid] = lo, scale, len(b)
        s_off[gid], b_off[gid] = len(starts), len(flat)
        starts.extend(st)
        flat.extend(float(v) for v in b)
    v, n = f"`{x}`", _lookup_sql(counts)
    lo, scale = _double_sql(los), _double_sql(scales)
    hi = _double_sql({g: float(b[-1]) for g, b in groups})
    # NaN, NULL and values outside [lo, hi] never reach FLOOR (ANSI mode would refuse to
    # cast NaN); their rank comes from the bounds below
    bucket = (f"CAST(CASE WHEN {v} >= {lo} AND {v} <= {hi} THEN LEAST(FLOOR(({v} - {lo}) * "
              f"{scale}), {BUCKETS}) ELSE 0 END + {_lookup_sql(s_off)} + 1 AS INT)")
    table = long_table(starts)
    df = df.withColumns({f"{k}_s": F.try_element_at(table, F.expr(bucket)),
                         f"{k}_e": F.try_element_at(table, F.expr(bucket) + F.lit(1))})
    # the boundaries stay a literal inside each comparison: as a projected column every
    # row would carry a copy of the whole array (5.6x the UDF's time at 500k rows)
    first, end, tab = F.col(f"{k}_s"), F.col(f"{k}_e"), double_table(flat)
    rank = first
    for j in range(BUCKET_MAX):  # the bucket's boundaries <= x, each compared once
        at = (first + j + F.expr(_lookup_sql(b_off)) + 1).cast("int")
        hit = (first + j < end) & (F.try_element_at(tab, at) <= F.col(x))
        rank = rank + F.when(hit, 1).otherwise(0)
    value = F.col(x)
    rank = (F.when(F.isnan(value) | (value > F.expr(hi)), F.expr(n))
        .when(value < F.expr(lo), F.lit(0).cast("long")).otherwise(rank))
    df = df.withColumn(f"{k}_r", rank.cast("long"))
    return df.withColumn(x, F.expr(f"shiftleft(`{k}_r`, {bits}) div ({n} + 1)")) \
        .drop(f"{k}_s", f"{k}_e", f"{k}_r")


def _double_sql(values: Mapping[int, float]) -> str:
    """:func:`_lookup_sql` for doubles (shortest round-trip decimal text, parsed by the JVM
    to the same double)."""
    if len(set(values.values())) == 1:
        return f"{float(next(iter(values.values())))!r}D"
    table = ",".join(f"{float(values.get(i, 0.0))!r}D" for i in range(max(values) + 1))
    return f"try_element_at(array({table}), CAST(`{GROUP_COLUMN}` + 1 AS INT))"


def _lookup_sql(values: Mapping[int, int]) -> str:
    """:func:`_lookup` as SQL text (a constant when every group has the same value)."""
    if len(set(values.values())) == 1:
        return f"CAST('{int(next(iter(values.values())))}' AS BIGINT)"
    table = ",".join(f"CAST('{int(values.get(i, 0))}' AS BIGINT)" for i in range(max(values) + 1))
    return f"try_element_at(array({table}), CAST(`{GROUP_COLUMN}` + 1 AS INT))"


def long_table(values: Sequence[int]) -> "Column":
    """A literal ``array<bigint>`` built in the JVM as ONE literal (a ``long[]`` sent as
    bytes, then ``functions.lit``), not parsed from SQL text as :func:`long_array` does:
    Spark's analyzer and optimizer walk a parsed array's every element, which took about
    10 s for 65,536 longs against 1 s this way (warm session). Falls back to
    :func:`long_array` without a classic SparkContext (Spark Connect)."""
    return _jvm_literal(values, "long", long_array)


def double_table(values: Sequence[float]) -> "Column":
    """:func:`long_table` for doubles: a literal ``array<double>`` built in the JVM as ONE
    literal (exact bits); :func:`double_array` (SQL text) without a classic SparkContext."""
    return _jvm_literal(values, "double", double_array)


def _jvm_literal(values: Sequence[float], kind: str, fallback) -> "Column":
    """ONE literal array of ``kind`` ("long" or "double") built in the JVM from the values'
    big-endian bytes; ``fallback(values)`` (SQL text) without a classic SparkContext."""
    from pyspark import SparkContext  # pyspark: costly import, deferred

    sc = SparkContext._active_spark_context
    if sc is None or not len(values):
        return fallback(values)
    from pyspark.sql.classic.column import Column  # pyspark: costly import, deferred

    jvm = sc._jvm
    array = sc._gateway.new_array(getattr(jvm, kind), len(values))
    raw = np.asarray(values, dtype=">i8" if kind == "long" else ">f8").tobytes()
    buffer = jvm.java.nio.ByteBuffer.wrap(bytearray(raw))
    (buffer.asLongBuffer() if kind == "long" else buffer.asDoubleBuffer()).get(array)
    return Column(jvm.org.apache.spark.sql.functions.lit(array))


def hilbert_table(chunk: int) -> list[int]:
    """The 2-D Hilbert curve as a state machine over ``chunk`` bits of each coordinate at
    a time: entry ``state << 2*chunk | xbits << chunk | ybits`` holds the chunk's
    ``2*chunk`` key bits, and above them the next state.

    The curve is the classic "xy2d" one, which is Skilling's transform in two dimensions
    (:func:`engine.layout.hilbert.hilbert_encode`, dimension 0 = x most significant;
    ``tests/engine/spark/test_curve_keys.py`` checks them equal at 1 to 31 bits). At each bit level
    the quadrant's digit is ``3*bx ^ by``; where ``by`` is 0 the rest of the curve is the
    transposed one, complemented too where ``bx`` is 1. A state is that transform of the
    original bits: bit 0 transpose, bit 1 complement.

    Example (one bit a step: the 2x2 curve visits (0,0) (0,1) (1,1) (1,0)):
    >>> [e & 3 for e in hilbert_table(1)[:4]]
    [0, 1, 3, 2]
    """
    mask = (1 << chunk) - 1
    out = []
    for state in range(4):
        for cell in range(1 << 2 * chunk):
            x, y = cell >> chunk, cell & mask
            swap, comp, digits = state & 1, state >> 1, 0
            for level in range(chunk - 1, -1, -1):
                bx, by = (x >> level) & 1, (y >> level) & 1
                if swap:
                    bx, by = by, bx
                if comp:
                    bx, by = 1 - bx, 1 - by
                digits = digits << 2 | ((3 * bx) ^ by)
                if by == 0:
                    comp ^= bx
                    swap ^= 1
            out.append(digits | (swap | comp << 1) << 2 * chunk)
    return out


def _hilbert_2d(df: "DataFrame", xs: Sequence[str], bits: int,
                tmp: str) -> tuple["DataFrame", "Column"]:
    """The 2-D Hilbert key of the grid cells ``xs`` by :func:`hilbert_table`, the
    top :data:`HILBERT_CHUNK` bits first: ``ceil(bits / chunk)`` staged table lookups
    instead of Skilling's ``2 * (bits - 1)`` steps and the bit interleave. Leading zero
    bits that pad ``bits`` to whole chunks transpose the curve once each and add no key
    bits, so the first state is the transpose when their count is odd."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    k = HILBERT_CHUNK
    steps = -(-bits // k)
    pad = steps * k - bits
    table, mask, digits = long_table(hilbert_table(k)), (1 << k) - 1, (1 << 2 * k) - 1
    x, y = f"`{xs[0]}`", f"`{xs[1]}`"
    names = [f"{tmp}{j}" for j in range(steps)]
    for j, name in enumerate(names):  # SQL text: a few calls into the JVM per step
        shift = (steps - 1 - j) * k
        state = f"{pad % 2}L" if j == 0 else f"shiftright(`{names[j - 1]}`, {2 * k})"
        index = (f"CAST((shiftleft({state}, {2 * k}) | shiftleft(shiftright({x}, {shift}) & "
                 f"{mask}, {k}) | (shiftright({y}, {shift}) & {mask})) + 1 AS INT)")
        df = df.withColumn(name, F.element_at(table, F.expr(index)))
    key = " | ".join(f"shiftleft(`{name}` & {digits}, {2 * k * (steps - 1 - j)})"
                     for j, name in enumerate(names))
    return df, F.expr(f"CAST({key} AS BIGINT)")


def _lookup(values: Mapping[int, int]) -> "Column":
    """``values[group]`` of the row's group as a long (an O(1) literal-array lookup):
    :func:`_lookup_sql` as a Column."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    return F.expr(_lookup_sql(values))


def _rank_scaled(df: "DataFrame", x: str, lo: str, bits: int,
                 groups: Sequence[tuple[int, Sequence[float]]]) -> "DataFrame":
    """Replace the encoded value ``x`` by its scaled rank, as :meth:`RankCodec.scaled`:
    ``(searchsorted(b, x, "right") << bits) // (len(b) + 1)``.

    The rank is found by a binary search that never branches on data: ``lo`` starts at 0
    and, for each power of two ``s`` from the largest not above the boundary count down to
    1, moves to ``lo + s`` when boundary ``lo + s`` (1-based) is ``<= x``. NaN (and NULL)
    rank after every boundary, as numpy sorts it (Spark orders NaN above every double)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    offsets, counts, flat = {}, {}, []
    for gid, b in groups:
        offsets[gid], counts[gid] = len(flat), len(b)
        flat.extend(float(v) for v in b)
    off, n, tab = f"{lo}_off", f"{lo}_n", f"{lo}_b"
    df = df.withColumns({lo: F.lit(0).cast("long"), off: _lookup(offsets), n: _lookup(counts),
                         tab: double_array(flat)})  # the literal parsed once, not per step
    table, value = F.col(tab), F.col(x)
    most = max(counts.values())
    step = 1 << max(0, most.bit_length() - 1)
    while most and step >= 1:
        cand = F.col(lo) + step
        hit = (cand <= F.col(n)) & (F.try_element_at(table, (F.col(off) + cand).cast("int"))
                                    <= value)
        df = df.withColumn(lo, F.when(hit, cand).otherwise(F.col(lo)))
        step >>= 1
    return df.withColumn(x, F.expr(f"shiftleft(`{lo}`, {bits}) div (`{n}` + 1)")) \
        .drop(lo, off, n, tab)


def _skilling(df: "DataFrame", xs: Sequence[str], bits: int) -> "DataFrame":
    """Skilling's "axes to transpose" on the grid cells ``xs`` (in place), as
    :func:`engine.layout.hilbert._encode_block`: the inverse undo-excess-work steps from the
    top bit down, Gray encoding, then the XOR with ``t``."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    x = [F.col(c) for c in xs]
    d = len(xs)
    level = 1 << (bits - 1)
    while level > 1:
        p = level - 1
        for i in range(d):
            hit = (x[i].bitwiseAND(F.lit(level))) != 0
            if i == 0:
                df = df.withColumn(xs[0], F.when(hit, x[0].bitwiseXOR(F.lit(p))).otherwise(x[0]))
                continue
            t = F.when(hit, F.lit(0)).otherwise(x[0].bitwiseXOR(x[i]).bitwiseAND(F.lit(p)))
            df = df.withColumns({
                xs[0]: F.when(hit, x[0].bitwiseXOR(F.lit(p))).otherwise(x[0].bitwiseXOR(t)),
                xs[i]: x[i].bitwiseXOR(t)})
        level >>= 1
    for i in range(1, d):  # Gray encode
        df = df.withColumn(xs[i], x[i].bitwiseXOR(x[i - 1]))
    t = F.lit(0).cast("long")
    level = 1 << (bits - 1)
    while level > 1:
        t = t.bitwiseXOR(F.when(x[d - 1].bitwiseAND(F.lit(level)) != 0, F.lit(level - 1))
                         .otherwise(F.lit(0)))
        level >>= 1
    df = df.withColumn(f"{xs[0]}_t", t)
    return df.withColumns({c: F.col(c).bitwiseXOR(F.col(f"{xs[0]}_t")) for c in xs}) \
        .drop(f"{xs[0]}_t")


def _interleave(x: Sequence["Column"], bits: int) -> "Column":
    """The Morton code of the cells ``x`` (:func:`engine.layout.zorder.interleave_bits`):
    bit k of dimension i goes to bit ``k*d + (d-1-i)``; dimension 0 is the most significant."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    d = len(x)
    out = None
    for i in range(d):
        for k in range(bits):
            bit = F.shiftleft(F.shiftright(x[i], k).bitwiseAND(F.lit(1)), k * d + d - 1 - i)
            out = bit if out is None else out.bitwiseOR(bit)
    return out.cast("long")
