"""SIGINT and SIGTERM deferred across a critical section: recorded inside, raised again
after it with the handlers that were there before; nothing changes off the main thread."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from engine.core.signals import deferred_signals


def test_sigterm_inside_reaches_the_previous_handler_after_the_block():
    seen: list[str] = []
    previous = signal.signal(signal.SIGTERM, lambda s, f: seen.append("handler"))
    try:
        with deferred_signals() as got:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # twice: raised once afterwards
            seen.append("block went on")
            assert got == [signal.SIGTERM, signal.SIGTERM]
        assert seen == ["block went on", "handler"]
        assert signal.getsignal(signal.SIGTERM) is not None
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_keyboard_interrupt_comes_after_the_block_even_when_it_raised():
    # Python's own SIGINT handler (a SparkContext started earlier in the run installs its own)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGINT)
                raise ValueError("the block failed")  # the interrupt still follows it
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_it_changes_nothing():
    out: list[object] = []

    def work() -> None:
        with deferred_signals() as got:
            out.append((got, signal.getsignal(signal.SIGINT)))

    handler = signal.getsignal(signal.SIGINT)  # whatever the run installed: left as it is
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert out == [([], handler)]
