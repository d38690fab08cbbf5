"""The busy-machine check counts CPU, not the load (engine.core.cpu_share): a process of our
own tree (a child, like the local Spark JVM) is ours, a process outside it is another's."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from engine.core import cpu_share

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"

pytestmark = pytest.mark.skipif(cpu_share.reading() is None, reason="no /proc on this system")


def test_a_child_burning_cpu_is_our_own_tree():
    before = cpu_share.reading()
    subprocess.run([sys.executable, "-c", BURN.format(s=1.0)], check=True)
    after = cpu_share.reading()
    # the reaped child's second is in our tree (cutime), and in the machine's busy seconds
    assert after.own_s - before.own_s >= 0.9
    assert after.machine_s - before.machine_s >= 0.9


def test_a_process_outside_our_tree_is_counted_as_another():
    # double fork: the burner's parent exits at once, so the burner is no descendant of ours
    code = ("import os, subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', {BURN.format(s=1.5)!r}], "
            "start_new_session=True)\n")
    before = cpu_share.reading()
    subprocess.run([sys.executable, "-c", code], check=True)
    time.sleep(2.5)  # the burner's 1.5 CPU-s, on a free core
    after = cpu_share.reading()
    assert cpu_share.others_cores(before, after) >= 1.2 / (after.at - before.at)
    assert after.own_s - before.own_s < 0.5
