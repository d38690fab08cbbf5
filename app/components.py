"""Widgets and helpers several pages share: the table/snapshot picker, error guards,
number formatting. No engine imports here: data comes from :mod:`app.services`."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import streamlit as st

from app import services

TABLE_KEY = "table"
SNAPSHOT_KEY = "snapshot_choice"
CURRENT = "current"


@contextlib.contextmanager
def guard(stop: bool = True) -> Iterator[None]:
    """Show a user mistake as ``st.error`` with its reason (never a traceback)."""
    try:
        yield
    except services.FeatureNotReady as exc:
        st.info(f"Not available in this build: {exc}.")
        if stop:
            st.stop()
    except services.AdvisorError as exc:
        st.error(str(exc))
        if stop:
            st.stop()


def sidebar_pickers(default_table: str | None = None) -> None:
    """Table and snapshot pickers in the sidebar; they set session state for every page."""
    with st.sidebar:
        try:
            tables = services.list_tables()
        except (services.AdvisorError, services.FeatureNotReady) as exc:
            st.error(f"Cannot list tables: {exc}")
            return
        if not tables:
            st.info("No table in this workspace yet. Create one with "
                    "`layout-advisor table create NAME --from PARQUET_PATH` or run `layout-advisor demo`.")
            st.session_state[TABLE_KEY] = None
            return
        current = st.session_state.get(TABLE_KEY)
        if current not in tables:
            current = default_table if default_table in tables else tables[0]
            st.session_state[TABLE_KEY] = current
        st.selectbox("Table", tables, key=TABLE_KEY,
                     help="Every page shows this table.")
        try:
            snaps = services.table_snapshots(st.session_state[TABLE_KEY])
        except services.AdvisorError as exc:
            st.error(str(exc))
            return
        options = [CURRENT] + [str(s) for s in snaps["id"]] if not snaps.empty else [CURRENT]
        labels = {CURRENT: "current"}
        for _, row in snaps.iterrows():
            op = row.get("operation", "")
            when = str(row.get("created_at", ""))[:19].replace("T", " ")
            tag = " (current)" if bool(row.get("current")) else ""
            labels[str(row["id"])] = f"{str(row['id'])[:12]} · {op} · {when}{tag}"
        if st.session_state.get(SNAPSHOT_KEY) not in options:
            st.session_state[SNAPSHOT_KEY] = CURRENT
        st.selectbox("Snapshot", options, key=SNAPSHOT_KEY, format_func=lambda o: labels.get(o, o),
                     help="Read an older version of the table; plans always start from the current one.")
        st.caption(f"Workspace: `{services.home()}`")


def selected_table() -> str | None:
    return st.session_state.get(TABLE_KEY)


def selected_snapshot() -> str | None:
    """The chosen snapshot id, or None for the current one."""
    choice = st.session_state.get(SNAPSHOT_KEY, CURRENT)
    return None if choice in (None, CURRENT) else str(choice)


def require_table() -> str:
    """The selected table, or stop the page with what to do next."""
    table = selected_table()
    if not table:
        st.info("No table selected. Create one with `layout-advisor table create NAME --from PARQUET_PATH` "
                "or build the demo table with `layout-advisor demo`.")
        st.stop()
    return table


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "–"
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TB"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "–"
    s = float(s)
    if abs(s) < 1:
        return f"{s * 1000:,.0f} ms"
    if abs(s) < 120:
        return f"{s:,.1f} s"
    if abs(s) < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


def fmt_money(m: float | None) -> str:
    if m is None:
        return "–"
    m = float(m)
    if m == 0:
        return "$0"
    if abs(m) < 0.0001:
        return f"${m:.2g}"
    return f"${m:,.4f}" if abs(m) < 1 else f"${m:,.2f}"


def fmt_num(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    try:
        return f"{float(x):,.{digits}f}"
    except (TypeError, ValueError):
        return str(x)


LIGHT_WORDS = {"green": "Well clustered", "amber": "Partly clustered", "red": "Poorly clustered",
               "grey": "Unknown"}
_LIGHT_STYLE = {"green": ("green", ":material/check_circle:"), "amber": ("orange", ":material/warning:"),
                "red": ("red", ":material/error:"), "grey": ("gray", ":material/help:")}


def light_badge(light: str) -> str:
    """Markdown for a traffic-light badge (colored, with an icon; no emoji font needed)."""
    color, icon = _LIGHT_STYLE.get(light, _LIGHT_STYLE["grey"])
    return f":{color}-badge[{icon} {LIGHT_WORDS.get(light, light)}]"


def verdict_reason(light: str, reason: str) -> str:
    """The engine's reason without its leading verdict words (the badge already says them)."""
    word = LIGHT_WORDS.get(light, "").lower()
    if word and reason.lower().startswith(word + ": "):
        return reason[len(word) + 2:]
    return reason


STATUS_BADGE = {"proposed": ":blue-badge[proposed]", "approved": ":violet-badge[approved]",
                "running": ":orange-badge[running]", "succeeded": ":green-badge[succeeded]",
                "failed": ":red-badge[failed]", "rejected": ":gray-badge[rejected]",
                "stale": ":gray-badge[stale]"}
