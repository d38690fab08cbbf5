"""PAW's partition tree drawn over two of its columns (the Design page).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from app.charts.axes import axis_numbers, axis_type, axis_unit
from app.charts.figure import new_figure, scatter_trace, use_webgl

PAW_COLORS = {"partition": "#1f77b4", "irregular": "#9467bd", "history": "#2ca02c", "extended": "#d62728"}


def _paw_rects(boxes: Sequence[Mapping[str, Sequence[Any]]], cols: Sequence[str | None],
               domain: Mapping[str, Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Closed outlines (5 corners and a NaN separator each) of ``boxes`` projected on the two
    columns ``cols`` (a None column: the unit interval); an open end is the domain's."""
    n = len(boxes)
    lo, hi = np.zeros((n, 2)), np.ones((n, 2))
    for j, col in enumerate(cols):
        if col is None:
            continue
        d_lo, d_hi = domain[col]
        for i, box in enumerate(boxes):
            b = box.get(col) or [None, None]
            lo[i, j] = d_lo if b[0] is None else max(float(b[0]), d_lo)
            hi[i, j] = d_hi if b[1] is None else min(float(b[1]), d_hi)
    xs = np.column_stack([lo[:, 0], hi[:, 0], hi[:, 0], lo[:, 0], lo[:, 0], np.full(n, np.nan)]).ravel()
    ys = np.column_stack([lo[:, 1], lo[:, 1], hi[:, 1], hi[:, 1], lo[:, 1], np.full(n, np.nan)]).ravel()
    return xs, ys


def paw_tree(design: Mapping[str, Any], x_col: str, y_col: str | None) -> go.Figure:
    """PAW's partition tree drawn over two of its columns (the Design page): each
    leaf's descriptor box (an irregular partition's is its parent's region, from which its
    groups are cut out), the history queries Q_H and their extended queries Q_F* (Lemma 1:
    what the tree was built for), projected on ``x_col`` x ``y_col`` (boxes of more columns
    overlap in the projection). Hovering a leaf's centre gives its sampled rows. One trace
    per kind, so a tree of thousands of leaves stays one path each."""
    types, domain = design.get("types", {}), design["domain"]
    cols = (x_col, y_col)
    fig = new_figure(f"PAW partitions over {x_col}" + (f" x {y_col}" if y_col else ""),
               axis_unit(types.get(x_col, "float"), x_col),
               axis_unit(types.get(y_col, "float"), y_col) if y_col else "(one column)", height=520)

    def axis(values: np.ndarray, col: str | None) -> np.ndarray:
        return values if col is None else axis_numbers(types.get(col, "float"), values)

    leaves = list(design["leaves"])
    queries = design.get("queries", {})
    layers = (("extended", "extended query q* (δ)", queries.get("extended", []), "dot"),
              ("history", "history query", queries.get("history", []), "solid"),
              ("partition", "partition", [lf["box"] for lf in leaves if not lf["irregular"]], "solid"),
              ("irregular", "irregular partition (region minus its groups)",
               [lf["box"] for lf in leaves if lf["irregular"]], "dash"))
    total = sum(6 * len(boxes) for _, _, boxes, _ in layers) + len(leaves)
    webgl = use_webgl(total, len(leaves))
    for kind, name, boxes, dash in layers:
        if not boxes:
            continue
        xs, ys = _paw_rects(boxes, cols, domain)
        fig.add_trace(scatter_trace(webgl, x=axis(xs, x_col), y=axis(ys, y_col), mode="lines", name=name,
                                    line=dict(color=PAW_COLORS[kind], dash=dash,
                                              width=1 if kind in ("partition", "irregular") else 1.5),
                                    hoverinfo="skip"))
    if leaves:
        xs, ys = _paw_rects([lf["box"] for lf in leaves], cols, domain)
        cx = (xs.reshape(-1, 6)[:, 0] + xs.reshape(-1, 6)[:, 1]) / 2
        cy = (ys.reshape(-1, 6)[:, 0] + ys.reshape(-1, 6)[:, 2]) / 2
        text = [f"leaf {lf['id']}: {lf['rows']:,} sampled rows" + (" (irregular)" if lf["irregular"] else "")
                for lf in leaves]
        fig.add_trace(scatter_trace(webgl, x=axis(cx, x_col), y=axis(cy, y_col), mode="markers",
                                    name="leaf (hover: rows)", text=text, hoverinfo="text",
                                    marker=dict(size=5, color=[PAW_COLORS["irregular" if lf["irregular"]
                                                                          else "partition"] for lf in leaves])))
    fig.update_xaxes(type=axis_type(types.get(x_col, "float")))
    if y_col:
        fig.update_yaxes(type=axis_type(types.get(y_col, "float")))
    return fig
