"""The report's task pool (`report.render.Renderer`): the first tasks run in the report's own
process, the pool starts only once they have taken `POOL_AFTER_S`, every task's result is
kept, and a failing task stops the report at `close` whichever process ran it."""

import os
import time

import pytest

from dmlbench.report import render


def _sleep_and_name_the_process(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _fail(message: str) -> None:
    raise ValueError(message)


def test_a_small_report_runs_every_task_in_its_own_process():
    with render.Renderer(workers=2) as renderer:
        futures = [renderer.submit(_sleep_and_name_the_process, 0.0) for _ in range(5)]
    assert renderer.pool is None
    assert {f.result() for f in futures} == {os.getpid()}


def test_the_pool_starts_once_the_tasks_have_taken_pool_after_s(monkeypatch):
    monkeypatch.setattr(render, "POOL_AFTER_S", 0.2)
    with render.Renderer(workers=2) as renderer:
        first = renderer.submit(_sleep_and_name_the_process, 0.3)
        rest = [renderer.submit(_sleep_and_name_the_process, 0.0) for _ in range(4)]
        assert renderer.pool is not None
    assert first.result() == os.getpid()
    assert os.getpid() not in {f.result() for f in rest}


def test_one_worker_never_starts_a_pool(monkeypatch):
    monkeypatch.setattr(render, "POOL_AFTER_S", 0.0)
    with render.Renderer(workers=1) as renderer:
        futures = [renderer.submit(_sleep_and_name_the_process, 0.0) for _ in range(3)]
        assert renderer.pool is None
    assert {f.result() for f in futures} == {os.getpid()}


def test_a_failing_task_in_the_pool_stops_the_report_at_close(monkeypatch):
    monkeypatch.setattr(render, "POOL_AFTER_S", 0.0)
    renderer = render.Renderer(workers=2)
    renderer.submit(_sleep_and_name_the_process, 0.0)
    renderer.submit(_fail, "figure x could not be drawn")
    with pytest.raises(ValueError, match="figure x could not be drawn"):
        renderer.close()
    assert renderer.pool is None  # shut down all the same
