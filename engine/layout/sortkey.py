"""Lexicographic sort key: the single-column (or composite) clustering key.

``order()`` is an exact lexicographic sort over all columns (``np.lexsort``, NaN last).
``keys()`` gives one sortable value per row for range partitioning: for one numeric column
the value itself (float64, exact); otherwise each column's rank through fitted quantile
boundaries (up to ``2**bits - 1`` per column, ``bits`` <= 63 // columns) packed
lexicographically into an int64. The packed key is exact when the fit data holds every
distinct value (few distinct values, or fitted on the whole group); fitted on a sample it
orders rows by sample quantile bins, and rows tied in a bin order by the next column.

Example:
>>> import numpy as np
>>> data = {"s": np.array(["b", "a", "b"]), "d": np.array([3.0, 9.0, 1.0])}
>>> SortKey(["s", "d"]).fit(data).order(data).tolist()
[1, 2, 0]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.layout.base import Ordering, RankCodec, bits_per_column, column_arrays

MAX_COLUMNS = 32


class SortKey(Ordering):
    """Sort by ``columns`` lexicographically (first column most significant)."""

    kind = "sort"

    def __init__(self, columns: Sequence[str], bits: int | None = None) -> None:
        self.columns = tuple(columns)
        self.bits = bits

    def _bits(self) -> int:
        return bits_per_column(self.columns, self.bits, MAX_COLUMNS, "a sort key")

    def fit(self, data: Mapping[str, np.ndarray]) -> "SortKey":
        bits = self._bits()
        arrays = column_arrays(data, self.columns)
        self.bits_ = bits
        self.numeric_value_key_ = len(arrays) == 1 and arrays[0].dtype.kind != "U"
        self.codecs_ = [] if self.numeric_value_key_ else [RankCodec.fit(a, 2 ** bits - 1) for a in arrays]
        self.fitted_ = True
        return self

    def keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        self._check_fitted()
        arrays = column_arrays(data, self.columns)
        if self.numeric_value_key_:
            return _numeric(arrays[0])
        key = np.zeros(len(arrays[0]) if arrays else 0, dtype=np.int64)
        shift = np.int64(self.bits_)
        for codec, arr in zip(self.codecs_, arrays):
            key = (key << shift) | codec.ranks(arr)
        return key

    def order(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """Exact lexicographic order over all columns (stable; NaN sorts last)."""
        arrays = column_arrays(data, self.columns)
        return np.lexsort(tuple(reversed(arrays)))

    def _params(self) -> dict[str, Any]:
        return {"bits": self.bits}

    def _state(self) -> dict[str, Any]:
        return {"bits": self.bits_, "numeric_value_key": self.numeric_value_key_,
                "codecs": [c.to_json() for c in self.codecs_]}

    def _load_state(self, state: Mapping[str, Any]) -> None:
        self.bits_ = int(state["bits"])
        self.numeric_value_key_ = bool(state["numeric_value_key"])
        self.codecs_ = [RankCodec.from_json(c) for c in state["codecs"]]


def _numeric(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind == "U":
        raise InvalidParameterError("the sort key was fitted on a number column; got strings")
    return arr.astype(np.float64, copy=False)
