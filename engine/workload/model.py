"""Scan fragments: what one query asks of one table, as a union of per-column range boxes.

A fragment's ``boxes`` is a disjunction (OR) of boxes; a box is a conjunction (AND) of
per-column :class:`Range` objects. An empty ``boxes`` tuple means the scan has no usable
predicate and cannot be pruned. Values are Python objects of the column's logical type
(``datetime.date`` for dates, ...); ``None`` bounds are open ends.

A fragment also says where its ranges came from (:class:`RangeSource`): a predicate written
on the table itself, one carried over an equi-join from another table's column, or the keys
of a registered dimension table whose filter was evaluated on its data (MTO's join-induced
predicates, SIGMOD 2021, section 4). A join the importer could not turn into a range is
recorded too, so the lint can say which table to register.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.core import logical_types


@dataclass(frozen=True, slots=True)
class Range:
    """A closed/open interval on one column; None bounds are unbounded."""

    min: Any = None
    max: Any = None
    min_inclusive: bool = True
    max_inclusive: bool = True

    def to_json(self, ltype: str) -> dict[str, Any]:
        return {
            "min": logical_types.to_json_value(ltype, self.min),
            "max": logical_types.to_json_value(ltype, self.max),
            "min_inclusive": self.min_inclusive,
            "max_inclusive": self.max_inclusive,
        }

    @classmethod
    def from_json(cls, ltype: str, data: Mapping[str, Any]) -> "Range":
        return cls(logical_types.from_json_value(ltype, data.get("min")),
                   logical_types.from_json_value(ltype, data.get("max")),
                   bool(data.get("min_inclusive", True)), bool(data.get("max_inclusive", True)))


Box = Mapping[str, Range]

#: the kinds of :class:`RangeSource`
SOURCE_KINDS = ("direct", "propagated", "lookup", "unmapped")


@dataclass(frozen=True, slots=True)
class RangeSource:
    """Where the range on one column of a fragment came from.

    ``kind`` is ``direct`` (a predicate on the column itself), ``propagated`` (a predicate
    on ``via``, a column equal to this one through an equi-join), ``lookup`` (the keys
    ``via`` of dimension ``table`` at snapshot ``snapshot`` that satisfy ``predicate``) or
    ``unmapped`` (the column joins ``via`` whose filter ``predicate`` gives no range: the
    dimension is not registered or the filter is not evaluable; ``note`` says which).
    ``note`` also says when a lookup's keys were widened to fewer ranges.
    """

    column: str
    kind: str
    via: str | None = None
    table: str | None = None
    snapshot: str | None = None
    predicate: str | None = None
    note: str | None = None

    def describe(self) -> str:
        """One line for people.

        Example:
        >>> RangeSource("ss_sold_date_sk", "lookup", "d_date_sk", "date_dim", "7",
        ...             "d_year = 2000").describe()
        'ss_sold_date_sk: looked up in date_dim.d_date_sk at snapshot 7 (d_year = 2000)'
        """
        if self.kind == "direct":
            text = "direct"
        elif self.kind == "propagated":
            text = f"propagated from {self.via}"
        elif self.kind == "lookup":
            text = (f"looked up in {self.table}.{self.via} at snapshot {self.snapshot}"
                    f" ({self.predicate})")
        else:
            text = f"joins {self.via}" + (f" filtered by {self.predicate}" if self.predicate else "") \
                + ": no range"
        return f"{self.column}: {text}" + (f"; {self.note}" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RangeSource":
        return cls(**{k: data.get(k) for k in cls.__slots__ if k in data})


@dataclass(frozen=True)
class ScanFragment:
    """One scan of the table by one query."""

    query_id: str
    table: str
    boxes: tuple[Box, ...]
    columns: tuple[str, ...]  # projected columns of the table (all referenced columns)
    ts: str | None = None  # ISO-8601
    sql: str | None = None
    duration_ms: float | None = None
    bytes_scanned: int | None = None
    user: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[RangeSource, ...] = ()  # where each predicated column's range came from

    @property
    def predicated_columns(self) -> tuple[str, ...]:
        """Columns constrained by at least one box, in first-seen order."""
        seen: dict[str, None] = {}
        for box in self.boxes:
            for col in box:
                seen.setdefault(col, None)
        return tuple(seen)

    def relogged(self, query_id: str, ts: str | None) -> "ScanFragment":
        """The same statement logged by another query: every field but ``query_id`` and
        ``ts`` shared with this one (boxes, sources and SQL are immutable), so a busy log's
        repeats cost one decoding per distinct statement.

        Example:
        >>> f = ScanFragment("q1", "t", ({"a": Range(1, 2)},), ("a",), ts="2024-01-01")
        >>> g = f.relogged("q2", None)
        >>> (g.query_id, g.ts, g.boxes is f.boxes, f.query_id)
        ('q2', None, True, 'q1')
        """
        copy = object.__new__(ScanFragment)
        copy.__dict__.update(self.__dict__)
        copy.__dict__["query_id"] = query_id
        copy.__dict__["ts"] = ts
        return copy

    def to_json(self, types: Mapping[str, str]) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "ts": self.ts,
            "table": self.table,
            "columns": list(self.columns),
            "boxes": [{c: r.to_json(types.get(c, "string")) for c, r in box.items()}
                      for box in self.boxes],
            "sql": self.sql,
            "duration_ms": self.duration_ms,
            "bytes_scanned": self.bytes_scanned,
            "user": self.user,
            "sources": [s.to_json() for s in self.sources],
        }

    @classmethod
    def from_json(cls, types: Mapping[str, str], data: Mapping[str, Any],
                  ranges: dict | None = None) -> "ScanFragment":
        """The fragment ``to_json`` wrote. ``ranges``: a memo shared across the fragments of
        one read, so that a log's repeated predicates (a dashboard's recurring queries) are
        decoded once; :class:`Range` is immutable, so sharing one is safe."""
        memo = {} if ranges is None else ranges
        boxes = tuple({c: _range(memo, types.get(c, "string"), r) for c, r in box.items()}
                      for box in data.get("boxes", []))
        return cls(query_id=str(data["query_id"]), table=data["table"], boxes=boxes,
                   columns=tuple(data.get("columns", [])), ts=data.get("ts"),
                   sql=data.get("sql"), duration_ms=data.get("duration_ms"),
                   bytes_scanned=data.get("bytes_scanned"), user=data.get("user"),
                   sources=tuple(_source(memo, s) for s in data.get("sources") or ()))


def _range(memo: dict, ltype: str, data: Mapping[str, Any]) -> Range:
    """``Range.from_json(ltype, data)``, decoded once per distinct (type, bounds)."""
    key = (ltype, data.get("min"), data.get("max"), data.get("min_inclusive", True),
           data.get("max_inclusive", True))
    try:
        return memo[key]
    except KeyError:
        memo[key] = found = Range.from_json(ltype, data)
        return found
    except TypeError:  # an unhashable bound (never written by to_json): decode it directly
        return Range.from_json(ltype, data)


def _source(memo: dict, data: Mapping[str, Any]) -> RangeSource:
    """``RangeSource.from_json(data)``, decoded once per distinct source."""
    try:
        key = ("source", *data.items())
        return memo[key]
    except KeyError:
        memo[key] = found = RangeSource.from_json(data)
        return found
    except TypeError:
        return RangeSource.from_json(data)
