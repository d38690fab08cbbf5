"""Which partitions feed each predicted file (engine.policy.file_sources), against the
per-file boolean masks the prediction held before (files x partitions bytes)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy.file_sources import SourceMasks, range_reduce, source_bounds


def dense_sources(keys, slices, files):
    """The reference: one mask per file, as engine.policy.impact built them."""
    out = []
    for j in range(files):
        mask = np.ones(len(keys[0][0]), dtype=bool)
        for lo, hi, cuts, place in keys:
            s = (j // slices ** place) % slices
            mask &= (lo <= cuts[s + 1]) & (hi >= cuts[s])
        out.append(mask if mask.any() else np.ones(len(keys[0][0]), dtype=bool))
    return out


def random_group(rng, n, d, files, strings=False):
    slices = files if d == 1 else int(np.ceil(files ** (1.0 / d)))
    keys = []
    for _ in range(d):
        lo = rng.integers(0, 50, n).astype(np.float64)
        hi = lo + rng.choice([0, 1, 3, 10, 40], n)
        cuts = np.sort(rng.choice(np.arange(-5, 95), slices + 1))  # ties, gaps, outside
        keys.append((lo, hi, cuts.astype(np.float64), len(keys)))
    c_lo = rng.integers(0, 30, n)
    c_hi = c_lo + rng.integers(0, 30, n)
    if strings:
        c_lo = np.array([f"v{x:03d}" for x in c_lo])
        c_hi = np.array([f"v{x:03d}" for x in c_hi])
    else:
        c_lo, c_hi = c_lo.astype(np.float64), c_hi.astype(np.float64)
    valid = rng.uniform(size=n) < 0.8
    return keys, slices, c_lo, c_hi, valid


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_unions_and_masks_equal_the_per_file_masks(d, seed):
    rng = np.random.default_rng(seed)
    for n, files in ((1, 1), (2, 2), (7, 5), (60, 17), (200, 64)):
        keys, slices, c_lo, c_hi, valid = random_group(rng, n, d, files, strings=seed % 2 == 1)
        if d == 3 and seed % 4 == 2:  # the middle key could not be cut (a string key)
            keys = [keys[0], keys[2]]
        if seed == 3:
            valid[:] = False
        want = dense_sources(keys, slices, files)
        lazy = SourceMasks(keys, slices, files)
        assert len(lazy) == files
        got = source_bounds(keys, slices, files, c_lo, c_hi, valid)
        for j, mask in enumerate(want):
            assert lazy[j].tolist() == mask.tolist()
            src = mask & valid
            assert bool(got.has[j]) == bool(src.any())
            if src.any():
                assert got.lo[j] == min(c_lo[src].tolist()) and got.hi[j] == max(c_hi[src].tolist())


def test_range_reduce_is_a_minimum_over_covering_runs():
    rng = np.random.default_rng(5)
    size, n = 37, 300
    first = rng.integers(0, size, n)
    last = first + rng.integers(-2, size, n)
    last = np.minimum(last, size - 1)
    values = rng.uniform(size=n)
    got = range_reduce(first, last, values, size, np.minimum, np.inf)
    for s in range(size):
        cover = (first <= s) & (last >= s)
        assert got[s] == (values[cover].min() if cover.any() else np.inf)


def test_a_hundred_thousand_files_hold_one_mask_at_a_time():
    rng = np.random.default_rng(1)
    n = 100_000
    lo = np.sort(rng.uniform(0, 1, n))
    hi = lo + 0.001
    cuts = np.linspace(lo.min(), hi.max(), n + 1)
    masks = SourceMasks([(lo, hi, cuts, 0)], n, n)  # the dense list would be 10 GB
    assert len(masks) == n and masks[n // 2].sum() >= 1
    b = source_bounds([(lo, hi, cuts, 0)], n, n, lo, hi, np.ones(n, dtype=bool))
    assert b.has.all() and np.all(b.lo <= b.hi)
