"""Iceberg ``DataFile`` entries for a rewrite's new files, from statistics already read.

The executor reads every new file's Parquet footer once (row count, size, per-column
min/max/null count/compressed bytes: :class:`~engine.table.model.Partition`). pyiceberg's
:func:`~pyiceberg.io.pyarrow.parquet_file_to_data_file` would open and parse the same footer
again, a large part of a commit's time (bench/formats/README.md). This module
builds the same entry from the ``Partition``: the table's metrics modes
(``write.metadata.metrics.*``: none, counts, truncate(N), full) through pyiceberg's own
statistics plan and :class:`~pyiceberg.io.pyarrow.StatsAggregator` (so bounds are truncated
and serialized exactly as pyiceberg does), and the partition tuple through pyiceberg's own
:meth:`~pyiceberg.io.fileformat.DataFileStatistics.partition` (a file whose rows span two
partition values is refused, as ``add_files`` refuses it).

``split_offsets`` (where each row group starts, so readers can split the file at row
groups) come from the same footers (:func:`split_offsets`: the executor's footer read keeps
the row groups, :func:`engine.table.footers.row_groups_for`), by the rule pyiceberg and
parquet-mr use. Left out on purpose: NaN counts (the footer has none; pyiceberg leaves
them empty too).
Whenever a file's statistics cannot reproduce pyiceberg's entry (a nested or unsupported
column with bounds wanted, a partition source column with unknown bounds) the footer is
read the pyiceberg way instead (:func:`can_build` says which).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Mapping, Sequence

from pyiceberg.io.fileformat import DataFileStatistics
from pyiceberg.io.pyarrow import (MetricModeTypes, MetricsMode, StatisticsCollector,
                                  StatsAggregator, _primitive_to_physical,
                                  compute_statistics_plan)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.table.metadata import TableMetadata

from engine.table import footers
from engine.table.model import ColumnStats, Partition, TableSchema

_NONE = MetricsMode(MetricModeTypes.NONE)
_COUNTS = MetricsMode(MetricModeTypes.COUNTS)
#: logical types whose footer values pyiceberg's aggregators take as they are
_SUPPORTED = ("bool", "int", "float", "decimal", "date", "timestamp", "string")


def statistics_plan(metadata: TableMetadata) -> dict[int, StatisticsCollector]:
    """pyiceberg's per-field metrics plan of the table (modes from its properties)."""
    return compute_statistics_plan(metadata.schema(), metadata.properties)


def can_build(partition: Partition, metadata: TableMetadata,
              plan: Mapping[int, StatisticsCollector], ltypes: Mapping[str, str]) -> bool:
    """True when :func:`data_file` reproduces pyiceberg's footer-derived entry exactly."""
    for collector in plan.values():
        name = collector.column_name
        if name not in partition.columns:
            return False  # a nested leaf: the Partition keeps top-level columns only
        if collector.mode not in (_NONE, _COUNTS) and ltypes.get(name) not in _SUPPORTED:
            return False
    schema = metadata.schema()
    for field in metadata.spec().fields:
        name = schema.find_column_name(field.source_id)
        stats = partition.columns.get(name) if name else None
        if stats is None:
            return False
        all_null = stats.null_count is not None and stats.null_count >= partition.rows
        if (stats.min is None or stats.max is None) and not all_null:
            return False
    return True


def _aggregator(collector: StatisticsCollector, stats: ColumnStats,
                length: int | None) -> StatsAggregator | None:
    if stats.min is None or stats.max is None:
        return None
    agg = StatsAggregator(collector.iceberg_type, _primitive_to_physical(collector.iceberg_type),
                          length)
    agg.update_min(_value(stats.min))
    agg.update_max(_value(stats.max))
    return agg


def _value(value: Any) -> Any:
    """A footer value as pyarrow's Parquet statistics give it to pyiceberg (timestamps
    read as naive UTC are made aware again: pyiceberg counts both from the epoch in UTC)."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value


def file_statistics(partition: Partition, plan: Mapping[int, StatisticsCollector],
                    ) -> DataFileStatistics:
    """The file's Iceberg statistics under the table's metrics modes."""
    sizes: dict[int, int] = {}
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    aggs: dict[int, StatsAggregator] = {}
    for fid, collector in plan.items():
        stats = partition.columns[collector.column_name]
        sizes[fid] = int(stats.compressed_bytes)
        if collector.mode == _NONE:
            continue
        values[fid] = partition.rows  # a flat column: one value (or null) per row
        if stats.null_count is not None:
            nulls[fid] = int(stats.null_count)
        if collector.mode == _COUNTS:
            continue
        agg = _aggregator(collector, stats, collector.mode.length)
        if agg is not None:
            aggs[fid] = agg
    return DataFileStatistics(record_count=partition.rows, column_sizes=sizes,
                              value_counts=values, null_value_counts=nulls, nan_value_counts={},
                              column_aggregates=aggs, split_offsets=[])


def partition_record(partition: Partition, metadata: TableMetadata,
                     plan: Mapping[int, StatisticsCollector]) -> Any:
    """The file's partition tuple by pyiceberg's own rule (full, untruncated bounds of the
    source columns; ValueError when the file spans two partition values)."""
    spec = metadata.spec()
    full: dict[int, StatsAggregator] = {}
    for field in spec.fields:
        collector = plan[field.source_id]
        agg = _aggregator(collector, partition.columns[collector.column_name], None)
        if agg is not None:
            full[field.source_id] = agg
    stats = DataFileStatistics(record_count=partition.rows, column_sizes={}, value_counts={},
                               null_value_counts={}, nan_value_counts={},
                               column_aggregates=full, split_offsets=[])
    return stats.partition(spec, metadata.schema())


def current_partition(partition: Partition, metadata: TableMetadata,
                      plan: Mapping[int, StatisticsCollector]) -> Any:
    """The partition tuple under the table's current spec of a file written under an older
    one (spec evolution), from its statistics: the value every new file written from its
    rows would carry (:func:`partition_record`, pyiceberg's rule). ValueError when the
    statistics cannot show one value: rows spanning two values, a source column's bounds
    unknown (or truncated strings), nulls next to values (null is a partition value of its
    own)."""
    schema = metadata.schema()
    for field in metadata.spec().fields:
        name = schema.find_column_name(field.source_id)
        stats = partition.columns.get(name) if name else None
        nulls = stats.null_count if stats is not None else None
        if stats is None or nulls is None:
            raise ValueError(f"no statistics of {name}")
        if 0 < nulls < partition.rows:
            raise ValueError(f"{name} holds nulls next to values")
        if nulls < partition.rows and (stats.min is None or stats.max is None):
            raise ValueError(f"the bounds of {name} are unknown")
    return partition_record(partition, metadata, plan)


def split_offsets(added: Sequence[Partition], schema: TableSchema) -> dict[str, list[int]]:
    """Each new file's row-group start offsets, ascending (Iceberg ``split_offsets``),
    from the row groups its footer read left (read again only when forgotten); a file
    with an unknown offset gets none."""
    groups = footers.row_groups_for(added, schema)
    return {path: sorted(int(rg.offset) for rg in rgs) for path, rgs in groups.items()
            if rgs and all(rg.offset is not None for rg in rgs)}


def data_file(path: str, partition: Partition, metadata: TableMetadata,
              plan: Mapping[int, StatisticsCollector],
              offsets: Sequence[int] | None = None) -> DataFile:
    """The Iceberg entry of one new data file (``path``: its URI in the table;
    ``offsets``: its :func:`split_offsets`, None to leave them out)."""
    stats = file_statistics(partition, plan)
    serialized = stats.to_serialized_dict()
    serialized["split_offsets"] = list(offsets) if offsets else None
    return DataFile.from_args(
        content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
        partition=partition_record(partition, metadata, plan),
        file_size_in_bytes=partition.bytes, sort_order_id=None,
        spec_id=metadata.default_spec_id, equality_ids=None, key_metadata=None, **serialized)
