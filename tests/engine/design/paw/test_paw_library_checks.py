"""The PAW design library refuses δ > 1 itself, not only at its entry points (CLI, API,
policy): δ is a fraction of each column's domain, and from 1 on every extended query q*
(Lemma 1) already covers the whole domain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.errors import InvalidParameterError
from engine.design.paw.boxes import DBox
from engine.design.paw.similarity import extend
from engine.design.paw.tree import PawTree

DATA = {"x": np.arange(100, dtype=np.float64)}
QUERIES = [{"x": (10.0, 19.0)}, {"x": (50.0, 59.0)}]


@pytest.mark.parametrize("delta", [1.5, 2, float("nan"), -0.1])
def test_tree_refuses_a_delta_outside_zero_one(delta):
    with pytest.raises(InvalidParameterError, match=r"fraction in \[0, 1\]"):
        PawTree(b_min=10, delta=delta).fit(DATA, QUERIES)


def test_tree_takes_delta_one_and_its_extended_queries_cover_the_domain():
    tree = PawTree(b_min=10, delta=1.0).fit(DATA, QUERIES)
    # domain [0, 99], length 99: q* = [10 - 99, 19 + 99] covers [0, 99]
    assert tree.delta_ == 1.0
    assert tree.extended_[0].lo.tolist() == [-89.0] and tree.extended_[0].hi.tolist() == [118.0]


def test_extend_refuses_more_than_the_domain_but_not_raw_units():
    box = DBox.closed([10.0], [19.0])
    domain = (np.array([0.0]), np.array([100.0]))
    with pytest.raises(InvalidParameterError, match="at most 1"):
        extend(box, 1.5, domain)
    with pytest.raises(InvalidParameterError, match=">= 0"):
        extend(box, math.nan, domain)
    assert extend(box, 1.0, domain).lo.tolist() == [-90.0]  # ±1 x length 100
    assert extend(box, 2.0).lo.tolist() == [8.0]  # no domain: raw units, ±2
