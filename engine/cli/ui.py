"""``layout-advisor ui``: start the Streamlit dashboard on the current workspace.

The dashboard runs as a ``streamlit run`` subprocess of this interpreter, headless, with
the workspace handed over in ``LAYOUT_ADVISOR_HOME`` (and the Spark master in
``LAYOUT_ADVISOR_SPARK_MASTER``) so the app resolves exactly the settings the command saw.
The app script is found through the installed ``app`` package's location (without importing
it: the engine never imports the app), so the command works from any directory.

Safety: the dashboard binds ``127.0.0.1`` unless ``--address``
says otherwise, and any other address prints a warning (the read-only pages are open to
whoever reaches the port; changes need a sign-in). The port is checked before the server
starts, so the URL printed is this dashboard's. Streamlit runs in its own process group;
SIGTERM, SIGHUP or Ctrl-C to the command stop the whole group (Streamlit and the Spark JVM
it started), so the port is free when the command returns.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from engine.core.config import Settings
from engine.core.errors import EnvironmentCheckError, InvalidParameterError

if TYPE_CHECKING:
    from engine import api

#: the address the dashboard binds when none is given: this machine only
DEFAULT_ADDRESS = "127.0.0.1"
#: addresses that keep the dashboard on this machine (no warning)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def app_script() -> Path:
    """Path of ``app/server.py`` inside the installed package: ``streamlit_app.py`` served
    as an ``st.App`` whose start-up hook imports the engine and warms the tables' stored
    summaries, so the first browser visit does not pay for them (bench/ui/README.md).

    The dashboard ships with the engine (pyproject packages: ``app*``); its import spec
    gives the package's folder without running any of its code.
    """
    spec = importlib.util.find_spec("app")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentCheckError("dashboard package 'app' not found; reinstall the package")
    script = Path(spec.submodule_search_locations[0]).resolve() / "server.py"
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


def check_port(port: int, address: str) -> None:
    """InvalidParameterError when ``port`` is outside 1..65535 or already taken on
    ``address`` (another dashboard, a left-over Streamlit): said before anything starts."""
    if not 0 < int(port) < 65536:
        raise InvalidParameterError(f"--port must be between 1 and 65535, got {port}")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as a server binds (Streamlit does): a listener refuses it, TIME_WAIT does not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, int(port)))
        except OSError as exc:
            raise InvalidParameterError(
                f"--port {port}: {address}:{port} is not available ({exc.strerror or exc}); "
                "stop what uses it or pick another --port") from None


def exposure_warning(address: str) -> str | None:
    """The warning printed when the dashboard is reachable from other machines.

    >>> exposure_warning("127.0.0.1") is None, exposure_warning("0.0.0.0") is not None
    (True, True)
    """
    if address in LOOPBACK:
        return None
    return (f"warning: the dashboard listens on {address}: anyone who reaches this port "
            "sees the read-only pages; changes still need a signed-in approver. Bind "
            f"{DEFAULT_ADDRESS} (the default) unless this is what you want.")


def start_ui(settings: Settings, port: int = 8501, table: str | None = None,
             address: str | None = None, quiet: bool = False) -> subprocess.Popen:
    """Start the dashboard (in its own process group) and return its running process.

    Stop it with :func:`stop_ui`; :func:`run_ui` is the blocking form the commands use.
    """
    address = address or DEFAULT_ADDRESS
    check_port(int(port), address)
    cmd = streamlit_command(int(port), table, address)
    out = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(cmd, env=ui_environment(settings), stdout=out, stderr=out,
                            start_new_session=True)


def stop_ui(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Stop the dashboard and everything it started (the Spark JVM): SIGTERM to its process
    group (to the process alone if it leads none), SIGKILL after ``timeout_s``, then SIGKILL
    to whatever of the group outlived the server."""
    _signal(process, signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _signal(process, signal.SIGKILL)
        process.wait(timeout=5.0)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal(process: subprocess.Popen, sig: int) -> None:
    """``sig`` to the process group ``process`` leads, else to ``process`` itself."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        if process.poll() is None:
            process.send_signal(sig)


class _Stop(Exception):
    """Raised in the main thread by SIGTERM/SIGHUP, so the ``finally`` stops the server."""


def _raise_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def run_ui(settings: Settings, port: int, table: str | None = None, address: str | None = None) -> int:
    """Start the dashboard, print its URL once it answers, and wait for it to exit.

    Returns the server's exit code; Ctrl-C, SIGTERM and SIGHUP stop it (and its Spark JVM)
    and return 0.
    """
    address = address or DEFAULT_ADDRESS
    warning = exposure_warning(address)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    process = start_ui(settings, port=port, table=table, address=address)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        if wait_until_ready(int(port), process=process, host=_probe_host(address)):
            print(f"Layout Advisor dashboard: http://{_url_host(address)}:{port}  (workspace "
                  f"{settings.home}; Ctrl-C to stop)", flush=True)
        return process.wait()
    except (KeyboardInterrupt, _Stop):
        return 0
    finally:
        stop_ui(process)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _probe_host(address: str) -> str:
    """Where this machine reaches a server bound to ``address``."""
    return "127.0.0.1" if address in ("0.0.0.0", "::", "localhost") else address


def _url_host(address: str) -> str:
    return "localhost" if address in ("0.0.0.0", "::", "127.0.0.1") else address


def _run(args: argparse.Namespace, ws: "api.Workspace") -> int:
    settings = ws.settings
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
                        help=f"address to bind (default {DEFAULT_ADDRESS}: this machine only; "
                             "0.0.0.0 exposes the dashboard to the network, with a warning)")
    parser.set_defaults(func=_run)
