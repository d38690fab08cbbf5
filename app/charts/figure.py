"""The dashboard's plotly defaults: one registered template, the common layout, and
the choice between SVG and WebGL scatter traces.

Scatter traces are SVG (``go.Scatter``) up to :data:`SVG_MAX_POINTS` points and
:data:`SVG_MAX_MARKERS` markers a figure, WebGL (``go.Scattergl``) past them
(:func:`scatter_trace`). In a browser without a GPU (a server's headless Chromium, many
remote desktops) WebGL runs in software: each WebGL figure costs a context and shader
compilation in the GPU process, and the page's main thread waits on it. On the SF 1 demo
an SVG layout chart is many times cheaper than the same chart in WebGL (bench/ui/README.md).
SVG's cost grows with the points and with the DOM nodes: a line is one path, but every
marker is a node, hence the two limits.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

#: plotly_white's layout, registered once as the dashboard's default template. Naming
#: "plotly_white" on each figure makes plotly deep-copy and validate the whole template (its
#: defaults for every trace type) per figure, a large share of a page's script time; the
#: default template is applied once, when the figure is serialized. Trace-type defaults of
#: plotly_white are not needed here.
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


def new_figure(title: str, x_title: str, y_title: str, **layout: Any) -> go.Figure:
    """An empty figure with its title, axis titles and :data:`LAYOUT` (``layout`` overrides
    or adds layout keys)."""
    fig = go.Figure()
    merged = dict(LAYOUT)
    merged.update(layout)
    fig.update_layout(title=dict(text=title), xaxis_title=x_title, yaxis_title=y_title, **merged)
    return fig
