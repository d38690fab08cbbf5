"""The one façade the dashboard and the CLI call.

Each area lives in its own module (``tables``, ``workload``, ``analysis``, ``plans``,
``simulate``); this package re-exports their public functions so callers write
``from engine import api; api.analyze(settings, "lineitem")``.
"""

from __future__ import annotations

import importlib

_AREAS = ("tables", "workload", "analysis", "plans", "simulate")
__all__: list[str] = []

for _area in _AREAS:
    try:
        _module = importlib.import_module(f"engine.api.{_area}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"engine.api.{_area}":
            raise
        continue
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
