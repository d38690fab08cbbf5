"""How much CPU OTHER processes took while we measured: the busy-machine check of a probe.

A timing probe (``calibrate --rewrite-on``) is only as good as the machine is quiet: another
process on the cores lengthens every wall time and the price fitted on them. The
1-minute load average cannot tell: it counts the probe's own runnable threads (Spark's
tasks, its GC, shuffle and JIT threads) and lags a minute, so it reads above the core count on a
quiet machine (bench/replay/README.md).

So the check counts CPU seconds instead (Linux ``/proc``): the machine's busy seconds
(``/proc/stat``: user + nice + system + irq + softirq + steal) less this process tree's
(this process and every descendant, e.g. the local Spark JVM and its Python workers: utime +
stime + the reaped children's cutime + cstime of each, ``/proc/PID/stat``), over the probe's
wall time: the cores other processes used. Where ``/proc`` is missing every reading is None
and no check is made.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuReading", "others_cores", "reading"]

PROC = Path("/proc")


@dataclass(frozen=True)
class CpuReading:
    """The machine's busy CPU seconds and this process tree's, at a monotonic time."""

    machine_s: float
    own_s: float
    at: float


def _ticks() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100.0


def _machine_busy_s(proc: Path) -> float:
    """``/proc/stat``'s first line: every CPU's busy jiffies (idle and iowait left out)."""
    fields = (proc / "stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        [float(v) for v in fields[:8]] + [0.0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / _ticks()


def _stat_fields(text: str) -> list[str]:
    """The fields after the command name (which may hold spaces and parentheses)."""
    return text[text.rindex(")") + 2:].split()


def _tree_s(proc: Path, root: int) -> float:
    """CPU seconds of ``root`` and its descendants (utime + stime + cutime + cstime each:
    a child that exited and was reaped is in its parent's cutime/cstime)."""
    parent: dict[int, int] = {}
    spent: dict[int, float] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            f = _stat_fields((entry / "stat").read_text())
        except (OSError, ValueError):
            continue  # the process ended while we read
        pid = int(entry.name)
        parent[pid] = int(f[1])
        spent[pid] = sum(float(v) for v in f[11:15])
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += spent.get(pid, 0.0)
        todo.extend(children.get(pid, ()))
    return total / _ticks()


def reading(proc: Path = PROC, root: int | None = None) -> CpuReading | None:
    """Now: the machine's busy seconds and this process tree's; None without ``/proc``."""
    try:
        return CpuReading(_machine_busy_s(proc), _tree_s(proc, root or os.getpid()),
                          time.monotonic())
    except (OSError, ValueError, IndexError):
        return None


def others_cores(before: CpuReading | None, after: CpuReading | None) -> float | None:
    """The cores other processes used on average between two readings (None when either
    is missing or no time passed); never below 0 (the two counters are read a moment apart).

    Example:
    >>> others_cores(CpuReading(100.0, 40.0, 10.0), CpuReading(130.0, 55.0, 20.0))
    1.5
    >>> others_cores(None, CpuReading(1.0, 1.0, 1.0)) is None
    True
    """
    if before is None or after is None or after.at <= before.at:
        return None
    other = (after.machine_s - before.machine_s) - (after.own_s - before.own_s)
    return round(max(0.0, other) / (after.at - before.at), 3)
