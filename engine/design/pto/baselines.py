"""PTO's baselines, each measured with the same label on the same sample as PTO's run.

* :func:`default_layout`: the table as ingested (Def_opt without a partition column:
  input order, the current mean file size, one row group per file unless given);
* :func:`human_expert`: Algorithm 4's (TFS, RGS) per partition candidate (NULL counts as
  one part) crossed with the top-k sort schemes, the best *measured* (at most 12 labels,
  PTO's budget; section 4.1.2);
* :func:`exhaustive`: every candidate labelled on the sample, to measure PTO's regret.
PTO's lightweight variant is :class:`~engine.design.pto.optimizer.PtoConfig`'s
``lightweight``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.design.pto import labels
from engine.design.pto.candidates import BINPACK, Layout, enumerate_layouts
from engine.design.pto.expert import ExpertBounds, expert_sizes
from engine.design.pto.optimizer import PtoRun


@dataclass(frozen=True)
class Measured:
    """A layout and its label on the run's sample."""

    name: str
    layout: Layout
    label: float
    labelled: int  # layouts labelled to find it

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.layout.describe(), "measured": round(self.label, 4),
                "labelled": self.labelled}


def measure(run: PtoRun, layout: Layout) -> float:
    c = run.config
    return labels.label_layout(layout, run.sample, run.label_fragments, c.label, c.c_file, c.c_rg)


def measure_all(run: PtoRun, layout: Layout) -> dict[str, float]:
    """The layout's every label on the run's sample: ``{"cost": %, "skip": %}`` (one
    placement, both counts)."""
    c = run.config
    placed = labels.place_layout(layout, run.sample)
    return {name: round(placed.label(run.label_fragments, name, c.c_file, c.c_rg), 4)
            for name in labels.LABELS}


def default_layout(run: PtoRun, file_bytes: float, row_group_bytes: float | None = None) -> Measured:
    """The layout as ingested: no partition, input order, files of ``file_bytes``."""
    lay = Layout(None, BINPACK, int(file_bytes), int(row_group_bytes or file_bytes))
    return Measured("default", lay, measure(run, lay), 1)


def human_expert(run: PtoRun) -> Measured:
    """PTO_HumanExp: Algorithm 4's sizes per partition candidate x the top-k sort schemes."""
    table = run.sample
    bounds = ExpertBounds.scaled(run.tfs_grid)
    best: Measured | None = None
    n = 0
    for part in run.partitions:
        parts = run.stats.ndv.get(part, 1) if part else 1
        tfs, rgs = expert_sizes(table.table_bytes, parts, bounds, table.bytes_per_row)
        for sort in run.sorts.schemes:
            lay = Layout(part, sort, int(tfs), int(rgs))
            n += 1
            m = Measured("human expert", lay, measure(run, lay), 0)
            if best is None or m.label > best.label:
                best = m
    assert best is not None  # partitions always hold None
    return Measured(best.name, best.layout, best.label, n)


def exhaustive(run: PtoRun) -> Measured:
    """The best measured layout of the whole candidate space."""
    c = run.config
    space = enumerate_layouts(run.partitions, run.sorts.schemes, run.tfs_grid, c.row_groups_per_file)
    scored = [(measure(run, x), x) for x in space]
    label, lay = max(scored, key=lambda s: (round(s[0], 9), s[1].tfs_bytes, s[1].rgs_bytes))
    return Measured("exhaustive", lay, label, len(space))
