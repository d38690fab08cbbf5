"""Plotly figures built from engine results. Pure functions: data in, figure out.

Every figure has a title and axis titles with units; the page adds the one-line caption.
Figures over partitions use a constant number of traces (segments joined by NaN
separators), never one trace per partition; past :data:`BIN_LIMIT` rows of partitions the
marks are bins of neighbouring rows (:func:`bin_partitions`), so a chart's size stays bounded
on a table of thousands of partitions (the SF 1 demo has 3,001) while a small table is drawn
exactly, one segment per partition.

Scatter traces are SVG (``go.Scatter``) up to :data:`SVG_MAX_POINTS` points and
:data:`SVG_MAX_MARKERS` markers a figure, WebGL (``go.Scattergl``) past them
(:func:`scatter_trace`). In a browser without a GPU (a server's headless Chromium, many
remote desktops) WebGL runs in software: each WebGL figure costs a context and shader
compilation in the GPU process, and the page's main thread waits on it. Measured on the
SF 1 demo (bench/README_ui.md, round 6, load 14-20): the Approve-and-run page's one
3,001-partition layout chart cost 6.1-6.7 CPU-s in Chromium's GPU process per visit and
kept the main thread waiting ~10 s; as SVG, 0.03-0.1 GPU CPU-s and the click 3x faster.
SVG's cost grows with the points (plotly draws 3,001 segments in ~1 s at that load) and
with the DOM nodes: a line is one path, but every marker is a node, hence the two limits.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative, sample_colorscale

from engine.core import logical_types

BIN_LIMIT = 2000  # partition charts draw each partition up to this many rows...
BINS = 500  # ...and past it this many bins of neighbouring rows (a few marks per bin)
DEPTH_BINS = [(1, 1, "1"), (2, 2, "2"), (3, 4, "3–4"), (5, 8, "5–8"), (9, 16, "9–16"),
              (17, 32, "17–32"), (33, 64, "33–64"), (65, None, "65+")]
STATE_COLORS = {"pruned": "#c7c7c7", "fully covered": "#2ca02c", "boundary": "#ff7f0e"}
#: plotly_white's layout, registered once as the dashboard's default template. Naming
#: "plotly_white" on each figure made plotly deep-copy and validate the whole template (its
#: defaults for every trace type) per figure: 0.1-0.25 s a chart on two shared cores, 1.7 s
#: of the Partitions page's 2.5 s script; the default template is applied when the figure
#: is serialized, in about 0.01 s. Trace-type defaults of plotly_white are not needed here.
TEMPLATE = "layout_advisor"
pio.templates[TEMPLATE] = go.layout.Template(layout=pio.templates["plotly_white"].layout)
pio.templates.default = TEMPLATE
LAYOUT = dict(margin=dict(l=60, r=20, t=60, b=50), height=420)
#: a figure's scatter traces are SVG up to this many points (a line is one SVG path)...
SVG_MAX_POINTS = 60_000
#: ...and this many drawn markers (each an SVG node); WebGL past either
SVG_MAX_MARKERS = 3_000


def use_webgl(points: int, markers: int = 0) -> bool:
    """Whether a figure with ``points`` scatter points, ``markers`` of them drawn as
    markers, should be WebGL rather than SVG (see the module's docstring).

    >>> use_webgl(9_000, 0), use_webgl(9_000, 6_000), use_webgl(100_000)
    (False, True, True)
    """
    return points > SVG_MAX_POINTS or markers > SVG_MAX_MARKERS


def scatter_trace(webgl: bool, **kwargs: Any) -> go.Scatter | go.Scattergl:
    """A ``go.Scattergl`` when ``webgl`` (:func:`use_webgl`), else a ``go.Scatter``, with
    the same arguments."""
    return go.Scattergl(**kwargs) if webgl else go.Scatter(**kwargs)


def _fig(title: str, x_title: str, y_title: str, **layout: Any) -> go.Figure:
    fig = go.Figure()
    merged = dict(LAYOUT)
    merged.update(layout)
    fig.update_layout(title=dict(text=title), xaxis_title=x_title, yaxis_title=y_title, **merged)
    return fig


# --------------------------------------------------------------------------- value axes

def axis_values(ltype: str, encoded: np.ndarray, domain: np.ndarray | None = None) -> np.ndarray:
    """Encoded zonemap values in a form plotly draws on a proper axis.

    Dates and timestamps become ISO strings (a date axis); strings become their rank among
    ``domain`` (the sorted distinct bounds) since a category axis cannot draw ranges.
    """
    enc = np.asarray(encoded)
    if ltype == "date":
        days = np.where(np.isnan(enc), 0, np.round(enc)).astype("int64")
        out = np.datetime_as_string(np.datetime64("1970-01-01") + days.astype("timedelta64[D]"))
        return np.where(np.isnan(enc), None, out.astype(object))
    if ltype == "timestamp":
        us = np.where(np.isnan(enc), 0, enc).astype("int64")
        out = np.datetime_as_string(np.datetime64("1970-01-01T00:00:00") + us.astype("timedelta64[us]"),
                                    unit="s")
        return np.where(np.isnan(enc), None, out.astype(object))
    if ltype == "string":
        dom = np.unique(enc) if domain is None else domain
        return np.searchsorted(dom, enc).astype(np.float64)
    return enc.astype(np.float64)


def axis_numbers(ltype: str, encoded: np.ndarray, domain: np.ndarray | None = None) -> np.ndarray:
    """Encoded values as float64 plotly draws fast (typed arrays): dates and timestamps as
    milliseconds since the epoch, which a ``date`` axis reads as such; strings as ranks."""
    enc = np.asarray(encoded)
    if ltype == "date":
        return enc.astype(np.float64) * 86_400_000.0
    if ltype == "timestamp":
        return enc.astype(np.float64) / 1000.0
    if ltype == "string":
        dom = np.unique(enc) if domain is None else domain
        return np.searchsorted(dom, enc).astype(np.float64)
    return enc.astype(np.float64)


def query_bands(frag: Any, column: str, ltype: str) -> list[tuple[Any, Any]]:
    """A scan fragment's ranges on ``column`` in the axis units of :func:`axis_values`
    (open ends become None); none on a string column, whose rank axis has no place for
    a value outside the zonemaps."""
    bands = []
    for box in frag.boxes:
        rng = box.get(column)
        if rng is None or ltype == "string":
            continue
        ends = np.array([logical_types.encode_scalar(ltype, rng.min) if rng.min is not None else np.nan,
                         logical_types.encode_scalar(ltype, rng.max) if rng.max is not None else np.nan],
                        dtype=np.float64)
        lo, hi = axis_values(ltype, ends).tolist()
        bands.append((lo, hi))
    return bands


def axis_unit(ltype: str, column: str) -> str:
    if ltype == "date":
        return f"{column} (date)"
    if ltype == "timestamp":
        return f"{column} (timestamp, UTC)"
    if ltype == "string":
        return f"{column} (rank of value, lexicographic)"
    return f"{column} (value)"


def axis_type(ltype: str) -> str:
    return "date" if ltype in ("date", "timestamp") else "linear"


def depth_bin_labels(depth: np.ndarray) -> np.ndarray:
    """Bucket label of each depth (1, 2, 3–4, 5–8, ... 65+)."""
    depth = np.asarray(depth, dtype=np.float64)
    labels = np.full(len(depth), "unknown", dtype=object)
    for lo, hi, label in DEPTH_BINS:
        mask = depth >= lo if hi is None else (depth >= lo) & (depth <= hi)
        labels[mask] = label
    return labels


def _bin_colors() -> dict[str, str]:
    shades = sample_colorscale("YlOrRd", [0.15 + 0.85 * i / (len(DEPTH_BINS) - 1)
                                          for i in range(len(DEPTH_BINS))])
    out = {label: shades[i] for i, (_, _, label) in enumerate(DEPTH_BINS)}
    out["unknown"] = "#7f7f7f"
    return out


# --------------------------------------------------------------------------- partitions

def _category_codes(category: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct categories in their natural order (numbers as numbers: 9 before 10,
    strings as text) and each partition's index into them. Only a mix numpy cannot order
    (numbers and strings in one object array) is compared as text.

    Example:
    >>> labels, code = _category_codes(np.array([10, 9, 10, 2]))
    >>> labels.tolist(), code.tolist()
    ([2, 9, 10], [2, 1, 2, 0])
    """
    values = np.asarray(category)
    try:
        labels, code = np.unique(values, return_inverse=True)
    except TypeError:  # e.g. 3 and "unknown" in one object array: no order between them
        labels, code = np.unique(values.astype(str), return_inverse=True)
    return labels, code.reshape(-1)


def bin_partitions(lo: np.ndarray, hi: np.ndarray, y: np.ndarray, category: np.ndarray,
                   value: np.ndarray, bins: int | None = None) -> dict[str, np.ndarray]:
    """Partitions aggregated into marks: rows ``y`` cut into bins of ``k = ceil((max y + 1)
    / bins)`` consecutive rows (``bins`` defaults to :data:`BINS`), one mark per bin and
    category spanning the union of its partitions' ranges (smallest ``lo`` to largest
    ``hi``), at the members' mean row.

    Works for any orderable encoding (strings too: the extremes are picked by sorting, not
    by arithmetic). Within a bin, marks follow the categories' natural order, and each
    mark keeps its category's value and type (a number stays a number). Returns ``lo``, ``hi``, ``y``, ``category``, ``count`` (partitions per
    mark), ``first``/``last`` (their smallest and largest row), ``value_max`` and ``k``.

    Example (rows 0-5 in bins of 2; rows 2 and 3 have different categories):
    >>> out = bin_partitions(np.array([0, 5, 10, 12, 20, 21]), np.array([6, 9, 15, 30, 25, 22]),
    ...     np.arange(6), np.array(["a", "a", "a", "b", "a", "a"]),
    ...     np.array([1, 3, 2, 7, 1, 1]), bins=3)
    >>> out["lo"].tolist(), out["hi"].tolist(), out["count"].tolist(), out["y"].tolist()
    ([0, 10, 12, 20], [9, 15, 30, 25], [2, 1, 1, 2], [0.5, 2.0, 3.0, 4.5])
    >>> out["category"].tolist(), out["value_max"].tolist(), int(out["k"])
    (['a', 'a', 'b', 'a'], [3.0, 2.0, 7.0, 1.0], 2)
    """
    bins = BINS if bins is None else bins
    y = np.asarray(y, dtype=np.int64)
    n = len(y)
    k = max(1, -(-(int(y.max()) + 1 if n else 0) // max(1, bins)))
    labels, code = _category_codes(category)
    key = (y // k) * len(labels) + code
    by_lo = np.lexsort((lo, key))  # within a mark: smallest lo first
    by_hi = np.lexsort((hi, key))  # within a mark: largest hi last
    sorted_key = key[by_lo]
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]]) if n else np.array([], int)
    ends = np.r_[starts[1:], n].astype(np.int64)
    count = ends - starts
    ys = y[by_lo]
    return {"lo": np.asarray(lo)[by_lo[starts]], "hi": np.asarray(hi)[by_hi[ends - 1]],
            "y": np.add.reduceat(ys.astype(np.float64), starts) / count if n else np.array([]),
            "category": labels[code[by_lo[starts]]].astype(object),
            "count": count, "first": np.minimum.reduceat(ys, starts) if n else ys,
            "last": np.maximum.reduceat(ys, starts) if n else ys,
            "value_max": (np.maximum.reduceat(np.asarray(value, dtype=np.float64)[by_lo], starts)
                          if n else np.array([])),
            "k": np.int64(k)}


def segment_marks(lo: np.ndarray, hi: np.ndarray, y: np.ndarray, category: np.ndarray,
                  ids: np.ndarray, value: np.ndarray, value_name: str,
                  limit: int | None = None, bins: int | None = None) -> dict[str, Any]:
    """The arguments of :func:`partition_segments` for partitions in rows ``y``: one
    segment per partition (hover: its number ``ids`` and ``value``) while the rows fit in
    ``limit`` (default :data:`BIN_LIMIT`), else :func:`bin_partitions` marks over ``bins``
    row bins (hover: the rows they aggregate, how many,
    the largest value). ``k`` is the rows per bin (1 when drawn exactly)."""
    limit = BIN_LIMIT if limit is None else limit
    y = np.asarray(y)
    if len(y) == 0 or int(y.max()) < limit:
        return {"lo": lo, "hi": hi, "y": y, "category": category, "k": 1,
                "custom": np.column_stack([ids, value]),
                "hovertemplate": f"partition #%{{customdata[0]}}<br>{value_name} "
                                 "%{customdata[1]:.4g}<br>%{x}"}
    b = bin_partitions(lo, hi, y, category, value, bins)
    return {"lo": b["lo"], "hi": b["hi"], "y": b["y"], "category": b["category"], "k": int(b["k"]),
            "custom": np.column_stack([b["first"], b["last"], b["count"], b["value_max"]]),
            "hovertemplate": "rows %{customdata[0]}–%{customdata[1]}: %{customdata[2]} "
                             f"partitions, largest {value_name} %{{customdata[3]:.4g}}<br>%{{x}}"}


#: float32 holds every integer up to this exactly (row numbers, partition numbers, counts)
_FLOAT32_EXACT = 2**24


def _compact(values: np.ndarray) -> np.ndarray:
    """``values`` as float32 when that loses nothing a chart shows: integers below
    :data:`_FLOAT32_EXACT` stay exact and measures keep 7 significant digits (hovers print
    4), at half float64's bytes on the websocket (plotly ships numpy arrays as typed
    arrays); float64 otherwise.

    Example:
    >>> _compact(np.array([0, 2.5, 16_777_215])).dtype, _compact(np.array([2.0**24 + 1])).dtype
    (dtype('float32'), dtype('float64'))
    """
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if len(finite) and float(np.abs(finite).max()) >= _FLOAT32_EXACT:
        return values
    return values.astype(np.float32)


def _segments_xy(x_lo: np.ndarray, x_hi: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y of n segments in one trace: (lo, y), (hi, y), gap, ... as float arrays
    (NaN is the gap), which plotly ships as compact typed arrays (rows ``y`` as float32
    while exact: :func:`_compact`)."""
    n = len(y)
    xs = np.full(3 * n, np.nan)
    ys = np.full(3 * n, np.nan, dtype=_compact(y).dtype)
    xs[0::3], xs[1::3] = x_lo, x_hi
    ys[0::3], ys[1::3] = y, y
    return xs, ys


def partition_segments(lo: np.ndarray, hi: np.ndarray, ltype: str, column: str,
                       category: np.ndarray, colors: Mapping[str, str], title: str,
                       y_title: str, y: np.ndarray | None = None,
                       bands: Sequence[tuple[Any, Any]] = (),
                       custom: np.ndarray | None = None,
                       hovertemplate: str | None = None) -> go.Figure:
    """Every partition's [min, max] as a horizontal segment, one trace per category.

    ``lo``/``hi`` are encoded values of the partitions to draw (already sampled and
    ordered), ``category`` a label per partition choosing its color, ``y`` its row.
    ``bands`` are value ranges (display units) shaded behind the segments. ``custom`` is a
    numeric (n, k) array per partition for ``hovertemplate`` (``%{customdata[0]}``...).

    SVG while the segments are few (:func:`use_webgl`): lines only, plus a marker on each
    segment of zero length (a constant partition, min = max), which a line cannot show;
    past the limits one WebGL trace per category with a marker at both ends.
    """
    n = len(lo)
    y = np.arange(n) if y is None else np.asarray(y)
    domain = np.unique(np.concatenate([lo, hi])) if ltype == "string" else None
    x_lo, x_hi = axis_numbers(ltype, lo, domain), axis_numbers(ltype, hi, domain)
    point = x_lo == x_hi
    webgl = use_webgl(3 * n, int(point.sum()))
    fig = _fig(title, axis_unit(ltype, column), y_title, height=520, hovermode="closest")
    for label, color in colors.items():
        mask = np.asarray(category) == label
        count = int(mask.sum())
        if count == 0:
            continue
        xs, ys = _segments_xy(x_lo[mask], x_hi[mask], y[mask])
        extra: dict[str, Any] = {}
        cd3 = None
        if custom is not None:  # numbers only: they travel as typed arrays, strings would not
            # both ends of a segment carry its hover (a line is hovered at its points; the
            # gap point never is): float32 while exact, half float64's bytes
            cd = _compact(custom)[mask]
            cd3 = np.full((3 * count, cd.shape[1]), np.nan, dtype=cd.dtype)
            cd3[0::3], cd3[1::3] = cd, cd
            extra = dict(customdata=cd3, hovertemplate=(hovertemplate or "") + f"<extra>{label}</extra>")
        name = f"{label} ({count:,})"
        if webgl:
            fig.add_trace(go.Scattergl(x=xs, y=ys, mode="lines+markers", name=name,
                                       line=dict(color=color, width=2), marker=dict(size=3, color=color),
                                       connectgaps=False, **extra))
            continue
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name, legendgroup=label,
                                 line=dict(color=color, width=2), connectgaps=False, **extra))
        dots = point[mask]
        if dots.any():
            dot_extra = dict(extra)
            if cd3 is not None:
                dot_extra["customdata"] = cd3[0::3][dots]
            fig.add_trace(go.Scatter(x=x_lo[mask][dots], y=y[mask][dots], mode="markers", name=name,
                                     legendgroup=label, showlegend=False,
                                     marker=dict(size=4, color=color), **dot_extra))
    edge_lo = axis_values(ltype, np.array([np.nanmin(lo)]))[0] if len(lo) and ltype != "string" else None
    edge_hi = axis_values(ltype, np.array([np.nanmax(hi)]))[0] if len(hi) and ltype != "string" else None
    for lo_v, hi_v in bands:  # open ends run to the edge of the drawn partitions
        lo_v = lo_v if lo_v is not None else edge_lo
        hi_v = hi_v if hi_v is not None else edge_hi
        if lo_v is None or hi_v is None:
            continue
        fig.add_vrect(x0=lo_v, x1=hi_v, fillcolor="#1f77b4", opacity=0.25, layer="below",
                      line=dict(color="#1f77b4", width=1.5, dash="dash"))
    fig.update_xaxes(type=axis_type(ltype))
    fig.update_yaxes(tickformat="d")
    fig.update_layout(legend_title_text="", legend=dict(orientation="h", y=-0.15))
    return fig


def depth_colors() -> dict[str, str]:
    return _bin_colors()


def depth_profile(segments: Sequence[Sequence[Any]], ltype: str, column: str,
                  deepest: Sequence[Mapping[str, Any]] = ()) -> go.Figure:
    """Overlap depth along the value domain as a step line; the deepest ranges shaded red.

    ``segments`` are ``[start, end, depth]`` with decoded values (ISO strings for dates),
    as the engine reports them.
    """
    xs: list[Any] = []
    ys: list[float] = []
    for start, end, depth in segments:
        xs += [start, end]
        ys += [depth, depth]
    fig = _fig(f"Depth profile of {column}", axis_unit(ltype, column).replace(
        "rank of value, lexicographic", "value"), "overlap depth (partitions covering the value)",
        height=380)
    fig.add_trace(scatter_trace(use_webgl(len(xs)), x=xs, y=ys, mode="lines", name="depth",
                                line=dict(color="#1f77b4"),
                                hovertemplate="%{x}: depth %{y}<extra></extra>"))
    for i, rng in enumerate(deepest):
        note = dict(annotation_text=f"deepest: depth {rng['depth']}",
                    annotation_position="top left") if i == 0 else {}
        fig.add_vrect(x0=rng["start"], x1=rng["end"], fillcolor="#d62728", opacity=0.25,
                      line=dict(color="#d62728", width=1), **note)
    fig.update_xaxes(type=axis_type(ltype) if ltype != "string" else "category")
    fig.update_layout(showlegend=False)
    return fig


def depth_histogram(buckets: Mapping[Any, int], column: str) -> go.Figure:
    """Partitions per overlap-depth bucket (Snowflake's partition_depth_histogram)."""
    keys = [k for k in sorted(buckets, key=lambda k: float(k))]
    while keys and buckets[keys[-1]] == 0:  # drop the empty tail, keep the Snowflake buckets
        keys.pop()
    if keys and float(keys[0]) == 0 and buckets[keys[0]] == 0:  # depth 0: no partition there
        keys.pop(0)
    fig = _fig(f"Depth histogram of {column}", "overlap depth bucket (partitions)",
               "micro-partitions (count)", height=340)
    fig.add_trace(go.Bar(x=[str(int(float(k))) for k in keys], y=[buckets[k] for k in keys],
                         marker_color="#1f77b4", hovertemplate="depth %{x}: %{y} partitions"))
    fig.update_xaxes(type="category")
    return fig


# --------------------------------------------------------------------------- generic

def bar(x: Sequence[Any], y: Sequence[float], title: str, x_title: str, y_title: str,
        color: str = "#1f77b4", horizontal: bool = False, height: int = 340,
        text: Sequence[str] | None = None) -> go.Figure:
    fig = _fig(title, x_title, y_title, height=height)
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
    fig = _fig(title, x_title, y_title, height=height)
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
    fig = _fig(title, x_title, y_title, height=height)
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
    fig = _fig(title, x_title, y_title, height=height)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode=mode, name=name,
                                 line=dict(color=policy_color(name, i),
                                           dash=(dash or {}).get(name, "solid"))))
    return fig


def signatures(points: np.ndarray, labels: np.ndarray, anchors: np.ndarray | None,
               anchor_names: Sequence[str], axis_names: tuple[str, str],
               hover: Sequence[str] | None = None) -> go.Figure:
    """Savings signatures in 2-D, colored by DBSCAN cluster (-1 noise), anchors as stars."""
    fig = _fig("Savings signatures of candidate partitions", axis_names[0],
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


def net_cost_curve(cuts: Sequence[float], net: Sequence[float], chosen: float | None,
                   unit: str = "CPU-seconds") -> go.Figure:
    """Algorithm 2: net cost (recluster cost minus saving) against the cut."""
    fig = _fig("Algorithm 2: net cost against the cut", "cut (candidate partitions taken, by benefit)",
               f"net cost ({unit}, negative = saves)", height=380)
    fig.add_trace(go.Scatter(x=list(cuts), y=list(net), mode="lines+markers", name="net cost",
                             line=dict(color="#1f77b4")))
    fig.add_hline(y=0, line_color="#7f7f7f", line_width=1)
    if chosen is not None:
        fig.add_vline(x=chosen, line_color="#d62728", line_dash="dash",
                      annotation_text=f"chosen cut = {chosen:g}", annotation_position="top right")
    fig.update_layout(showlegend=False)
    return fig


def stacked_cost(policies: Sequence[str], query: Sequence[float], recluster: Sequence[float],
                 unit: str, title: str = "Total cost per policy") -> go.Figure:
    fig = _fig(title, "policy", f"cost ({unit})", height=380, barmode="stack")
    fig.add_trace(go.Bar(x=list(policies), y=list(query), name="query cost", marker_color="#1f77b4"))
    fig.add_trace(go.Bar(x=list(policies), y=list(recluster), name="reclustering cost",
                         marker_color="#ff7f0e"))
    return fig


#: EP files drawn one segment each; past it the deepest ones (issue 15: 125,000 EP files at
#: 1,000,000 partitions made the Partitions page spend ~10 CPU-s in plotly on every run)
EP_REGIONS_SHOWN = 5_000


def _deepest_files(files: Sequence[Mapping[str, Any]], keep: set[int]) -> list[Mapping[str, Any]]:
    """The :data:`EP_REGIONS_SHOWN` deepest EP files plus those in ``keep``, in file order."""
    ranked = sorted(range(len(files)), key=lambda i: -float(files[i].get("depth") or 0))
    chosen = set(ranked[:EP_REGIONS_SHOWN])
    chosen |= {i for i, f in enumerate(files) if f["ep_file"] in keep}
    return [files[i] for i in sorted(chosen)]


def ep_regions(files: Sequence[Mapping[str, Any]], deepest: Mapping[str, Any] | None,
               ltype: str, column: str, selected: set[int] | None = None) -> go.Figure:
    """EP files' data regions as horizontal segments (y = EP file), the deepest sub-range
    shaded and the EP files covering it (the DD-EP seed region) drawn in red."""
    seed = set((deepest or {}).get("ep_files", []))
    selected = selected or set()
    cats = {"EP file": "#1f77b4", "covers the deepest sub-range": "#d62728",
            "selected by DD-EP": "#9467bd"}
    title = f"EP-file regions of {column}"
    if len(files) > EP_REGIONS_SHOWN:  # top-k: one segment per file is ~100 s of plotly at 125k
        total, files = len(files), _deepest_files(files, seed | selected)
        title += f" ({len(files):,} of {total:,} EP files: the deepest and every highlighted one)"
    fig = _fig(title, axis_unit(ltype, column).replace(
        "rank of value, lexicographic", "value"), "EP file (creation order)", height=420)
    webgl = use_webgl(3 * len(files), 2 * len(files))
    for label, color in cats.items():
        pick = [f for f in files if f.get("min") is not None and (
            (label == "covers the deepest sub-range" and f["ep_file"] in seed) or
            (label == "selected by DD-EP" and f["ep_file"] in selected and f["ep_file"] not in seed) or
            (label == "EP file" and f["ep_file"] not in seed and f["ep_file"] not in selected))]
        if not pick:
            continue
        xs: list[Any] = []
        ys: list[Any] = []
        text: list[Any] = []
        for f in pick:
            xs += [f["min"], f["max"], None]
            ys += [f["ep_file"], f["ep_file"], None]
            t = (f"EP file {f['ep_file']}: {f['partition_count']} partitions, average local "
                 f"depth {f['average_depth']}, EP depth {f['depth']}")
            text += [t, t, None]
        fig.add_trace(scatter_trace(webgl, x=xs, y=ys, mode="lines+markers", name=f"{label} ({len(pick)})",
                                    line=dict(color=color, width=3), marker=dict(size=4, color=color),
                                    text=text, hoverinfo="text"))
    if deepest:
        fig.add_vrect(x0=deepest["start"], x1=deepest["end"], fillcolor="#d62728", opacity=0.15,
                      line_width=0, annotation_text="deepest sub-range", annotation_position="top left")
    fig.update_xaxes(type=axis_type(ltype) if ltype != "string" else "category")
    fig.update_yaxes(tickformat="d")
    fig.update_layout(legend=dict(orientation="h", y=-0.15))
    return fig


def mark_periods(fig: go.Figure, starts: Sequence[tuple[float, str]]) -> go.Figure:
    """Dotted vertical lines at the first batch of each period, labelled P1, P2, ..."""
    for x, label in starts:
        fig.add_vline(x=x - 0.5, line_color="#9e9e9e", line_dash="dot", line_width=1,
                      annotation_text=label, annotation_position="top left",
                      annotation_font_color="#616161")
    return fig


LAYOUT_COLORS = {"sort": qualitative.D3[0], "hilbert": qualitative.D3[2], "qdtree": qualitative.D3[4],
                 "zorder": qualitative.D3[1], "paw": qualitative.D3[3], "binpack": qualitative.D3[5]}


def group_colors(labels: Sequence[str], rest: str) -> dict[str, str]:
    """A color per plan group label (``layout key``): the layout kind picks the hue family
    (sort blue, Hilbert green, Qd-tree purple), groups of one kind get its shades; partitions
    the plan leaves alone (``rest``) are light grey."""
    out: dict[str, str] = {rest: "#d9d9d9"}  # first: drawn below the groups
    seen: dict[str, int] = {}
    for label in labels:
        if label == rest:
            continue
        kind = label.split(" ")[0]
        k = seen[kind] = seen.get(kind, -1) + 1
        base = LAYOUT_COLORS.get(kind, qualitative.Plotly[len(out) % len(qualitative.Plotly)])
        out[label] = base if k == 0 else sample_colorscale([base, "#ffffff"], [min(0.6, 0.2 * k)])[0]
    return out


def group_layout(assignment: Mapping[str, Any], column: str, rest: str) -> go.Figure:
    """The hybrid layout drawn: every partition's range on ``column`` ordered by its min,
    coloured by the plan group (layout and key) that rewrites it. Past :data:`BIN_LIMIT`
    rows, neighbouring partitions of one group join into one mark over their combined
    range (:func:`bin_partitions`, as the Partitions page's chart): as SVG a mark costs
    the browser about 0.3 ms at load 15 (bench/README_ui.md, round 6), and the SF 1 demo
    has 3,001 partitions. The legend counts partitions either way."""
    colors = group_colors(assignment["labels"], rest)
    title = f"Which partitions go to which layout (range on {column})"
    if assignment.get("sampled"):
        title += ", untouched partitions sampled"
    lo, hi, y, category = assignment["lo"], assignment["hi"], assignment["y"], assignment["category"]
    custom = hover = None
    if len(y) and int(np.max(y)) >= BIN_LIMIT:
        b = bin_partitions(lo, hi, y, category, np.zeros(len(y)))
        lo, hi, y, category = b["lo"], b["hi"], b["y"], b["category"]
        custom = np.column_stack([b["first"], b["last"], b["count"]])
        hover = "rows %{customdata[0]}–%{customdata[1]}: %{customdata[2]} partitions<br>%{x}"
        title += f" (each mark joins up to {int(b['k'])} neighbouring partitions of one group)"
    fig = partition_segments(lo, hi, assignment["ltype"], column, category, colors, title,
                             "partition (ordered by min)", y=y, custom=custom, hovertemplate=hover)
    labels, counts = np.unique(np.asarray(assignment["category"]).astype(str), return_counts=True)
    per_label = dict(zip(labels.tolist(), counts.tolist()))
    for trace in fig.data:  # "label (marks)" -> "label (partitions)"
        label = trace.name.rsplit(" (", 1)[0]
        trace.name = f"{label} ({per_label.get(label, 0):,})"
    return fig


# --------------------------------------------------------------------------- PAW design

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
    """PAW's partition tree drawn over two of its columns (issue 12's Design page): each
    leaf's descriptor box (an irregular partition's is its parent's region, from which its
    groups are cut out), the history queries Q_H and their extended queries Q_F* (Lemma 1:
    what the tree was built for), projected on ``x_col`` x ``y_col`` (boxes of more columns
    overlap in the projection). Hovering a leaf's centre gives its sampled rows. One trace
    per kind, so a tree of thousands of leaves stays one path each."""
    types, domain = design.get("types", {}), design["domain"]
    cols = (x_col, y_col)
    fig = _fig(f"PAW partitions over {x_col}" + (f" x {y_col}" if y_col else ""),
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
