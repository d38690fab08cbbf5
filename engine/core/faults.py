"""Injected faults, for tests only: crash points (``LA_CRASH_AT``) and verification faults
(``LA_FAULT``). The one place every test hook of the engine lives.

Why this exists: the promise "a crash at any point leaves the table at its previous
snapshot" (WAIR section 5.1's atomic swap) can only be tested by
killing a real run at each step that writes something, and the promise "a rewrite never
loses a row" only by making one lose a row and watching the verification catch it.

**Crashes** (:func:`crash_point`, :func:`crash_when`). A timer-based kill lands somewhere
random; a crash point lands exactly on the step a test names, with the same signal an
out-of-memory killer or a ``kill -9`` would send (no ``finally`` block, no ``atexit``
hook, no flush runs). The writers call ``crash_point("name")`` at each step (one line each,
a no-op costing one dictionary lookup unless :data:`CRASH_ENV` names that point). Every
crash is a SIGKILL through this module: there is no other way a test makes a writer die.

Points (:data:`POINTS`, in the order a native run reaches them):

==================  ===================================================================
``after_read``      executor: the inputs' footers are read and checked, the ordering
                    fitted on its sample (a Spark job for Hilbert, Z-order, Qd-tree,
                    PAW), the output folder leased; nothing written
``mid_write``       executor: Spark's write job has written at least one file and is still
                    running (:func:`crash_when` polls the output folder while the job runs;
                    if the job ends between two polls, the kill lands as it returns, before
                    its files are moved into place; stderr says which)
``after_write``     executor: every rewritten file is written, nothing verified yet
``after_verify``    executor: row counts and checksums verified, nothing committed
``mid_commit``      format: the new snapshot's metadata (native manifest and row groups;
                    Iceberg manifests and manifest list) is written, not published
``before_pointer``  native: the snapshot header is written, the ``current`` pointer not
``published``       format: the catalog update, log entry or pointer rename has returned;
                    the executor has not yet marked the batch committed (SIGINT and SIGTERM
                    are deferred here: :mod:`engine.core.signals`)
``after_commit``    executor: the snapshot is published and marked committed, not yet
                    verified; the control store not updated
==================  ===================================================================

**Pauses** (:data:`PAUSE_ENV`): every crash point is also a place to stop and wait, so that a
test can send any signal (SIGINT, SIGTERM, SIGKILL; to the process or its group) at exactly
that step: the process writes ``paused at NAME`` on stderr and waits for one line on its
standard input (or its end), then goes on. A signal whose handler raises (SIGINT's
``KeyboardInterrupt``) ends the wait with that exception, as it would end any other step.

**Verification faults** (:func:`injected`; :data:`FAULT_ENV`): faults that do not kill,
so that the checks before a commit can be seen to fail and clean up:

=================  ====================================================================
``drop-row``       the rewrite loses the row(s) equal to one input row on the way to the
                   writer; the row count and checksum verification must refuse the commit
``swap-rows``      the rewrite writes one row of the job's first group into the second
                   group's files and one of the second into the first's: rows per group
                   and the plan's checksum are unchanged; the tagged checksum must refuse
``fail-group:N``   the executor raises after group N (0-based) is verified; the groups
                   written before it must be removed too
``hold-before-     the executor waits at its last cancel check, before the commit, for a
commit``           cancel request (at most ``progress.HOLD_LIMIT_S``), so a test cancels
                   a written and verified run without depending on timing
=================  ====================================================================

Never set :data:`CRASH_ENV` or :data:`FAULT_ENV` outside a test: they are not settings and
no command documents them (not ``LAYOUT_ADVISOR_*``: that prefix is the settings'
namespace, where an unknown name is a configuration error).
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

#: the environment variable naming the one point at which to die
CRASH_ENV = "LA_CRASH_AT"
#: every point a writer declares (a misspelt name in a test must not silently pass)
POINTS = ("after_read", "mid_write", "after_write", "after_verify", "mid_commit",
          "before_pointer", "published", "after_commit")
#: the environment variable naming the one point at which to pause (see "Pauses")
PAUSE_ENV = "LA_PAUSE_AT"
#: the environment variable naming one verification fault (``drop-row``, ``fail-group:N``)
FAULT_ENV = "LA_FAULT"
#: the verification faults (``fail-group`` takes ``:N``)
FAULTS = ("drop-row", "swap-rows", "fail-group", "hold-before-commit")
#: seconds between two looks of :func:`crash_when`
POLL_S = 0.02


def _check(name: str) -> None:
    if name not in POINTS:
        raise ValueError(f"unknown crash point {name!r}; one of {', '.join(POINTS)}")


def armed(name: str) -> bool:
    """Is :data:`CRASH_ENV` set to ``name``? (validates the name)

    >>> armed("after_read")
    False
    """
    _check(name)
    return os.environ.get(CRASH_ENV, "").strip() == name


def _die(name: str, when: str = "") -> None:
    """Say where on stderr (unbuffered: a test can tell the steps apart), then SIGKILL."""
    os.write(2, f"crash point {name}{when}\n".encode())
    os.kill(os.getpid(), signal.SIGKILL)


def _pause(name: str) -> None:
    """Say ``paused at NAME`` on stderr, then wait for a line (or the end) on stdin."""
    os.write(2, f"paused at {name}\n".encode())
    while True:
        chunk = os.read(0, 1)
        if not chunk or chunk == b"\n":
            return


def crash_point(name: str) -> None:
    """SIGKILL the current process if :data:`CRASH_ENV` equals ``name``; pause there
    (see "Pauses") if :data:`PAUSE_ENV` does; else return.

    Example (the variable is unset, so nothing happens):
    >>> crash_point("after_write")
    >>> crash_point("no_such_point")
    Traceback (most recent call last):
    ...
    ValueError: unknown crash point 'no_such_point'; one of after_read, mid_write, after_write, after_verify, mid_commit, before_pointer, published, after_commit
    """
    if armed(name):
        _die(name)
    if os.environ.get(PAUSE_ENV, "").strip() == name:
        _pause(name)


@contextmanager
def crash_when(name: str, ready: Callable[[], bool]) -> Iterator[None]:
    """While the block runs, SIGKILL the process as soon as ``ready()`` holds (looked at
    every :data:`POLL_S` seconds from a daemon thread), if :data:`CRASH_ENV` equals
    ``name``; if the block ends first, at its end. Unarmed, it starts no thread.

    For a step that happens inside a job the process only waits on (Spark's write), where
    no line of ours runs in the middle.

    >>> with crash_when("mid_write", lambda: True):
    ...     pass
    """
    if not armed(name):
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(POLL_S):
            try:
                if ready():
                    _die(name, " (during the step)")
            except Exception:  # noqa: BLE001 - a failed look is retried at the next poll
                continue

    thread = threading.Thread(target=watch, name=f"la-crash-{name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
    _die(name, " (as the step ended)")


def injected(kind: str, index: int | None = None) -> bool:
    """Does :data:`FAULT_ENV` ask for the verification fault ``kind`` (at group ``index``
    for ``fail-group``)?

    >>> injected("drop-row"), injected("fail-group", 1)
    (False, False)
    >>> injected("lose-everything")
    Traceback (most recent call last):
    ...
    ValueError: unknown fault 'lose-everything'; one of drop-row, swap-rows, fail-group, hold-before-commit
    """
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
    value = os.environ.get(FAULT_ENV, "").strip()
    return value == (kind if index is None else f"{kind}:{index}")
