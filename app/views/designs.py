"""Whole-table designs as frames: PAW's rows read per query beside its baselines and
PTO's ranked candidates.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

PAW_METHODS = {"paw": "PAW", "qdtree": "Qd-tree (greedy)", "kdtree": "k-d tree",
               "lb_b": "lower bound LB_b", "lb": "lower bound LBCost"}


def paw_costs_frame(design: Mapping[str, Any]) -> pd.DataFrame:
    """Rows read per query by PAW and its baselines, on the history and on the worst
    δ-similar future (seed 001, section 6)."""
    rows = [{"design": PAW_METHODS.get(name, name), "rows read per query (history)": round(c["history"]),
             "rows read per query (worst δ-similar future)": round(c["worst_future"])}
            for name, c in (design.get("costs") or {}).items()]
    return pd.DataFrame(rows)


def pto_candidates_frame(result: Mapping[str, Any], limit: int = 15) -> pd.DataFrame:
    """PTO's ranked candidates: the layout, predicted and (for the labelled ones) measured
    cost; the chosen one first."""
    rows = []
    for c in sorted(result.get("candidates") or [], key=lambda c: c.get("predicted", 0.0))[:limit]:
        rows.append({k: v for k, v in c.items() if not isinstance(v, (list, dict))})
    return pd.DataFrame(rows)
