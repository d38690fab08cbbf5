"""Where a dashboard visit's time goes in Chromium, and signing in as the DBA does.

``bench/ui/bench_ui.py --browser --trace`` uses this module to split a visit (navigation to
Streamlit's idle state) into:

* a **timeline** from the websocket's frames: page load until the websocket opens
  (HTML, Streamlit's JavaScript), until the server's first message (the session starts,
  the script begins), until its last message (the script ran and streamed its elements),
  and from there to idle (the browser finishing what it received);
* the renderer's **main thread** (Chrome DevTools Protocol ``Performance.getMetrics``
  deltas: script, style, layout, whole tasks) and a sampled **CPU profile**
  (``Profiler``) whose self time is summed per script file, so plotly's bundle
  (``PlotlyChart.*.js``), the data grid (``DataFrame.*.js``) and Streamlit's own code
  (``index.*.js``) are told apart, plus garbage collection;
* **CPU seconds** of every Chromium process (browser, renderer, GPU process: WebGL runs
  there under software rendering with ``--disable-gpu``) and of the dashboard server,
  read from ``/proc``: what the visit cost, which the load average does not inflate.

:func:`sign_in` fills the sidebar's approver form, so the Approve-and-run page is
measured as a signed-in DBA sees it (its buttons enabled).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

#: script files of Streamlit's bundle grouped by what they draw (the hash part changes per
#: Streamlit release, so the prefix decides)
BUNDLE_GROUPS = (("plotly", re.compile(r"/PlotlyChart\.[^/]*\.js")),
                 ("dataframe", re.compile(r"/(DataFrame|arrowFormatUtils|chunk-)[^/]*\.js")),
                 ("streamlit", re.compile(r"/static/js/[^/]*\.js")))
#: sampled-profile nodes that are no script file
SPECIAL = {"(garbage collector)": "gc", "(program)": "program", "(idle)": "idle", "(root)": "idle"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- /proc

def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def process_tree(pid: int) -> list[int]:
    """``pid`` and every descendant still alive."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo += _children(p)
    return seen


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)


def chromium_kind(pid: int) -> str | None:
    """"browser", "renderer", "gpu" or "utility" for a Chromium process, else None."""
    try:  # Chromium rewrites its children's command line as one space-joined string
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return None
    if not argv or "chrom" not in Path(argv[0]).name:
        return None
    kind = next((a.split("=", 1)[1] for a in argv if a.startswith("--type=")), "browser")
    return {"gpu-process": "gpu"}.get(kind, kind)


def chromium_cpu(root_pid: int) -> dict[str, float]:
    """CPU seconds per Chromium process kind among ``root_pid``'s descendants (the bench's
    own process: playwright's driver starts Chromium)."""
    out: dict[str, float] = {}
    for pid in process_tree(root_pid):
        kind = chromium_kind(pid)
        if kind is not None:
            out[kind] = out.get(kind, 0.0) + cpu_seconds(pid)
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants (the dashboard server)."""
    return sum(cpu_seconds(p) for p in process_tree(pid))


# --------------------------------------------------------------------------- CDP

def profile_by_bundle(profile: dict[str, Any]) -> dict[str, float]:
    """Self time (seconds) of a ``Profiler.stop`` profile summed per :data:`BUNDLE_GROUPS`
    group (``other`` for the rest: the page's inline code, native functions), GC and idle."""
    nodes = {n["id"]: n for n in profile.get("nodes", [])}
    ticks: dict[int, int] = {}
    for sample in profile.get("samples", []):
        ticks[sample] = ticks.get(sample, 0) + 1
    total = len(profile.get("samples", []))
    span_s = (profile.get("endTime", 0) - profile.get("startTime", 0)) / 1e6
    per_sample = span_s / total if total else 0.0
    out: dict[str, float] = {}
    for node_id, count in ticks.items():
        frame = nodes.get(node_id, {}).get("callFrame", {})
        name, url = frame.get("functionName", ""), frame.get("url", "")
        group = SPECIAL.get(name)
        if group is None:
            group = next((g for g, pat in BUNDLE_GROUPS if pat.search(url)), "other")
        out[group] = out.get(group, 0.0) + count * per_sample
    return out


METRICS = ("ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "TaskDuration")


def perf_metrics(cdp: Any) -> dict[str, float]:
    """The renderer's cumulative main-thread durations (seconds)."""
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: float(got.get(k, 0.0)) for k in METRICS}


class VisitTrace:
    """One visit's split, collected around ``visit()`` (a callable doing the navigation and
    waiting for idle). ``frames`` is appended to by the page's websocket listeners:
    ``(perf_counter, "sent"|"received", bytes)``."""

    def __init__(self, page: Any, bench_pid: int, server_pid: int) -> None:
        self.page, self.bench_pid, self.server_pid = page, bench_pid, server_pid
        self.frames: list[tuple[float, str, int]] = []
        self.ws_open: list[float] = []
        page.on("websocket", self._on_ws)
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 1000})

    def _on_ws(self, ws: Any) -> None:
        self.ws_open.append(time.perf_counter())
        ws.on("framereceived", lambda data: self.frames.append((time.perf_counter(), "received", len(data))))
        ws.on("framesent", lambda data: self.frames.append((time.perf_counter(), "sent", len(data))))

    def measure(self, visit: Callable[[], float]) -> dict[str, Any]:
        """Run ``visit`` and return the split (seconds; CPU seconds; bytes)."""
        self.frames.clear()
        self.ws_open.clear()
        before = perf_metrics(self.cdp)
        chrome0, server0 = chromium_cpu(self.bench_pid), tree_cpu(self.server_pid)
        self.cdp.send("Profiler.start")
        t0 = time.perf_counter()
        wall = visit()
        t_end = time.perf_counter()
        profile = self.cdp.send("Profiler.stop")["profile"]
        after = perf_metrics(self.cdp)
        chrome1, server1 = chromium_cpu(self.bench_pid), tree_cpu(self.server_pid)
        rx = [t for t, d, _ in self.frames if d == "received"]
        opened = self.ws_open[0] if self.ws_open else None
        # the renderer's counters restart with a new document (a full page load)
        main = {k: after[k] - before[k] for k in METRICS}
        if any(v < 0 for v in main.values()):
            main = after
        sent = [t for t, d, _ in self.frames if d == "sent"]
        out: dict[str, Any] = {
            "wall_s": wall,
            "to_ws_open_s": (opened - t0) if opened else None,
            "to_first_msg_s": (rx[0] - t0) if rx else None,
            "to_last_msg_s": (rx[-1] - t0) if rx else None,
            "after_last_msg_s": (t_end - rx[-1]) if rx else None,
            "ws_rx_kb": sum(n for _, d, n in self.frames if d == "received") / 1024,
            "ws_msgs": len(rx),
            "ws_sent_at_s": [round(t - t0, 2) for t in sent],
            "main_thread": main,
            "js_self_s": profile_by_bundle(profile),
            "chromium_cpu_s": {k: chrome1.get(k, 0.0) - chrome0.get(k, 0.0)
                               for k in sorted(set(chrome0) | set(chrome1))},
            "server_cpu_s": server1 - server0,
        }
        return out


def format_trace(name: str, t: dict[str, Any]) -> str:
    """One page's split on a few lines."""
    def f(x: float | None) -> str:
        return "  -  " if x is None else f"{x:5.2f}"
    js = t["js_self_s"]
    mt = t["main_thread"]
    cpu = t["chromium_cpu_s"]
    busy = {k: v for k, v in js.items() if k != "idle"}
    return (f"  {name:15s} wall {f(t['wall_s'])} s: websocket open {f(t['to_ws_open_s'])}, first msg "
            f"{f(t['to_first_msg_s'])}, last msg {f(t['to_last_msg_s'])}, then {f(t['after_last_msg_s'])} "
            f"to idle; {t['ws_msgs']} msgs {t['ws_rx_kb']:.0f} KB; sent at {t['ws_sent_at_s']}\n"
            f"  {'':15s} main thread: tasks {mt['TaskDuration']:.2f} s (script {mt['ScriptDuration']:.2f}, "
            f"layout {mt['LayoutDuration']:.2f}, style {mt['RecalcStyleDuration']:.2f}); JS self by bundle: "
            + ", ".join(f"{k} {v:.2f}" for k, v in sorted(busy.items(), key=lambda kv: -kv[1]))
            + f"\n  {'':15s} CPU s: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
            + f", server {t['server_cpu_s']:.2f}")


# --------------------------------------------------------------------------- sign-in
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "helpers"))
from browser_helpers import sign_in  # noqa: E402,F401 (tests/: the browser test signs in alike)
