"""Layout Advisor dashboard: navigation over the pages and the shared sidebar; nothing else.

Start it with ``layout-advisor ui`` (or ``streamlit run app/streamlit_app.py -- --table T``);
the workspace comes from ``LAYOUT_ADVISOR_HOME``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import streamlit as st

from app import components


def _table_from_argv() -> str | None:
    """``-- --table T`` given to ``streamlit run`` selects the table on the first load."""
    if "--table" not in sys.argv:
        return None
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--table")
    known, _ = parser.parse_known_args(sys.argv[1:])
    return known.table


#: a local file, not a ":material/...:" name: Streamlit fetches those favicons from the
#: internet, which fails offline
ICON = Path(__file__).parent / "assets" / "icon.png"

st.set_page_config(page_title="Layout Advisor", page_icon=str(ICON), layout="wide")

PAGES = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/monitor_heart:", default=True),
    st.Page("app_pages/partitions.py", title="Partitions", icon=":material/view_timeline:",
            url_path="partitions"),
    st.Page("app_pages/workload.py", title="Workload", icon=":material/query_stats:",
            url_path="workload"),
    st.Page("app_pages/recommendation.py", title="Recommendation", icon=":material/lightbulb:",
            url_path="recommendation"),
    st.Page("app_pages/approve_run.py", title="Approve and run", icon=":material/task_alt:",
            url_path="approve"),
    st.Page("app_pages/whatif.py", title="What-if", icon=":material/science:", url_path="whatif"),
    st.Page("app_pages/design.py", title="Design", icon=":material/architecture:", url_path="design"),
    st.Page("app_pages/audit.py", title="Audit log", icon=":material/policy:", url_path="audit"),
]

navigation = st.navigation(PAGES)
components.sidebar_pickers(default_table=_table_from_argv())
navigation.run()
