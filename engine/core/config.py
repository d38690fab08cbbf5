"""Settings: defaults < calibrated rates < ``layout-advisor.toml`` in the workspace <
``LAYOUT_ADVISOR_*`` env < CLI flags.

Settings are read once and frozen. Each key's default sits beside it in :class:`Settings`.
Environment variables are the upper-cased field names with the ``LAYOUT_ADVISOR_`` prefix,
e.g. ``LAYOUT_ADVISOR_SPARK_MASTER=local[2]``.

Nobody is an approver by configuration: ``LAYOUT_ADVISOR_APPROVERS`` is refused with a
message, and an old workspace's ``approvers = [...]`` in the file is ignored with a
one-line :class:`SettingWarning` saying how to migrate (approvers are stored with hashed
secrets in the control store, ``layout-advisor approvers add``). A few ``LAYOUT_ADVISOR_*``
variables are not settings but inputs of one command (:data:`NOT_SETTINGS`).
Numbers are checked where they enter: NaN, infinities and values out of a setting's range
are a :class:`ConfigError` naming the setting and where it came from.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tomllib
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from engine.core.errors import ConfigError

CONFIG_FILE_NAME = "layout-advisor.toml"
#: rates measured by ``layout-advisor calibrate`` (engine.spark.calibrate), in the workspace
CALIBRATION_FILE_NAME = "calibration.json"
ENV_PREFIX = "LAYOUT_ADVISOR_"
DEFAULT_HOME = ".layout-advisor"
#: LAYOUT_ADVISOR_* variables that are a command's input, not settings
NOT_SETTINGS = frozenset({"SECRET_FILE", "DEMO_SECRET"})
#: seconds between two heartbeats of a running plan's runner (engine.plans.heartbeat); a
#: ``runner_timeout_s`` at or below it would take a live runner for gone between two beats
RUNNER_HEARTBEAT_S = 10.0
_NO_MORE_APPROVERS = ("approvers are no longer configured (anyone who can set a variable or edit "
                      "the file could approve); remove it and add approvers with "
                      "`layout-advisor approvers add NAME`")


class SettingWarning(UserWarning):
    """A setting that is ignored (the CLI prints it as one line and carries on)."""


#: lowest value each numeric setting accepts, and whether the bound itself is allowed
_LOWER_BOUNDS: dict[str, tuple[float, bool]] = {
    "spark_shuffle_partitions": (1, True), "scan_bytes_per_s": (0, False),
    "sort_bytes_per_s": (0, False), "external_sort_penalty": (1, True),
    "memory_budget_bytes": (0, False), "price_per_cpu_hour": (0, True),
    "ep_file_partitions": (1, True), "workload_max_line_bytes": (1, True),
    "workload_max_statement_chars": (1, True), "ui_port": (1, True), "target_rows": (0, True),
    "target_mb": (0, True), "dual_approval_bytes": (0, True),
    "dual_approval_cpu_seconds": (0, True), "session_idle_s": (0, False),
    "auth_delay_s": (0, True), "runner_timeout_s": (RUNNER_HEARTBEAT_S, False),
    # calibrated costs: 0 = not calibrated, never negative
    "rewrite_fixed_s": (0, True), "rewrite_read_bytes_per_s": (0, True),
    "query_fixed_s": (0, True), "query_scan_bytes_per_s": (0, True), "query_file_s": (0, True),
    "fitted_job_s": (0, True), "fitted_key_bytes_per_s": (0, True), "file_s": (0, True),
    "multi_group_s": (0, True), "group_s": (0, True), "multi_group_bytes_per_s": (0, True),
    "rewrite_cell_bytes": (0, True), "cold_start_s": (0, True), "lookup_max_ranges": (1, True),
    "min_realized_ratio": (0, True), "min_verified_ratio": (0, True),
}
_UPPER_BOUNDS = {"ui_port": 65535}
#: why a bound is what it is, said with the refusal
_BOUND_REASONS = {"runner_timeout_s": "; a running plan's runner beats every "
                                      f"{RUNNER_HEARTBEAT_S:g} s, so a shorter timeout would "
                                      "take a live runner for gone"}


@dataclass(frozen=True, slots=True)
class Settings:
    """All tunables of the engine. Units are in the field names."""

    home: Path = Path(DEFAULT_HOME)
    spark_master: str = "local[*]"
    spark_driver_memory: str = "2g"
    spark_shuffle_partitions: int = 8
    # micro-partition target size (rows wins when both are set)
    target_rows: int = 100_000
    target_mb: float = 0.0
    # approval gate (approvers themselves live in the control store). The security policy
    # is an admin's, stored in control.db (engine.security.policy: separation of duties on,
    # dual approval above 100 GiB, a 1 s failed-sign-in delay doubling per failure); these
    # four only tighten it for this process (the stricter of both applies), so their
    # defaults are the loosest values: false / 0 = leave the stored policy as it is
    separation_of_duties: bool = False
    dual_approval_bytes: int = 0
    dual_approval_cpu_seconds: float = 0.0
    session_idle_s: float = 900.0
    auth_delay_s: float = 0.0
    # cost model rates: bytes -> CPU-seconds -> money
    scan_bytes_per_s: float = 200e6
    sort_bytes_per_s: float = 50e6
    external_sort_penalty: float = 2.0
    memory_budget_bytes: int = 2 * 1024**3
    price_per_cpu_hour: float = 0.05
    currency: str = "$"
    # calibrated rates (``layout-advisor calibrate``; 0 = not calibrated, the rates above
    # apply): a rewrite job's fixed seconds, per-query fixed seconds and scan rate
    rewrite_fixed_s: float = 0.0
    rewrite_read_bytes_per_s: float = 0.0
    query_fixed_s: float = 0.0
    query_scan_bytes_per_s: float = 0.0
    # ... (engine.spark.calibrate_queries) a query's seconds per file it scans; the
    # scan rate above is then per projected byte, measured on the workload's query shapes
    query_file_s: float = 0.0
    # calibrated layout terms (engine.policy.costmodel.RewriteTerms; 0 = not calibrated):
    # the fitted layouts' sampling job, their key function's rate, seconds per output file
    fitted_job_s: float = 0.0
    fitted_key_bytes_per_s: float = 0.0
    file_s: float = 0.0
    # ... and for a plan of two or more groups (its write is partitioned by group):
    # once per plan, per extra group, and the extra rate of its bytes
    multi_group_s: float = 0.0
    group_s: float = 0.0
    multi_group_bytes_per_s: float = 0.0
    # the calibration table's compressed bytes per cell (row x column): plans price a group
    # at rows x columns x this (engine.policy.costmodel.work_bytes); 0 = its compressed bytes
    rewrite_cell_bytes: float = 0.0
    # what the first rewrite job of a fresh Spark session pays on top of the warm
    # price (JIT, Python workers): a CLI ``plan run`` starts one; 0 = not calibrated
    cold_start_s: float = 0.0
    # a runner on another host whose heartbeat (every RUNNER_HEARTBEAT_S = 10 s) is older than
    # this is taken for gone and its plan settled (engine.plans.plan.PlanBook.get): 30 missed
    # beats by default; refused at or below one beat
    runner_timeout_s: float = 300.0
    # executor: commit every N groups (Iceberg's partial progress); 0 = one commit per plan
    partial_progress_groups: int = 0
    # after a run: a plan whose re-estimated saving (the decision's window on the snapshots
    # before and after) is below this share of its prediction, or negative, is flagged
    # underdelivered (engine.plans.delivery)
    min_realized_ratio: float = 0.5
    # after a run: roll an underdelivering plan back at once, audited with the figures
    rollback_if_worse: bool = False
    # approval: refuse a plan that `plan verify` has not verified, or whose verified saving
    # is below min_verified_ratio of the predicted one (engine.plans.verify)
    require_verification: bool = False
    # planning: a plan promises at most the saving the output check finds on the files the
    # executor will write (losses included); false keeps the policy's own figure (WAIR's
    # equation 3) as the promise (engine.policy.output_saving.capped_by_output)
    promise_output_saving: bool = True
    min_verified_ratio: float = 0.5
    # scan analysis: charge a query only the row groups it meets in files that have several,
    # as DuckDB, Spark and Trino skip them (engine.scan.rowgroups; files of one row group
    # are charged whole either way); false keeps the file-level answer
    prune_row_groups: bool = True
    # workload import: the most key ranges one dimension lookup gives a fact column
    # (engine.workload.lookup); more runs of matching keys are merged across the smallest gaps
    lookup_max_ranges: int = 16
    # query-log import (engine.workload.logread): a longer line of a JSON Lines log, or a
    # longer statement, is skipped with a counted reason instead of being held in memory
    workload_max_line_bytes: int = 8 * 1024 * 1024
    workload_max_statement_chars: int = 1024 * 1024
    # patent EP-file grouping
    ep_file_partitions: int = 8
    # dashboard
    ui_port: int = 8501

    @property
    def approvers(self) -> tuple[str, ...]:
        """Always empty: nobody is an approver by configuration any more (approvers and
        their hashed secrets live in the control store). Kept so a caller that still asks
        (the dashboard until its sign-in lands) offers no changes instead of failing."""
        return ()

    @property
    def tables_dir(self) -> Path:
        return self.home / "tables"

    @property
    def control_db(self) -> Path:
        return self.home / "control.db"


def _coerce(name: str, kind: Any, raw: Any, source: str = "") -> Any:
    """Convert a raw value from TOML or the environment into the field's type."""
    try:
        if kind in (Path, "Path"):
            return Path(raw).expanduser()
        if kind in (bool, "bool"):
            return _boolean(raw)
        if kind in (int, "int"):
            return _checked(name, _integer(raw))
        if kind in (float, "float"):
            if isinstance(raw, bool):
                raise ValueError("a number is required, not true/false")
            return _checked(name, float(raw))
        if kind in (str, "str"):
            return str(raw)
        if "tuple" in str(kind):
            if isinstance(raw, str):
                return tuple(p.strip() for p in raw.split(",") if p.strip())
            return tuple(str(p) for p in raw)
    except (TypeError, ValueError, OverflowError) as exc:
        where = f"{source}: " if source else ""
        raise ConfigError(f"{where}setting {name!r}: cannot use {raw!r} ({exc})") from None
    return raw


def _boolean(raw: Any) -> bool:
    """true/false from TOML, or 1/0, yes/no, true/false, on/off from the environment."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("use true or false")


def _integer(raw: Any) -> int:
    """An integer; a float is accepted only when whole and finite (``1e9``), never a bool."""
    if isinstance(raw, bool):
        raise ValueError("an integer is required, not true/false")
    if isinstance(raw, int):
        return raw
    try:
        if isinstance(raw, float):
            raise ValueError  # checked below as a float
        return int(raw)
    except ValueError:
        value = float(raw)  # "1e9" from the environment, 1e9 from TOML; raises for words
    except TypeError:
        raise ValueError("an integer is required") from None
    if not math.isfinite(value) or value != int(value):
        raise ValueError("a whole, finite number is required")
    return int(value)


def _checked(name: str, value: float) -> Any:
    """``value`` if finite and within the setting's range, else ValueError saying why.

    Example:
    >>> _checked("scan_bytes_per_s", 1e8)
    100000000.0
    >>> _checked("scan_bytes_per_s", 0.0)
    Traceback (most recent call last):
    ...
    ValueError: must be greater than 0
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    low = _LOWER_BOUNDS.get(name)
    if low is not None and (value < low[0] or (value == low[0] and not low[1])):
        raise ValueError(f"must be {'at least' if low[1] else 'greater than'} {low[0]:g}"
                         f"{_BOUND_REASONS.get(name, '')}")
    high = _UPPER_BOUNDS.get(name)
    if high is not None and value > high:
        raise ValueError(f"must be at most {high}")
    return value


def _from_mapping(values: Mapping[str, Any], source: str) -> dict[str, Any]:
    known = {f.name: f.type for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, raw in values.items():
        name = key.replace("-", "_").lower()
        if name == "approvers":  # an old workspace's file: say how to migrate, go on
            warnings.warn(f"{source}: `approvers = [...]` is ignored: {_NO_MORE_APPROVERS}",
                          SettingWarning, stacklevel=2)
            continue
        if name not in known:
            raise ConfigError(f"{source}: unknown setting {key!r}")
        out[name] = _coerce(name, known[name], raw, source)
    return out


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    picked = {k[len(ENV_PREFIX):]: v for k, v in environ.items()
              if k.startswith(ENV_PREFIX) and k[len(ENV_PREFIX):] not in NOT_SETTINGS}
    if "APPROVERS" in picked:
        raise ConfigError(f"environment: {ENV_PREFIX}APPROVERS: {_NO_MORE_APPROVERS}")
    return _from_mapping({k: v for k, v in picked.items() if v != ""}, "environment")


def _from_file(home: Path) -> dict[str, Any]:
    if home.exists() and not home.is_dir():
        raise ConfigError(f"--home {home} is a file, not a workspace directory")
    path = home / CONFIG_FILE_NAME
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):  # allow [spark] master = ... style sections
            for sub, v in value.items():
                flat[f"{key}_{sub}"] = v
        else:
            flat[key] = value
    flat.pop("home", None)
    return _from_mapping(flat, str(path))


def _from_calibration(home: Path) -> dict[str, Any]:
    """The rates and layout terms ``layout-advisor calibrate`` stored (its ``rates`` and
    ``terms`` objects), if any; a file from before the terms existed has only rates."""
    path = home / CALIBRATION_FILE_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        measured = {**(data.get("rates") or {}), **(data.get("terms") or {})}
    except (ValueError, AttributeError, TypeError) as exc:
        raise ConfigError(f"{path}: not a calibration file ({exc}); run "
                          "`layout-advisor calibrate` again") from None
    return _from_mapping(measured, str(path))


def load_settings(flags: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve settings with precedence defaults < file < environment < flags.

    ``flags`` holds only the options the user actually gave (``None`` values are ignored).
    """
    environ = os.environ if environ is None else environ
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    env = _from_env(environ)
    home = Path(flags.get("home") or env.get("home") or DEFAULT_HOME).expanduser()
    merged: dict[str, Any] = {}
    merged.update(_from_calibration(home))
    merged.update(_from_file(home))
    merged.update(env)
    merged.update(_from_mapping(flags, "command line"))
    merged["home"] = home
    settings = Settings(**merged)
    if settings.target_rows <= 0 and settings.target_mb <= 0:
        raise ConfigError("target_rows or target_mb must be positive")
    return settings


def replace(settings: Settings, **changes: Any) -> Settings:
    """A copy of ``settings`` with some fields changed (settings stay frozen)."""
    return dataclasses.replace(settings, **changes)
