"""Plotly figures built from engine results. Pure functions: data in, figure out.

Every figure has a title and axis titles with units; the page adds the one-line caption.
One module per topic: :mod:`~app.charts.figure` (the template, the common layout, SVG or
WebGL), :mod:`~app.charts.axes` (zonemap values on an axis), :mod:`~app.charts.partitions`
(ranges, depth, EP files, plan groups over partitions), :mod:`~app.charts.generic`
(bars, histograms, lines, cost curves, savings signatures) and :mod:`~app.charts.designs`
(PAW's tree). Their public names are re-exported here for the pages
(``charts.partition_segments(...)``); a tunable limit such as
:data:`app.charts.partitions.BIN_LIMIT` is read in its own module.
"""

from __future__ import annotations

from app.charts.figure import (
    use_webgl, scatter_trace,
)
from app.charts.axes import (
    axis_values, axis_numbers, query_bands, axis_unit, axis_type,
)
from app.charts.partitions import (
    DEPTH_BINS, STATE_COLORS, depth_bin_labels, depth_colors, bin_partitions, segment_marks,
    partition_segments, depth_profile, depth_histogram, ep_regions, LAYOUT_COLORS,
    group_colors, group_layout,
)
from app.charts.generic import (
    bar, histogram, binned_histogram, POLICY_COLORS, policy_color, lines, mark_periods,
    stacked_cost, net_cost_curve, signatures,
)
from app.charts.designs import (
    PAW_COLORS, paw_tree,
)

__all__ = [
    "use_webgl", "scatter_trace", "axis_values", "axis_numbers", "query_bands", "axis_unit",
    "axis_type", "DEPTH_BINS", "STATE_COLORS", "depth_bin_labels", "depth_colors",
    "bin_partitions", "segment_marks", "partition_segments", "depth_profile",
    "depth_histogram", "ep_regions", "LAYOUT_COLORS", "group_colors", "group_layout", "bar",
    "histogram", "binned_histogram", "POLICY_COLORS", "policy_color", "lines",
    "mark_periods", "stacked_cost", "net_cost_curve", "signatures", "PAW_COLORS", "paw_tree",
]
