"""Calibration: measure the cost model's rates on this Spark, or show them.

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
from typing import TYPE_CHECKING, Any, Callable, Sequence

from engine.policy import pricing
from engine.core.config import Settings, load_settings
from engine.core.errors import InvalidParameterError, TableNotFoundError
from engine.policy.costmodel import GROUP_TERM_KEYS, RewriteTerms
from engine.spark import calibrate as _calibrate
from engine.spark import calibrate_queries as _queries
from engine.spark import calibrate_rewrite as _rewrite

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.workload.model import ScanFragment
    from engine.workspace import Workspace

__all__ = ["calibrate", "calibrate_queries", "calibrate_rewrite", "missing_terms",
           "show_calibration"]


def calibrate(ws: "Workspace", rows: Sequence[int] | None = None,
              spark: "SparkSession | None" = None, repeat: int | None = None,
              max_rows: int | None = None) -> dict[str, Any]:
    """Measure, store and return the calibration (see :mod:`engine.spark.calibrate`);
    each size is measured ``repeat`` times (default 3) and the median kept. The sizes are
    ``rows``, else 1/16, 1/4 and all of ``max_rows`` (default 1.6M rows)."""
    settings = ws.settings
    sizes = rows or _calibrate.default_rows(max_rows or _calibrate.DEFAULT_MAX_ROWS)
    result = _calibrate.measure(settings, spark=spark, rows=sizes,
                                repeat=repeat or _calibrate.DEFAULT_REPEAT)
    result["path"] = str(_calibrate.save(settings, result))
    return result


def calibrate_queries(ws: "Workspace", table: str | None = None,
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
    settings = ws.settings
    if table is not None:
        snapshot = ws.tables.current_snapshot(table)  # an unknown table is named as such
        fragments = ws.workloads.fragments(table)
        if not fragments:
            raise InvalidParameterError(f"--queries-on {table}: the table has no imported "
                                        "workload; import its query log first "
                                        "(`layout-advisor workload import`)")
        # the cached paths, not one Partition object per file
        paths = snapshot.zonemaps().paths.tolist()
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


def calibrate_rewrite(ws: "Workspace", table: str | None = None,
                      paths: Sequence[str] | None = None, name: str | None = None,
                      repeat: int | None = None, max_rows: int | None = None,
                      out: str | Path | None = None, spark: "SparkSession | None" = None,
                      target_rows: int | None = None, target_bytes: int | None = None,
                      fit: str | None = None, warmup: int | None = None,
                      load_reader: Callable[[], float | None] | None = None,
                      progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure ``table``'s own rewrite price per cell on samples of its current files
    (:mod:`engine.spark.calibrate_rewrite`: the executor's rewrite into a scratch folder,
    nothing committed) and store it in the workspace's calibration under ``tables[table]``
    (the price, the points, the date, the snapshot id, the Spark master), or into ``out``
    (the rest of the calibration kept); returns the stored entry with ``path``.

    Only the price per cell is per table (:mod:`engine.policy.pricing` says why); plans on
    that table use it from then on, every other table keeps the calibration table's.
    Refused (InvalidParameterError, exit code 2): an unknown table, a table without files,
    and a table whose snapshot changed while it was measured (nothing is stored then).
    ``paths`` (with ``name``, the key it is stored under): files that are not a workspace
    table, e.g. a benchmark's (bench/replay/real_replay.py ``--calibrate-rewrite``), at their file
    size ``target_rows`` / ``target_bytes``."""
    settings = ws.settings
    store = ws.tables
    snapshot_id = ""
    if table is not None:
        try:
            snap = store.current_snapshot(table)
        except TableNotFoundError as exc:
            raise InvalidParameterError(f"--rewrite-on {table}: {exc}") from None
        schema, parts, snapshot_id = snap.schema, list(snap.partitions), str(snap.id)
        info = store.info(table)
        target_rows, target_bytes = info.target_rows, info.target_bytes
        name = table
    elif paths:
        from engine.table.footers import read_partitions

        schema, parts = read_partitions(list(paths))
        name = name or "files"
    else:
        raise InvalidParameterError("calibrate_rewrite: name a table, or give its files")
    if not parts:
        raise InvalidParameterError(f"--rewrite-on {name}: the table has no data files to "
                                    "rewrite (load data first)")
    measured = _rewrite.measure(settings, schema, parts, spark=spark,
                                repeat=repeat or _calibrate.DEFAULT_REPEAT,
                                max_rows=max_rows or _rewrite.DEFAULT_MAX_ROWS,
                                target_rows=target_rows, target_bytes=target_bytes,
                                fit=fit or _rewrite.DEFAULT_FIT,
                                warmup=_rewrite.DEFAULT_WARMUP if warmup is None else warmup,
                                **({"load_reader": load_reader} if load_reader else {}),
                                progress=progress)
    if table is not None:
        now = str(store.current_snapshot(table).id)
        if now != snapshot_id:
            raise InvalidParameterError(
                f"--rewrite-on {table}: the table changed while it was measured (snapshot "
                f"{snapshot_id} -> {now}); nothing stored: run it again")
    entry = {**measured,
             "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
             "snapshot_id": snapshot_id, "spark_master": settings.spark_master,
             "rows": int(sum(p.rows for p in parts)), "files": len(parts)}
    stored = _calibrate.load(settings) if out is None else json.loads(
        Path(out).read_text()) if Path(out).is_file() else _calibrate.load(settings)
    if not stored:
        raise InvalidParameterError("calibrate --rewrite-on: run `layout-advisor calibrate` "
                                    "first (the table's price is fitted with its terms held)")
    stored.setdefault("tables", {})[name] = entry
    if out is None:
        path = str(_calibrate.save(settings, stored))
    else:
        Path(out).write_text(json.dumps(stored, indent=2, sort_keys=True))
        path = str(out)
    return {**entry, "table": name, "path": path}


def show_calibration(ws: "Workspace") -> dict[str, Any]:
    """The stored calibration (None before the first run) and the rates in effect now,
    each with where it comes from ("calibrated" or "configured")."""
    settings = ws.settings
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
            "home": str(settings.home), "missing": missing_terms(stored),
            "tables": _table_prices(current)}


def _table_prices(current: Settings) -> list[dict[str, Any]]:
    """The per-table prices (``calibrate --rewrite-on``), each with whether plans use it
    (:func:`engine.policy.pricing.resolve`: not when ``rewrite_cell_bytes`` is
    configured)."""
    out = []
    for name, entry in sorted(pricing.stored_tables(current.home).items()):
        used = pricing.resolve(current, name) is not None
        points = entry.get("points") or []
        out.append({"table": name, "cell_bytes": float(entry.get("rewrite_cell_bytes") or 0),
                    "fit": entry.get("fit") or "cell", "fixed_s": entry.get("rewrite_fixed_s"),
                    "fit_fallback": entry.get("fit_fallback"), "fits": entry.get("fits") or {},
                    "busy": pricing.busy_note(entry), "warmup": entry.get("warmup"),
                    "spread": [{"rows": p["rows"], "seconds": p["seconds"],
                                "runs_s": p.get("runs_s") or [p["seconds"]],
                                "error_at_fit": p.get("error_at_fit")} for p in points],
                    "calibration_cell_bytes": float(entry.get("calibration_cell_bytes") or 0),
                    "measured_at": entry.get("measured_at"),
                    "snapshot_id": entry.get("snapshot_id"),
                    "spark_master": entry.get("spark_master"),
                    "points": len(points), "load": entry.get("load"),
                    "source": "used by its plans" if used
                    else "not used: rewrite_cell_bytes is configured"})
    return out


def missing_terms(stored: dict[str, Any] | None) -> list[str]:
    """The many-group terms an older calibration file lacks (it still loads: they are 0, so
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
