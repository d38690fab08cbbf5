"""Merge-on-read deletes on Iceberg data files: which files have delete files attached.

A row-level delete in merge-on-read mode leaves the data file alone and writes a delete
file: *position* deletes (file path + row position) or *equality* deletes (rows matching
column values). A reader applies them at scan time. Rewriting such a data file from its
Parquet rows alone would bring the deleted rows back, so the advisor refuses those files
(the issue allows "refuse them in planning with a reason shown in the plan, unless you
apply the deletes correctly"): planning leaves them out with the reason
(:func:`engine.table.formats.partitioning.prepare_groups`), and the commit refuses any that
still reach it, in one line naming the file and its delete files.

Which delete files apply to a data file follows the Iceberg spec's scan planning:
position deletes through pyiceberg's own :class:`~pyiceberg.table.delete_file_index.DeleteFileIndex`
(same partition and data sequence number <= the delete's, or the delete names the file),
equality deletes when their sequence number is greater than the data file's and they are
global (unpartitioned spec) or in the same partition.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from pyiceberg.manifest import DataFileContent, ManifestEntry
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.table.delete_file_index import DeleteFileIndex


def attached(data: Sequence[ManifestEntry], deletes: Sequence[ManifestEntry],
             specs: Mapping[int, PartitionSpec]) -> dict[str, tuple[int, int]]:
    """``{data file path: (position delete files, equality delete files)}`` for the data
    files that have any attached (the others are left out)."""
    if not deletes:
        return {}
    index = DeleteFileIndex()
    equality: list[ManifestEntry] = []
    for entry in deletes:
        content = entry.data_file.content
        if content == DataFileContent.POSITION_DELETES:
            index.add_delete_file(entry, partition_key=entry.data_file.partition)
        elif content == DataFileContent.EQUALITY_DELETES:
            equality.append(entry)
    out: dict[str, tuple[int, int]] = {}
    for entry in data:
        f = entry.data_file
        seq = int(entry.sequence_number or 0)
        positions = len(index.for_data_file(seq, f, partition_key=f.partition))
        equalities = sum(1 for d in equality if int(d.sequence_number or 0) > seq and (
            not specs[d.data_file.spec_id].fields
            or (d.data_file.spec_id == f.spec_id and d.data_file.partition == f.partition)))
        if positions or equalities:
            out[f.file_path] = (positions, equalities)
    return out


def reason(counts: tuple[int, int]) -> str:
    """Why a file is not rewritten, as the plan shows it.

    >>> reason((3, 0)), reason((1, 2))
    ('has 3 position delete files', 'has 1 position delete file and 2 equality delete files')
    """
    parts = [f"{n} {kind} delete file{'s' if n != 1 else ''}"
             for n, kind in zip(counts, ("position", "equality")) if n]
    return "has " + " and ".join(parts)
