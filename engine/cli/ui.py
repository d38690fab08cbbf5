"""``layout-advisor ui``: start the Streamlit dashboard on the current workspace.

The dashboard runs as a ``streamlit run`` subprocess of this interpreter, headless, with
the workspace handed over in ``LAYOUT_ADVISOR_HOME`` (and the Spark master in
``LAYOUT_ADVISOR_SPARK_MASTER``) so the app resolves exactly the settings the command saw.
The app script is found through the installed ``app`` package's location (without importing
it: the engine never imports the app), so the command works from any directory.
"""

from __future__ import annotations

import argparse
import importlib.util
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
    """Path of ``app/streamlit_app.py`` inside the installed package.

    The dashboard ships with the engine (pyproject packages: ``app*``); its import spec
    gives the package's folder without running any of its code.
    """
    spec = importlib.util.find_spec("app")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentCheckError("dashboard package 'app' not found; reinstall the package")
    script = Path(spec.submodule_search_locations[0]).resolve() / "streamlit_app.py"
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


def start_ui(settings: Settings, port: int = 8501, table: str | None = None,
             address: str | None = None, quiet: bool = False) -> subprocess.Popen:
    """Start the dashboard and return its running process (tests, screenshots).

    Stop it with :func:`stop_ui`; :func:`run_ui` is the blocking form the commands use.
    """
    if not 0 < int(port) < 65536:
        raise InvalidParameterError(f"--port must be between 1 and 65535, got {port}")
    cmd = streamlit_command(int(port), table, address)
    out = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(cmd, env=ui_environment(settings), stdout=out, stderr=out)


def stop_ui(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Stop the dashboard: terminate it, and kill it if it has not exited within ``timeout_s``."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()


def run_ui(settings: Settings, port: int, table: str | None = None, address: str | None = None) -> int:
    """Start the dashboard, print its URL once it answers, and wait for it to exit.

    Returns the server's exit code; Ctrl-C stops it cleanly and returns 0.
    """
    process = start_ui(settings, port=port, table=table, address=address)
    try:
        if wait_until_ready(int(port), process=process):
            print(f"Layout Advisor dashboard: http://localhost:{port}  (workspace {settings.home}; "
                  "Ctrl-C to stop)", flush=True)
        return process.wait()
    except KeyboardInterrupt:
        stop_ui(process)
        return 0


def _run(args: argparse.Namespace, settings: Settings) -> int:
    port = args.port if args.port is not None else settings.ui_port
    return run_ui(settings, port, table=args.table, address=args.address)


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
