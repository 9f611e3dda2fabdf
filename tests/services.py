"""System services for the cluster tests, started and stopped by the tests themselves:
a one-node SLURM cluster (munge, slurmctld, slurmd) and a PostgreSQL server, on loopback ports,
with every file in a temporary directory.

Their Debian packages are installed by `.ci/system-packages` when missing (as root with apt-get;
CI runs it); where that is impossible the tests skip and say why.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import REPO

PG_BIN = Path("/usr/lib/postgresql")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check, what: str, timeout: float = 60.0, interval: float = 0.2):
    """Poll `check()` until it returns a true value; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def binary(name: str) -> str | None:
    """Path of a program: on PATH, or in /usr/sbin (daemons; not on every user's PATH)."""
    if Path(name).is_absolute():
        return name if Path(name).exists() else None
    return shutil.which(name) or (str(Path("/usr/sbin", name)) if Path("/usr/sbin", name).exists()
                                  else None)


def require_packages(binaries: list[str]) -> None:
    """Install the Debian packages of `.ci/system-packages` if one of `binaries` (names on PATH
    or absolute paths) is missing; skip the test with the reason when that is impossible here."""
    def missing():
        return [b for b in binaries if binary(b) is None]

    if not missing():
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(f"{', '.join(missing())} missing and cannot be installed here (needs root "
                    "and apt-get: run `sudo .ci/system-packages`)")
    result = subprocess.run(["bash", str(REPO / ".ci/system-packages")], capture_output=True,
                            text=True, timeout=900)
    if result.returncode != 0 or missing():
        pytest.skip(f"installing {', '.join(missing())} failed: "
                    f"{(result.stderr or result.stdout)[-500:]}")


def _start(cmd: list[str], env: dict | None = None, user: str | None = None) -> None:
    if user and os.geteuid() == 0 and user != getpass.getuser():
        cmd = ["runuser", "-u", user, "--", *cmd]
    subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=60)


def _stop_pidfile(pidfile: Path, timeout: float = 30.0) -> None:
    """SIGTERM the daemon of `pidfile` and wait until it is gone."""
    try:
        pid = int(pidfile.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return
    try:
        os.kill(pid, 15)
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), f"process {pid} to stop", timeout)
    except ProcessLookupError:
        return
    except TimeoutError:
        os.kill(pid, 9)


class SlurmCluster:
    """One node, `localhost`, `cpus` CPUs (more than the machine's, so that the smoke jobs run
    at once), one partition `test`; job completions logged to a text file
    (`sacct --completion` reads them; there is no slurmdbd). Client commands find it through
    the `SLURM_CONF` of `env`."""

    BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "sacct", "squeue"]

    def __init__(self, root: Path, cpus: int = 8, memory_mb: int = 16000):
        self.root = root
        self.conf = root / "slurm.conf"
        self.cpus, self.memory_mb = cpus, memory_mb
        # Snakemake's SLURM job-step plugin drops SLURM_* variables before it calls srun inside
        # a job, SLURM_CONF too; an srun on PATH that sets it finds this cluster's config
        # (a real cluster's /etc/slurm/slurm.conf needs no such help)
        self.bin = root / "bin"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf),
                    "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"}

    def _write_config(self) -> None:
        r = self.root
        for sub in ("state", "spool", "log"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        user = getpass.getuser()
        self.conf.write_text(f"""\
ClusterName=dmlbench-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r / 'munge.sock'}
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log/slurmctld.log'}
SlurmdLogFile={r / 'log/slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={r / 'log/jobcomp.txt'}
MinJobAge=600
# the node may announce more CPUs and memory than the machine has: the test's jobs are small
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")

    def start(self) -> "SlurmCluster":
        r = self.root
        self._write_config()
        self.bin.mkdir(exist_ok=True)
        srun = self.bin / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {shutil.which("srun")} "$@"\n')
        srun.chmod(0o755)
        key = r / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        _start([binary("munged"), "--force", f"--key-file={key}", f"--socket={r / 'munge.sock'}",
                f"--pid-file={r / 'munged.pid'}", f"--log-file={r / 'log/munged.log'}",
                f"--seed-file={r / 'munge.seed'}"])
        _start([binary("slurmctld")], env=self.env)
        _start([binary("slurmd"), "-N", "localhost"], env=self.env)
        wait_for(lambda: "idle" in self.run(["sinfo", "-h", "-o", "%t"]).stdout,
                 "the SLURM node to become idle", timeout=60)
        return self

    def run(self, cmd: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)

    def completed_jobs(self) -> list[dict]:
        """Every job the cluster finished, from `sacct --completion`."""
        fields = ["JobID", "JobName", "State", "Partition", "NodeList"]
        out = self.run(["sacct", "--completion", "--parsable2", "--noheader",
                        f"--format={','.join(fields)}"])
        assert out.returncode == 0, out.stderr
        return [dict(zip(fields, line.split("|"))) for line in out.stdout.splitlines() if line]

    def stop(self) -> None:
        for daemon in ("slurmd", "slurmctld", "munged"):
            _stop_pidfile(self.root / f"{daemon}.pid")


def pg_bin() -> Path:
    """Directory of the newest installed PostgreSQL server binaries (Debian's layout)."""
    versions = sorted(PG_BIN.glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return versions[-1].parent if versions else PG_BIN / "VERSION/bin"


class PostgresServer:
    """A throwaway PostgreSQL cluster on a loopback port (trust authentication), run as the
    `postgres` user when the tests run as root (the server refuses to run as root)."""

    def __init__(self):
        # its own directory under /tmp: pytest's tmp_path is private to the test's user
        self.root, self.port = Path(tempfile.mkdtemp(prefix="dmlbench-pg-")), free_port()
        self.user = "postgres" if os.geteuid() == 0 else getpass.getuser()
        self.bin = pg_bin()

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def start(self) -> "PostgresServer":
        if self.user != getpass.getuser():
            shutil.chown(self.root, self.user)
        _start([str(self.bin / "initdb"), "-D", str(self.datadir), "--auth=trust", "-U",
                self.user, "--encoding=UTF8", "--no-sync"], user=self.user)
        _start([str(self.bin / "pg_ctl"), "-D", str(self.datadir), "-l",
                str(self.root / "server.log"), "-w", "-t", "60", "start", "-o",
                f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"],
               user=self.user)
        return self

    def create_database(self, name: str) -> str:
        _start([str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                self.user, "-d", "postgres", "-c", f'CREATE DATABASE "{name}"'], user=self.user)
        return self.url(name)

    def stop(self) -> None:
        subprocess.run([str(self.bin / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w",
                        "stop"] if os.geteuid() != 0 else
                       ["runuser", "-u", self.user, "--", str(self.bin / "pg_ctl"), "-D",
                        str(self.datadir), "-m", "fast", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


class MlflowServer:
    """`mlflow server` on a loopback port with `backend` as its store and artifacts served from
    a local directory (what a team's shared tracking server does)."""

    def __init__(self, backend: str, artifacts: Path):
        self.backend, self.artifacts, self.port = backend, artifacts, free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = artifacts.parent / "mlflow-server.log"

    def start(self) -> "MlflowServer":
        import sys
        import urllib.request

        mlflow = str(Path(sys.executable).parent / "mlflow")
        self.proc = subprocess.Popen(
            [mlflow, "server", "--backend-store-uri", self.backend, "--artifacts-destination",
             self.artifacts.as_uri(), "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", "2"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"})

        def healthy():
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(healthy, "the MLflow server", timeout=180, interval=0.5)
        return self

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
