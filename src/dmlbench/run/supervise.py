"""The members of a batch run one after the other in a child process that this one watches, so
that a member which ends the process (a segmentation fault in compiled code, `os._exit`, the
out-of-memory killer) or never returns to the interpreter past its time limit (a compiled loop,
a C call: the job's own limit, `run.time_limit`, cannot interrupt it) is named in one line, and
the members after it still run, in a new child.

`run(count, work, limit, ended)` forks a child (copy-on-write: nothing is imported again) that
calls `work(i)` for each member in turn and reports on a pipe when each starts and ends. This
process waits on the pipe; once a member has run `limit(i)` seconds plus the grace
(`grace_seconds`: its own limit gets the first chance), it makes the child dump every thread's
Python traceback (`faulthandler`, which needs no interpreter lock) and kills it. When the child
ends before its member did, `ended(Ended)` says how (the limit, a signal, an exit status) and
what the member used (wall and CPU time, peak memory: the child's resource usage), and the next
child starts with the member after it. A member with a memory limit (`memory(i)`, MiB: the
job's reservation, which a cluster's scheduler enforces) has the resident memory of the child
and its descendants looked at every `MEMORY_POLL_S` s, and is stopped the same way once it is
above the limit, so that a job over its reservation ends alike on a workstation and on a
cluster (a spike shorter than the interval is caught by the job's own peak, `run.job`). Where `os.fork` is missing, the members run in this
process, `faulthandler.dump_traceback_later` ending it past a limit and its grace.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import faulthandler
import json
import os
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import psutil

#: the signal that makes a stuck child dump its tracebacks (faulthandler.register) before it is
#: killed
DUMP_SIGNAL = signal.SIGUSR1
#: seconds between the dump and the kill
DUMP_SECONDS = 1.0
#: where a crash's traceback goes: the process's standard error (a file descriptor, whatever
#: object `sys.stderr` is)
STDERR = 2
#: seconds between looks at the resident memory of a member that has a memory limit
MEMORY_POLL_S = 0.5
#: the outcome of a member not run yet (a member that ran well has None, one that failed why)
_NOT_RUN = "not run"


def grace_seconds(limit: float) -> float:
    """How long past its time limit a member may run before it is stopped from outside: the
    limit inside the member (an interval timer) needs the interpreter to get control back;
    a tenth of the limit, at least 30 s and at most 10 min."""
    return min(max(30.0, 0.1 * limit), 600.0)


@dataclass(frozen=True)
class Ended:
    """Member `index` ended its process before it ended itself: stopped here past its time
    limit (`over_time`) or above its memory limit (`over_memory`, `mem_limit_mb`), or by
    `signal`, or with `exit_code`; `wall_s`, `cpu_s` and `peak_rss_mb` are what it used (wall
    time since it started; the child's CPU time since then; the child's peak resident memory,
    MiB)."""

    index: int
    over_time: bool
    signal: int | None
    exit_code: int | None
    limit: float | None
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    over_memory: bool = False
    mem_limit_mb: float | None = None

    def how(self) -> str:
        """How it ended, in a few words."""
        if self.over_memory:
            return (f"its resident memory went above the {self.mem_limit_mb:g} MB it reserves: "
                    "ended from outside, its traceback above")
        if self.over_time:
            return (f"did not stop within {grace_seconds(self.limit):g} s past it (compiled "
                    "code that does not return to the interpreter): ended from outside, its "
                    "traceback above")
        if self.signal is not None:
            name = signal.Signals(self.signal).name
            why = {signal.SIGSEGV: "segmentation fault", signal.SIGBUS: "bus error",
                   signal.SIGABRT: "aborted", signal.SIGFPE: "arithmetic error",
                   signal.SIGILL: "illegal instruction",
                   signal.SIGKILL: "killed: the out-of-memory killer, or a user"}.get(self.signal)
            return f"ended the process by signal {name}" + (f" ({why})" if why else "")
        return (f"ended the process with exit status {self.exit_code} before its record was "
                "written (os._exit or exit in the method?)")


def run(count: int, work: Callable[[int], str | None], limit: Callable[[int], float | None],
        ended: Callable[[Ended], str | None],
        memory: Callable[[int], float | None] = lambda i: None) -> list[str | None]:
    """Call `work(i)` for i = 0 .. count - 1 in order, in child processes watched by this one
    (module docstring), member i within `limit(i)` seconds and `memory(i)` MiB (None: no
    limit); returns what each returned (its failure, or None), and for a member that ended its
    child, what `ended` returned for it. A child's KeyboardInterrupt raises one here (after
    the child ended); one here ends the child first."""
    if not hasattr(os, "fork"):
        return _in_process(count, work, limit)
    outcomes: list[str | None] = [_NOT_RUN] * count
    start = 0
    while start < count:
        start = _one_child(start, count, work, limit, memory, ended, outcomes)
    return outcomes


def _in_process(count: int, work, limit) -> list[str | None]:
    outcomes = []
    for i in range(count):
        seconds = limit(i)
        if seconds is not None:
            faulthandler.dump_traceback_later(seconds + grace_seconds(seconds), exit=True,
                                           file=STDERR)
        try:
            outcomes.append(work(i))
        finally:
            faulthandler.cancel_dump_traceback_later()
    return outcomes


def resident_mb(pid: int) -> float:
    """Resident memory (MiB) of process `pid` and its descendants; 0 once it is gone."""
    try:
        process = psutil.Process(pid)
        family = [process, *process.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for member in family:
        try:
            total += member.memory_info().rss
        except psutil.Error:  # ended meanwhile
            pass
    return total / 2**20


def _one_child(start: int, count: int, work, limit, memory, ended, outcomes: list) -> int:
    """Run members `start` .. `count - 1` in one child; returns the first member not run."""
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(start, count, work, os.fdopen(write_end, "w", buffering=1))
    os.close(write_end)
    current: tuple[int, float, float] | None = None  # (member, its start here, child's CPU then)
    over_time = None  # the member stopped from outside past its limit
    over_memory = None  # the member stopped from outside above its memory limit
    seen_mb = 0.0  # the most resident memory seen of the current member
    buffer = b""
    reader = os.fdopen(read_end, "rb", buffering=0)
    try:
        while True:
            deadline = mem_limit = None  # when it is over its time; its memory limit, MiB
            if current is not None and over_time is None and over_memory is None:
                seconds, mem_limit = limit(current[0]), memory(current[0])
                if seconds is not None:
                    deadline = current[1] + seconds + grace_seconds(seconds)
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if mem_limit is not None:
                timeout = MEMORY_POLL_S if timeout is None else min(timeout, MEMORY_POLL_S)
            ready, _, _ = select.select([reader], [], [], timeout)
            if mem_limit is not None:
                seen_mb = max(seen_mb, resident_mb(pid))
                if seen_mb > mem_limit:  # above its reservation: stop it from outside
                    over_memory = current[0]
                    _stop(pid)
                    continue
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    over_time = current[0]  # past its limit and its grace: stop it
                    _stop(pid)
                continue
            chunk = reader.read(65536)
            if not chunk:  # the child is gone
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if message["event"] == "start":
                    current = (message["index"], time.monotonic(), message["cpu"])
                    seen_mb = 0.0
                elif message["event"] == "done":
                    outcomes[message["index"]] = message["failure"]
                    current = None
                elif message["event"] == "interrupted":
                    os.waitpid(pid, 0)
                    raise KeyboardInterrupt
    except BaseException:
        _kill(pid)
        raise
    finally:
        reader.close()
    _, status, usage = os.wait4(pid, 0)
    if current is None:  # every member it started had ended
        if _NOT_RUN not in outcomes[start:count]:
            return count
        following = outcomes.index(_NOT_RUN, start, count)
        if following == start:  # ended before its first member: not to be started again
            outcomes[start] = (f"the batch's process ended before the member started "
                               f"(status {status})")
            return start + 1
        return following
    index, started, cpu = current
    stopped, too_large = over_time == index, over_memory == index
    outcome = Ended(index, stopped,
                    os.WTERMSIG(status) if os.WIFSIGNALED(status) and not (stopped or too_large)
                    else None,
                    os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, limit(index),
                    time.monotonic() - started, max(0.0, usage.ru_utime + usage.ru_stime - cpu),
                    max(usage.ru_maxrss / 1024, seen_mb), too_large, memory(index))
    outcomes[index] = ended(outcome)
    return index + 1


def _child(start: int, count: int, work, channel) -> None:
    """Run members `start` .. `count - 1`, reporting each on `channel`; end the process."""
    code = 0
    try:
        _die_with_parent()
        faulthandler.enable(file=STDERR, all_threads=True)
        faulthandler.register(DUMP_SIGNAL, file=STDERR, all_threads=True, chain=False)
        for i in range(start, count):
            channel.write(json.dumps({"event": "start", "index": i,
                                      "cpu": time.process_time()}) + "\n")
            failure = work(i)
            channel.write(json.dumps({"event": "done", "index": i, "failure": failure}) + "\n")
    except KeyboardInterrupt:
        channel.write(json.dumps({"event": "interrupted"}) + "\n")
        code = 130
    except BaseException:  # a bug of the batch itself: its traceback, and the member unnamed
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr, channel):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _die_with_parent() -> None:
    """Have the kernel kill this child when the watching process dies (Linux: a killed
    workflow must not leave a job running on its own)."""
    libc = ctypes.util.find_library("c")
    if sys.platform.startswith("linux") and libc:
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(libc, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(pid: int) -> None:
    """Make child `pid` dump its tracebacks (`DUMP_SIGNAL`), then kill it."""
    try:
        os.kill(pid, DUMP_SIGNAL)
        time.sleep(DUMP_SECONDS)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
