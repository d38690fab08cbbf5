"""The docstring examples of the WAIR and cost-model modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["engine.policy.costmodel", "engine.policy.wair.savings", "engine.policy.wair.cut",
           "engine.policy.boundary"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
