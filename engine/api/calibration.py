"""Calibration: measure the cost model's rates on this Spark, or show the ones in effect
(:mod:`engine.plans.calibration`)."""

from __future__ import annotations

from engine.plans import calibration
from engine.plans.calibration import missing_terms
from engine.policy.pricing import FITS as PRICE_FITS
from engine.workspace import on_workspace

__all__ = ["calibrate", "calibrate_queries", "calibrate_rewrite", "missing_terms",
           "show_calibration", "PRICE_FITS"]

calibrate = on_workspace(calibration.calibrate)
calibrate_queries = on_workspace(calibration.calibrate_queries)
calibrate_rewrite = on_workspace(calibration.calibrate_rewrite)
show_calibration = on_workspace(calibration.show_calibration)
