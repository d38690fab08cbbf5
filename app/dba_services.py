"""Engine calls for the round-4 DBA controls (issue 14): a preview beside a stored plan,
what-if on the selected table, a run's ETA and its cancellation.

Kept apart from :mod:`app.services` (one module per area, fewer merge conflicts); the
settings and the cache rules are those of :mod:`app.services`: nothing here mutates a
cached return, and the control store (plans, progress) is read uncached.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import streamlit as st

from app import services, views
from engine import api


def compare_preview(preview: Mapping[str, Any], plan_id: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The unsaved preview beside stored plan ``plan_id``: the frame (as the stored-plan
    comparison shows it) and the partition overlap counts."""
    out = api.compare_preview(services.settings(), preview, int(plan_id))
    return views.compare_frame(out), {k: out[k] for k in ("shared_partitions", "only_a", "only_b",
                                                          "same_base_snapshot")}


# --------------------------------------------------------------------------- what-if
@st.cache_data(show_spinner=False, max_entries=16)
def _shift_choices(home_: str, table: str, snapshot: str, wkey: str) -> dict[str, Any]:
    return dict(api.whatif_shift_choices(services.settings(), table))


def shift_choices(table: str) -> dict[str, Any]:
    """Columns a shifted workload can move between (``columns`` name -> type, ``counts``
    of queries filtering each, ``default`` (source, target) or None); cached per snapshot
    and workload."""
    return _shift_choices(services.home(), table, services.current_snapshot_id(table),
                          services.workload_key(table))


def whatif_table(table: str, policies: Sequence[str], batches: int, shift: str | None,
                 sample_rows: int, progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """The what-if on ``table`` itself (not cached: the page keeps the result in session
    state, with the snapshot it was computed on)."""
    return dict(api.whatif_table(services.settings(), table, policies=list(policies),
                                 batches=int(batches), shift=shift, sample_rows=int(sample_rows),
                                 progress=progress))
