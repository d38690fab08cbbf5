"""Values made JSON-plain: the one converter for plans, policy state and API answers.

JSON has no infinity and no numpy types. An unset limit (``cost_limit = inf``) is stored
as ``null`` and read back as infinity by whoever owns the value.

Example:
>>> import numpy as np
>>> plain_json({"a": np.arange(2), "b": (1.5, float("inf"))}, inf_as_none=True)
{'a': [0, 1], 'b': [1.5, None]}
>>> finite_or_none(float("inf")), finite_or_none(2.0)
(None, 2.0)
"""

from __future__ import annotations

import math
from typing import Any, Mapping


def finite_or_none(value: float) -> float | None:
    """``value``, or None for an infinity (an unset limit)."""
    return None if math.isinf(value) else value


def plain_json(value: Any, inf_as_none: bool = False) -> Any:
    """numpy scalars/arrays and tuples -> JSON-friendly Python values; with ``inf_as_none``
    infinities (an unset limit) become None, since JSON has no infinity."""
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): plain_json(v, inf_as_none) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v, inf_as_none) for v in value]
    if inf_as_none and isinstance(value, float) and math.isinf(value):
        return None
    return value
