"""Time budgets: a check that does not finish in time is undecided, never passed.

SymPy's simplification and mpmath's quadrature can run for a very long time on unlucky input;
a CI pipeline must not hang.  The budget is a real-time alarm (SIGALRM), so it works in the main
thread of a process (the CLI, pytest, pytest-xdist workers); elsewhere checks run unbudgeted.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .errors import BudgetExceeded

DEFAULT_BUDGET = 60.0  # seconds per check


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise BudgetExceeded(f"did not finish within its {seconds:g} s budget")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def within_budget(check: Callable, seconds: float | None, undecided: Callable):
    """``check()``, or ``undecided(reason)`` when it runs out of time or memory."""
    try:
        with time_budget(seconds):
            return check()
    except BudgetExceeded as error:
        return undecided(str(error))
    except MemoryError:
        return undecided("ran out of memory (the worker's memory cap)")
