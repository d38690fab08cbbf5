"""The committed sample demo with a stored quiet-machine calibration, built without Spark
(the Arrow writer): the workspace on which a calibrated WAIR declines."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.cli.demo import build_demo
from engine.core.config import Settings, load_settings

REPO = Path(__file__).resolve().parents[2]
CALIBRATION = REPO / "tests" / "fixtures" / "calibration_demo.json"


def calibrated_demo(home: Path) -> Settings:
    """Build table ``lineitem`` and its log from ``sample_data/`` in ``home`` (created) with
    ``tests/fixtures/calibration_demo.json`` (a calibration measured on a quiet machine) as
    the workspace's calibration."""
    home.mkdir(parents=True)
    shutil.copy(CALIBRATION, home / "calibration.json")
    settings = load_settings({"home": str(home)}, environ={})
    build_demo(settings, None, "iceberg", writer="arrow")
    return settings
