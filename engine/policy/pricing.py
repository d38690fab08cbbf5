"""A table's own rewrite price per cell: which price a plan on a table is priced with.

Plans price a group at rows x columns x ``rewrite_cell_bytes`` (WAIR section 4.2's
``t_r(P)``, "a function of the aggregate size of P", in the unit of
:func:`engine.policy.costmodel.work_bytes`). ``layout-advisor calibrate`` measures that price
per cell on its own 6-column numeric table; a 16-17-column lineitem with strings costs more
per cell, so its plans would be under-priced at that price (bench/executor/README.md).
``calibrate --rewrite-on TABLE`` (:mod:`engine.spark.calibrate_rewrite`) measures the
table's own price and stores it in the workspace's ``calibration.json`` under
``tables``; :func:`resolve` is the ONE place that decides which price a table's plans use,
and every caller pricing for a table goes through it (``engine.plans.service.decide``: plans,
previews, the busier what-if; ``engine.whatif.own``; the real replay).

What is per table and what is global: the price per cell, and (the probe's
``fit = "line"``, :mod:`engine.spark.calibrate_rewrite`) the fixed part of a job on
that table. The price per cell is what the table's content decides (column types, string
widths, encodings). The fixed part of the line is what the table's file sizes and the
executor's slicing make of a small job (WAIR section 4.2: ``t_r`` "a function of the
aggregate size of P", here a line over it, not a proportion). The table's plans then pay its fixed
part once per job in place of ``rewrite_fixed_s``. What stays global either way: the cold
start (``cold_start_s``, the first job of a JVM: the same whichever table it rewrites,
added on top of the warm price), the per-file and per-group terms, the
many-group plan's terms and the read/sort rates (fitted by ``calibrate`` over a 16x range
of sizes and layouts; the probe holds them). A ``"cell"`` fit (selectable, or the line's
fallback) keeps the calibration's fixed cost exactly.

A price measured on an earlier snapshot still applies: a rewrite or an append changes which
rows the table holds, not what a cell of its columns costs to rewrite; ``plan show`` and
``calibrate --show`` name the snapshot and date it was measured on, so a user whose table
changed shape (new columns, other strings) knows to measure again. The probe itself refuses
a table that changes while it is measured (nothing stored).

Precedence: a ``rewrite_fixed_s`` configured (a value different from the calibration's)
keeps the configured fixed cost, and the table's plans use its "cell" fit (the price fitted
with the calibration's fixed cost) rather than a line's slope without its intercept.
A ``rewrite_cell_bytes`` configured in ``layout-advisor.toml``, the environment
or a flag (a value different from the calibration's) overrides every table's price, as
configured values override calibrated ones everywhere. A table without its own price keeps
the calibration's exactly.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from engine.core.config import CALIBRATION_FILE_NAME, Settings

#: the probe's selectable fits (engine.spark.calibrate_rewrite): the price per cell alone
#: (the calibration's fixed cost held), or the table's own line (fixed part + price per cell)
FITS = ("cell", "line")
#: the default: the better fit on the measured tables (bench/executor/README.md)
DEFAULT_FIT = "line"
__all__ = ["DEFAULT_FIT", "FITS", "TablePrice", "apply", "busy_note", "describe", "resolve", "stored_tables"]


@dataclass(frozen=True)
class TablePrice:
    """A table's own rewrite price, as ``calibrate --rewrite-on`` stored it: the price per
    cell and, for a ``"line"`` fit, the table's own fixed part (else None: the
    calibration's ``rewrite_fixed_s``)."""

    table: str
    cell_bytes: float
    measured_at: str
    snapshot_id: str
    spark_master: str
    fit: str = "cell"
    fixed_s: float | None = None


#: the load per core from which a rewrite probe is warned as measured on a busy machine
#: (entries without ``others_cores`` only)
BUSY_LOAD_PER_CORE = 2.0
#: the cores other processes may use during a rewrite probe before it is warned as busy
BUSY_OTHER_CORES = 0.5


def _others_note(others: float, cores: int) -> str | None:
    """The warning for ``others`` cores taken by other processes on ``cores``: the probe
    had about ``cores - others`` of them, so its times are about ``cores / (cores - others)``
    too long when it could have used every core. An estimate, low rather than high.

    Example:
    >>> _others_note(1.0, 2)
    'warning: other processes used 1.00 of 2 cores during the rewrite probe: its times and price are likely ~2.00x too high (+100%); measure again on a quiet machine'
    >>> _others_note(0.3, 2) is None
    True
    """
    if others < BUSY_OTHER_CORES:
        return None
    factor = cores / max(cores - others, 0.25)
    return (f"warning: other processes used {others:.2f} of {cores} cores during the rewrite "
            f"probe: {_too_high(factor)}")


def _too_high(factor: float) -> str:
    """The busy-machine warning's verdict, for either measure of the other processes."""
    return (f"its times and price are likely ~{factor:.2f}x too high ({factor - 1:+.0%}); "
            "measure again on a quiet machine")


def busy_note(entry: Mapping[str, Any]) -> str | None:
    """One line when other processes took CPU from a rewrite probe (None otherwise).

    Measured (:mod:`engine.core.cpu_share`): the cores other processes used
    during the timed rounds, ``others_cores``; from :data:`BUSY_OTHER_CORES` on, the
    warning says by how much the times may be too high (:func:`_others_note`). An entry
    without that measure (stored before it, or no ``/proc``) falls back to the load: when
    the machine's load during the probe reached twice its cores, other processes took CPU
    from the probe, so its wall times, and the price fitted on them, are too high. Why
    twice: the probe alone keeps more runnable threads than cores (its tasks, the driver,
    the JIT and GC), so a warning
    at the core count fired on a quiet machine. By how much, under a fair-share scheduler: ``L``
    runnable threads on ``C`` cores give the probe's ``d`` threads ``C d / L`` cores; it got
    ``u`` = executor CPU / wall, so ``d = u L / C``, and alone it would have had
    ``min(d, C)``: its times are ``min(L / C, C / u)`` too long. The load is
    the 1-minute average, so the figure is rough; the advice is to measure again quietly.

    Example:
    >>> busy_note({"load_max": 4.9, "cores": 2, "points": [{"cpu_s": 3.31, "seconds": 7.18}]})
    'warning: load 4.9 on 2 cores during the rewrite probe (its executors used 0.46 cores: executor CPU / wall): its times and price are likely ~2.45x too high (+145%); measure again on a quiet machine'
    >>> busy_note({"load_max": 3.4, "cores": 2, "points": []}) is None  # the probe alone
    True
    >>> busy_note({"others_cores": 0.12, "load_max": 4.5, "cores": 2}) is None  # measured: quiet
    True
    """
    others, cores = entry.get("others_cores"), int(entry.get("cores") or 0)
    if others is not None and cores:
        return _others_note(float(others), cores)
    load = entry.get("load_max")
    if load is None or not cores or float(load) < BUSY_LOAD_PER_CORE * cores:
        return None
    pts = entry.get("points") or []
    wall = sum(float(p.get("seconds") or 0) for p in pts)
    cpu = sum(float(p.get("cpu_s") or 0) for p in pts)
    used = cpu / wall if wall > 0 and cpu > 0 else None
    factor = float(load) / cores if used is None else min(float(load) / cores, cores / used)
    return (f"warning: load {float(load):g} on {cores} cores during the rewrite probe"
            + (f" (its executors used {used:.2f} cores: executor CPU / wall)" if used else "")
            + f": {_too_high(factor)}")


def _stored(home: str | Path) -> dict[str, Any]:
    """``home``'s calibration file as stored (``{}`` when absent or unreadable: load_settings
    reports an unreadable one), read once per question."""
    path = Path(home) / CALIBRATION_FILE_NAME
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stored_tables(home: str | Path) -> dict[str, Mapping[str, Any]]:
    """The per-table prices stored in ``home``'s calibration (``{}`` when none)."""
    return _tables(_stored(home))


def _tables(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    tables = data.get("tables")
    return dict(tables) if isinstance(tables, dict) else {}


def _global_rate(data: Mapping[str, Any], key: str) -> float:
    """The calibration's own ``rates[key]`` (0 when absent): a setting that differs from it
    was configured."""
    rates = data.get("rates")
    try:
        return float((rates if isinstance(rates, dict) else {}).get(key) or 0.0)
    except (TypeError, ValueError):
        return 0.0


def resolve(settings: Settings, table: str | None, fit: str | None = None) -> TablePrice | None:
    """The price ``table``'s plans use: its own, when ``calibrate --rewrite-on`` stored one
    and ``rewrite_cell_bytes`` is not configured; else None (the calibration table's price,
    ``settings.rewrite_cell_bytes``, exactly as before). The entry's chosen fit, or ``fit``
    ("cell" / "line": a bench comparing both stored fits side by side); a "line" fit brings
    the table's fixed part, unless ``rewrite_fixed_s`` is configured (then its "cell" fit).

    Example:
    >>> import tempfile
    >>> home = tempfile.mkdtemp()
    >>> _ = (Path(home) / CALIBRATION_FILE_NAME).write_text(json.dumps({
    ...     "rates": {"rewrite_cell_bytes": 2.0}, "tables": {"lineitem": {
    ...     "rewrite_cell_bytes": 3.5, "measured_at": "2026-11-27T06:00:00+00:00",
    ...     "snapshot_id": "1", "spark_master": "local[2]"}}}))
    >>> resolve(Settings(home=home, rewrite_cell_bytes=2.0), "lineitem").cell_bytes
    3.5
    >>> resolve(Settings(home=home, rewrite_cell_bytes=2.0), "orders") is None
    True
    >>> resolve(Settings(home=home, rewrite_cell_bytes=2.5), "lineitem") is None  # configured
    True
    >>> _ = (Path(home) / CALIBRATION_FILE_NAME).write_text(json.dumps({
    ...     "rates": {"rewrite_cell_bytes": 2.0, "rewrite_fixed_s": 0.75}, "tables": {"t": {
    ...     "rewrite_cell_bytes": 2.1, "rewrite_fixed_s": 2.24, "fit": "line", "fits": {
    ...     "cell": {"rewrite_cell_bytes": 3.3}, "line": {"rewrite_cell_bytes": 2.1,
    ...     "rewrite_fixed_s": 2.24}}}}}))
    >>> p = resolve(Settings(home=home, rewrite_cell_bytes=2.0, rewrite_fixed_s=0.75), "t")
    >>> p.fit, p.cell_bytes, p.fixed_s
    ('line', 2.1, 2.24)
    >>> p = resolve(Settings(home=home, rewrite_cell_bytes=2.0, rewrite_fixed_s=0.75), "t", "cell")
    >>> p.fit, p.cell_bytes, p.fixed_s
    ('cell', 3.3, None)
    >>> resolve(Settings(home=home, rewrite_cell_bytes=2.0, rewrite_fixed_s=1.0), "t").fit
    'cell'
    """
    if not table:
        return None
    data = _stored(settings.home)
    entry = _tables(data).get(str(table))
    if not entry or not float(entry.get("rewrite_cell_bytes") or 0) > 0:
        return None
    if float(settings.rewrite_cell_bytes) != _global_rate(data, "rewrite_cell_bytes"):
        return None  # configured: overrides calibrated prices, the table's too
    fits = entry.get("fits") or {}
    want = fit or str(entry.get("fit") or "cell")
    fixed_configured = float(settings.rewrite_fixed_s) != _global_rate(data, "rewrite_fixed_s")
    if want == "line" and fixed_configured:
        want = "cell"  # a configured fixed cost: the slope fitted with it held
    chosen = fits.get(want) or ({"rewrite_cell_bytes": entry["rewrite_cell_bytes"]}
                                if want == "cell" else None)
    if not chosen or not float(chosen.get("rewrite_cell_bytes") or 0) > 0:
        return None
    fixed = chosen.get("rewrite_fixed_s") if want == "line" else None
    return TablePrice(str(table), float(chosen["rewrite_cell_bytes"]),
                      str(entry.get("measured_at", "")), str(entry.get("snapshot_id", "")),
                      str(entry.get("spark_master", "")), want,
                      None if fixed is None else float(fixed))


def apply(settings: Settings, table: str | None,
          fit: str | None = None) -> tuple[Settings, TablePrice | None]:
    """``settings`` with ``table``'s own price per cell (and, for a line fit, its own fixed
    part in place of ``rewrite_fixed_s``) in place of the calibration table's (unchanged
    when :func:`resolve` finds none), and the price used. ``cold_start_s`` and the layout
    terms are left as they are (global)."""
    price = resolve(settings, table, fit)
    if price is None:
        return settings, None
    fixed = settings.rewrite_fixed_s if price.fixed_s is None else price.fixed_s
    return dataclasses.replace(settings, rewrite_cell_bytes=price.cell_bytes,
                               rewrite_fixed_s=fixed), price


def describe(price: TablePrice | None, settings: Settings) -> dict[str, Any]:
    """Which price a plan was priced with, for ``plan show`` (stored in the plan's details).

    Example:
    >>> p = TablePrice("lineitem", 3.5, "2026-11-27T06:00:00+00:00", "4", "local[2]")
    >>> describe(p, Settings(rewrite_cell_bytes=3.5))["label"]
    "table lineitem's own price, measured 2026-11-27T06:00:00+00:00 (snapshot 4)"
    >>> describe(None, Settings(rewrite_cell_bytes=2.0))["label"]
    "the calibration table's"
    >>> describe(None, Settings())["label"]
    'not calibrated: the default rates, no fixed cost per job (`layout-advisor calibrate` measures this machine)'
    """
    if price is not None:
        out = {"source": "table", "table": price.table, "cell_bytes": price.cell_bytes,
               "measured_at": price.measured_at, "snapshot_id": price.snapshot_id,
               "label": f"table {price.table}'s own price, measured {price.measured_at}"
                        + (f" (snapshot {price.snapshot_id})" if price.snapshot_id else "")
                        + (f", its own fixed part {price.fixed_s:.2f} s per job (line fit)"
                           if price.fixed_s is not None else "")}
        if price.fixed_s is not None:
            out["fixed_s"] = price.fixed_s
        return out
    cell = float(settings.rewrite_cell_bytes)
    if cell > 0:
        label = "the calibration table's"
    elif settings.rewrite_fixed_s > 0:
        label = "no price per cell (the files' compressed bytes)"
    else:  # nothing measured on this machine: the seconds are the default rates' guess
        label = ("not calibrated: the default rates, no fixed cost per job "
                 "(`layout-advisor calibrate` measures this machine)")
    return {"source": "calibration" if cell > 0 else "compressed bytes", "cell_bytes": cell,
            "label": label}
