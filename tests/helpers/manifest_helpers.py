"""A table manifest of ``n`` partitions over 16 columns of every manifest type (ints,
floats, dates, strings, decimals, timestamps), for tests of the manifest and zonemaps and
for the planning benchmark's manifest load (``bench/planning/README.md``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

#: the manifest's column types, column i of type ``MIXED_TYPES[i]``
MIXED_TYPES = ("int", "float", "date", "string", "decimal", "timestamp", "int", "date") * 2


def mixed_manifest(n: int, seed: int = 0) -> tuple:
    """(schema, Arrow manifest table, its columns) of n partitions over 16 columns of
    every manifest type (ints, floats, dates, strings, decimals, timestamps)."""
    from engine.table import manifest
    from engine.table.model import TableSchema

    schema = TableSchema(tuple((f"col{i}", t) for i, t in enumerate(MIXED_TYPES)))
    rng = np.random.default_rng(seed)
    data: dict = {"path": pa.array([f"/data/part-{k:06d}.parquet" for k in range(n)]),
                  "rows": np.full(n, 100_000), "bytes": np.full(n, 32 << 20),
                  "created_seq": np.arange(n), "rg_file": pa.nulls(n, pa.string())}
    for i, t in enumerate(MIXED_TYPES):
        base = rng.integers(0, 10_000, n)
        for suffix, values in (("min", base), ("max", base + 30)):
            if t == "string":
                col = pa.array([f"k{v:06d}" for v in values])
            elif t == "decimal":
                col = pa.array([str(v / 100) for v in values])
            elif t == "date":
                col = pa.array(values.astype("datetime64[D]"))
            elif t == "timestamp":
                col = pa.array(values.astype("datetime64[s]")).cast(pa.timestamp("us"))
            elif t == "float":
                col = pa.array(values / 3.0)
            else:
                col = pa.array(values)
            data[f"c{i}_{suffix}"] = col
        data[f"c{i}_nulls"] = np.zeros(n, dtype=np.int64)
        data[f"c{i}_cbytes"] = np.full(n, 1 << 20)
    table = pa.Table.from_pydict(data, schema=manifest.manifest_schema(schema))
    return schema, table, {k: table.column(k) for k in table.column_names}
