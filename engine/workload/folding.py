"""Constant folding of SQL literal expressions, and coercion of constants to a column's type.

Queries write bounds as expressions: ``0.06 - 0.01``, ``date '1994-01-01' + interval '1'
year``, ``- interval '90' day``, ``CAST('1995-03-15' AS DATE)``, ``add_months(...)``.
:func:`fold` evaluates such a sqlglot expression to a Python value (``int``, exact
``Decimal``, ``float``, ``str``, ``bool``, ``datetime.date``, ``datetime.datetime`` or an
:class:`Interval`), or returns :data:`NOT_CONSTANT` when it depends on a column, on the
clock (``current_date``) or on something we do not model.

:func:`coerce` then converts a constant to a column's logical type for a comparison,
returning the nearest representable values below and above it, so that
``int_col < 24.5`` becomes ``int_col <= 24`` and ``date_col > TIMESTAMP '1994-01-01 10:00'``
becomes ``date_col >= 1994-01-02`` (exact, never narrowing).

Example:
>>> import sqlglot
>>> fold(sqlglot.parse_one("date '1994-01-01' + interval '1' year"))
datetime.date(1995, 1, 1)
>>> fold(sqlglot.parse_one("0.06 - 0.01"))
Decimal('0.05')
"""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import math
import re
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from engine.core.errors import WorkloadParseError


class _NotConstant:
    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT: Any = _NotConstant()


@dataclass(frozen=True)
class Interval:
    """A SQL interval: calendar months plus an exact duration."""

    months: int = 0
    delta: dt.timedelta = dt.timedelta(0)

    def __neg__(self) -> "Interval":
        return Interval(-self.months, -self.delta)

    def __add__(self, other: "Interval") -> "Interval":
        return Interval(self.months + other.months, self.delta + other.delta)

    def scaled(self, k: int) -> "Interval":
        return Interval(self.months * k, self.delta * k)


_UNIT_MONTHS = {"YEAR": 12, "QUARTER": 3, "MONTH": 1}
_UNIT_DELTA = {
    "WEEK": dt.timedelta(weeks=1), "DAY": dt.timedelta(days=1), "HOUR": dt.timedelta(hours=1),
    "MINUTE": dt.timedelta(minutes=1), "SECOND": dt.timedelta(seconds=1),
    "MILLISECOND": dt.timedelta(milliseconds=1), "MICROSECOND": dt.timedelta(microseconds=1),
}
#: text shaped like a date (a literal that fails to parse is a mistake, not "unknown")
_DATE_LIKE = re.compile(r"^\s*-?\d+-\d+-\d+")
_DATE_TYPES = {exp.DataType.Type.DATE, exp.DataType.Type.DATE32}
# the timestamp type names vary across the supported sqlglot versions (>= 25)
_TS_TYPES = {getattr(exp.DataType.Type, n) for n in (
    "TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ", "DATETIME", "DATETIME64",
    "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS") if hasattr(exp.DataType.Type, n)}


def _unit_name(unit: Any) -> str | None:
    """Normalised unit name: ``Var(YEAR)``, ``'days'`` and ``Day(3)`` (``day (3)``) all work."""
    if unit is None:
        return None
    if isinstance(unit, (exp.Var, exp.Identifier, exp.Literal)):
        name = unit.name
    elif isinstance(unit, exp.Expression):
        name = type(unit).__name__
    else:
        name = str(unit)
    name = name.upper()
    aliases = {"YY": "YEAR", "YYYY": "YEAR", "Y": "YEAR", "MM": "MONTH", "MON": "MONTH",
               "DD": "DAY", "D": "DAY", "HH": "HOUR", "MI": "MINUTE", "SS": "SECOND",
               "W": "WEEK", "WK": "WEEK", "Q": "QUARTER", "QQ": "QUARTER",
               "MS": "MILLISECOND", "US": "MICROSECOND"}
    if name in aliases:
        return aliases[name]
    return name[:-1] if name.endswith("S") else name


def make_interval(amount: Any, unit: str | None) -> Any:
    """``Interval`` for ``amount`` units (amount may carry its unit: ``'1 year'``)."""
    if isinstance(amount, str):
        parts = amount.strip().split()
        if len(parts) == 2 and unit is None:
            amount, unit = parts[0], parts[1].upper().rstrip("S")
        amount = _number(amount.strip() if isinstance(amount, str) else amount)
    if amount is NOT_CONSTANT or isinstance(amount, bool) or not isinstance(
            amount, (int, decimal.Decimal, float)) or unit is None:
        return NOT_CONSTANT
    if unit in _UNIT_MONTHS:
        months = amount * _UNIT_MONTHS[unit]
        if months != int(months):
            return NOT_CONSTANT
        return Interval(months=int(months))
    if unit in _UNIT_DELTA:
        return Interval(delta=_UNIT_DELTA[unit] * float(amount))
    return NOT_CONSTANT


def _number(text: str) -> Any:
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return NOT_CONSTANT
    if not d.is_finite():
        return NOT_CONSTANT
    if d == d.to_integral_value() and "." not in text and "e" not in text.lower():
        return int(d)
    return d


def add_months(d: dt.date, months: int) -> dt.date:
    """Calendar month arithmetic, clamping to the month's last day (Jan 31 + 1 month = Feb 28)."""
    y, m = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m + 1
    day = min(d.day, calendar.monthrange(year, month)[1])
    return d.replace(year=year, month=month, day=day)


def _shift(base: Any, iv: Interval) -> Any:
    """date/timestamp + interval; a date plus a sub-day duration becomes a timestamp."""
    if not isinstance(base, dt.date):
        return NOT_CONSTANT
    out = add_months(base, iv.months) if iv.months else base
    if iv.delta:
        if not isinstance(out, dt.datetime) and iv.delta % dt.timedelta(days=1):
            out = dt.datetime(out.year, out.month, out.day)
        out = out + iv.delta
    return out


def parse_date(text: str) -> Any:
    """A date from ISO text; text with a time of day gives a datetime."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        return parse_timestamp(text)


def parse_timestamp(text: str) -> Any:
    try:
        ts = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return NOT_CONSTANT
    if ts.tzinfo is not None:
        ts = ts.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return ts


def cast_value(value: Any, dtype: exp.DataType) -> Any:
    """Evaluate ``CAST(value AS dtype)`` for the types bounds use."""
    if value is NOT_CONSTANT or value is None:
        return NOT_CONSTANT
    t = dtype.this
    if t in _DATE_TYPES:
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            d = parse_date(value)
            if d is NOT_CONSTANT and _DATE_LIKE.match(value):
                raise WorkloadParseError(f"date literal {value!r} is not a valid date "
                                         "(years 1..9999)")
            return d.date() if isinstance(d, dt.datetime) else d
        return NOT_CONSTANT
    if t in _TS_TYPES:
        if isinstance(value, dt.datetime):
            return value
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day)
        return parse_timestamp(value) if isinstance(value, str) else NOT_CONSTANT
    if t in exp.DataType.TEXT_TYPES:
        if isinstance(value, (dt.date, decimal.Decimal, int, float)) and not isinstance(value, bool):
            return value.isoformat() if isinstance(value, dt.date) else str(value)
        return value if isinstance(value, str) else NOT_CONSTANT
    if t in exp.DataType.INTEGER_TYPES:
        num = _number(value) if isinstance(value, str) else value
        if isinstance(num, bool) or not isinstance(num, (int, decimal.Decimal, float)):
            return NOT_CONSTANT
        return int(num)  # SQL casts truncate toward zero
    if t in exp.DataType.REAL_TYPES:
        num = _number(value) if isinstance(value, str) else value
        if isinstance(num, bool) or not isinstance(num, (int, decimal.Decimal, float)):
            return NOT_CONSTANT
        if t in (exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
            return float(num)
        return decimal.Decimal(str(num))
    if t == exp.DataType.Type.BOOLEAN and isinstance(value, bool):
        return value
    return NOT_CONSTANT


def _arith(op: type, a: Any, b: Any) -> Any:
    """+ - * / on folded values (numbers exact as Decimal, dates with intervals)."""
    if a is NOT_CONSTANT or b is NOT_CONSTANT or a is None or b is None:
        return NOT_CONSTANT
    if isinstance(a, Interval) and isinstance(b, Interval):
        if op is exp.Add:
            return a + b
        if op is exp.Sub:
            return a + (-b)
        return NOT_CONSTANT
    if isinstance(a, Interval) and isinstance(b, dt.date) and op is exp.Add:
        a, b = b, a  # interval + date
    if isinstance(a, Interval) and isinstance(b, int) and op is exp.Mul:
        return a.scaled(b)
    if isinstance(b, Interval) and isinstance(a, int) and op is exp.Mul:
        return b.scaled(a)
    if isinstance(a, dt.date) and isinstance(b, Interval) and op in (exp.Add, exp.Sub):
        return _shift(a, b if op is exp.Add else -b)
    if isinstance(a, dt.date) and isinstance(b, int) and not isinstance(b, bool) \
            and op in (exp.Add, exp.Sub):  # date +/- days (PostgreSQL, Spark date_add)
        return _shift(a, Interval(delta=dt.timedelta(days=b if op is exp.Add else -b)))
    if isinstance(a, dt.date) or isinstance(b, dt.date) or isinstance(a, (str, bool)) \
            or isinstance(b, (str, bool)) or isinstance(a, Interval) or isinstance(b, Interval):
        return NOT_CONSTANT
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
    elif isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        a, b = decimal.Decimal(a), decimal.Decimal(b)
    try:
        if op is exp.Add:
            return a + b
        if op is exp.Sub:
            return a - b
        if op is exp.Mul:
            return a * b
        if op is exp.Div:
            if isinstance(a, int) and isinstance(b, int):
                a = decimal.Decimal(a)
            return a / b
    except (ZeroDivisionError, decimal.InvalidOperation, ArithmeticError):
        return NOT_CONSTANT
    return NOT_CONSTANT


def fold(node: exp.Expression | None) -> Any:
    """Evaluate a constant SQL expression, or return ``NOT_CONSTANT``."""
    if node is None:
        return NOT_CONSTANT
    if isinstance(node, exp.Paren):
        return fold(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return str(node.this)
        return _number(str(node.this))
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        v = fold(node.this)
        if isinstance(v, (int, float, decimal.Decimal, Interval)) and not isinstance(v, bool):
            return -v
        return NOT_CONSTANT
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return cast_value(fold(node.this), node.to)
    if isinstance(node, exp.Interval):
        amount = fold(node.this)
        unit = _unit_name(node.args.get("unit"))
        if isinstance(amount, str):
            return make_interval(amount, unit)
        return make_interval(amount, unit) if amount is not NOT_CONSTANT else NOT_CONSTANT
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return _arith(type(node), fold(node.this), fold(node.expression))
    if isinstance(node, (exp.TsOrDsToDate, exp.StrToDate)) and not node.args.get("format"):
        return cast_value(fold(node.this), exp.DataType.build("DATE"))
    if isinstance(node, (exp.DateAdd, exp.DateSub, exp.TsOrDsAdd, exp.DatetimeAdd,
                         exp.DatetimeSub, exp.TimestampAdd, exp.TimestampSub)):
        base = fold(node.this)
        if isinstance(base, str):
            base = parse_date(base)
        amount = fold(node.expression)
        if isinstance(amount, Interval):
            iv = amount
        else:
            iv = make_interval(amount, _unit_name(node.args.get("unit")) or "DAY")
        if iv is NOT_CONSTANT:
            return NOT_CONSTANT
        sub = isinstance(node, (exp.DateSub, exp.DatetimeSub, exp.TimestampSub))
        return _shift(base, -iv if sub else iv)
    if isinstance(node, exp.AddMonths):
        base, months = fold(node.this), fold(node.expression)
        if isinstance(base, str):
            base = parse_date(base)
        if not isinstance(months, int) or isinstance(months, bool):
            return NOT_CONSTANT
        return _shift(base, Interval(months=months))
    return NOT_CONSTANT


# --- coercion to a column's logical type -------------------------------------------------

def coerce(ltype: str, value: Any) -> tuple[Any, Any] | None:
    """Nearest values ``(below, above)`` of type ``ltype`` around ``value``.

    ``below == above`` when ``value`` is exactly representable; ``None`` when the constant
    cannot be compared with the column meaningfully (no range then, conservatively).
    """
    if value is NOT_CONSTANT or value is None or isinstance(value, Interval):
        return None
    if ltype == "bool":
        return (value, value) if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if ltype in ("int", "float", "decimal"):
        if isinstance(value, str):
            value = _number(value.strip())
        if not isinstance(value, (int, float, decimal.Decimal)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if ltype == "float":
            if not math.isfinite(float(value)):  # 1e400: beyond a double, not "infinity"
                raise WorkloadParseError(f"numeric literal {value} is out of the range of a "
                                         "double")
            return float(value), float(value)
        if ltype == "decimal":
            d = decimal.Decimal(str(value)) if isinstance(value, float) else decimal.Decimal(value)
            return d, d
        if isinstance(value, int):
            return value, value
        d = decimal.Decimal(str(value)) if isinstance(value, float) else value
        return int(d.to_integral_value(decimal.ROUND_FLOOR)), int(d.to_integral_value(decimal.ROUND_CEILING))
    if ltype == "date":
        if isinstance(value, str):
            value = parse_date(value)
        if isinstance(value, dt.datetime):
            d = value.date()
            return (d, d) if value.time() == dt.time(0) else (d, d + dt.timedelta(days=1))
        return (value, value) if isinstance(value, dt.date) else None
    if ltype == "timestamp":
        if isinstance(value, str):
            value = parse_timestamp(value)
        if isinstance(value, dt.datetime):
            return value, value
        if isinstance(value, dt.date):
            ts = dt.datetime(value.year, value.month, value.day)
            return ts, ts
        return None
    if ltype == "string":
        return (value, value) if isinstance(value, str) else None
    return None
