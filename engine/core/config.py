"""Settings: defaults < calibrated rates < ``layout-advisor.toml`` in the workspace <
``LAYOUT_ADVISOR_*`` env < CLI flags.

Settings are read once and frozen. Each key's default sits beside it in :class:`Settings`.
Environment variables are the upper-cased field names with the ``LAYOUT_ADVISOR_`` prefix,
e.g. ``LAYOUT_ADVISOR_SPARK_MASTER`` or ``LAYOUT_ADVISOR_APPROVERS=alice,bob``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from engine.core.errors import ConfigError

CONFIG_FILE_NAME = "layout-advisor.toml"
#: rates measured by ``layout-advisor calibrate`` (engine.spark.calibrate), in the workspace
CALIBRATION_FILE_NAME = "calibration.json"
ENV_PREFIX = "LAYOUT_ADVISOR_"
DEFAULT_HOME = ".layout-advisor"


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
    # approval gate
    approvers: tuple[str, ...] = ()
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
    # executor: commit every N groups (Iceberg's partial progress); 0 = one commit per plan
    partial_progress_groups: int = 0
    # patent EP-file grouping
    ep_file_partitions: int = 8
    # dashboard
    ui_port: int = 8501

    @property
    def tables_dir(self) -> Path:
        return self.home / "tables"

    @property
    def control_db(self) -> Path:
        return self.home / "control.db"


def _coerce(name: str, kind: Any, raw: Any) -> Any:
    """Convert a raw value from TOML or the environment into the field's type."""
    try:
        if kind in (Path, "Path"):
            return Path(raw).expanduser()
        if kind in (int, "int"):
            return int(raw)
        if kind in (float, "float"):
            return float(raw)
        if kind in (str, "str"):
            return str(raw)
        if "tuple" in str(kind):
            if isinstance(raw, str):
                return tuple(p.strip() for p in raw.split(",") if p.strip())
            return tuple(str(p) for p in raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r}: cannot use {raw!r} ({exc})") from None
    return raw


def _from_mapping(values: Mapping[str, Any], source: str) -> dict[str, Any]:
    known = {f.name: f.type for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, raw in values.items():
        name = key.replace("-", "_").lower()
        if name not in known:
            raise ConfigError(f"{source}: unknown setting {key!r}")
        out[name] = _coerce(name, known[name], raw)
    return out


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    picked = {k[len(ENV_PREFIX):]: v for k, v in environ.items()
              if k.startswith(ENV_PREFIX) and v != ""}
    return _from_mapping(picked, "environment")


def _from_file(home: Path) -> dict[str, Any]:
    path = home / CONFIG_FILE_NAME
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
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
    """The rates ``layout-advisor calibrate`` stored (its ``rates`` object), if any."""
    path = home / CALIBRATION_FILE_NAME
    if not path.is_file():
        return {}
    try:
        rates = json.loads(path.read_text()).get("rates") or {}
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a calibration file ({exc}); run "
                          "`layout-advisor calibrate` again") from None
    return _from_mapping(rates, str(path))


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
