"""A table's own rewrite price per cell: which price a plan on a table is priced with.

Plans price a group at rows x columns x ``rewrite_cell_bytes`` (WAIR section 4.2's
``t_r(P)``, "a function of the aggregate size of P", in the unit of
:func:`engine.policy.costmodel.work_bytes`). ``layout-advisor calibrate`` measures that price
per cell on its own 6-column numeric table; a 16-17-column lineitem with strings costs more
per cell (round 9, quiet: the sample demo's plan -38% warm, the 10M replay's rewrites
40-49% under). ``calibrate --rewrite-on TABLE`` (:mod:`engine.spark.calibrate_rewrite`)
measures the table's own price and stores it in the workspace's ``calibration.json`` under
``tables``; :func:`resolve` is the ONE place that decides which price a table's plans use,
and every caller pricing for a table goes through it (``engine.plans.service.decide``: plans,
previews, the busier what-if; ``engine.api.whatif``; the real replay).

What is per table and what is global: only the price per cell. It is what the table's
content decides (column types, string widths, encodings: the per-row and per-column work of
decoding, shuffling, sorting and encoding). The fixed cost of a job, the cold start, the
per-file and per-group terms and the read/sort rates are the machine's and the Spark
configuration's, the same for every table: they stay global (fitted by ``calibrate``).

A price measured on an earlier snapshot still applies: a rewrite or an append changes which
rows the table holds, not what a cell of its columns costs to rewrite; ``plan show`` and
``calibrate --show`` name the snapshot and date it was measured on, so a user whose table
changed shape (new columns, other strings) knows to measure again. The probe itself refuses
a table that changes while it is measured (nothing stored).

Precedence: a ``rewrite_cell_bytes`` configured in ``layout-advisor.toml``, the environment
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

__all__ = ["TablePrice", "apply", "describe", "resolve", "stored_tables"]


@dataclass(frozen=True)
class TablePrice:
    """A table's own rewrite price per cell, as ``calibrate --rewrite-on`` stored it."""

    table: str
    cell_bytes: float
    measured_at: str
    snapshot_id: str
    spark_master: str


def stored_tables(home: str | Path) -> dict[str, Mapping[str, Any]]:
    """The per-table prices stored in ``home``'s calibration (``{}`` when none)."""
    path = Path(home) / CALIBRATION_FILE_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}  # load_settings reports an unreadable calibration file
    tables = data.get("tables") if isinstance(data, dict) else None
    return dict(tables) if isinstance(tables, dict) else {}


def _global_cell(home: str | Path) -> float:
    path = Path(home) / CALIBRATION_FILE_NAME
    try:
        return float((json.loads(path.read_text()).get("rates") or {})
                     .get("rewrite_cell_bytes") or 0.0)
    except (OSError, ValueError, AttributeError):
        return 0.0


def resolve(settings: Settings, table: str | None) -> TablePrice | None:
    """The price ``table``'s plans use: its own, when ``calibrate --rewrite-on`` stored one
    and ``rewrite_cell_bytes`` is not configured; else None (the calibration table's price,
    ``settings.rewrite_cell_bytes``, exactly as before).

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
    """
    if not table:
        return None
    entry = stored_tables(settings.home).get(str(table))
    if not entry or not float(entry.get("rewrite_cell_bytes") or 0) > 0:
        return None
    if float(settings.rewrite_cell_bytes) != _global_cell(settings.home):
        return None  # configured: overrides calibrated prices, the table's too
    return TablePrice(str(table), float(entry["rewrite_cell_bytes"]),
                      str(entry.get("measured_at", "")), str(entry.get("snapshot_id", "")),
                      str(entry.get("spark_master", "")))


def apply(settings: Settings, table: str | None) -> tuple[Settings, TablePrice | None]:
    """``settings`` with ``table``'s own price per cell in place of the calibration
    table's (unchanged when :func:`resolve` finds none), and the price used."""
    price = resolve(settings, table)
    if price is None:
        return settings, None
    return dataclasses.replace(settings, rewrite_cell_bytes=price.cell_bytes), price


def describe(price: TablePrice | None, settings: Settings) -> dict[str, Any]:
    """Which price a plan was priced with, for ``plan show`` (stored in the plan's details).

    Example:
    >>> p = TablePrice("lineitem", 3.5, "2026-11-27T06:00:00+00:00", "4", "local[2]")
    >>> describe(p, Settings(rewrite_cell_bytes=3.5))["label"]
    "table lineitem's own price, measured 2026-11-27T06:00:00+00:00 (snapshot 4)"
    >>> describe(None, Settings(rewrite_cell_bytes=2.0))["label"]
    "the calibration table's"
    """
    if price is not None:
        return {"source": "table", "table": price.table, "cell_bytes": price.cell_bytes,
                "measured_at": price.measured_at, "snapshot_id": price.snapshot_id,
                "label": f"table {price.table}'s own price, measured {price.measured_at}"
                         + (f" (snapshot {price.snapshot_id})" if price.snapshot_id else "")}
    cell = float(settings.rewrite_cell_bytes)
    return {"source": "calibration" if cell > 0 else "compressed bytes", "cell_bytes": cell,
            "label": "the calibration table's" if cell > 0
            else "no price per cell (the files' compressed bytes)"}
