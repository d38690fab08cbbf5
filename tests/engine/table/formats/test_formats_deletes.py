"""Merge-on-read deletes on real tables: an Iceberg position delete file in a delete
manifest (applied by pyiceberg's own scan), a Delta deletion vector (read back by
delta-rs). Planning leaves such files out with the reason, the commit refuses them in one
line, the other files are rewritten and the deleted rows stay deleted."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestContent,
                                ManifestEntry, ManifestEntryStatus, ManifestWriterV2)
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record

from engine import api
from engine.cli import main
from engine.core.errors import DataFileError
from engine.plans import service
from engine.policy.base import CostEstimate, PlanGroup, Proposal
from engine.policy.registry import make_policy
from engine.table.footers import read_partitions
from engine.table.formats import iceberg
from engine.table.formats.partitioning import prepare_groups
from engine.table.store import TableStore
from plan_helpers import lineitem_arrow

IDENT = "ns.mor"
PATH_ID, POS_ID = 2147483546, 2147483545  # Iceberg's reserved field ids of delete files


class _DeleteManifestWriter(ManifestWriterV2):
    """pyiceberg 0.12 writes only data manifests; a delete manifest differs in content."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _AddDeleteFiles(_FastAppendFiles):
    """A snapshot that keeps every manifest and adds one delete manifest (what Spark's
    merge-on-read DELETE commits)."""

    delete_files: list[DataFile] = []

    def _manifests(self):
        kept = super()._manifests()
        meta = self._transaction.table_metadata
        writer = _DeleteManifestWriter(meta.spec(), meta.schema(), self.new_manifest_output(),
                                       self._snapshot_id, self._compression)
        with writer:
            for f in self.delete_files:
                writer.add(ManifestEntry.from_args(
                    status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                    sequence_number=None, file_sequence_number=None, data_file=f))
        return kept + [writer.to_manifest_file()]


def _delete_rows(catalog, data_path: str, positions: list[int], out: str) -> None:
    """Commit a position delete file removing ``positions`` of ``data_path``."""
    schema = pa.schema([
        pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(PATH_ID).encode()}),
        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(POS_ID).encode()})])
    pq.write_table(pa.table({"file_path": [data_path] * len(positions), "pos": positions},
                            schema=schema), out)
    tbl = catalog.load_table(IDENT)
    delete = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES, file_path=f"file://{out}",
        file_format=FileFormat.PARQUET, partition=Record(), record_count=len(positions),
        file_size_in_bytes=os.path.getsize(out), spec_id=tbl.spec().spec_id,
        lower_bounds={PATH_ID: data_path.encode()}, upper_bounds={PATH_ID: data_path.encode()})
    with tbl.transaction() as tx:
        producer = _AddDeleteFiles(operation=Operation.DELETE, transaction=tx, io=tbl.io)
        producer.delete_files = [delete]
        producer.commit()


def _digest(table: pa.Table) -> tuple[int, str]:
    rows = sorted(repr(r) for r in table.to_pylist())
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def test_files_with_position_deletes_are_left_out_and_refused(settings, tmp_path):
    data = lineitem_arrow(300)
    catalog = iceberg.workspace_catalog(str(settings.home))
    tbl = iceberg.create_table(catalog, IDENT, data.schema)
    for i in range(0, 300, 100):
        tbl.append(data.slice(i, 100))
    first = sorted(e.data_file.file_path for m in tbl.current_snapshot().manifests(tbl.io)
                   for e in m.fetch_manifest_entry(tbl.io))[0]
    _delete_rows(catalog, first, [0, 5, 7], str(tmp_path / "deletes.parquet"))
    scan = catalog.load_table(IDENT).scan().to_arrow()
    assert scan.num_rows == 297  # a real merge-on-read delete: pyiceberg applies it
    snap = api.register_iceberg(settings, "mor", IDENT)
    assert snap.total_rows == 300 and snap.summary["delete_files"] == 1
    assert snap.summary["files_with_deletes"] == 1
    store = TableStore(settings)
    fmt = store.format("mor")
    assert fmt.merge_on_read() == {first: "has 1 position delete file"}
    # planning: the file is left out of the group, the plan says why
    paths = tuple(p.path for p in snap.partitions)
    group = PlanGroup(paths, "sort", ("l_shipdate",), "wair", predicted_saving_bytes=30.0)
    (kept,) = prepare_groups([group], fmt, snap.id)
    assert first not in kept.partitions and len(kept.partitions) == 2
    assert f"left out 1 file(s) with merge-on-read deletes, e.g. {first} has 1 position " \
           "delete file" in kept.reason
    assert kept.predicted_saving_bytes == pytest.approx(20.0)
    assert prepare_groups([PlanGroup((first,), "sort", ("l_shipdate",))], fmt, snap.id) == ()
    # a proposal left with nothing: the service declines with the reason, the policy's own
    # last decision untouched
    only = Proposal(policy="wair", params={}, estimated_cost=CostEstimate(0, 0, 0, 0),
                    groups=(PlanGroup((first,), "sort", ("l_shipdate",)),), predicted_saving={})
    fitted = service._fit_to_format(TableStore(settings), "mor", snap, only)
    assert isinstance(fitted, service.FormatDeclined)
    policy = make_policy("wair")
    policy.last_decision_ = {"reason": "the policy's own words"}
    answer = service._no_action(service.Decision(snap, policy, None, {}, declined=fitted.reason),
                                "wair")
    assert answer["status"] == "no-action" and answer["reason"].startswith(
        "every file the plan would rewrite is left out by the table's format: it has "
        "merge-on-read deletes")
    assert policy.last_decision_ == {"reason": "the policy's own words"}

    def rewrite(chosen, tag):
        rows = pa.concat_tables([pq.read_table(p.replace("file://", "")) for p in chosen])
        out = f"{store.new_data_dir('mor', tag)}/part-0.parquet"
        pq.write_table(rows.sort_by("l_shipdate"), out)
        return read_partitions([out])[1]

    # the commit refuses the file in one line, nothing is committed
    pair = [first, next(p for p in paths if p != first)]  # file names are random: any other
    with pytest.raises(DataFileError) as err:
        fmt.commit_rewrite(snap.id, pair, rewrite(pair, "p1"), {"plan_id": "1"})
    assert "merge-on-read deletes" in str(err.value) and "\n" not in str(err.value)
    assert store.current_id("mor") == snap.id
    # the other files are rewritten; the deleted rows stay deleted
    before = _digest(scan)
    after = fmt.commit_rewrite(snap.id, list(kept.partitions), rewrite(list(kept.partitions), "p2"),
                               {"plan_id": "2"})
    assert after.summary["files_with_deletes"] == 1 and after.partition_count == 2
    assert _digest(catalog.load_table(IDENT).scan().to_arrow()) == before


# -- Delta deletion vectors --------------------------------------------------------------
_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _inline_vector(rows: list[int]) -> dict:
    """Delta's inline deletion vector: a RoaringBitmapArray (magic, one 32-bit bitmap in
    the portable Roaring format, one array container), Z85-encoded (Delta protocol,
    "Deletion Vector Format")."""
    portable = (struct.pack("<II", 12346, 1) + struct.pack("<HH", 0, len(rows) - 1)
                + struct.pack("<I", 16) + b"".join(struct.pack("<H", r) for r in rows))
    data = struct.pack("<iq", 1681511377, 1) + struct.pack("<i", 0) + portable
    padded = data + b"\0" * (-len(data) % 4)
    z85 = base64.b85encode(padded).decode().translate(str.maketrans(_B85, _Z85))
    return {"storageType": "i", "pathOrInlineDv": z85, "sizeInBytes": len(data),
            "cardinality": len(rows)}


def _delta_delete_rows(path: str, rows: list[int]) -> str:
    """Commit version N+1 putting a deletion vector on the table's first file (what
    Spark's DELETE does on a table with deletion vectors); returns that file's path."""
    table = DeltaTable(path)
    version = table.version()
    log = os.path.join(path, "_delta_log")
    adds = [json.loads(line)["add"] for v in range(version + 1)
            for line in open(os.path.join(log, f"{v:020d}.json")) if '"add"' in line]
    first = sorted(adds, key=lambda a: a["path"])[0]
    now = int(time.time() * 1000)
    with open(os.path.join(log, f"{version + 1:020d}.json"), "w") as out:
        out.write(json.dumps({"commitInfo": {"timestamp": now, "operation": "DELETE"}}) + "\n")
        out.write(json.dumps({"remove": {"path": first["path"], "deletionTimestamp": now,
                                         "dataChange": True, "size": first["size"],
                                         "partitionValues": {}}}) + "\n")
        out.write(json.dumps({"add": dict(first, deletionVector=_inline_vector(rows),
                                          modificationTime=now)}) + "\n")
    return os.path.join(path, first["path"])


def test_delta_files_with_deletion_vectors_are_left_out_and_refused(settings, tmp_path):
    path = str(tmp_path / "dv")
    data = lineitem_arrow(300)
    for i in range(0, 300, 100):
        write_deltalake(path, data.slice(i, 100), mode="append",
                        configuration={"delta.enableDeletionVectors": "true"})
    first = _delta_delete_rows(path, [2, 9])
    vectors = pa.RecordBatchReader.from_stream(DeltaTable(path).deletion_vectors()).read_all()
    keep = vectors.column("selection_vector").to_pylist()[0]  # delta-rs reads the vector
    assert [i for i, k in enumerate(keep) if not k] == [2, 9]
    snap = api.register_delta(settings, "dv", path)
    store = TableStore(settings)
    fmt = store.format("dv")
    assert fmt.merge_on_read() == {first: "has a deletion vector (2 rows deleted)"}
    info = api.table_info(settings, "dv")
    assert info.merge_on_read == {first: "has a deletion vector (2 rows deleted)"}
    assert info.partitioned is False
    group = PlanGroup(tuple(p.path for p in snap.partitions), "sort", ("l_shipdate",))
    (kept,) = prepare_groups([group], fmt, snap.id)
    assert first not in kept.partitions and len(kept.partitions) == 2
    assert "has a deletion vector (2 rows deleted)" in kept.reason

    def rewrite(chosen, tag):
        rows = pa.concat_tables([pq.read_table(p) for p in chosen]).sort_by("l_shipdate")
        out = f"{store.new_data_dir('dv', tag)}/part-0.parquet"
        pq.write_table(rows, out)
        return read_partitions([out])[1]

    with pytest.raises(DataFileError, match="merge-on-read deletes, e.g. .* has a deletion vector"):
        fmt.commit_rewrite(snap.id, [first, kept.partitions[0]],
                           rewrite([first, kept.partitions[0]], "p1"), {"plan_id": "1"})
    assert store.current_id("dv") == snap.id
    after = fmt.commit_rewrite(snap.id, list(kept.partitions),
                               rewrite(list(kept.partitions), "p2"), {"plan_id": "2"})
    assert after.partition_count == 2 and after.total_rows == 300
    assert fmt.merge_on_read() == {first: "has a deletion vector (2 rows deleted)"}  # still


def test_table_show_names_the_files_with_deletion_vectors(tmp_path, capsys):
    home, path = str(tmp_path / "home"), str(tmp_path / "dv")
    write_deltalake(path, lineitem_arrow(50), configuration={"delta.enableDeletionVectors": "true"})
    first = _delta_delete_rows(path, [0])
    assert main(["--home", home, "table", "register", "dv", "--delta", path]) == 0
    capsys.readouterr()
    assert main(["--home", home, "table", "show", "dv"]) == 0
    out = capsys.readouterr().out
    assert f"merge-on-read deletes on 1 file(s), never rewritten: e.g. {first} has a deletion " \
           "vector (1 rows deleted)" in out


def test_an_equality_delete_is_attached_to_every_older_file_of_its_partition(settings, tmp_path):
    data = lineitem_arrow(200)
    catalog = iceberg.workspace_catalog(str(settings.home))
    tbl = iceberg.create_table(catalog, IDENT, data.schema)
    tbl.append(data.slice(0, 100))
    out = str(tmp_path / "eq-deletes.parquet")
    field_id = tbl.schema().find_field("l_orderkey").field_id
    pq.write_table(pa.table({"l_orderkey": pa.array([3, 7], pa.int64())}), out)
    delete = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES, file_path=f"file://{out}",
        file_format=FileFormat.PARQUET, partition=Record(), record_count=2,
        file_size_in_bytes=os.path.getsize(out), spec_id=tbl.spec().spec_id,
        equality_ids=[field_id])
    with tbl.transaction() as tx:
        producer = _AddDeleteFiles(operation=Operation.DELETE, transaction=tx, io=tbl.io)
        producer.delete_files = [delete]
        producer.commit()
    catalog.load_table(IDENT).append(data.slice(100, 100))  # newer than the delete
    api.register_iceberg(settings, "eq", IDENT)
    refused = TableStore(settings).format("eq").merge_on_read()
    snap = TableStore(settings).current_snapshot("eq")
    older = [p.path for p in snap.partitions if p.columns["l_orderkey"].min == 0]
    assert refused == {older[0]: "has 1 equality delete file"}  # the newer file is not affected
