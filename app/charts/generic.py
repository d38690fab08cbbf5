"""Bars, histograms and lines, the policies' colours, cost curves and the savings
signatures' scatter: figures any page draws from a few arrays.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from app.charts.figure import new_figure, scatter_trace, use_webgl


def bar(x: Sequence[Any], y: Sequence[float], title: str, x_title: str, y_title: str,
        color: str = "#1f77b4", horizontal: bool = False, height: int = 340,
        text: Sequence[str] | None = None) -> go.Figure:
    fig = new_figure(title, x_title, y_title, height=height)
    if horizontal:
        fig.add_trace(go.Bar(x=list(y), y=list(x), orientation="h", marker_color=color, text=text))
        fig.update_layout(xaxis_title=y_title, yaxis_title=x_title)
    else:
        fig.add_trace(go.Bar(x=list(x), y=list(y), marker_color=color, text=text))
    return fig


def histogram(values: Iterable[float], title: str, x_title: str, y_title: str,
              nbins: int = 30, color: str = "#1f77b4", height: int = 340,
              x_range: tuple[float, float] | None = None) -> go.Figure:
    """A histogram; with ``x_range`` the bins are fixed (``nbins`` equal bins over it)."""
    fig = new_figure(title, x_title, y_title, height=height)
    vals = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else list(values))
    if vals.dtype.kind not in "Mm":  # datetimes stay datetimes (a date axis)
        vals = vals.astype(np.float64)
    if x_range:
        size = (x_range[1] - x_range[0]) / nbins
        fig.add_trace(go.Histogram(x=vals, marker_color=color, autobinx=False,
                                   xbins=dict(start=x_range[0], end=x_range[1] + 1e-9, size=size)))
        fig.update_xaxes(range=list(x_range))
    else:
        fig.add_trace(go.Histogram(x=vals, nbinsx=nbins, marker_color=color))
    fig.update_layout(bargap=0.05)
    return fig


def binned_histogram(edges: Sequence[Any], counts: Sequence[int], title: str, x_title: str,
                     y_title: str, color: str = "#1f77b4", height: int = 340,
                     x_range: tuple[float, float] | None = None) -> go.Figure:
    """:func:`histogram` from bins counted beforehand (``engine.api.histogram_bins``): one
    bar per bin over its edges, so the figure holds the bins, never the values (a query
    scanning 300,000 partitions made a 3 MB histogram of points). Datetime edges draw a
    date axis."""
    fig = new_figure(title, x_title, y_title, height=height)
    edges = np.asarray(edges)
    counts = np.asarray(counts)
    if edges.dtype.kind == "M":
        lo, hi = edges[:-1].astype("datetime64[ms]"), edges[1:].astype("datetime64[ms]")
        width = (hi - lo).astype(np.int64).astype(float)  # a date axis measures bars in ms
        x = lo + (hi - lo) // 2
        text = [f"{a} – {b}" for a, b in zip(np.datetime_as_string(lo, unit="m"),
                                               np.datetime_as_string(hi, unit="m"))]
    else:
        lo, hi = edges[:-1].astype(float), edges[1:].astype(float)
        width, x = hi - lo, (lo + hi) / 2
        text = [f"{a:.4g} – {b:.4g}" for a, b in zip(lo, hi)]
    fig.add_trace(go.Bar(x=x, y=counts, width=width * 0.95, marker_color=color,
                         customdata=text, hovertemplate="%{customdata}: %{y:,}<extra></extra>"))
    if x_range:
        fig.update_xaxes(range=list(x_range))
    return fig


POLICY_COLORS = {"NR": "#7f7f7f", "NN": "#bcbd22", "QD": "#2ca02c", "DD": "#ff7f0e",
                 "DD-EP": "#8c564b", "WAIR": "#d62728", "FK": "#e377c2", "FW": "#17becf",
                 "Aggressive": "#9467bd", "Oracle": "#1f77b4"}


def policy_color(name: str, i: int = 0) -> str:
    """A policy's color, the same on every chart (its label's first word decides)."""
    key = name.split(" ")[0]
    return POLICY_COLORS.get(key, qualitative.Plotly[i % len(qualitative.Plotly)])


def lines(series: Mapping[str, tuple[Sequence[Any], Sequence[float]]], title: str, x_title: str,
          y_title: str, height: int = 380, mode: str = "lines",
          dash: Mapping[str, str] | None = None) -> go.Figure:
    """One line per named series; series of one policy ("WAIR", "WAIR queries only") share
    the policy's color."""
    fig = new_figure(title, x_title, y_title, height=height)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode=mode, name=name,
                                 line=dict(color=policy_color(name, i),
                                           dash=(dash or {}).get(name, "solid"))))
    return fig


def mark_periods(fig: go.Figure, starts: Sequence[tuple[float, str]]) -> go.Figure:
    """Dotted vertical lines at the first batch of each period, labelled P1, P2, ..."""
    for x, label in starts:
        fig.add_vline(x=x - 0.5, line_color="#9e9e9e", line_dash="dot", line_width=1,
                      annotation_text=label, annotation_position="top left",
                      annotation_font_color="#616161")
    return fig


def stacked_cost(policies: Sequence[str], query: Sequence[float], recluster: Sequence[float],
                 unit: str, title: str = "Total cost per policy") -> go.Figure:
    fig = new_figure(title, "policy", f"cost ({unit})", height=380, barmode="stack")
    fig.add_trace(go.Bar(x=list(policies), y=list(query), name="query cost", marker_color="#1f77b4"))
    fig.add_trace(go.Bar(x=list(policies), y=list(recluster), name="reclustering cost",
                         marker_color="#ff7f0e"))
    return fig


def net_cost_curve(cuts: Sequence[float], net: Sequence[float], chosen: float | None,
                   unit: str = "CPU-seconds") -> go.Figure:
    """Algorithm 2: net cost (recluster cost minus saving) against the cut."""
    fig = new_figure("Algorithm 2: net cost against the cut", "cut (candidate partitions taken, by benefit)",
               f"net cost ({unit}, negative = saves)", height=380)
    fig.add_trace(go.Scatter(x=list(cuts), y=list(net), mode="lines+markers", name="net cost",
                             line=dict(color="#1f77b4")))
    fig.add_hline(y=0, line_color="#7f7f7f", line_width=1)
    if chosen is not None:
        fig.add_vline(x=chosen, line_color="#d62728", line_dash="dash",
                      annotation_text=f"chosen cut = {chosen:g}", annotation_position="top right")
    fig.update_layout(showlegend=False)
    return fig


def signatures(points: np.ndarray, labels: np.ndarray, anchors: np.ndarray | None,
               anchor_names: Sequence[str], axis_names: tuple[str, str],
               hover: Sequence[str] | None = None) -> go.Figure:
    """Savings signatures in 2-D, colored by DBSCAN cluster (-1 noise), anchors as stars."""
    fig = new_figure("Savings signatures of candidate partitions", axis_names[0],
               axis_names[1], height=460)
    palette = qualitative.Plotly
    labels = np.asarray(labels)
    webgl = use_webgl(len(labels), len(labels))
    for i, lab in enumerate(sorted(set(labels.tolist()))):
        mask = labels == lab
        name = "noise" if lab in (-1, "-1", "noise") else f"cluster {lab}"
        color = "#9e9e9e" if name == "noise" else palette[i % len(palette)]
        fig.add_trace(scatter_trace(webgl, x=points[mask, 0], y=points[mask, 1], mode="markers",
                                   name=f"{name} ({int(mask.sum())})",
                                   marker=dict(size=7, color=color, opacity=0.75),
                                   text=None if hover is None else np.asarray(hover, dtype=object)[mask],
                                   hoverinfo="text+name" if hover is not None else "x+y+name"))
    if anchors is not None and len(anchors):
        fig.add_trace(go.Scatter(x=anchors[:, 0], y=anchors[:, 1], mode="markers+text",
                                 name="anchors", text=list(anchor_names), textposition="top center",
                                 marker=dict(symbol="star", size=14, color="black")))
    return fig
