"""Policies by name: ``make_policy("wair" | "dd" | "dd-ep" | "greedy", params)``.

The CLI, the API and the dashboard give parameters as a flat dict (``alpha``, ``window``,
``key``, ...). Each policy accepts only its own; an unknown one is refused with the list of
accepted names, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Mapping

from engine.core.errors import InvalidParameterError
from engine.policy.base import Policy

#: name -> (module, class); imported lazily so one policy's import cost is paid only on use
POLICIES: dict[str, tuple[str, str]] = {
    "wair": ("engine.policy.wair", "WairPolicy"),
    "dd": ("engine.policy.dd", "DDPolicy"),
    "dd-ep": ("engine.policy.dd_ep", "DDEPPolicy"),
    "greedy": ("engine.policy.boundary", "GreedyBoundaryPolicy"),  # WAIR's Algorithm 1
}


def policy_names() -> list[str]:
    return list(POLICIES)


def _policy_class(name: str) -> type:
    key = (name or "").strip().lower()
    if key not in POLICIES:
        raise InvalidParameterError(
            f"unknown policy {name!r}; policies are: {', '.join(POLICIES)}")
    module, cls = POLICIES[key]
    return getattr(importlib.import_module(module), cls)


def accepted_params(name: str) -> list[str]:
    """Parameter names the policy ``name`` accepts."""
    cls = _policy_class(name)
    names = [p.name for p in inspect.signature(cls).parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "params"]
    if name.lower() == "wair":  # WairPolicy(params: WairParams | None = None, **overrides)
        params_cls = getattr(importlib.import_module("engine.policy.wair"), "WairParams", None)
        if params_cls is not None and dataclasses.is_dataclass(params_cls):
            names += [f.name for f in dataclasses.fields(params_cls)]
    return sorted(set(names))


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """Build the policy ``name`` with ``params`` (None values are dropped: defaults apply)."""
    cls = _policy_class(name)
    given = {k.replace("-", "_"): v for k, v in (params or {}).items() if v is not None}
    known = accepted_params(name)
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidParameterError(
            f"policy {name} does not take {', '.join(unknown)}; it takes: {', '.join(known)}")
    try:
        return cls(**given)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(f"policy {name}: {exc}") from None
