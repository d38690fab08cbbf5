"""Z-order (Morton) keys: interleave the bits of rank-normalized columns.

Each column is first mapped to ranks through fitted quantile boundaries and stretched over
the same ``2**bits`` grid (:class:`~engine.layout.base.RankCodec`), so a date column with
2,500 distinct days and a key column with millions of values weigh the same, and strings
work. The first column takes the most significant bit of every bit group.

Example:
>>> interleave_bits(np.array([[0b11, 0b00]]), bits=2).tolist()   # x1 y0 x1 y0
[10]
>>> deinterleave_bits(np.array([10]), d=2, bits=2).tolist()
[[3, 0]]
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.layout.base import GridOrdering, check_bits

MAX_COLUMNS = 8
BLOCK_ROWS = 1 << 16  # rows interleaved at a time: temporaries stay in cache


@lru_cache(maxsize=None)
def _spread_table(d: int) -> np.ndarray:
    """For each byte value, its 8 bits moved to positions 0, d, 2d, ... (uint64)."""
    table = np.zeros(256, dtype=np.uint64)
    for b in range(256):
        v = 0
        for k in range(8):
            if b >> k & 1:
                v |= 1 << (k * d)
        table[b] = v
    return table


def interleave_bits(coords: np.ndarray, bits: int) -> np.ndarray:
    """Morton code of ``coords[n, d]`` (unsigned, each < 2**bits): bit k of dimension i goes
    to position ``k*d + (d-1-i)``, so dimension 0 is the most significant. Returns uint64."""
    coords = np.asarray(coords)
    if coords.ndim != 2:
        raise InvalidParameterError(f"coords must be 2-D [n, d], got shape {coords.shape}")
    n, d = coords.shape
    check_bits(d, bits)
    if n > BLOCK_ROWS:
        out = np.empty(n, dtype=np.uint64)
        for start in range(0, n, BLOCK_ROWS):
            out[start:start + BLOCK_ROWS] = interleave_bits(coords[start:start + BLOCK_ROWS], bits)
        return out
    table = _spread_table(d)
    out = np.zeros(n, dtype=np.uint64)
    mask = np.uint64(0xFF)
    for i in range(d):
        c = coords[:, i].astype(np.uint64, copy=False)
        spread = np.zeros(n, dtype=np.uint64)
        for j in range((bits + 7) // 8):
            byte = (c >> np.uint64(8 * j)) & mask
            spread |= table[byte] << np.uint64(8 * j * d)
        out |= spread << np.uint64(d - 1 - i)
    return out


def deinterleave_bits(codes: np.ndarray, d: int, bits: int) -> np.ndarray:
    """Inverse of :func:`interleave_bits`: ``codes[n]`` -> ``coords[n, d]`` (uint64)."""
    check_bits(d, bits)
    codes = np.asarray(codes).astype(np.uint64)
    out = np.zeros((len(codes), d), dtype=np.uint64)
    one = np.uint64(1)
    for i in range(d):
        col = np.zeros(len(codes), dtype=np.uint64)
        for k in range(bits):
            col |= ((codes >> np.uint64(k * d + d - 1 - i)) & one) << np.uint64(k)
        out[:, i] = col
    return out


class ZOrder(GridOrdering):
    """Z-order over 1-8 columns on rank-normalized values.

    ``bits`` per column defaults to ``min(16, 63 // len(columns))`` (the key is an int64);
    the fitted boundaries have at most ``2**bits - 1`` values per column.
    """

    kind = "zorder"
    max_columns = MAX_COLUMNS
    what = "Z-order"

    def _curve(self, grid: np.ndarray, bits: int) -> np.ndarray:
        return interleave_bits(grid, bits)
