"""The report's work that does not read MLflow, done in parallel: every figure, and the
Monte-Carlo comparisons, are tasks of a process pool while the sections go on reading runs.

Tasks are module-level functions with picklable arguments (data frames of what they draw, never
the context). The pool's processes start from a fork server that has imported the report's
modules once (matplotlib, seaborn), so a task starts in milliseconds. With one CPU (or
`workers=1`) everything runs in this process, in order. `close` waits for every task and
raises the first error, so a report is never written with a figure missing.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from .base import render_figure

#: more processes than this do not pay on a report's few dozen figures
MAX_WORKERS = 4


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
        if self.workers > 1:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["dmlbench.report.figures",
                                            "dmlbench.report.sections"])
            self.pool = ProcessPoolExecutor(self.workers, mp_context=context)
            for _ in range(self.workers):  # start the processes now, not at the first task
                self.pool.submit(int)

    def submit(self, fn: Callable, *args) -> Future:
        if self.pool is not None:
            future = self.pool.submit(fn, *args)
        else:
            future = Future()
            future.set_result(fn(*args))
        self.futures.append(future)
        return future

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
