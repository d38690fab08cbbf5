"""The Partitions page pages its table and summarises the EP files on the engine
side (engine/browse/partitions.py); what a user sees on a small table is unchanged, and
the page sends one page of rows, not the whole table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_workspace import init_home, write_lineitem
from page_helpers import all_pages, joined
from engine import api
from engine.core.config import load_settings
from engine.core.errors import InvalidParameterError
from engine.table.model import ColumnZoneMap, ZoneMaps

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")


def _zonemaps(n: int, seed: int = 5) -> tuple[ZoneMaps, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo = np.array([f"k{v:03d}" for v in rng.integers(0, 50, n)])
    valid = rng.random(n) > 0.2
    col = ColumnZoneMap("string", lo, lo, valid, np.zeros(n, np.int64), np.ones(n, np.int64))
    zm = ZoneMaps(np.array([f"p{i}" for i in range(n)], dtype=object), rng.integers(1, 9, n),
                  rng.integers(1, 5, n) * 100, {"s": col}, created_seq=rng.permutation(n))
    depths = rng.integers(1, 6, n).astype(float)
    depths[~valid] = -1
    return zm, depths, rng.integers(0, 4, n).astype(float)


@pytest.mark.parametrize("sort", api.PARTITION_SORT_KEYS)
@pytest.mark.parametrize("descending", [True, False])
def test_pages_concatenate_to_a_pandas_sort(sort: str, descending: bool) -> None:
    zm, depths, overlaps = _zonemaps(200)
    mask = np.arange(200) % 3 != 0
    cz = zm.column("s")
    frame = pd.DataFrame({"i": np.arange(200), "depth": depths, "overlaps": overlaps,
                          "bytes": zm.bytes, "rows": zm.rows, "created": zm.created_seq,
                          "min": cz.lo, "max": cz.hi})
    known = cz.valid if sort in ("min", "max") else frame[sort] >= 0
    frame = frame[(frame["depth"] >= 2) & mask].assign(unknown=~known[(frame["depth"] >= 2) & mask])
    want = frame.sort_values(["unknown", sort, "i"], ascending=[True, not descending, True],
                             kind="stable")["i"].tolist()
    pages = all_pages(lambda offset, limit: api.partition_page(
        zm, "s", depths, overlaps, sort=sort, descending=descending, min_depth=2, mask=mask,
        offset=offset, limit=limit))
    assert {(p["total"], p["matching"]) for p in pages} == {(200, len(want))}
    assert joined(pages) == want


def test_partition_page_refuses_an_unknown_sort() -> None:
    zm, depths, overlaps = _zonemaps(5)
    with pytest.raises(InvalidParameterError, match="sort must be one of"):
        api.partition_page(zm, "s", depths, overlaps, sort="size")


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    home = init_home(tmp_path_factory.mktemp("pview") / "home")
    settings = load_settings({"home": str(home)}, environ={})
    src = write_lineitem(home.parent / "lineitem.parquet", rows=6000)
    api.create_demo_table(settings, "lineitem", src, 40, table_format="native")
    return settings


def test_ep_overview_keeps_the_summary_and_the_deepest_files(settings) -> None:
    full = api.ep_metrics(settings, "lineitem", "l_shipdate", ep_file_partitions=2)
    top = api.ep_overview(settings, "lineitem", "l_shipdate", ep_file_partitions=2, top=3,
                          keep=[0])
    for key in ("ep_file_count", "average_local_depth", "average_ep_overlap",
                "average_ep_depth", "subrange_count", "deepest_subrange", "snapshot"):
        assert top[key] == full[key], key
    files = full["ep_files"]
    seed = set(full["deepest_subrange"]["ep_files"])
    rank = sorted(range(len(files)), key=lambda i: (i != 0, i not in seed, -files[i]["depth"], i))
    want = sorted(rank[:3])  # file 0 (highlighted), then the seed, then the deepest
    assert 0 in want and len(want) == 3
    assert [f["ep_file"] for f in top["ep_files"]] == want
    assert top["ep_files"] == [files[i] for i in want]
    assert top["ep_files_shown"] == len(want) < full["ep_file_count"]


def test_partitions_page_shows_one_page_sorted(settings, monkeypatch) -> None:
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["table"] = "lineitem"
    at.run()
    at.switch_page("app_pages/partitions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    n = len(api.load_snapshot(settings, "lineitem").zonemaps())
    at.selectbox(key="partitions_column").set_value("l_shipdate").run()
    at.selectbox(key="partitions_per_page").set_value(100).run()
    at.selectbox(key="partitions_sort").set_value("bytes").run()
    at.number_input(key="partitions_page").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert n > 100
    frame = next(f.value for f in at.dataframe if "overlaps" in f.value.columns)
    zm = api.load_snapshot(settings, "lineitem").zonemaps()
    order = np.lexsort((np.arange(n), -zm.bytes))  # largest first, ties in table order
    assert frame["#"].tolist() == order[100:200].tolist()
    assert frame["bytes"].tolist() == zm.bytes[order[100:200]].tolist()
    captions = " ".join(c.value for c in at.caption)
    assert f"{n:,} of {n:,} partitions match; rows 101 to {min(n, 200)} shown, largest bytes first" in captions
