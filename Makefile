# The two commands of the README: `make run` (default benchmark) and `make test`.
# Each one creates the virtual environment and installs the pinned dependencies first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= 2
CONFIG ?= config/config.yaml
STAMP  := $(VENV)/.installed

export MLFLOW_TRACKING_URI ?= sqlite:///mlruns.db

.PHONY: run test test-fast system-packages smoke ui report dag clean install benchmarks

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e ".[test]"
	$(BIN)/python -c "from dmlbench.solvers import itml_compiled, lmnn_compiled, mvce_compiled; itml_compiled.precompile(); lmnn_compiled.precompile(); mvce_compiled.precompile()"
	$(BIN)/python -c "from dmlbench.measure import neighbours_compiled; neighbours_compiled.precompile()"
	touch $(STAMP)

# check-config first: a config error is one line naming the key, the file's line for bad YAML
run: $(STAMP)
	$(BIN)/dmlbench check-config $(CONFIG)
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

# everything, the cluster tests too (they install Debian's slurm-wlm, munge and postgresql when
# run as root and missing, else skip saying why); one pytest worker per core (pytest-xdist), the
# tests that share system services, the smoke run or a module's fixture in one worker
# (tests/conftest.py)
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(CORES) --dist loadgroup --durations=15

# the quick loop: no workflow runs, clusters or servers
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n $(CORES) --dist loadgroup

# the Debian packages of the cluster tests (root; CI runs this before `make test`)
system-packages:
	bash .ci/system-packages

dag: $(STAMP)
	$(BIN)/dmlbench check-config $(CONFIG)
	$(BIN)/snakemake -n --configfile $(CONFIG)

ui: $(STAMP)
	$(BIN)/mlflow ui --backend-store-uri $(MLFLOW_TRACKING_URI) --port 5000

benchmarks: $(STAMP)
	$(BIN)/python -m benchmarks

# the published reports (committed, listed in reports/README.md) are kept: `git checkout reports`
# restores one a run overwrote
clean:
	rm -rf results .snakemake mlruns.db mlruns.db.lock mlruns.db-wal mlruns.db-shm mlartifacts logs
	for d in reports/*/; do git ls-files --error-unmatch "$$d" >/dev/null 2>&1 || rm -rf "$$d"; done
