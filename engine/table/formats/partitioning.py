"""Partitioned tables: a rewrite group never mixes partition values.

An Iceberg or Delta table partitioned by ``region`` or ``month(ts)`` keeps every data file
inside one partition value (Iceberg records the tuple in the manifest entry, Delta in the
``add`` action's ``partitionValues``; Delta files do not even hold the partition columns).
A policy that groups files by their zonemaps alone may put files of two partitions into one
group, whose sorted output would then straddle partitions. So plans are finalized by
:func:`split_groups`: each group is split into one group per partition value, in the order
the values first appear, before the plan is stored and shown (not refused at commit time).

The partition of each file comes from the format (:meth:`TableFormat.partition_keys`, empty
for unpartitioned tables and the native format). :func:`assign_by_rows` carries a group's
partition to the files the executor wrote for it. :func:`prepare_groups` is the one call
planning makes: it also leaves out files with merge-on-read deletes, saying why.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Any, Hashable, Mapping, Sequence, TypeVar

from engine.table.formats.base import RewriteGroup, TableFormat

G = TypeVar("G", bound=RewriteGroup)


def split_by_partition(paths: Sequence[str], keys: Mapping[str, Hashable]) -> list[tuple[str, ...]]:
    """``paths`` cut into runs of one partition value each (first-appearance order; files
    without a key, e.g. of an unpartitioned table, share one run).

    >>> split_by_partition(["a", "b", "c", "d"], {"a": ("eu",), "b": ("us",), "c": ("eu",)})
    [('a', 'c'), ('b',), ('d',)]
    >>> split_by_partition(["a", "b"], {})
    [('a', 'b')]
    """
    runs: dict[Hashable, list[str]] = {}
    for path in paths:
        runs.setdefault(keys.get(path), []).append(path)
    return [tuple(run) for run in runs.values()]


def prepare_groups(groups: Sequence[G], fmt: TableFormat, snapshot_id: str) -> tuple[G, ...]:
    """A policy's groups made fit for ``fmt``'s table: files with merge-on-read deletes
    left out (the group's ``reason`` names them: "left out ...: has 3 position delete
    files"), and so are files of an older partition spec that fit no partition of the
    current one (:meth:`TableFormat.spec_misfits`); groups left empty dropped, the rest
    split by partition (:func:`split_groups`), older-spec files by their current-spec value.

    The plans service calls it once on every proposal, before the plan is stored."""
    refused = fmt.merge_on_read(snapshot_id)
    if refused:
        groups = leave_out(groups, refused)
    misfits = fmt.spec_misfits(snapshot_id)
    if misfits:
        groups = leave_out(groups, misfits, "that fit no partition of the current spec")
    return split_groups(groups, fmt.partition_keys(snapshot_id))


def leave_out(groups: Sequence[G], refused: Mapping[str, str],
              what: str = "with merge-on-read deletes") -> tuple[G, ...]:
    """Each group without the ``refused`` files (path -> reason); its ``reason`` names the
    first one and how many (``what`` they are), its ``predicted_saving_bytes`` shrinks
    with its files."""
    out: list[G] = []
    for group in groups:
        paths = tuple(group.partitions)
        kept = tuple(p for p in paths if p not in refused)
        if len(kept) == len(paths):
            out.append(group)
            continue
        if not kept:
            continue
        gone = [p for p in paths if p in refused]
        note = f"left out {len(gone)} file(s) {what}, e.g. {gone[0]} {refused[gone[0]]}"
        out.append(dataclasses.replace(group, **_shrunk(group, kept, len(paths), note)))
    return tuple(out)


def split_groups(groups: Sequence[G], keys: Mapping[str, Hashable]) -> tuple[G, ...]:
    """Each plan group (a :class:`~engine.table.formats.base.RewriteGroup`, such as
    :class:`engine.policy.base.PlanGroup`) split into one group per partition value.

    A split group keeps its layout, columns and parameters; its ``predicted_saving_bytes``
    is shared in proportion to the files, and its ``reason`` says it was
    split. Groups within one partition come back unchanged (the same objects).
    """
    out: list[G] = []
    for group in groups:
        runs = split_by_partition(group.partitions, keys)
        if len(runs) == 1:
            out.append(group)
            continue
        total = sum(len(r) for r in runs)
        note = f"split by table partition into {len(runs)} groups"
        for run in runs:
            out.append(dataclasses.replace(group, **_shrunk(group, run, total, note)))
    return tuple(out)


def _shrunk(group: RewriteGroup, run: tuple[str, ...], total: int, note: str) -> dict[str, Any]:
    """The fields of ``group`` cut down to ``run`` of its ``total`` files: the saving
    shared in proportion to the files, ``note`` added to the reason."""
    return {"partitions": run,
            "predicted_saving_bytes": float(group.predicted_saving_bytes) * len(run) / total,
            "reason": f"{group.reason}; {note}" if group.reason else note}


#: the name of a rewrite group's new file as the executor leaves it (after moving it out of
#: Spark's ``partitionBy`` folders): ``<out_dir>/g<group>-<n>-<Spark's name>``; one
#: definition for the writer (:func:`engine.spark.hadoop_files.flatten`) and the formats
GROUP_FILE = re.compile(r"/g(\d+)-\d+-[^/]*$")


def group_file_name(out_dir: str, group: int, n: int, name: str) -> str:
    """Where the executor puts the ``n``-th new file of rewrite group ``group``.

    >>> group_file_name("/t/plan3-b0/", 12, 4, "part-00000.parquet")
    '/t/plan3-b0/g12-00004-part-00000.parquet'
    >>> group_index(group_file_name("/t/plan3-b0", 12, 4, "part-00000.parquet"))
    12
    """
    return f"{out_dir.rstrip('/')}/g{group}-{n:05d}-{name}"


def group_index(path: str) -> int | None:
    """The rewrite group of a file named by :func:`group_file_name` (None for any other).

    >>> group_index("/t/plan3-b0/g12-00004-part-0.parquet"), group_index("/t/x.parquet")
    (12, None)
    """
    m = GROUP_FILE.search(path)
    return int(m.group(1)) if m else None


def group_of(path: str) -> str:
    """The rewrite group a new file belongs to, as a string equal for the files of one
    group: the executor's own name (:func:`group_file_name`, the group number is in the
    file name, all groups share one folder), Spark's ``.../__la_g=N/`` folder before the
    files are moved out of it; any other writer's file counts as its own folder's.

    >>> group_of("/t/_la/plan3-b0/g2-00007-part-0.parquet")
    '/t/_la/plan3-b0/g2'
    >>> group_of("/t/_la/plan3-b0/__la_g=2/__la_part=1/part-0.parquet")
    '/t/_la/plan3-b0/__la_g=2'
    >>> group_of("/t/plan1-g0/part-0.parquet")
    '/t/plan1-g0'
    """
    folder = path.rsplit("/", 1)[0]
    index = group_index(path)
    if index is not None:
        return f"{folder}/g{index}"
    head, sep, _ = path.partition("/__la_g=")
    if sep:
        return head + sep + path[len(head) + len(sep):].split("/", 1)[0]
    return folder


def straddling(removed_rows: Sequence[int], removed_keys: Sequence[Hashable],
               added: Sequence[tuple[str, int]]) -> str | None:
    """The first new file whose group (:func:`group_of`, consecutive files) was written
    from replaced files of more than one partition, else None: such a group's rows mix
    partitions, and a format that cannot read the partition from the file (Delta) would
    put some rows into the wrong one.

    >>> straddling([2, 2], ["eu", "us"], [("/g0/a", 2), ("/g1/b", 2)]) is None
    True
    >>> straddling([2, 2], ["eu", "us"], [("/g0/a", 1), ("/g0/b", 3)])
    '/g0/a'
    >>> straddling([2, 2], ["eu", "us"], [("/o/g0-00000-a", 2), ("/o/g1-00001-b", 2)]) is None
    True
    """
    starts: list[int] = []
    total = 0
    for rows in removed_rows:
        starts.append(total)
        total += rows
    start = 0
    i = 0
    while i < len(added):
        j, rows = i, 0
        while j < len(added) and group_of(added[j][0]) == group_of(added[i][0]):
            rows += added[j][1]
            j += 1
        keys = {removed_keys[k] for k, (s, n) in enumerate(zip(starts, removed_rows))
                if n > 0 and s < start + rows and s + n > start}
        if len(keys) > 1:
            return added[i][0]
        start += rows
        i = j
    return None


def assign_by_rows(removed_rows: Sequence[int], removed_keys: Sequence[Hashable],
                   added_rows: Sequence[int]) -> list[Hashable]:
    """The partition of each added file, from the removed files it was written from.

    The commit contract (:meth:`TableFormat.commit_rewrite`): ``added`` lists the new
    files group by group in the order of ``removed``, and each group's rows are conserved
    (the executor verified counts and checksums). Then the first row of added file ``j``
    (position ``sum(added_rows[:j])``) lies in the removed file of the same group that
    covers that position, whose key is the group's. Empty added files take the key at
    their position (they hold no row, so no row can land in a wrong partition).

    >>> assign_by_rows([2, 3, 0, 4], ["eu", "eu", "us", "us"], [5, 1, 3])
    ['eu', 'us', 'us']
    """
    if sum(removed_rows) != sum(added_rows):
        raise ValueError(f"the new files hold {sum(added_rows)} rows, the replaced ones "
                         f"{sum(removed_rows)}")
    ends: list[int] = []
    owners: list[Hashable] = []
    total = 0
    for rows, key in zip(removed_rows, removed_keys):
        if rows > 0:
            total += rows
            ends.append(total)
            owners.append(key)
    out: list[Hashable] = []
    start = 0
    for rows in added_rows:
        i = min(bisect.bisect_right(ends, start), len(owners) - 1) if owners else 0
        out.append(owners[i] if owners else (removed_keys[0] if removed_keys else None))
        start += rows
    return out
