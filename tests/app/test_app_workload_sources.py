"""The Workload page says where a query's ranges come from: a dimension lookup, a join,
or the query's own predicate (a star-schema workload over registered tables)."""

from __future__ import annotations

from pathlib import Path

from app_open import open_page
from engine.table.store import TableStore
from star_helpers import star_workspace


def test_workload_page_shows_the_source_of_each_range(settings, tmp_path: Path):
    star_workspace(settings, tmp_path)
    snapshot = TableStore(settings).current_id("date_dim")
    at = open_page("workload", "store_sales")
    table = next(f.value for f in at.dataframe if "ranges from" in f.value.columns)
    assert table["ranges from"].tolist() == [f"ss_sold_date_sk: lookup date_dim@{snapshot}",
                                             "-", "direct"]
    at.selectbox(key="workload_query").set_value("star:2").run()  # the log's first query
    assert (f"come from: ss_sold_date_sk: looked up in date_dim.d_date_sk at snapshot "
            f"{snapshot} (d_year = 2000)") in _captions(at)
    at.selectbox(key="workload_query").set_value("star:4").run()
    assert ("come from: ss_store_sk: joins s_store_sk filtered by s_state = 'TN': no range; "
            "register store (`layout-advisor table register store PATH`)") in _captions(at)


def _captions(at) -> str:
    """The page's captions as plain text (Markdown escapes removed)."""
    return " ".join(c.value for c in at.caption).replace("\\", "")
