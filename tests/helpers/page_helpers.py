"""The engine's server-side paging (``api.query_page``, ``api.partition_page``) read page by
page, as the dashboard's tables do."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def all_pages(fetch: Callable[[int, int], dict[str, Any]], size: int = 17) -> list[dict[str, Any]]:
    """``fetch(offset, size)`` from offset 0, page after page, up to the first empty page
    (included: the end must be an empty page, not an error)."""
    pages = [fetch(0, size)]
    while len(pages[-1]["index"]):
        pages.append(fetch(len(pages) * size, size))
    return pages


def joined(pages: list[dict[str, Any]]) -> list[int]:
    """The rows of every page, in page order."""
    return np.concatenate([np.asarray(p["index"], dtype=np.int64) for p in pages]).tolist()
