"""Calibration façade: measure the cost model's rates on this Spark, or show them.

``calibrate`` runs the executor's own rewrite and DuckDB scans at a few sizes
(:mod:`engine.spark.calibrate`), stores the fitted rates in the workspace with the date and
the Spark master, and returns them; plans created afterwards price rewrites with them
(:mod:`engine.policy.costmodel`). Configured values (``layout-advisor.toml``, environment)
override calibrated ones; :func:`show_calibration` says which rate is in effect.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from engine.api.workload import workload_fragments
from engine.core.config import Settings, load_settings
from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import GROUP_TERM_KEYS, RewriteTerms
from engine.spark import calibrate as _calibrate
from engine.spark import calibrate_queries as _queries
from engine.table.store import TableStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.workload.model import ScanFragment

__all__ = ["calibrate", "calibrate_queries", "missing_terms", "show_calibration"]


def calibrate(settings: Settings, rows: Sequence[int] | None = None,
              spark: "SparkSession | None" = None, repeat: int | None = None,
              max_rows: int | None = None) -> dict[str, Any]:
    """Measure, store and return the calibration (see :mod:`engine.spark.calibrate`);
    each size is measured ``repeat`` times (default 3) and the median kept. The sizes are
    ``rows``, else 1/16, 1/4 and all of ``max_rows`` (default 1.6M rows)."""
    sizes = rows or _calibrate.default_rows(max_rows or _calibrate.DEFAULT_MAX_ROWS)
    result = _calibrate.measure(settings, spark=spark, rows=sizes,
                                repeat=repeat or _calibrate.DEFAULT_REPEAT)
    result["path"] = str(_calibrate.save(settings, result))
    return result


def calibrate_queries(settings: Settings, table: str | None = None,
                      paths: Sequence[str] | None = None,
                      fragments: Sequence["ScanFragment"] | None = None,
                      repeat: int | None = None, out: str | Path | None = None,
                      label: str | None = None) -> dict[str, Any]:
    """Measure the query side on a table's own files and its workload's own queries
    (:func:`engine.spark.calibrate_queries.measure_fragments`) and store its three terms
    (``query_fixed_s``, ``query_file_s``, ``query_scan_bytes_per_s``) into the workspace's
    calibration, or into ``out`` (the rest of the calibration kept); returns the stored
    calibration. ``table``: its current files and its imported log; else ``paths`` and
    ``fragments`` (a benchmark's table and queries)."""
    if table is not None:
        fragments = workload_fragments(settings, table)
        if not fragments:
            raise InvalidParameterError(f"--queries-on {table}: the table has no imported "
                                        "workload; import its query log first "
                                        "(`layout-advisor workload import`)")
        # the cached paths, not one Partition object per file (round 7's audit)
        paths = TableStore(settings).current_snapshot(table).zonemaps().paths.tolist()
        label = label or f"table {table}"
    if not paths or not fragments:
        raise InvalidParameterError("calibrate_queries: name a table, or give files and queries")
    try:
        measured = _queries.measure_fragments(list(paths), list(fragments),
                                              repeat or _calibrate.DEFAULT_REPEAT,
                                              label=label or "table")
    except ValueError as exc:
        raise InvalidParameterError(f"query calibration: {exc}") from None
    stored = _calibrate.load(settings) or {
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "spark_master": settings.spark_master, "rates": {}, "terms": {}, "points": []}
    stored.setdefault("rates", {}).update(measured["rates"])
    stored["queries"] = {**measured, "measured_at": dt.datetime.now(dt.timezone.utc)
                         .isoformat(timespec="seconds")}
    if out is None:
        stored["path"] = str(_calibrate.save(settings, stored))
    else:
        Path(out).write_text(json.dumps(stored, indent=2, sort_keys=True))
        stored["path"] = str(out)
    return stored


def show_calibration(settings: Settings) -> dict[str, Any]:
    """The stored calibration (None before the first run) and the rates in effect now,
    each with where it comes from ("calibrated" or "configured")."""
    stored = _calibrate.load(settings)
    rates = (stored or {}).get("rates") or {}
    # read again: a calibration stored since ``settings`` were loaded applies now
    current = load_settings({"home": settings.home, "spark_master": settings.spark_master})
    effective = {}
    for key in _calibrate.RATE_KEYS:
        value = getattr(current, key)
        source = "calibrated" if key in rates and rates[key] == value else "configured"
        if source == "calibrated" and not value:  # stored 0: the slope was lost in noise
            source = "calibrated: not separable, default applies"
        elif key not in rates and not value:  # an older file, or none: never measured
            source = "not calibrated"
        effective[key] = {"value": value, "source": source}
    return {"calibration": stored, "effective": effective, "terms": _terms(stored, current),
            "home": str(settings.home), "missing": missing_terms(stored)}


def missing_terms(stored: dict[str, Any] | None) -> list[str]:
    """The round-7 terms an older calibration file lacks (it still loads: they are 0, so
    plans price compressed bytes and no per-group cost); [] when complete or absent.

    Example:
    >>> missing_terms({"rates": {"rewrite_fixed_s": 1.0}, "terms": {"file_s": 0.1}})
    ['rewrite_cell_bytes', 'multi_group_s', 'group_s', 'multi_group_bytes_per_s']
    >>> missing_terms(None)
    []
    """
    if not stored:
        return []
    have = {**(stored.get("rates") or {}), **(stored.get("terms") or {})}
    return [k for k in ("rewrite_cell_bytes", *GROUP_TERM_KEYS) if k not in have]


def _terms(stored: dict[str, Any] | None, current: Settings) -> dict[str, Any]:
    """The layout terms plans price with (fitted job, key function, per file; the
    settings' values, ``RewriteTerms.from_settings``) and where each comes from: the
    calibration, a configured value overriding it, or neither (0)."""
    fitted = (stored or {}).get("terms") or {}
    measured = RewriteTerms.from_mapping(fitted)
    in_plans = RewriteTerms.from_settings(current)
    out = {}
    for key in _calibrate.TERM_KEYS:
        value, used = getattr(measured, key), getattr(in_plans, key)
        # a term the calibration fitted to 0 (NNLS: no cost per extra group) is calibrated;
        # one the file lacks (an older calibration) is not
        source = ("calibrated" if key in fitted and used == value else "configured" if used
                  else "not calibrated")
        out[key] = {"value": used, "source": source}
    return out
