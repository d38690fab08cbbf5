"""The façade re-exports every public name of its area modules, and the CLI finds the app."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from engine import api
from engine.cli.ui import app_script, stop_ui

# by module path: an area module may share its name with a function it exports
AREAS = ("tables", "workload", "analysis", "plans", "whatif", "security", "calibration", "results")


@pytest.mark.parametrize("area", AREAS)
def test_api_reexports_each_area(area):
    module = importlib.import_module(f"engine.api.{area}")
    for name in module.__all__:
        assert getattr(api, name) is getattr(module, name), name
        assert name in api.__all__


def test_app_script_found_without_importing_app():
    code = ("import sys; from engine.cli.ui import app_script; p = app_script(); "
            "print(p.name, 'app' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["server.py", "False"]
    assert app_script().is_file()


def test_stop_ui_terminates_a_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop_ui(proc, timeout_s=10)
    assert proc.poll() is not None
