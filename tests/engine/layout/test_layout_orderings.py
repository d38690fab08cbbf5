"""Sort key, Z-order and Hilbert orderings: exactness, batch independence, JSON, locality."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core import logical_types
from engine.core.errors import ColumnNotFoundError, InvalidParameterError
from engine.layout.base import NotFittedError, RankCodec, make_ordering, ordering_from_json
from engine.layout.hilbert import Hilbert
from engine.layout.sortkey import SortKey
from engine.layout.zorder import ZOrder

rows = st.lists(st.tuples(st.text(alphabet="abcé", max_size=3),
                          st.dates(dt.date(1992, 1, 1), dt.date(1998, 12, 31)),
                          st.integers(-5, 5)), min_size=1, max_size=60)


def _encode(rs):
    return {"s": logical_types.encode_array("string", [r[0] for r in rs]),
            "d": logical_types.encode_array("date", [r[1] for r in rs]),
            "i": logical_types.encode_array("int", [r[2] for r in rs])}


@settings(max_examples=150, deadline=None)
@given(rows)
def test_sort_order_is_the_lexicographic_order_of_the_python_values(rs):
    data = _encode(rs)
    want = sorted(range(len(rs)), key=lambda k: rs[k])  # stable, on the raw (str, date, int)
    got = SortKey(["s", "d", "i"]).order(data)
    assert got.tolist() == want
    assert got.tolist() == np.lexsort((data["i"], data["d"], data["s"])).tolist()


@settings(max_examples=150, deadline=None)
@given(rows)
def test_sort_keys_fitted_on_the_whole_group_are_exact(rs):
    data = _encode(rs)
    key = SortKey(["s", "d", "i"]).fit(data).keys(data)
    assert key.dtype == np.int64
    exact = sorted(range(len(rs)), key=lambda k: rs[k])
    ordered = key[exact]
    assert (np.diff(ordered) >= 0).all()
    for a, b, ka, kb in zip(exact, exact[1:], ordered, ordered[1:]):
        assert (ka == kb) == (rs[a] == rs[b])


def test_single_numeric_sort_key_is_the_value_itself_and_nan_sorts_last():
    x = np.array([3.0, np.nan, -1.0, 2.5])
    s = SortKey(["x"]).fit({"x": x[:2]})
    assert np.array_equal(s.keys({"x": x}), x, equal_nan=True)
    assert s.order({"x": x}).tolist() == [2, 3, 0, 1]


def test_string_sort_key_ranks_through_fitted_boundaries():
    s = SortKey(["s"]).fit({"s": np.array(["b", "d", "f"])})
    k = s.keys({"s": np.array(["a", "b", "c", "d", "zz", ""])})
    assert k.tolist() == [0, 1, 1, 2, 3, 0]


def _sample_table(n=3000, seed=7):
    rng = np.random.default_rng(seed)
    return {
        "ship": rng.integers(8000, 10500, n).astype(np.float64),  # dates as days
        "price": rng.lognormal(8, 1, n),
        "mode": np.array(["AIR", "MAIL", "RAIL", "SHIP", "TRUCK"])[rng.integers(0, 5, n)],
    }


ORDERINGS = [("sort", ["ship"], {}), ("sort", ["mode", "ship"], {}), ("zorder", ["ship", "price"], {}),
             ("zorder", ["ship", "price", "mode"], {"bits": 10}), ("hilbert", ["ship", "price"], {}),
             ("hilbert", ["price", "mode", "ship"], {}),
             ("qdtree", ["ship", "price"], {"min_leaf_rows": 40,
                                            "queries": [{"ship": (8500.0, 9000.0, True, True)},
                                                        {"price": (None, 2000.0, True, False)},
                                                        {"ship": (9800.0, None, False, True),
                                                         "price": (5000.0, None, True, True)}]})]


@pytest.mark.parametrize("layout,columns,params", ORDERINGS, ids=lambda v: str(v)[:30])
def test_keys_from_a_sample_fit_do_not_depend_on_the_batch(layout, columns, params):
    data = _sample_table()
    n = len(data["ship"])
    sample_rows = np.random.default_rng(1).choice(n, 300, replace=False)
    ordering = make_ordering(layout, columns, params).fit({c: a[sample_rows] for c, a in data.items()})
    whole = ordering.keys(data)
    cuts = [0, 1, 17, 500, 1999, 2500, n]
    batched = np.concatenate([ordering.keys({c: a[lo:hi] for c, a in data.items()})
                              for lo, hi in zip(cuts, cuts[1:])])
    assert np.array_equal(whole, batched)
    # shuffled batches key the same rows the same way
    perm = np.random.default_rng(2).permutation(n)
    assert np.array_equal(ordering.keys({c: a[perm] for c, a in data.items()}), whole[perm])
    # and a JSON round trip (what Spark executors receive) keys identically
    shipped = ordering_from_json(json.loads(json.dumps(ordering.to_json())))
    assert np.array_equal(shipped.keys(data), whole)
    assert shipped.kind == layout and shipped.columns == tuple(columns)


@pytest.mark.parametrize("layout", ["zorder", "hilbert"])
def test_every_column_spans_the_whole_grid_after_rank_normalization(layout):
    data = {"few": np.array([1.0, 2.0, 3.0] * 100), "many": np.arange(300.0)}
    o = make_ordering(layout, ["few", "many"], {"bits": 8}).fit(data)
    grid = o.grid(data)
    assert grid[:, 0].max() >= 2 ** 8 * 3 // 4 and grid[:, 1].max() >= 2 ** 8 * 3 // 4
    assert len(np.unique(grid[:, 0])) == 3 and len(np.unique(grid[:, 1])) == 256


@pytest.mark.parametrize("layout", ["zorder", "hilbert"])
def test_multi_column_order_keeps_files_narrow_in_both_columns(layout):
    """Cut into 16 files: a space-filling order narrows both columns; a sort only the first."""
    rng = np.random.default_rng(3)
    n = 16_384
    data = {"a": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n)}

    def mean_width(order, col):
        files = np.array_split(data[col][order], 16)
        return float(np.mean([f.max() - f.min() for f in files]))

    curve = make_ordering(layout, ["a", "b"]).fit(data).order(data)
    lex = SortKey(["a", "b"]).order(data)
    assert mean_width(lex, "b") > 0.95 and mean_width(lex, "a") < 0.1
    assert mean_width(curve, "a") < 0.35 and mean_width(curve, "b") < 0.35


def test_strings_and_dates_work_in_hilbert_order():
    dates = logical_types.encode_array("date", [dt.date(1995, 1, 1) + dt.timedelta(days=i % 50) for i in range(500)])
    modes = np.array(["AIR", "RAIL", "SHIP", "TRUCK", "MAIL"] * 100)
    data = {"d": dates, "m": modes}
    h = Hilbert(["d", "m"]).fit(data)
    order = h.order(data)
    assert sorted(order.tolist()) == list(range(500))
    # rows of the same (date, mode) cell are contiguous in the order
    cells = [(data["d"][i], data["m"][i]) for i in order]
    runs = sum(1 for x, y in zip(cells, cells[1:]) if x != y) + 1
    assert runs == len(set(cells))


def test_object_arrays_from_pandas_are_accepted():
    df = pd.DataFrame({"m": ["b", None, "a", "c"], "x": [1, 2, 3, 4]})
    o = ZOrder(["m", "x"]).fit({"m": np.array(["a", "b", "c"]), "x": np.array([1.0, 2.0, 3.0])})
    k1 = o.keys({"m": df["m"], "x": df["x"]})
    k2 = o.keys({"m": np.array(["b", "", "a", "c"]), "x": np.array([1.0, 2.0, 3.0, 4.0])})
    assert np.array_equal(k1, k2)


def test_rank_codec_quantiles_when_there_are_more_values_than_bins():
    c = RankCodec.fit(np.arange(1000.0), max_bins=9)
    assert len(c.boundaries) == 9
    r = c.ranks(np.arange(1000.0))
    counts = np.bincount(r)
    assert counts.max() - counts[1:].min() <= 2  # equal-frequency bins
    assert RankCodec.from_json(json.loads(json.dumps(c.to_json()))).ranks(np.arange(1000.0)).tolist() == r.tolist()


def test_user_errors_are_advisor_errors():
    data = {"a": np.arange(5.0)}
    with pytest.raises(InvalidParameterError, match="unknown layout"):
        make_ordering("spiral", ["a"])
    with pytest.raises(InvalidParameterError, match="invalid parameters"):
        make_ordering("hilbert", ["a"], {"depth": 3})
    with pytest.raises(ColumnNotFoundError, match="'b'"):
        make_ordering("zorder", ["a", "b"]).fit(data)
    with pytest.raises(NotFittedError):
        Hilbert(["a", "a2"]).keys(data)
    with pytest.raises(InvalidParameterError, match="duplicate"):
        make_ordering("hilbert", ["a", "a"]).fit(data)
    with pytest.raises(InvalidParameterError, match="1 to 8 columns"):
        make_ordering("zorder", [f"c{i}" for i in range(9)]).fit(data)
    with pytest.raises(InvalidParameterError, match="fitted on numbers"):
        Hilbert(["a"]).fit(data).keys({"a": np.array(["x"])})
    with pytest.raises(InvalidParameterError, match="encode"):
        Hilbert(["a"]).fit({"a": np.array(["2020-01-01"], dtype="datetime64[D]")})


@pytest.mark.parametrize("module", ["base", "sortkey", "zorder", "hilbert", "qdtree", "signatures",
                                    "groups"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(f"engine.layout.{module}"))
    assert result.attempted > 0 and result.failed == 0
