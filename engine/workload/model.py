"""Scan fragments: what one query asks of one table, as a union of per-column range boxes.

A fragment's ``boxes`` is a disjunction (OR) of boxes; a box is a conjunction (AND) of
per-column :class:`Range` objects. An empty ``boxes`` tuple means the scan has no usable
predicate and cannot be pruned. Values are Python objects of the column's logical type
(``datetime.date`` for dates, ...); ``None`` bounds are open ends.
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

    @property
    def predicated_columns(self) -> tuple[str, ...]:
        """Columns constrained by at least one box, in first-seen order."""
        seen: dict[str, None] = {}
        for box in self.boxes:
            for col in box:
                seen.setdefault(col, None)
        return tuple(seen)

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
        }

    @classmethod
    def from_json(cls, types: Mapping[str, str], data: Mapping[str, Any]) -> "ScanFragment":
        boxes = tuple({c: Range.from_json(types.get(c, "string"), r) for c, r in box.items()}
                      for box in data.get("boxes", []))
        return cls(query_id=str(data["query_id"]), table=data["table"], boxes=boxes,
                   columns=tuple(data.get("columns", [])), ts=data.get("ts"),
                   sql=data.get("sql"), duration_ms=data.get("duration_ms"),
                   bytes_scanned=data.get("bytes_scanned"), user=data.get("user"))
