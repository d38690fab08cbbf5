"""The committed sample demo with the round-8 quiet calibration, built without Spark (the
Arrow writer): the workspace on which a calibrated WAIR declines (issue 11 §3)."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.cli.demo import build_demo
from engine.core.config import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "bench" / "results" / "calibration_round8_quiet.json"


def calibrated_demo(home: Path) -> Settings:
    """Build table ``lineitem`` and its log from ``sample_data/`` in ``home`` (created) with
    ``bench/results/calibration_round8_quiet.json`` as the workspace's calibration."""
    home.mkdir(parents=True)
    shutil.copy(CALIBRATION, home / "calibration.json")
    settings = load_settings({"home": str(home)}, environ={})
    build_demo(settings, None, "iceberg", writer="arrow")
    return settings
