"""Zonemap values on plotly axes: dates and timestamps on a date axis, strings as
their rank among the bounds (a category axis cannot draw ranges), numbers as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.core import logical_types


def axis_values(ltype: str, encoded: np.ndarray, domain: np.ndarray | None = None) -> np.ndarray:
    """Encoded zonemap values in a form plotly draws on a proper axis.

    Dates and timestamps become ISO strings (a date axis); strings become their rank among
    ``domain`` (the sorted distinct bounds) since a category axis cannot draw ranges.
    """
    enc = np.asarray(encoded)
    if ltype == "date":
        days = np.where(np.isnan(enc), 0, np.round(enc)).astype("int64")
        out = np.datetime_as_string(np.datetime64("1970-01-01") + days.astype("timedelta64[D]"))
        return np.where(np.isnan(enc), None, out.astype(object))
    if ltype == "timestamp":
        us = np.where(np.isnan(enc), 0, enc).astype("int64")
        out = np.datetime_as_string(np.datetime64("1970-01-01T00:00:00") + us.astype("timedelta64[us]"),
                                    unit="s")
        return np.where(np.isnan(enc), None, out.astype(object))
    if ltype == "string":
        dom = np.unique(enc) if domain is None else domain
        return np.searchsorted(dom, enc).astype(np.float64)
    return enc.astype(np.float64)


def axis_numbers(ltype: str, encoded: np.ndarray, domain: np.ndarray | None = None) -> np.ndarray:
    """Encoded values as float64 plotly draws fast (typed arrays): dates and timestamps as
    milliseconds since the epoch, which a ``date`` axis reads as such; strings as ranks."""
    enc = np.asarray(encoded)
    if ltype == "date":
        return enc.astype(np.float64) * 86_400_000.0
    if ltype == "timestamp":
        return enc.astype(np.float64) / 1000.0
    if ltype == "string":
        dom = np.unique(enc) if domain is None else domain
        return np.searchsorted(dom, enc).astype(np.float64)
    return enc.astype(np.float64)


def query_bands(frag: Any, column: str, ltype: str) -> list[tuple[Any, Any]]:
    """A scan fragment's ranges on ``column`` in the axis units of :func:`axis_values`
    (open ends become None); none on a string column, whose rank axis has no place for
    a value outside the zonemaps."""
    bands = []
    for box in frag.boxes:
        rng = box.get(column)
        if rng is None or ltype == "string":
            continue
        ends = np.array([logical_types.encode_scalar(ltype, rng.min) if rng.min is not None else np.nan,
                         logical_types.encode_scalar(ltype, rng.max) if rng.max is not None else np.nan],
                        dtype=np.float64)
        lo, hi = axis_values(ltype, ends).tolist()
        bands.append((lo, hi))
    return bands


def axis_unit(ltype: str, column: str) -> str:
    if ltype == "date":
        return f"{column} (date)"
    if ltype == "timestamp":
        return f"{column} (timestamp, UTC)"
    if ltype == "string":
        return f"{column} (rank of value, lexicographic)"
    return f"{column} (value)"


def axis_type(ltype: str) -> str:
    return "date" if ltype in ("date", "timestamp") else "linear"
