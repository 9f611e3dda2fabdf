"""Every speed and memory benchmark, one after the other, in one run (`python -m benchmarks`,
`make benchmarks`). Each prints its ratios against its reference measured side by side (CVXPY,
scikit-learn, metric-learn, the earlier algorithm); none asserts a time.

    python -m benchmarks            # the issue goals' settings (hours: local_speed times the
                                    # earlier commit too, scale fits every method at 60 000)
    python -m benchmarks --quick    # smaller sizes (minutes)
    python -m benchmarks nca_speed mvce_speed   # some of them

BLAS and OpenMP are held to one thread, as in the per-benchmark scripts, so the ratios compare
algorithms, not thread counts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: (script, its arguments in a full run, in a quick run)
BENCHMARKS = {
    "neighbour_speed": ([], ["--quick"]),
    "mvce_speed": ([], ["--quick"]),
    "local_speed": ([], ["--quick"]),
    "nca_speed": (["--parts", "digits,scaling"], ["--quick", "--parts", "digits,scaling"]),
    "dml_eig_speed": ([], ["--quick"]),
    "lmnn_speed": ([], ["--quick"]),
    "move_speed": ([], ["--quick"]),
    "boost_speed": ([], ["--quick"]),
    "memory": ([], ["--quick"]),
    "scale": ([], ["--sizes", "1000,4000"]),
    "hierarchical_speed": ([], ["--quick"]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"benchmarks to run (default all: {', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true", help="each benchmark's quick settings")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    failed = []
    for name in args.names or list(BENCHMARKS):
        extra = BENCHMARKS[name][1 if args.quick else 0]
        print(f"\n===== {name} {' '.join(extra)}", flush=True)
        start = time.perf_counter()
        result = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *extra], env=env)
        print(f"===== {name}: {time.perf_counter() - start:.0f} s wall, exit {result.returncode}",
              flush=True)
        if result.returncode:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
