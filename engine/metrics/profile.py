"""The depth profile of one column: where in the value domain partitions pile up.

``depth_profile`` gives maximal constant segments ``(start, end, depth)`` of the depth
function (encoded values); ``deepest_ranges`` picks the segments a DBA should look at
first; ``coarsen`` shrinks a long profile for drawing (keeping each bucket's maximum, so
peaks never disappear); ``decode_segments`` turns encoded values into JSON-friendly ones.

Example:
>>> import numpy as np
>>> depth_profile(np.array([0., 1.]), np.array([2., 3.]))
[(0.0, 1.0, 1), (1.0, 2.0, 2), (2.0, 3.0, 1)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core import logical_types
from engine.metrics.sweep import profile_arrays

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps


def depth_profile(lo: np.ndarray, hi: np.ndarray) -> list[tuple[Any, Any, int]]:
    """``[(start, end, depth), ...]`` over the value domain (encoded values, closed ends;
    a value shared by two segments has the larger depth of the two)."""
    starts, ends, depths = profile_arrays(lo, hi)
    return [(_py(s), _py(e), int(d)) for s, e, d in zip(starts, ends, depths)]


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def deepest_ranges(starts: np.ndarray, ends: np.ndarray, depths: np.ndarray,
                   top: int = 5) -> list[int]:
    """Indices of the ``top`` deepest segments that span a range (``start < end``), deepest
    first, ties to the earlier one; single values only when nothing spans a range.

    With closed ranges, the value where one partition ends and the next begins is covered
    by both, so single-value spikes one deeper than their surroundings are everywhere;
    the ranges beside them are what a reader (and a range query) cares about.
    """
    if len(depths) == 0:
        return []
    spans = starts != ends
    pool = np.flatnonzero(spans & (depths > 0))
    if len(pool) == 0:
        pool = np.flatnonzero(depths > 0)
    order = pool[np.lexsort((pool, -depths[pool]))]
    return [int(i) for i in order[:top]]


def coarsen(starts: np.ndarray, ends: np.ndarray, depths: np.ndarray,
            max_segments: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At most ``max_segments`` segments: consecutive segments are grouped into equal-count
    buckets, each reported as ``[first start, last end, max depth]``."""
    n = len(depths)
    if max_segments <= 0 or n <= max_segments:
        return starts, ends, depths
    cuts = np.linspace(0, n, max_segments + 1).astype(np.int64)
    first = cuts[:-1]
    last = cuts[1:] - 1
    keep = last >= first
    first, last = first[keep], last[keep]
    return starts[first], ends[last], np.maximum.reduceat(depths, first)


def decode_value(ltype: str, value: Any) -> Any:
    """An encoded value as a JSON-friendly one (ISO dates, plain numbers, strings)."""
    return logical_types.to_json_value(ltype, logical_types.decode_scalar(ltype, _py(value)))


def decode_segments(ltype: str, starts: np.ndarray, ends: np.ndarray,
                    depths: np.ndarray) -> list[list[Any]]:
    """``[[start, end, depth], ...]`` with decoded JSON-friendly values."""
    return [[decode_value(ltype, s), decode_value(ltype, e), int(d)]
            for s, e, d in zip(starts, ends, depths)]


def span_shares(zm: "ZoneMaps") -> dict[str, float | None]:
    """Per column, the mean width of a partition's ``[min, max]`` as a share of the column's
    whole range: near 1 every partition spans everything (no layout helps a filter), near
    0 partitions are narrow. None for strings and for columns without a known bound."""
    out: dict[str, float | None] = {}
    for column, cz in zm.columns.items():
        if cz.ltype == "string" or not cz.valid.any():
            out[column] = None
            continue
        lo, hi = cz.lo[cz.valid], cz.hi[cz.valid]
        domain = float(hi.max() - lo.min())
        out[column] = float(np.mean(hi - lo) / domain) if domain > 0 else 0.0
    return out
