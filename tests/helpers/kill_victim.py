"""The victim of the kill-point tests (tests/engine/spark/test_kill_points.py): ``plan run``
through the real plan service and the real executor loop, with the Spark work replaced by
byte copies, stopped at a named point so the test can send a signal at exactly that step.

Only Spark is stubbed (its session, the cancel watcher, the write job, the footers job and
the folder removal): the plan's states (:func:`engine.plans.service.run_plan`), the
executor's batch loop and its commit section (:class:`engine.spark.commit.BatchFiles`), the
formats' commits and the signal deferral are the product's. The approval gate is bypassed
(``approval.start`` only moves the approved plan to running): the gate is not under test.

It runs as a small fork server, so the engine, pyiceberg and deltalake are imported once per
test, not once per kill: ``python kill_victim.py`` prints ``ready``; each line
``{"home": ..., "plan": id, "pause": point}`` on its stdin forks one run (its own process
group), answered with ``{"child": pid}`` on stdout; the run says ``paused at POINT`` on
stderr (:data:`engine.core.faults.PAUSE_ENV`) and waits; the next line ``resume`` lets it go
on (if it is still alive), ``wait`` keeps it paused until the signal ends the pause (a
raising handler) or the process; the server answers ``{"status": S}`` once it ended (the
exit code, or minus the signal that ended it). The parent process never opens a table (a forked
child must not inherit a live catalog connection or delta-rs runtime).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from typing import Any, Callable, Sequence


def patch_spark_away(put: Callable[[Any, str, Any], None] = setattr) -> None:
    """Replace what the executor asks of Spark with local copies of the input files
    (``put``: how to set an attribute; a test passes ``monkeypatch.setattr``)."""
    from engine.plans import approval
    from engine.plans.plan import APPROVED, RUNNING, Plan
    from engine.spark import executor
    from engine.spark.rewrite import GroupResult, RewriteResult
    from engine.table import fs
    from engine.table.footers import read_partitions

    class Watcher:
        def __init__(self, *args: Any) -> None: ...
        def __enter__(self) -> "Watcher": return self
        def __exit__(self, *exc: Any) -> bool: return False
        def check(self) -> None: ...

    def rewrite(spark: Any, schema: Any, pairs: Sequence[tuple[Any, Sequence[Any]]],
                out_dir: str, *args: Any, first_index: int = 0, **kwargs: Any) -> RewriteResult:
        groups = []
        for k, (group, parts) in enumerate(pairs):
            files = []
            for i, p in enumerate(parts):
                files.append(f"{out_dir.rstrip('/')}/g{first_index + k}-{i}.parquet")
                shutil.copyfile(fs.local_path(p.path), fs.local_path(files[-1]))
            groups.append(GroupResult(
                index=first_index + k, layout=group.layout, columns=list(group.columns),
                inputs=len(parts), outputs=len(parts), rows=sum(p.rows for p in parts),
                bytes_in=sum(p.bytes for p in parts), bytes_out=0, checksum="", seconds=0.0,
                files=files))
        return RewriteResult(groups=groups, measured={}, phases={})

    def footers(spark: Any, store: Any, table: str, schema: Any,
                groups: Sequence[GroupResult]) -> list[Any]:
        added: list[Any] = []
        for r in groups:
            _, parts = read_partitions(r.files, schema=schema,
                                       first_seq=store.next_seq(table) + len(added))
            r.bytes_out = sum(p.bytes for p in parts)
            added.extend(parts)
        return added

    def start(ws: Any, plan_id: int, actor: object) -> Plan:
        book = ws.plans
        plan = book.get(plan_id)
        return Plan.from_row(book.control.transition(plan_id, (APPROVED,), RUNNING, "victim",
                                                     "run", job_groups=len(plan.groups)))

    put(executor, "get_spark", lambda settings: object())
    put(executor, "session_fresh", lambda spark: False)
    put(executor, "note_rewrite", lambda spark: None)
    put(executor, "CancelWatcher", Watcher)
    put(executor, "rewrite", rewrite)
    put(executor, "_footers", footers)
    put(executor, "remove_dir", lambda spark, d: shutil.rmtree(fs.local_path(d), ignore_errors=True))
    put(approval, "start", start)


def run(home: str, plan_id: int) -> None:
    """``plan run PLAN`` in the workspace at ``home``."""
    from engine.core.config import load_settings
    from engine.plans import service
    from engine.workspace import Workspace

    service.run_plan(Workspace(load_settings({"home": home})), plan_id)


def _child(order: dict[str, Any], reader: int) -> None:
    """The forked run: its own process group, stdin = the resume pipe, then exit."""
    from engine.core.faults import PAUSE_ENV

    os.setpgid(0, 0)
    os.dup2(reader, 0)
    os.environ[PAUSE_ENV] = order["pause"]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    code = 0
    try:
        run(order["home"], int(order["plan"]))
    except KeyboardInterrupt:
        os.write(2, b"run interrupted\n")
        code = 130
    except BaseException as exc:  # noqa: BLE001 - reported to the test, which judges it
        os.write(2, f"run failed: {type(exc).__name__}: {exc}\n".encode())
        code = 1
    os._exit(code)


def serve() -> None:
    """The fork server (see the module docstring)."""
    import engine.plans.service  # noqa: F401 - imported once, shared by every fork
    import engine.spark.executor  # noqa: F401
    import engine.table.formats.delta  # noqa: F401
    import engine.table.formats.iceberg  # noqa: F401
    import engine.workspace  # noqa: F401

    patch_spark_away()
    print("ready", flush=True)
    for line in sys.stdin:
        order = json.loads(line)
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(writer)
            _child(order, reader)
        os.close(reader)
        print(json.dumps({"child": pid}), flush=True)
        if sys.stdin.readline().strip() == "resume":
            try:
                os.write(writer, b"\n")
            except OSError:  # the run is gone already
                pass
        _, status = os.waitpid(pid, 0)  # "wait": the pause ends only by the signal
        os.close(writer)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"status": code}), flush=True)


if __name__ == "__main__":
    serve()
