"""Deterministic crash points: SIGKILL this process at a named step, for crash-safety tests.

Why this exists: the promise "a crash at any point leaves the table at its previous
snapshot" (issue 10 section 5; WAIR section 5.1's atomic swap) can only be tested by
killing a real run at each step that writes something: after the rewrite's files are
written, after they are verified, while the snapshot's metadata is written, between the
metadata and the pointer that publishes it, after the pointer and before the control store
records the outcome. A timer-based kill lands somewhere random; :func:`crash_point` lands
exactly on the step a test names, with the same signal an out-of-memory killer or a
``kill -9`` would send (no ``finally`` block, no ``atexit`` hook, no flush runs).

The writers call ``crash_point("name")`` at each step (one line each, a no-op costing one
dictionary lookup unless the environment variable :data:`CRASH_ENV` names that point).
Never set :data:`CRASH_ENV` outside a test: it is not a setting and no command documents it.

Points (:data:`POINTS`, in the order a native run reaches them):

==================  ===================================================================
``after_write``     executor: every rewritten file is written, nothing verified yet
``after_verify``    executor: row counts and checksums verified, nothing committed
``mid_commit``      format: the new snapshot's metadata (native manifest and row groups;
                    Iceberg manifests and manifest list) is written, not published
``before_pointer``  native: the snapshot header is written, the ``current`` pointer not
``after_commit``    executor: the snapshot is published, the control store not updated
==================  ===================================================================
"""

from __future__ import annotations

import os
import signal

#: the environment variable naming the one point at which to die (not ``LAYOUT_ADVISOR_*``:
#: that prefix is the settings' namespace, where an unknown name is a configuration error)
CRASH_ENV = "LA_CRASH_AT"
#: every point a writer declares (a misspelt name in a test must not silently pass)
POINTS = ("after_write", "after_verify", "mid_commit", "before_pointer", "after_commit")


def crash_point(name: str) -> None:
    """SIGKILL the current process if :data:`CRASH_ENV` equals ``name``; else return.

    Example (the variable is unset, so nothing happens):
    >>> crash_point("after_write")
    >>> crash_point("no_such_point")
    Traceback (most recent call last):
    ...
    ValueError: unknown crash point 'no_such_point'; one of after_write, after_verify, mid_commit, before_pointer, after_commit
    """
    if name not in POINTS:
        raise ValueError(f"unknown crash point {name!r}; one of {', '.join(POINTS)}")
    if os.environ.get(CRASH_ENV, "").strip() == name:
        os.kill(os.getpid(), signal.SIGKILL)
