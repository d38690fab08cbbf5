"""The ordering interface shared by every layout, and the rank codec they build on.

An :class:`Ordering` is a scikit-learn style estimator: ``__init__`` stores parameters,
``fit`` learns what it needs from a sample (quantile boundaries, a Qd-tree) and returns
``self``, learned state ends in ``_``. Its ``keys`` map each row to one integer (or, for a
single numeric sort column, float) key that depends only on the fitted state and the row,
never on the batch. That is what lets Spark compute keys batch by batch in ``mapInPandas``
with an ordering fitted once on the driver, and still range-partition consistently.

Input data is a mapping ``column -> encoded array`` (see :mod:`engine.core.logical_types`: float64 for
numbers, dates and timestamps, numpy unicode for strings). Missing values (NaN) sort last.

Example:
>>> import numpy as np
>>> o = make_ordering("zorder", ["a", "b"]).fit({"a": np.arange(4.0), "b": np.arange(4.0)})
>>> o.order({"a": np.array([3.0, 0.0, 2.0]), "b": np.array([3.0, 0.0, 2.0])}).tolist()
[1, 2, 0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from engine.core.errors import ColumnNotFoundError, InvalidParameterError

KINDS = ("sort", "zorder", "hilbert", "qdtree", "paw")

#: kind -> ordering class, filled by :meth:`Ordering.__init_subclass__`
_REGISTRY: dict[str, type["Ordering"]] = {}


class NotFittedError(InvalidParameterError, AttributeError):
    """``keys``/``order`` was called on an ordering that has not been fitted."""


def as_encoded(name: str, values: Any) -> np.ndarray:
    """Coerce one column to the encoded forms of :mod:`engine.core.logical_types`.

    Accepts numpy arrays, pandas Series and lists. Object arrays (what pandas hands
    ``mapInPandas`` for strings) become numpy unicode with None -> "". Datetime64 is
    refused: encode dates with :mod:`engine.core.logical_types` first so keys agree with zonemaps.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InvalidParameterError(f"column {name!r}: expected a 1-D array, got shape {arr.shape}")
    kind = arr.dtype.kind
    if kind == "U":
        return arr
    if kind in "fiub":
        return arr.astype(np.float64, copy=False)
    if kind == "O":
        if all(v is None or isinstance(v, str) for v in arr):
            return np.array(["" if v is None else v for v in arr], dtype=np.str_)
        try:
            return np.array([math.nan if v is None else float(v) for v in arr], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"column {name!r}: values are neither numbers nor strings") from exc
    if kind == "S":
        return arr.astype(np.str_)
    raise InvalidParameterError(
        f"column {name!r}: dtype {arr.dtype} is not an encoded type; encode it with engine.core.logical_types first")


def column_arrays(data: Mapping[str, Any], columns: Sequence[str]) -> list[np.ndarray]:
    """The encoded arrays of ``columns`` from ``data``, checked for presence and equal length."""
    out: list[np.ndarray] = []
    for col in columns:
        if col not in data:
            raise ColumnNotFoundError(f"column {col!r} is not in the data (have: {', '.join(map(str, data))})")
        out.append(as_encoded(col, data[col]))
    if out and any(len(a) != len(out[0]) for a in out):
        raise InvalidParameterError("columns have different lengths: "
                                    + ", ".join(f"{c}={len(a)}" for c, a in zip(columns, out)))
    return out


@dataclass
class RankCodec:
    """Monotone map from a column's encoded values to small integer ranks.

    ``boundaries`` are sorted, distinct, finite sample values: all distinct values when the
    sample has at most ``max_bins`` of them, otherwise equal-frequency quantiles. The rank
    of ``x`` is the number of boundaries <= x (``searchsorted(..., side="right")``), so it
    lies in ``[0, len(boundaries)]``; NaN ranks last. Fitted on the whole column with few
    distinct values the map is exact: distinct values get distinct ranks.

    Example:
    >>> c = RankCodec.fit(np.array([5.0, 1.0, 3.0, 3.0]), max_bins=10)
    >>> c.ranks(np.array([0.0, 1.0, 2.0, 3.0, 9.0, np.nan])).tolist()
    [0, 1, 1, 2, 3, 3]
    >>> c.scaled(np.array([0.0, 9.0]), bits=4).tolist()
    [0, 12]
    """

    boundaries: np.ndarray
    is_string: bool

    @classmethod
    def fit(cls, values: np.ndarray, max_bins: int) -> "RankCodec":
        if max_bins < 1:
            raise InvalidParameterError(f"max_bins must be >= 1, got {max_bins}")
        is_string = values.dtype.kind == "U"
        v = values if is_string else values[np.isfinite(values)]
        uniq = np.unique(v)
        if len(uniq) > max_bins:
            s = np.sort(v)
            pos = (np.arange(1, max_bins + 1, dtype=np.int64) * len(s)) // (max_bins + 1)
            uniq = np.unique(s[pos])
        return cls(uniq, is_string)

    @property
    def n_ranks(self) -> int:
        return len(self.boundaries) + 1

    def ranks(self, values: np.ndarray) -> np.ndarray:
        if (values.dtype.kind == "U") != self.is_string:
            want = "strings" if self.is_string else "numbers"
            raise InvalidParameterError(f"the ordering was fitted on {want}; got dtype {values.dtype}")
        return np.searchsorted(self.boundaries, values, side="right").astype(np.int64)

    def scaled(self, values: np.ndarray, bits: int) -> np.ndarray:
        """Ranks stretched over the full ``[0, 2**bits)`` so every column spans the same grid."""
        r = self.ranks(values).astype(np.uint64)
        return (r << np.uint64(bits)) // np.uint64(self.n_ranks)

    def to_json(self) -> dict[str, Any]:
        vals = [str(v) for v in self.boundaries] if self.is_string else [float(v) for v in self.boundaries]
        return {"type": "string" if self.is_string else "number", "boundaries": vals}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RankCodec":
        is_string = d["type"] == "string"
        dtype = np.str_ if is_string else np.float64
        return cls(np.asarray(d["boundaries"], dtype=dtype), is_string)


class Ordering:
    """A row order for one group of partitions: fit on a sample, key any batch.

    Subclasses set ``kind`` (which registers them for :func:`make_ordering` and
    :func:`ordering_from_json`) and implement ``fit``, ``keys``, ``_params`` and
    ``_state``/``_load_state`` (the JSON form of the learned state).
    """

    kind: ClassVar[str] = ""
    columns: tuple[str, ...]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):
            _REGISTRY[cls.kind] = cls

    def fit(self, data: Mapping[str, np.ndarray]) -> "Ordering":
        raise NotImplementedError

    def keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def order(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """The permutation that puts rows in the layout's order (stable sort of the keys)."""
        return np.argsort(self.keys(data), kind="stable")

    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "fitted_") and bool(self.fitted_)

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise NotFittedError(f"this {type(self).__name__} is not fitted; call fit() first")

    def _params(self) -> dict[str, Any]:
        raise NotImplementedError

    def _state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _load_state(self, state: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        """JSON-serialisable parameters and fitted state (to ship to executors / store in plans)."""
        return {"kind": self.kind, "columns": list(self.columns), "params": self._params(),
                "state": self._state() if self.is_fitted else None}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Ordering":
        if cls is Ordering:
            return ordering_from_json(dict(d))
        if d.get("kind") != cls.kind:
            raise InvalidParameterError(f"expected an ordering of kind {cls.kind!r}, got {d.get('kind')!r}")
        obj = cls(columns=tuple(d["columns"]), **dict(d.get("params") or {}))  # type: ignore[call-arg]
        if d.get("state") is not None:
            obj._load_state(d["state"])
            obj.fitted_ = True
        return obj

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}(columns={self.columns!r}{', ' if params else ''}{params})"


def ordering_classes() -> dict[str, type[Ordering]]:
    """The ordering class of each layout kind, as the subclasses registered themselves.

    A subclass that sets ``kind`` registers on definition; the package
    (:mod:`engine.layout`) imports every layout module, so all of :data:`KINDS` are here
    once ``engine.layout`` is imported.

    Example:
    >>> sorted(ordering_classes()) == sorted(KINDS)
    True
    """
    return dict(_REGISTRY)


def make_ordering(layout: str, columns: Sequence[str], params: Mapping[str, Any] | None = None) -> Ordering:
    """An unfitted ordering of kind ``layout`` over ``columns`` (``params``: its keyword arguments).

    Example:
    >>> make_ordering("hilbert", ["a", "b"], {"bits": 8})
    Hilbert(columns=('a', 'b'), bits=8)
    """
    classes = ordering_classes()
    if layout not in classes:
        raise InvalidParameterError(f"unknown layout {layout!r}; choose one of {', '.join(KINDS)}")
    cls = classes[layout]
    try:
        return cls(columns=tuple(columns), **dict(params or {}))  # type: ignore[call-arg]
    except TypeError as exc:
        raise InvalidParameterError(f"invalid parameters for layout {layout!r}: {exc}") from exc


def ordering_from_json(d: Mapping[str, Any]) -> Ordering:
    """Rebuild an ordering (fitted or not) from :meth:`Ordering.to_json`."""
    classes = ordering_classes()
    kind = d.get("kind")
    if kind not in classes:
        raise InvalidParameterError(f"unknown ordering kind {kind!r} in JSON")
    return classes[kind].from_json(d)


def check_columns(columns: Sequence[str], lo: int, hi: int, what: str) -> tuple[str, ...]:
    cols = tuple(columns)
    if not lo <= len(cols) <= hi:
        raise InvalidParameterError(f"{what} needs {lo} to {hi} columns, got {len(cols)}")
    if len(set(cols)) != len(cols):
        raise InvalidParameterError(f"{what}: duplicate columns in {list(cols)}")
    return cols


def check_bits(d: int, bits: int, total: int = 64) -> None:
    if d < 1 or bits < 1 or d * bits > total:
        raise InvalidParameterError(f"{d} dimensions x {bits} bits do not fit in {total} bits")


def bits_per_column(columns: Sequence[str], bits: int | None, max_columns: int, what: str) -> int:
    """Bits per column of a packed int64 key: ``bits``, or ``min(16, 63 // len(columns))``.

    Checks the columns (1 to ``max_columns``, distinct) and that the key fits 63 bits, so it
    stays a non-negative int64.
    """
    cols = check_columns(columns, 1, max_columns, what)
    bits = bits if bits is not None else min(16, 63 // len(cols))
    check_bits(len(cols), bits, total=63)
    return bits


class GridOrdering(Ordering):
    """A space-filling curve over rank-normalized columns (Z-order, Hilbert).

    Each column maps through its fitted :class:`RankCodec` onto the same ``2**bits`` grid;
    subclasses only say how a grid cell becomes one integer (:meth:`_curve`), with
    ``max_columns`` and ``what`` (the name in error messages).
    """

    max_columns: ClassVar[int] = 8
    what: ClassVar[str] = ""

    def __init__(self, columns: Sequence[str], bits: int | None = None) -> None:
        self.columns = tuple(columns)
        self.bits = bits

    def _bits(self) -> int:
        return bits_per_column(self.columns, self.bits, self.max_columns, self.what)

    def fit(self, data: Mapping[str, np.ndarray]) -> "GridOrdering":
        bits = self._bits()
        arrays = column_arrays(data, self.columns)
        self.bits_ = bits
        self.codecs_ = [RankCodec.fit(a, 2 ** bits - 1) for a in arrays]
        self.fitted_ = True
        return self

    def grid(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """Each row's cell on the ``2**bits`` grid, ``[n, d]`` uint64."""
        self._check_fitted()
        arrays = column_arrays(data, self.columns)
        return np.stack([c.scaled(a, self.bits_) for c, a in zip(self.codecs_, arrays)], axis=1)

    def keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        return self._curve(self.grid(data), self.bits_).astype(np.int64)

    def _curve(self, grid: np.ndarray, bits: int) -> np.ndarray:
        """The curve index (uint64) of each grid cell ``grid[n, d]``."""
        raise NotImplementedError

    def _params(self) -> dict[str, Any]:
        return {"bits": self.bits}

    def _state(self) -> dict[str, Any]:
        return {"bits": self.bits_, "codecs": [c.to_json() for c in self.codecs_]}

    def _load_state(self, state: Mapping[str, Any]) -> None:
        self.bits_ = int(state["bits"])
        self.codecs_ = [RankCodec.from_json(c) for c in state["codecs"]]
