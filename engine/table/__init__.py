"""Managed and registered tables: snapshots of Parquet micro-partitions with zonemaps."""
