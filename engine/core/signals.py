"""Deferring SIGINT and SIGTERM across a critical section (a commit and its bookkeeping).

A table format's commit is one atomic write (an Iceberg catalog update, a Delta log entry, the
native ``current`` pointer's rename), but the caller must learn that it happened before
anything may interrupt it: once the write returns, the new snapshot names the new files, and
a cleanup that believes the commit failed would delete them. A Ctrl-C (SIGINT: Python's
``KeyboardInterrupt``, or pyspark's handler, which cancels the Spark jobs and raises it) or a
SIGTERM landing between the write and the caller's note of it is exactly that race.

:func:`deferred_signals` closes it: inside the block the signals are only recorded; when
the block ends the previous handlers are restored and each recorded signal is raised again,
so the process stops (or the ``KeyboardInterrupt`` unwinds) *after* the caller has marked the
commit as done. SIGKILL cannot be deferred (nothing can); a commit is atomic, so a SIGKILL
leaves the table at the old or the new snapshot, and only unreferenced files behind.

Signals are delivered to the main thread only, and only the main thread may set handlers:
on any other thread (the dashboard's runs) the block changes nothing, and no signal can
interrupt that thread anyway.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

__all__ = ["DEFERRED", "deferred_signals"]

#: the signals a commit defers: an interactive Ctrl-C and a polite termination
DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def deferred_signals(signums: Sequence[int] = DEFERRED) -> Iterator[list[int]]:
    """Record ``signums`` while the block runs; afterwards restore the handlers and raise
    each recorded signal once (in arrival order). Yields the list of signals received so
    far. Does nothing off the main thread.

    Example (a SIGINT inside the block becomes a KeyboardInterrupt after it):
    >>> import os
    >>> done = []
    >>> try:
    ...     with deferred_signals() as got:
    ...         os.kill(os.getpid(), signal.SIGINT)
    ...         done.append(list(got))
    ... except KeyboardInterrupt:
    ...     done.append("interrupted after the block")
    >>> done == [[signal.SIGINT], "interrupted after the block"]
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    received: list[int] = []

    def record(signum: int, frame: object) -> None:
        received.append(signum)

    previous: dict[int, object] = {}
    try:
        for signum in signums:
            previous[signum] = signal.signal(signum, record)
        yield received
    finally:
        for signum, handler in previous.items():
            # a handler installed from C reads back as None: the default is the safe return
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # type: ignore[arg-type]
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)
