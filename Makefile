# make run   : set everything up from a fresh clone and run the quick profile end to end
# make test  : set everything up and run every test (pytest, go test, cargo test)
PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# PROFILE, SEED, RUN_DIR, CLUSTER, THREADS, MEM_LIMIT_MB: given only when set; their defaults are the
# plan's (bench_src/parameters.py: the quick profile, seed 1), written there once.
PROFILE ?=
SEED    ?=
# RUN_DIR: where `make run` writes (default: data/results/<profile>-<commit>[-dirty]-<plan digest>, so
# the same command resumes an interrupted run).
RUN_DIR ?=
# CLUSTER: run the blocks on a Dask cluster, e.g. local:2 or tcp://HOST:8786 (docs/cluster.md); default: here.
CLUSTER ?=
# THREADS, MEM_LIMIT_MB: runtime threads of both programs and their memory guard (default: this
# machine's usable CPUs and 80% of its RAM). Give them when runs of several machines are to combine
# (python -m bench_src hosts): the defaults follow each machine, and so would the plan.
THREADS ?=
MEM_LIMIT_MB ?=

.PHONY: setup venv system-deps build run test test-python test-go test-rust clean

setup: system-deps venv build

$(BIN)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/.installed

# Programs from the distribution that the harness and its tests use. Installed with apt when
# missing and we are root; otherwise one line says what to install.
# (GNU time checks the launcher's figures; the servers are for the mysql and postgres workloads.)
SYSTEM_PACKAGES := time:/usr/bin/time mariadb-server:/usr/sbin/mariadbd \
                   postgresql:/usr/lib/postgresql/*/bin/postgres
system-deps:
	@missing=""; for entry in $(SYSTEM_PACKAGES); do pkg=$${entry%%:*}; path=$${entry#*:}; \
	  ls $$path >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "please install:$$missing (Debian/Ubuntu: sudo apt-get install$$missing)"; fi; fi

build: venv
	$(BIN)/python -m bench_src build

# 1. `check` validates the parameters, the results directory (not a file, writable, on a disk with
#    space, not in use, not someone else's, not holding another plan) and any server named by a DSN
#    before anything is installed, built or written: it needs only the virtual environment;
# 2. only then the distribution's packages and the build (the rest of `setup`);
# 3. papermill writes the executed notebook under a temporary name, moved to run.ipynb only when the
#    run succeeded, so a refused or failed re-run never replaces the notebook of an earlier run;
# 4. --stderr-file - streams the notebook's stderr (the run's estimate and progress lines) to
#    papermill's stdout, sent on to make's stderr: a path (/dev/stderr) would be opened anew and
#    truncated, so `make run > log 2>&1` would lose the lines written before it;
# 5. --engine bench runs the notebook's kernel on Unix sockets in a private directory, not on TCP
#    ports of 127.0.0.1 (bench_src/run/kernel.py, docs/security.md).
run: venv
	@dir=$$($(BIN)/python -m bench_src check $(if $(PROFILE),--profile "$(PROFILE)") $(if $(SEED),--seed "$(SEED)") \
	     $(if $(RUN_DIR),--results-dir "$(RUN_DIR)") \
	     $(if $(CLUSTER),--cluster "$(CLUSTER)") $(if $(THREADS),--threads "$(THREADS)") \
	     $(if $(MEM_LIMIT_MB),--mem-limit-mb "$(MEM_LIMIT_MB)")) || exit 2; \
	$(MAKE) --no-print-directory system-deps build || exit 2; \
	mkdir -p -m 700 "$$dir" || exit 2; \
	echo "results: $$dir"; \
	partial="$$dir/run.partial.$$$$.ipynb"; \
	if $(BIN)/python -m bench_src notebook notebooks/run.ipynb "$$partial" \
	     $(if $(PROFILE),-p profile "$(PROFILE)") $(if $(SEED),-p seed "$(SEED)") -p results_dir "$$dir" \
	     $(if $(CLUSTER),-p cluster "$(CLUSTER)") \
	     $(if $(THREADS),-p threads "$(THREADS)") $(if $(MEM_LIMIT_MB),-p mem_limit_mb "$(MEM_LIMIT_MB)") >&2; then \
	  mv -f "$$partial" "$$dir/run.ipynb"; \
	else \
	  echo "the run failed: its notebook is $$partial ($$dir/run.ipynb, if any, is unchanged)" >&2; exit 1; \
	fi && \
	$(BIN)/python -c "import sys; from bench_src.report import export; export.render_notebooks(sys.argv[1])" "$$dir" && \
	echo "report: $$dir/export/"

test: setup test-go test-rust test-python

# The Go and Rust server tests run against private servers the harness starts for them.
# -trimpath as bench_src/run/build.py builds gobench, so vet and test reuse the packages it compiled.
test-go: venv
	cd gobench && go vet -trimpath ./... && ../$(BIN)/python -m bench_src with-servers -- go test -trimpath ./...

test-rust: venv
	cd rustbench && ../$(BIN)/python -m bench_src with-servers -- cargo test --release --locked

# The tests marked `simulation` run first, one test at a time on every usable CPU; every other test
# then runs one module per CPU (pyproject.toml says what each set may touch). Both sets always run;
# either failing fails the target.
test-python: venv build
	status=0; \
	$(BIN)/python -m pytest -m simulation -n auto || status=1; \
	$(BIN)/python -m pytest -m "not simulation" -n auto --dist loadfile || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) data/bin rustbench/target
