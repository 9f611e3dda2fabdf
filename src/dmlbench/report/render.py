"""The report's work that does not read MLflow, done in parallel: every figure, and the
Monte-Carlo comparisons, are tasks of a process pool while the sections go on reading runs.

Tasks are module-level functions with picklable arguments (data frames of what they draw, never
the context). The first tasks run in this process, in order; once they have taken
`POOL_AFTER_S` seconds the pool starts for the rest: its processes start from a fork server that
imports the report's modules once (matplotlib, seaborn; about 3.5 CPU s, blocking), after which
a task starts in milliseconds. A small report never pays for the pool. With one CPU (or
`workers=1`) every task runs in this process. `close` waits for every task and raises the first
error, so a report is never written with a figure missing.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from .base import render_figure

#: more processes than this do not pay on a report's few dozen figures
MAX_WORKERS = 4
#: the seconds of task work done in this process before the pool starts. Measured on 2 cores
#: (2026-11-29, workers=1 against a pool of 2 from the start, wall s): 2 data sets x 1 method
#: 5.2 against 8.2; abou-moustafa-2017-small 16.6 against 17.6; shigeto-2017 31.1 against 26.1;
#: the default benchmark 92 against 64.
POOL_AFTER_S = 5.0


def default_workers() -> int:
    """The CPUs this process may run on, at most `MAX_WORKERS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


class Renderer:
    """A pool of figure (and computation) tasks; a context manager that waits for them."""

    def __init__(self, workers: int | None = None, progress: bool = False):
        self.workers = default_workers() if workers is None else max(1, int(workers))
        self.progress = progress
        self.futures: list[Future] = []
        self.pool = None
        self.spent_here = 0.0  # seconds of task work done in this process

    def submit(self, fn: Callable, *args) -> Future:
        if self.pool is None and self.workers > 1 and self.spent_here >= POOL_AFTER_S:
            self._start_pool()
        if self.pool is not None:
            future = self.pool.submit(fn, *args)
        else:
            started = time.perf_counter()
            future = Future()
            future.set_result(fn(*args))
            self.spent_here += time.perf_counter() - started
        self.futures.append(future)
        return future

    def _start_pool(self) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["dmlbench.report.figures", "dmlbench.report.sections"])
        self.pool = ProcessPoolExecutor(self.workers, mp_context=context)

    def figure(self, out_dir: Path, name: str, draw: Callable, *args) -> str:
        """Draw `draw(*args)` into `out_dir/name` in the pool; returns `name` at once."""
        self.submit(render_figure, out_dir, name, draw, *args)
        return name

    def close(self) -> None:
        """Wait for every task (a progress bar on the console); the first error is raised."""
        try:
            for future in tqdm(self.futures, desc="report: figures", unit="task",
                               disable=not self.progress or None, leave=False):
                future.result()
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        """End the pool and wait for its fork server, so that the CPU of the pool's processes
        counts among this process's children (`os.times`, `time -v`, the workflow's CPU
        breakdown): a fork server nobody waits for takes it away when it exits."""
        if self.pool is None:
            return
        self.pool.shutdown(cancel_futures=True)
        self.pool = None
        multiprocessing.forkserver._forkserver._stop()  # the next pool starts a new one

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self._shutdown()
