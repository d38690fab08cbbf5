"""The one "plan group -> fitted ordering", shared by the simulator and the Spark executor.

Both apply a plan the same way, one in memory (:mod:`engine.sim.apply`), one on files
(:mod:`engine.spark.executor`); what a group *means* must not differ between them. A group
carries a layout, key columns and ``layout_params`` (JSON: the ordering's keyword
arguments plus notes for humans such as WAIR's anchor, section 4.4). This module turns
that into an :class:`~engine.layout.base.Ordering`:

* :func:`ordering_params`: the keys the layout's class takes, a misspelt one refused (a
  key silently dropped would run a different layout than the plan shows), and a Qd-tree's
  cut and query bounds written as ISO dates encoded like the data;
* :func:`ordering_for_group`: that ordering fitted on a sample of the group, a Qd-tree's
  ``min_leaf_rows`` (rows of the group, default one output file) scaled to the sample.

How the sample is drawn stays with the caller (numpy in memory, ``DataFrame.sample`` on
Spark). ``group`` is duck-typed (``.layout``, ``.columns``, ``.layout_params``): the layout
layer sits below the policy layer that defines :class:`~engine.policy.base.PlanGroup`.

Example:
>>> import numpy as np
>>> from types import SimpleNamespace
>>> group = SimpleNamespace(layout="qdtree", columns=("d",),
...                         layout_params={"anchor": "diffuse", "cuts": [["d", "1970-01-11"]]})
>>> tree = ordering_for_group(group, {"d": "date"}, {"d": np.arange(40.0)},
...                           group_rows=400, default_leaf_rows=50)
>>> tree.cuts, tree.min_leaf_rows, tree.n_leaves_
([['d', 10.0]], 5, 2)
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError, PlanError
from engine.layout.base import KINDS, Ordering, make_ordering, ordering_classes
from engine.layout.qdtree import encode_bounds, scale_min_leaf_rows

if TYPE_CHECKING:
    from engine.policy.base import PlanGroup

#: layout_params keys that are notes for humans (WAIR's anchor), not ordering parameters
NOTE_PARAMS = frozenset({"anchor", "similarity"})
#: layout_params keys that are the executor's output parameters
#: (:class:`engine.policy.base.PlanGroup`: file size, row-group size, a column no file
#: straddles), not ordering parameters: a PTO group over a fitted layout carries them
OUTPUT_PARAMS = frozenset({"target_file_bytes", "row_group_bytes", "partition_by"})


def accepted_params(layout: str) -> frozenset[str]:
    """The keyword parameters of the layout's ordering class (its key columns aside).

    Example:
    >>> sorted(accepted_params("hilbert"))
    ['bits']
    """
    classes = ordering_classes()
    if layout not in classes:
        raise PlanError(f"unknown layout {layout!r}; choose one of {', '.join(KINDS)}")
    return frozenset(n for n, p in inspect.signature(classes[layout]).parameters.items()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n != "columns")


def ordering_params(layout: str, layout_params: Mapping[str, Any],
                    types: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ordering's keyword arguments from a group's ``layout_params``.

    Every key must be a parameter of the layout's class, a known note
    (:data:`NOTE_PARAMS`) or one of the executor's output parameters (:data:`OUTPUT_PARAMS`,
    which the executor and the simulator apply themselves), else PlanError. Given the
    columns' logical ``types``, a Qd-tree's cut and query bounds written as JSON strings
    (ISO dates) are encoded like the data.

    Example:
    >>> ordering_params("zorder", {"anchor": "a+b", "bits": 8})
    {'bits': 8}
    >>> ordering_params("hilbert", {"target_file_bytes": 1 << 27, "row_group_bytes": 1 << 20,
    ...                             "partition_by": "l_returnflag"})
    {}
    """
    accepted = accepted_params(layout)
    params = dict(layout_params or {})
    ignored = NOTE_PARAMS | OUTPUT_PARAMS
    unknown = sorted(k for k in params if k not in accepted and k not in ignored)
    if unknown:
        raise PlanError(f"layout_params {', '.join(map(repr, unknown))} of a {layout} group "
                        f"are not parameters of that layout (it takes: "
                        f"{', '.join(sorted(accepted)) or 'none'})")
    params = {k: v for k, v in params.items() if k in accepted}
    if layout == "qdtree" and types is not None:
        params = encode_bounds(params, types)
    return params


def build_ordering(layout: str, columns: Sequence[str], layout_params: Mapping[str, Any],
                   types: Mapping[str, str] | None = None) -> Ordering:
    """An unfitted ordering from a plan group's layout, columns and ``layout_params``;
    PlanError (naming the layout and columns) when they do not make one."""
    try:
        return make_ordering(layout, list(columns), ordering_params(layout, layout_params, types))
    except InvalidParameterError as exc:
        raise PlanError(f"{layout} group over {', '.join(columns)}: {exc}") from None


def ordering_for_group(group: "PlanGroup", types: Mapping[str, str],
                       sample: Mapping[str, np.ndarray], *, group_rows: int,
                       default_leaf_rows: int) -> Ordering:
    """The group's ordering, fitted on ``sample`` (encoded columns) of its ``group_rows`` rows.

    The key columns are the group's columns the sample holds. A Qd-tree's
    ``min_leaf_rows`` counts rows of the group (``default_leaf_rows`` when the group gives
    none: the rows of one output file) and is scaled by ``sample rows / group_rows``, else a
    group larger than its sample collapses into one leaf
    (:func:`~engine.layout.qdtree.scale_min_leaf_rows`).
    """
    columns = [c for c in group.columns if c in sample]
    params = dict(group.layout_params or {})
    if group.layout == "qdtree":
        fit_rows = len(next(iter(sample.values()))) if sample else 0
        wanted = int(params.get("min_leaf_rows") or default_leaf_rows)
        params["min_leaf_rows"] = scale_min_leaf_rows(wanted, fit_rows, group_rows)
    return build_ordering(group.layout, columns, params, types).fit(sample)
