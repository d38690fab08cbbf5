"""A function called every few seconds from a daemon thread while a ``with`` block runs.

Used where the main thread waits on something long (a Spark job): the write progress
(:class:`engine.spark.progress.WriteWatcher`), the watch for a cancel request
(:class:`engine.spark.progress.CancelWatcher`) and a running plan's heartbeat
(:class:`engine.plans.heartbeat.Heartbeat`). A failing call is skipped and tried again at
the next tick: both are best effort, never a reason to fail the work they watch.
"""

from __future__ import annotations

import threading
from typing import Any, Callable


class Periodic:
    """Call ``tick()`` every ``interval_s`` seconds while the ``with`` block runs.

    >>> import time
    >>> calls = []
    >>> with Periodic(lambda: calls.append(1), 0.01, "example"):
    ...     time.sleep(0.2)
    >>> len(calls) > 0
    True
    """

    def __init__(self, tick: Callable[[], None], interval_s: float, name: str) -> None:
        self.tick, self.interval_s = tick, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> "Periodic":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - best effort: tried again at the next tick
                continue
