"""Figures over a table's partitions: each partition's range on a column, its
depth, the depth profile and histogram, the patent's EP files and the plan groups that
rewrite them.

Figures over partitions use a constant number of traces (segments joined by NaN
separators), never one trace per partition; past :data:`BIN_LIMIT` rows of partitions the
marks are bins of neighbouring rows (:func:`bin_partitions`), so a chart's size stays bounded
on a table of thousands of partitions (the SF 1 demo has 3,001) while a small table is drawn
exactly, one segment per partition.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative, sample_colorscale

from app.charts.axes import axis_numbers, axis_type, axis_unit, axis_values
from app.charts.figure import new_figure, scatter_trace, use_webgl

BIN_LIMIT = 2000  # partition charts draw each partition up to this many rows...
BINS = 500  # ...and past it this many bins of neighbouring rows (a few marks per bin)
DEPTH_BINS = [(1, 1, "1"), (2, 2, "2"), (3, 4, "3–4"), (5, 8, "5–8"), (9, 16, "9–16"),
              (17, 32, "17–32"), (33, 64, "33–64"), (65, None, "65+")]
STATE_COLORS = {"pruned": "#c7c7c7", "fully covered": "#2ca02c", "boundary": "#ff7f0e"}


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


def depth_colors() -> dict[str, str]:
    return _bin_colors()


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
    fig = new_figure(title, axis_unit(ltype, column), y_title, height=520, hovermode="closest")
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


def depth_profile(segments: Sequence[Sequence[Any]], ltype: str, column: str,
                  deepest: Sequence[Mapping[str, Any]] = ()) -> go.Figure:
    """Overlap depth along the value domain as a step line; the deepest ranges shaded red.

    ``segments`` are ``[start, end, depth]`` with decoded values (ISO strings for dates),
    as the engine reports them.
    """
    # object arrays, not lists: plotly checks a list element by element (0.1-0.2 s for the
    # 4,000 points of an SF 1 column on every rerun), an array at once; the same values
    xs = np.empty(2 * len(segments), dtype=object)
    xs[0::2] = [s[0] for s in segments]
    xs[1::2] = [s[1] for s in segments]
    ys = np.empty(2 * len(segments), dtype=object)
    ys[0::2] = ys[1::2] = [s[2] for s in segments]
    fig = new_figure(f"Depth profile of {column}", axis_unit(ltype, column).replace(
        "rank of value, lexicographic", "value"), "overlap depth (partitions covering the value)",
        height=380)
    fig.add_trace(scatter_trace(use_webgl(len(xs)), x=xs, y=ys, mode="lines", name="depth",
                                line=dict(color="#1f77b4"),
                                hovertemplate="%{x}: depth %{y}<extra></extra>"))
    # the shapes and the note ``add_vrect`` makes, set at once (each ``add_vrect`` copies
    # every shape before it: 0.1-0.2 s for five ranges on every rerun)
    shapes = [dict(type="rect", x0=rng["start"], x1=rng["end"], xref="x", y0=0, y1=1,
                   yref="y domain", fillcolor="#d62728", opacity=0.25,
                   line=dict(color="#d62728", width=1)) for rng in deepest]
    notes = [dict(text=f"deepest: depth {rng['depth']}", x=rng["start"], xref="x", y=1,
                  yref="y domain", xanchor="left", yanchor="top", showarrow=False)
             for rng in list(deepest)[:1]]
    if shapes:
        fig.update_layout(shapes=shapes, annotations=notes)
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
    fig = new_figure(f"Depth histogram of {column}", "overlap depth bucket (partitions)",
               "micro-partitions (count)", height=340)
    fig.add_trace(go.Bar(x=[str(int(float(k))) for k in keys], y=[buckets[k] for k in keys],
                         marker_color="#1f77b4", hovertemplate="depth %{x}: %{y} partitions"))
    fig.update_xaxes(type="category")
    return fig


#: EP files drawn one segment each; past it the deepest ones (1,000,000 partitions make
#: 125,000 EP files, too many for plotly on every run)
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
    fig = new_figure(title, axis_unit(ltype, column).replace(
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
    range (:func:`bin_partitions`, as the Partitions page's chart): as SVG every mark costs
    the browser time (bench/ui/README.md), and the SF 1 demo has 3,001 partitions. The
    legend counts partitions either way."""
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
