"""bench/bench_ui_scale.py --profile profiles the thread AppTest runs the page on
(Streamlit's script thread), not the main thread that only waits for it."""

from __future__ import annotations

import cProfile
import pstats
import threading

from bench.bench_ui_scale import profiling_thread


def _functions(prof: cProfile.Profile) -> set[str]:
    return {name for _, _, name in pstats.Stats(prof).stats}


def test_the_profile_follows_the_named_thread_only():
    def page_work() -> int:
        return sum(i * i for i in range(1000))

    def other_work() -> int:
        return sum(range(1000))

    prof = cProfile.Profile()
    with profiling_thread(prof, name="page"):
        for target, name in ((page_work, "page"), (other_work, "other")):
            thread = threading.Thread(target=target, name=name)
            thread.start()
            thread.join()
    assert "page_work" in _functions(prof) and "other_work" not in _functions(prof)


def test_an_apptest_run_is_profiled_in_its_script_thread():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string("def the_page_itself():\n    return sum(range(100))\n\n"
                             "the_page_itself()\n", default_timeout=60)
    prof = cProfile.Profile()
    with profiling_thread(prof):
        at.run()
    assert not at.exception
    assert "the_page_itself" in _functions(prof)
