"""Hilbert and Morton codes: round trips, adjacency, known values."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.errors import InvalidParameterError
from engine.layout.hilbert import hilbert_decode, hilbert_encode
from engine.layout.zorder import deinterleave_bits, interleave_bits


@st.composite
def points(draw):
    d = draw(st.integers(2, 8))
    bits = draw(st.integers(1, 64 // d))
    n = draw(st.integers(1, 40))
    coords = draw(st.lists(st.lists(st.integers(0, 2 ** bits - 1), min_size=d, max_size=d),
                           min_size=n, max_size=n))
    return np.array(coords, dtype=np.uint64), d, bits


@settings(max_examples=200, deadline=None)
@given(points())
def test_hilbert_round_trip(case):
    coords, d, bits = case
    idx = hilbert_encode(coords, bits)
    assert idx.dtype == np.uint64
    assert np.array_equal(hilbert_decode(idx, d, bits), coords)


@settings(max_examples=200, deadline=None)
@given(points())
def test_morton_round_trip(case):
    coords, d, bits = case
    assert np.array_equal(deinterleave_bits(interleave_bits(coords, bits), d, bits), coords)


@pytest.mark.parametrize("d,bits", [(2, 1), (2, 3), (2, 5), (3, 1), (3, 2), (3, 4), (4, 2), (5, 2)])
def test_hilbert_curve_visits_every_cell_once_moving_one_step(d, bits):
    idx = np.arange(2 ** (d * bits), dtype=np.uint64)
    pts = hilbert_decode(idx, d, bits).astype(np.int64)
    steps = np.abs(np.diff(pts, axis=0)).sum(axis=1)
    assert (steps == 1).all()
    assert len(np.unique(pts, axis=0)) == len(idx)
    assert np.array_equal(hilbert_encode(pts, bits), idx)


def test_hilbert_2d_order_1_and_2_match_the_textbook_curve():
    # order 1: (0,0) (0,1) (1,1) (1,0) -- a U opening towards dimension 0.
    assert hilbert_decode(np.arange(4), 2, 1).tolist() == [[0, 0], [0, 1], [1, 1], [1, 0]]
    # order 2 starts at the origin and ends at the far corner of dimension 0.
    pts = hilbert_decode(np.arange(16), 2, 2).tolist()
    assert pts[0] == [0, 0] and pts[-1] == [3, 0]
    assert pts[:4] == [[0, 0], [1, 0], [1, 1], [0, 1]]


def test_morton_known_values():
    # x = 0b11, y = 0b00 -> x1 y0 x1 y0 = 0b1010
    assert interleave_bits(np.array([[3, 0]]), 2).tolist() == [10]
    assert interleave_bits(np.array([[0, 3]]), 2).tolist() == [5]
    # 3-D, 1 bit each: dimension 0 is the most significant
    assert interleave_bits(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), 1).tolist() == [4, 2, 1]
    # Z shape on a 2x2 grid
    grid = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    assert interleave_bits(grid, 1).tolist() == [0, 1, 2, 3]
    # bits beyond the first byte are spread too
    assert interleave_bits(np.array([[1 << 9, 0]]), 10).tolist() == [1 << 19]


def test_hilbert_rejects_bad_input():
    with pytest.raises(InvalidParameterError):
        hilbert_encode(np.array([[4, 0]]), 2)  # coordinate out of range
    with pytest.raises(InvalidParameterError):
        hilbert_encode(np.zeros((1, 3), dtype=np.uint64), 22)  # 66 bits
    with pytest.raises(InvalidParameterError):
        hilbert_encode(np.zeros(3), 2)  # not 2-D


def test_hilbert_is_fast_enough_for_executor_batches():
    rng = np.random.default_rng(0)
    coords = rng.integers(0, 2 ** 16, size=(200_000, 3), dtype=np.uint64)
    t = time.perf_counter()
    hilbert_encode(coords, 16)
    assert time.perf_counter() - t < 5.0  # ~0.05 s here; 100x head-room for a loaded machine


def test_block_processing_of_long_inputs_round_trips():
    rng = np.random.default_rng(1)
    coords = rng.integers(0, 2 ** 21, size=(150_000, 3), dtype=np.uint64)  # > one 65,536-row block
    idx = hilbert_encode(coords, 21)
    assert np.array_equal(idx[70_000:70_010], hilbert_encode(coords[70_000:70_010], 21))
    assert np.array_equal(hilbert_decode(idx, 3, 21), coords)
    assert np.array_equal(deinterleave_bits(interleave_bits(coords, 21), 3, 21), coords)
