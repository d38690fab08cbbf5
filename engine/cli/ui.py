"""``layout-advisor ui``: start the Streamlit dashboard on the current workspace.

The dashboard runs as a ``streamlit run`` subprocess of this interpreter, headless, with
the workspace handed over in ``LAYOUT_ADVISOR_HOME`` (and the Spark master in
``LAYOUT_ADVISOR_SPARK_MASTER``) so the app resolves exactly the settings the command saw.
The app script is found through the installed ``app`` package, so the command works from
any directory.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from engine.core.config import Settings
from engine.core.errors import EnvironmentCheckError, InvalidParameterError


def app_script() -> Path:
    """Path of ``app/streamlit_app.py`` inside the installed package."""
    import app  # the dashboard package ships with the engine (pyproject packages: app*)

    script = Path(app.__file__).resolve().parent / "streamlit_app.py"
    if not script.is_file():
        raise EnvironmentCheckError(f"dashboard script not found at {script}; reinstall the package")
    return script


def streamlit_command(port: int, table: str | None = None, address: str | None = None) -> list[str]:
    """The ``streamlit run`` command line with headless, quiet settings."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_script()),
           "--server.headless=true",
           f"--server.port={port}",
           "--server.fileWatcherType=none",
           "--server.runOnSave=false",
           "--browser.gatherUsageStats=false",
           "--client.toolbarMode=minimal",
           "--theme.base=light"]
    if address:
        cmd.append(f"--server.address={address}")
    if table:
        cmd += ["--", "--table", table]
    return cmd


def ui_environment(settings: Settings) -> dict[str, str]:
    """The child's environment: the parent's plus the resolved workspace and Spark master."""
    env = dict(os.environ)
    env["LAYOUT_ADVISOR_HOME"] = str(Path(settings.home).expanduser().resolve())
    env["LAYOUT_ADVISOR_SPARK_MASTER"] = settings.spark_master
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def wait_until_ready(port: int, timeout_s: float = 60.0, host: str = "127.0.0.1",
                     process: subprocess.Popen | None = None) -> bool:
    """Poll Streamlit's health endpoint until it answers ``ok`` (False on timeout/exit)."""
    url = f"http://{host}:{port}/_stcore/health"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (local URL)
                if resp.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.3)
    return False


def start_ui(settings: Settings, port: int = 8501, table: str | None = None, block: bool = True,
             address: str | None = None, quiet: bool = False) -> subprocess.Popen | int:
    """Start the dashboard.

    With ``block`` (the CLI), wait for the server and return its exit code (Ctrl-C stops
    it cleanly). Without, return the running :class:`subprocess.Popen` (tests, ``demo``).
    """
    if not 0 < int(port) < 65536:
        raise InvalidParameterError(f"--port must be between 1 and 65535, got {port}")
    cmd = streamlit_command(int(port), table, address)
    out = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen(cmd, env=ui_environment(settings), stdout=out, stderr=out)
    if not block:
        return process
    try:
        if wait_until_ready(int(port), process=process):
            print(f"Layout Advisor dashboard: http://localhost:{port}  (workspace {settings.home}; "
                  "Ctrl-C to stop)", flush=True)
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        return 0


def _run(args: argparse.Namespace, settings: Settings) -> int:
    port = args.port if args.port is not None else settings.ui_port
    result = start_ui(settings, port=port, table=args.table, block=True, address=args.address)
    return int(result) if isinstance(result, int) else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ui", help="start the dashboard (Streamlit) on this workspace",
        description="Start the Layout Advisor dashboard and keep it running until Ctrl-C; "
                    "open the printed URL in a browser.")
    parser.add_argument("--port", type=int, default=None, help="port (default: setting ui_port, 8501)")
    parser.add_argument("--table", default=None, help="table selected when the dashboard opens")
    parser.add_argument("--address", default=None,
                        help="address to bind (default: Streamlit's, all interfaces)")
    parser.set_defaults(func=_run)
