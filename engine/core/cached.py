"""Reading a cache file that may be missing or damaged: the caller recomputes either way.

The stored summaries (``engine.summaries.store``) and the zonemap cache
(``engine.table.zonemap_cache``) both keep derived data beside the workspace, written
atomically but still exposed to a disk that fills, a user who deletes or edits a file, or
an older version's layout. A missing file is the normal first visit and says nothing; an
unreadable one is worth one warning naming it (the speed-up is lost until it is written
again), never a failure: the data can always be computed from the table.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, TypeVar

__all__ = ["read_or_none"]

T = TypeVar("T")

#: what a damaged file raises from the readers that use this: the OS, a bad number or
#: header (ValueError), a missing entry (KeyError), a truncated file (EOFError), the wrong
#: kind of value (TypeError)
UNREADABLE: tuple[type[Exception], ...] = (OSError, ValueError, KeyError, EOFError, TypeError)


def read_or_none(read: Callable[[], T | None], path: str | Path, what: str, logger: logging.Logger,
                 errors: tuple[type[Exception], ...] = UNREADABLE, then: str = "recomputing") -> T | None:
    """``read()``'s value; None when the file is missing (no warning: nothing is stored
    yet) or unreadable: one of ``errors``, reported as one warning on ``logger`` naming
    ``what``, ``path``, the error and what the caller does ``then``. Any other exception
    is a bug and propagates. ``read`` may itself return None (a file of another version).

    Example:
    >>> import logging
    >>> log = logging.getLogger("doctest")
    >>> read_or_none(lambda: 42, "/x", "answer", log)
    42
    >>> read_or_none(lambda: open("/nonexistent/file"), "/nonexistent/file", "answer", log) is None
    True
    """
    try:
        return read()
    except FileNotFoundError:
        return None
    except errors as exc:
        logger.warning("%s %s unreadable (%s: %s); %s", what, path, type(exc).__name__, exc, then)
        return None
