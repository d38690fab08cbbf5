"""Engine calls for the round-4 DBA controls (issue 14): a preview beside a stored plan,
what-if on the selected table, a run's ETA and its cancellation.

Kept apart from :mod:`app.services` (one module per area, fewer merge conflicts); the
settings and the cache rules are those of :mod:`app.services`: nothing here mutates a
cached return, and the control store (plans, progress) is read uncached.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from app import services, views
from engine import api


def compare_preview(preview: Mapping[str, Any], plan_id: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The unsaved preview beside stored plan ``plan_id``: the frame (as the stored-plan
    comparison shows it) and the partition overlap counts."""
    out = api.compare_preview(services.settings(), preview, int(plan_id))
    return views.compare_frame(out), {k: out[k] for k in ("shared_partitions", "only_a", "only_b",
                                                          "same_base_snapshot")}
