"""Metadata files an Iceberg table no longer (or never) references: what gc may delete there.

A commit killed half-way leaves manifests, a manifest list or a metadata JSON that no
published version of the table names; pyiceberg 0.12 has no ``remove_orphan_files``.
Referenced are: the current metadata file and those of the metadata log, every snapshot's
manifest list and the manifests in it, and the statistics files. Everything else under
``<table location>/metadata`` is an orphan.

Only called by the gc of an Iceberg table
(:func:`engine.table.formats.gc.collect_foreign`, through
:meth:`~engine.table.formats.iceberg.IcebergFormat.metadata_orphans`) when no live lease
exists on the table (no run of ours is committing) and only for files older than the
retention: a writer outside the advisor that is committing right now is protected by the retention alone, as
with Iceberg's own ``remove_orphan_files`` (hence its minimum of 7 days without
``--force-retention``).
"""

from __future__ import annotations

from typing import Any

from engine.table import fs


def referenced_metadata(tbl: Any) -> set[str]:
    """Normalized paths of every metadata file a version of pyiceberg table ``tbl`` names."""
    meta = tbl.metadata
    named = {tbl.metadata_location, *(e.metadata_file for e in meta.metadata_log)}
    for snap in meta.snapshots:
        named.add(snap.manifest_list)
        named.update(m.manifest_path for m in snap.manifests(tbl.io))
    named.update(s.statistics_path for s in meta.statistics)
    named.update(s.statistics_path for s in meta.partition_statistics)
    return {fs.normalize(p) for p in named if p}


def metadata_orphans(tbl: Any, cutoff_s: float) -> list[str]:
    """Files under the table's metadata folder that no version names, older than
    ``cutoff_s`` (seconds since the epoch)."""
    folder = f"{tbl.metadata.location.rstrip('/')}/metadata"
    if not fs.exists(folder):
        return []
    named = referenced_metadata(tbl)
    return [p for p in fs.list_files(folder)
            if fs.normalize(p) not in named and fs.mtime(p) < cutoff_s]
