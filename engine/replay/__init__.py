"""Real replay: a generated scenario's batches, queries and policy decisions run on real
Parquet files (Spark ingests and rewrites, DuckDB runs the queries), measured beside the
simulator's prices (:mod:`engine.replay.runner`; ``bench/replay/README.md``)."""
