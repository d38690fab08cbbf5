"""DD-EP on the patent's FIG. 7-10 example (Table 1).

The figure's geometry is not printed; these regions on 16 distinct endpoints 1..16 satisfy
every overlap the text states (paragraphs 93-119): 15 sub-ranges, R6 = [6, 7] covered by
720A, 720B, 720F and 720H; 720A overlaps every region; 720B overlaps A, E, F, H; 720F and
720H overlap A, B, C and each other; targets C, D, E, G; E has the lowest max, G the
highest min; G overlaps only A and D.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.metrics.ep import subranges
from engine.policy.dd_ep import _weight_overlapping, select_regions

NAMES = "ABCDEFGH"
LO = np.array([1, 3, 8, 12, 2, 5, 13, 6], dtype=float)
HI = np.array([16, 7, 11, 14, 4, 9, 15, 10], dtype=float)
AVG_DEPTH = np.array([3, 7, 2, 1, 3, 3, 2, 2], dtype=float)  # Table 1
COUNTS = np.array([100, 400, 150, 50, 200, 100, 500, 100])  # Table 1


def names(idx):
    return "".join(sorted(NAMES[i] for i in idx))


def test_fifteen_subranges_and_deepest_is_r6_with_total_15():
    sr = subranges(LO, HI, AVG_DEPTH)
    assert len(sr) == 15
    assert sr.deepest == 5  # R6
    assert (sr.starts[5], sr.ends[5]) == (6.0, 7.0)
    assert sr.total_depth[5] == 15.0  # 3 + 7 + 3 + 2 (paragraph 96)
    assert sorted(sr.total_depth)[-2] < 15.0  # strictly the deepest


def test_seed_counts_of_paragraphs_98_100():
    deep = np.array([0, 1, 5, 7])  # A, B, F, H
    reach = _weight_overlapping(LO[deep], HI[deep], LO, HI, COUNTS)
    # A: all eight regions (1600, as FIG. 8B counts it); B, F, H: the text's 500, 750 and
    # 750 (the others overlapping them) plus their own 400, 100 and 100
    assert reach.tolist() == [1600, 900, 850, 850]


def test_threshold_650_trims_the_deep_regions_to_600_partitions():
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=650)
    assert NAMES[sel.seed] == "A"
    assert names(sel.deep) == "ABFH"
    assert sel.method == "trim-deep"
    assert names(sel.selected) == "ABF"  # 720H (average depth 2) removed, paragraph 108
    assert sel.partitions == 600


def test_threshold_1000_adds_and_trims_target_regions():
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=1000)
    assert sel.method == "deep+targets"
    # deep regions (700) are not over 1000: targets C, D, E, G bring 1600 (paragraph 113);
    # L = E (L_D = 500, L_C = 400), U = G (U_D = 100, U_C = 50): G goes first (paragraph 116)
    first_drop = [s for s in sel.steps if s.startswith("drop target")][0]
    assert "region 6 " in first_drop  # G
    assert "L=4 L_D=500 L_C=400, U=6 U_D=100 U_C=50" in first_drop
    assert "1100 partitions" in first_drop
    # then D (U_D = 100 < 500) and C (U_D = 300 < 500): 900 <= 1000
    assert names(sel.selected) == "ABEFH"
    assert sel.partitions == 900


def test_all_targets_fit_under_a_high_threshold():
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=5000)
    assert names(sel.selected) == NAMES and sel.partitions == 1600
    assert names(sel.targets) == "CDEG"


def test_tie_on_deep_partitions_falls_back_to_seed_neighbours():
    lo, hi = LO.copy(), HI.copy()
    counts = COUNTS.copy()
    counts[1] = 0  # B represents no partition: L_D = U_D = 100 (A only)
    sel = select_regions(lo, hi, AVG_DEPTH, counts, threshold=1100)
    drops = [s for s in sel.steps if s.startswith("drop target")]
    # L_C(E) = 0 (B is empty) < U_C(G) = 50 (D): E is dropped first (paragraph 119)
    assert "drop target region 4 " in drops[0]


def test_sorted_regions_give_nothing_to_do():
    lo = np.arange(0, 100, 10, dtype=float)
    hi = lo + 9
    assert select_regions(lo, hi, np.ones(10), np.full(10, 8), 1000, min_depth=2.0) is None
    assert select_regions(np.array([]), np.array([]), np.array([]), np.array([]), 10) is None


@pytest.mark.parametrize("threshold", [1, 100, 650, 1000, 1100, 1600])
def test_selection_is_connected_to_the_deepest_subrange(threshold):
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=threshold)
    assert sel.selected  # never empty
    assert set(sel.selected) <= set(range(8))
    assert sel.partitions <= max(threshold, COUNTS[list(sel.selected)].max())
    for r in sel.selected:  # every selected region overlaps the seed
        assert LO[r] <= HI[sel.seed] and HI[r] >= LO[sel.seed]


def test_trimming_stops_below_the_threshold_not_at_it():
    # paragraph 107: remove deep regions "until the number [...] is less than the
    # threshold". At 600, dropping H leaves A+B+F = 600, not less than 600, so the next
    # shallowest (A or F, average depth 3; the one with more partitions goes first: A and
    # F have 100 each, the lower index A) goes too: B + F = 500.
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=600)
    assert sel.method == "trim-deep"
    assert sel.partitions < 600
    assert sel.partitions == 500 and names(sel.selected) == "BF"


def test_target_trimming_stops_below_the_threshold():
    # paragraph 119: targets are dropped "until [...] less than the threshold value": at
    # 900 (deep 700 + E 200 = 900 is the threshold itself), E goes as well
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=900)
    assert sel.method == "deep+targets"
    assert sel.partitions < 900


def test_deep_and_targets_at_the_threshold_are_returned_whole():
    # paragraph 113 (FIG. 10 op. 1052): deep + targets represent 1600 partitions; "not
    # greater than the threshold" returns them all, so at 1600 nothing is dropped ...
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=1600)
    assert sel.method == "deep+targets"
    assert names(sel.selected) == NAMES and sel.partitions == 1600
    assert not [s for s in sel.steps if s.startswith("drop target")]
    # ... and one partition less makes 1600 greater than the threshold: the trimming of
    # paragraph 119 drops G first (U_D = 100 < L_D = 500) and stops below the threshold
    sel = select_regions(LO, HI, AVG_DEPTH, COUNTS, threshold=1599)
    drops = [s for s in sel.steps if s.startswith("drop target")]
    assert len(drops) == 1 and "drop target region 6 " in drops[0]
    assert names(sel.selected) == "ABCDEFH" and sel.partitions == 1100
