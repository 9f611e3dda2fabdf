"""Local time limits (run/time_limit.py): a block over its limit raises, nested limits keep
the outer one, and a block within its limit leaves no timer behind."""

import signal
import time

import pytest

from dmlbench.run.time_limit import TimeLimitExceeded, limit


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_block_over_its_limit_raises_naming_it():
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded, match="candidate 3 exceeded its time limit of 0.2 s"):
        with limit(0.2, "candidate 3"):
            _spin(5)
    assert time.monotonic() - started < 2


def test_a_block_within_its_limit_leaves_no_timer():
    with limit(5, "job"):
        _spin(0.01)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)


def test_an_inner_limit_ends_and_the_outer_one_still_holds():
    with pytest.raises(TimeLimitExceeded) as outer:
        with limit(0.6, "job"):
            with pytest.raises(TimeLimitExceeded) as inner:
                with limit(0.1, "candidate"):
                    _spin(5)
            assert inner.value.what == "candidate"
            _spin(5)
    assert outer.value.what == "job"


def test_an_inner_limit_longer_than_the_outer_one_does_not_outlast_it():
    with pytest.raises(TimeLimitExceeded) as caught:
        with limit(0.2, "job"):
            with limit(60, "candidate"):
                _spin(5)
    assert caught.value.what == "job"


def test_no_limit_and_bad_limits():
    with limit(None, "job"):
        _spin(0.01)
    with pytest.raises(ValueError, match="time limit of job must be positive"):
        with limit(0, "job"):
            pass
