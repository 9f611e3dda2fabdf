"""Local time limits without a cluster scheduler: `limit(seconds, what)` raises
`TimeLimitExceeded` in the block it guards once `seconds` of wall time have passed.

The limit is a real-time interval timer (`signal.setitimer`) whose handler raises in the main
thread, so it interrupts Python code between bytecodes and a NumPy / BLAS call when it
returns; a compiled loop that never returns to the interpreter is not interrupted (the job's
watchdog, `run.job`, is the backstop for those). Limits nest: an inner limit never outlasts
the one around it, and the outer one is re-armed with what is left of it when the inner block
ends. Outside the main thread (or where the platform has no `SIGALRM`) the block runs without
a limit and `limit` says so by returning False from `armed`.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager


class TimeLimitExceeded(Exception):
    """A block ran longer than its limit; `what` names it and `seconds` is the limit."""

    def __init__(self, what: str, seconds: float):
        super().__init__(f"{what} exceeded its time limit of {seconds:g} s")
        self.what, self.seconds = what, seconds


#: the limits in force, outermost first: (deadline on time.monotonic, what, seconds)
_stack: list[tuple[float, str, float]] = []


def available() -> bool:
    """Whether a limit can be armed here (the main thread of a platform with SIGALRM)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _on_alarm(signum, frame):
    now = time.monotonic()
    for deadline, what, seconds in reversed(_stack):  # the innermost one that has passed
        if now >= deadline - 1e-3:
            raise TimeLimitExceeded(what, seconds)
    _arm()  # woken early (clock granularity): wait for the nearest deadline again


def _arm() -> None:
    if not _stack:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    nearest = min(deadline for deadline, _, _ in _stack)
    signal.setitimer(signal.ITIMER_REAL, max(nearest - time.monotonic(), 1e-3))


@contextmanager
def limit(seconds: float | None, what: str):
    """Raise `TimeLimitExceeded(what, seconds)` in the block once it has run `seconds` of wall
    time; `None` (or a platform without interval timers) sets no limit."""
    if seconds is None or not available():
        yield
        return
    if seconds <= 0:
        raise ValueError(f"time limit of {what} must be positive, got {seconds}")
    previous = signal.getsignal(signal.SIGALRM)
    if previous not in (_on_alarm, signal.SIG_DFL, signal.SIG_IGN, None) and not _stack:
        raise RuntimeError("another SIGALRM handler is installed; cannot arm a time limit")
    signal.signal(signal.SIGALRM, _on_alarm)
    _stack.append((time.monotonic() + seconds, what, seconds))
    _arm()
    try:
        yield
    finally:
        _stack.pop()
        _arm()
        if not _stack:
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
