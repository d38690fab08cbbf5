"""The simulator's economics, calibrated: Settings for one scenario
from the DuckDB measurements stored in :data:`engine.scenarios.presets.SIM_CALIBRATION`.

Why: with the default rates against queries that pay only their scanned bytes, a rewrite
is priced far below what a real engine charges for it relative to a query, and the
layout-independent work of a query (joins, aggregation) is missing, so reclustering would
look cheap next to nothing. Calibrated, per preset (measured by ``bench/sim/sim_calibration.py``
with DuckDB, the engine of WAIR's prototype, single-threaded so seconds are CPU-seconds):

* ``scan_bytes_per_s``: the query scan rate, per simulator byte;
* ``query_fixed_s``: every query's layout-independent cost (its shape run on the rows it
  selects: joins, aggregation, no scan), the mean over the measured queries;
* rewrites: ``rewrite_fixed_s`` and the read + sort-and-write rate of a DuckDB
  ``COPY (SELECT * ... ORDER BY key)``, split into ``rewrite_read_bytes_per_s`` (the scan
  rate) and ``sort_bytes_per_s`` (the rest);
* ``cold_start_s`` = 0: DuckDB has no session to start, so a Spark calibration's cold start
  (:mod:`engine.sim.session`) is not added to rewrites priced by DuckDB's economics.

Rates per byte hold at any size; the per-query and per-rewrite seconds were measured at
``SIM_CALIBRATION["rows"]`` and are scaled by ``rows / that`` (a query of the same
selectivity selects and joins proportionally fewer rows), so the simulator keeps the
measured system's ratios at whatever ``--rows`` it runs. (The fit ``fixed + per_row x
rows selected`` is stored too; at our sizes its intercept, DuckDB's per-statement
overhead, is noise-dominated: 0 to 15 ms.)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from engine.scenarios.presets import SIM_CALIBRATION
from engine.sim.scan import compile_fragment

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scenarios.generator import Scenario
    from engine.workload.model import ScanFragment


def selected_mask(scenario: "Scenario", fragment: "ScanFragment") -> np.ndarray:
    """Which rows of the scenario's whole data ``fragment`` selects (its boxes in numpy;
    ``bench/sim/sim_calibration.py`` runs each sampled query's shape on exactly these rows)."""
    data = scenario.dataset.data
    cf = compile_fragment(fragment, dict(scenario.schema.columns))
    n = int(scenario.dataset.batch_offsets[-1])
    mask = np.zeros(n, dtype=bool) if cf.boxes else np.ones(n, dtype=bool)
    for box in cf.boxes:
        m = np.ones(n, dtype=bool)
        for bd in box:
            if bd.column not in data:
                continue
            v = data[bd.column]
            if bd.lo is not None:
                m &= v >= bd.lo if bd.lo_inc else v > bd.lo
            if bd.hi is not None:
                m &= v <= bd.hi if bd.hi_inc else v < bd.hi
        mask |= m
    return mask


def sample_fragments(scenario: "Scenario", sample: int = 24) -> list["ScanFragment"]:
    """``sample`` of the scenario's queries, evenly spread over its batches."""
    frags = [f for b in scenario.batches for f in b.fragments]
    if not frags:
        return []
    pick = np.linspace(0, len(frags) - 1, min(sample, len(frags))).round().astype(int)
    return [frags[i] for i in pick.tolist()]


def calibration_for(preset: str) -> Mapping[str, Any] | None:
    """The stored measurement of ``preset`` (None if it has none)."""
    return SIM_CALIBRATION.get("presets", {}).get(preset)


def calibrated_settings(scenario: "Scenario", base: "Settings",
                        preset: str | None = None) -> "Settings":
    """``base`` with the simulator economics measured for the scenario's preset (module
    docstring); ``base`` unchanged for a preset without a measurement."""
    cal = calibration_for(preset or scenario.spec.name)
    if cal is None:
        return base
    scan = float(cal["scan_bytes_per_s"])
    rewrite = float(cal["rewrite_bytes_per_s"])
    # read at the scan rate, the rest of the measured rewrite time is sort-and-write
    rest = 1.0 / rewrite - 1.0 / scan
    sort = 1.0 / rest if rest > 0 else rewrite
    scale = scenario.dataset.rows / float(SIM_CALIBRATION.get("rows") or scenario.dataset.rows)
    return dataclasses.replace(base, scan_bytes_per_s=scan, sort_bytes_per_s=sort,
                               rewrite_read_bytes_per_s=scan if rest > 0 else 1e18,
                               rewrite_fixed_s=float(cal["rewrite_fixed_s"]) * scale,
                               query_fixed_s=float(cal["query_mean_s"]) * scale, cold_start_s=0.0)
