"""When a simulated rewrite pays the Spark session's cold start.

The calibration measures ``cold_start_s`` (:func:`engine.spark.calibrate.cold_start`): the
first rewrite job of a fresh Spark session less the warm median, the JVM's class loading and code generation that a session pays once.
Plans show both figures ("x s in a warm session, y s in a fresh one",
:func:`engine.plans.cost_check.predicted_seconds`); a simulator that priced every rewrite warm
would under-price the first plan of a replay (bench/replay/README.md). :class:`ColdStart` charges it by
one of three modes:

* ``"first"`` (the default): one long-lived session. The first charged rewrite of a
  policy's run pays ``cold_start_s``, later ones run warm. This is how the real replay
  (one ``SparkSession`` per replay process, reclustering every plan of its policy in it)
  and the dashboard (one session for the server's life) run, so it is the setting whose
  simulated totals are compared with measured ones (bench/replay/README.md).
* ``"every"``: each plan in a fresh session, as ``layout-advisor plan run`` from the CLI
  runs one plan per process: every charged rewrite pays it.
* ``"none"``: every rewrite warm, the paper's model
  (WAIR section 4 prices a rewrite by its bytes alone; its prototype runs in DuckDB, which
  has no session to start), kept selectable.

The cold start is a bill, not a price the policies weigh: proposals are priced warm (the
plans' "warm" figure), a rewrite's feedback cost stays the warm one, so the mode moves the
reclustering seconds (and money) of a run by ``cold_start_s`` times the charged
rewrites it names and changes no decision. Uncharged rewrites (the oracle's own sorting)
pay nothing. The presets' DuckDB economics carry no cold start
(:func:`engine.sim.economics.calibrated_settings` sets it to 0).
"""

from __future__ import annotations

from engine.core.errors import InvalidParameterError

#: the modes, in the order the CLI and the dashboard offer them
COLD_START_MODES = ("first", "every", "none")
#: the default: one long-lived session, as the real replay and the dashboard run
DEFAULT_COLD_START = "first"


def check_cold_start(mode: str) -> str:
    """``mode`` if it is one of :data:`COLD_START_MODES`, else the one-line error."""
    if mode not in COLD_START_MODES:
        raise InvalidParameterError(f"cold_start must be one of {', '.join(COLD_START_MODES)}, got {mode!r}")
    return mode


class ColdStart:
    """The cold start one simulated run pays, rewrite by rewrite.

    >>> c = ColdStart("first", 11.3)
    >>> [c.charge(), c.charge(), c.charge()]
    [11.3, 0.0, 0.0]
    >>> c = ColdStart("every", 2.5)
    >>> [c.charge(), c.charge()]
    [2.5, 2.5]
    >>> ColdStart("none", 11.3).charge()
    0.0
    """

    def __init__(self, mode: str, seconds: float) -> None:
        self.mode = check_cold_start(mode)
        self.seconds = max(0.0, float(seconds or 0.0))
        self.warm = False  # a session has run a rewrite already

    def charge(self) -> float:
        """Seconds of cold start the next charged rewrite pays (module docstring)."""
        if self.mode == "none" or (self.mode == "first" and self.warm):
            return 0.0
        self.warm = True
        return self.seconds
