"""A uniform row sample of a table's files, encoded for PAW (PAW §VI builds on a sample).

PAW designs on a sample and then routes the full data (Table II: a 6M-row sample). Values
are encoded as in :mod:`engine.core.logical_types`; rows with a null in a design column are
left out of the sample (they still route at write time: to the right side / the IP).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table import fs


def read_sample(paths: Sequence[str], types: Mapping[str, str], columns: Sequence[str],
                max_rows: int, seed: int = 0) -> dict[str, np.ndarray]:
    """At most ``max_rows`` rows of ``columns`` drawn uniformly from the Parquet ``paths``."""
    if not paths:
        raise InvalidParameterError("the table has no files to sample")
    parts = []
    for path in paths:
        filesystem, local = fs.filesystem(str(path))
        parts.append(pq.read_table(local, columns=list(columns), filesystem=filesystem))
    table = pa.concat_tables(parts, promote_options="permissive")
    data = {c: logical_types.encode_arrow(types[c], table.column(c))[0] for c in columns}
    n = table.num_rows
    keep = np.ones(n, dtype=bool)
    for a in data.values():
        keep &= ~np.isnan(a)
    idx = np.flatnonzero(keep)
    if len(idx) > max_rows:
        idx = np.sort(np.random.default_rng(seed).choice(idx, size=int(max_rows), replace=False))
    return {c: a[idx] for c, a in data.items()}
