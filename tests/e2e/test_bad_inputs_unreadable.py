"""An unreadable log file, read by a real unprivileged process.

The tests run as root, and root reads a ``chmod 000`` file anyway, so the CLI runs in a
child process without the privilege that allows it. A non-root uid (``setpriv --reuid``,
``runuser -u nobody``) cannot be used here: the interpreter lives under ``/root`` (mode
700), which no other user may enter. The child keeps uid 0 but loses
``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` from its bounding set (``setpriv
--bounding-set``), so the kernel checks the file's mode bits as for anyone else: the open
fails with EACCES exactly as it would for a non-root user. When the tests do not run as
root, the child runs as the current user. Skipped when neither can be arranged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import api
from plan_helpers import make_table

REPO = Path(__file__).resolve().parents[2]
DROP = ["--bounding-set=-dac_override,-dac_read_search"]


def _unprivileged(tmp_path: Path) -> list[str]:
    """The command prefix of a process that cannot read a mode-000 file; skips if none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed")
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    got = subprocess.run([setpriv, *DROP, "cat", str(probe)], capture_output=True)
    if got.returncode == 0:
        pytest.skip("setpriv could not drop the read-anything capabilities here")
    return [setpriv, *DROP]


def test_an_unreadable_log_is_exit_2_and_one_line_naming_it(settings, tmp_path):
    make_table(settings, n=500, rows_per_file=250)
    log = tmp_path / "queries.sql"
    log.write_text("SELECT count(*) FROM lineitem WHERE l_shipdate < DATE '1995-01-01';\n")
    log.chmod(0)
    prefix = _unprivileged(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "engine", "--home", str(settings.home), "workload",
         "import", "lineitem", str(log)],
        env=env, capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, lines
    assert str(log) in lines[0] and "Permission denied" in lines[0], lines
    assert api.workload_fragments(settings, "lineitem") == []  # nothing imported
