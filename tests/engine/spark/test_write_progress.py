"""The write's progress counts rows as the Arrow writer's tasks finish: Spark does not count
the rows pyarrow writes (its ``outputRecords`` stay 0), so :class:`WriteWatcher` with
``rows_at_task_end`` counts the shuffled rows each finished write task read (all of which it
wrote before it ended), and not the rows of a task still running."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from engine.spark.progress import WriteWatcher

pytestmark = pytest.mark.spark

ROWS = 3000


def _until(condition, what: str, limit_s: float = 180.0) -> None:
    """Wait for ``condition()`` (the job runs in another thread), failing after ``limit_s``."""
    end = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(0.1)


def test_rows_advance_as_the_arrow_tasks_finish(spark, tmp_path):
    gate, note = tmp_path / "gate", tmp_path / "held_rows"
    gate.write_text("")
    gate_s, note_s = str(gate), str(note)

    def task(batches):  # the task holding id 0 waits for the gate to go, after saying its rows
        import os
        import time as t
        got = list(batches)
        rows = sum(b.num_rows for b in got)
        if any(pc.any(pc.equal(b.column("id"), 0)).as_py() for b in got if b.num_rows):
            with open(note_s, "w") as f:
                f.write(str(rows))
            while os.path.exists(gate_s):
                t.sleep(0.05)
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    df = spark.range(0, ROWS, numPartitions=2).selectExpr("id", "id % 7 AS g").repartition(4, "g")
    result: list = []
    job = threading.Thread(target=lambda: result.extend(df.mapInArrow(task, "rows long").collect()))
    arrow, spark_rows = [], []
    arrow_watch = WriteWatcher(spark, lambda *r: arrow.append(r), rows_at_task_end=True)
    plain_watch = WriteWatcher(spark, lambda *r: spark_rows.append(r))
    job.start()
    try:
        _until(note.exists, "the held task")
        held = int(note.read_text())
        assert 0 < held < ROWS

        def polled() -> bool:
            arrow_watch._poll()
            return bool(arrow) and arrow[-1][2] == ROWS - held
        _until(polled, "the other tasks' rows")  # every task but the held one has finished
        plain_watch._poll()
        assert spark_rows[-1][2] == 0  # what Spark's own counter shows for pyarrow's rows
        done, tasks, rows = arrow[-1]
        assert rows == ROWS - held and done < tasks
    finally:
        gate.unlink()
        job.join(300)
    assert sum(r["rows"] for r in result) == ROWS
