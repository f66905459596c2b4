# mcpkit developer entry points.  `make test` is what CI runs (through .ci/run).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Re-install when the packaging files or the C accelerator's sources change.
STAMP := $(VENV)/install.stamp
C_SOURCES := $(wildcard src/mcpkit/json/*.c src/mcpkit/json/*.h)
PYTEST_COV := --cov=mcpkit --cov-branch --cov-report=term-missing

.PHONY: venv run test browser services conformance bench bench-http soak fuzz clean

venv: $(STAMP)

$(STAMP): pyproject.toml setup.py $(C_SOURCES)
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $@

# Serves examples/inventory.py on http://127.0.0.1:8000/inventory/mcp (README, quick start).
run: venv
	$(PY) -m mcpkit serve examples/inventory.py

test: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d build/site
	$(MAKE) --no-print-directory browser
	$(MAKE) --no-print-directory services
	$(PY) -m pytest $(PYTEST_COV)
	if [ -d tests/json ]; then \
		MCPKIT_PURE_PYTHON=1 $(PY) -m pytest tests/json $(PYTEST_COV) --cov-append; \
	fi
	$(MAKE) --no-print-directory fuzz FUZZ_ITERATIONS=50000
	$(MAKE) --no-print-directory conformance

# Headless Chromium, the Debian package, for the MCP Apps browser test
# (tests/test_example_apps_browser.py, which fails without it): installed with apt-get when
# missing and running as root; otherwise install it yourself (apt-get install chromium).
browser:
	@if ! command -v chromium >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; \
	then export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq \
		--no-install-recommends chromium; fi
	@command -v chromium >/dev/null || { echo "make browser: install chromium (apt-get install chromium)"; exit 1; }

# redis-server and haproxy, the Debian packages, for the tests of the Redis stores and the
# cluster test (tests/scale: three nodes behind HAProxy); each test starts its own on loopback
# ports and stops them.  Installed with apt-get when either is missing and running as root;
# otherwise install them yourself (apt-get install redis-server haproxy).
services:
	@if ! { command -v redis-server && [ -x /usr/sbin/haproxy ]; } >/dev/null && [ "$$(id -u)" = 0 ] \
		&& command -v apt-get >/dev/null; \
	then export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq \
		--no-install-recommends redis-server haproxy; fi
	@command -v redis-server >/dev/null || { echo "make services: install redis-server (apt-get install redis-server)"; exit 1; }
	@[ -x /usr/sbin/haproxy ] || { echo "make services: install haproxy (apt-get install haproxy)"; exit 1; }

# The official MCP conformance suite against examples/everything.py, started afresh for each
# run by tools/run_conformance.py (which installs Node >= 22 and the pinned harness into
# build/conformance-cache on first use).  Scenarios that fail today for a known reason are
# listed, with that reason, in conformance/expected-failures.<revision>.yml; anything else
# failing, or a listed scenario passing, fails the target.  Results: build/conformance
# (conformance/README.md).
# The Skills extension's scenarios are on no requirement set: run them one by one at 2026-07-28
# (the runner fails a run whose skills checks were all skipped).
SKILLS_RUNS := $(foreach scenario,enumeration manifest directory,scenario:sep-2640-skills-$(scenario)@2026-07-28)
conformance: venv
	rm -rf build/conformance
	$(PY) tools/run_conformance.py \
		--cmd '$(abspath $(PY)) -m mcpkit serve $(abspath examples/everything.py) --port {port}' \
		--runs "req:2025-11-25 req:2026-07-28 spec:2025-06-18 $(SKILLS_RUNS)" \
		--expected-failures '$(abspath conformance)/expected-failures.{rev}.yml' \
		--out build/conformance

# The C codec under AddressSanitizer and UBSan, fed mutated JSON and compared with the
# pure-Python reference.  `make fuzz FUZZ_ITERATIONS=1000000 FUZZ_SEED=7` for a long run.
FUZZ_ITERATIONS ?= 200000
FUZZ_SEED ?= 0
FUZZ_DIR := build/asan
EXT_SUFFIX = $$($(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
PY_INCLUDE = $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')

fuzz: venv
	mkdir -p $(FUZZ_DIR)
	gcc -O1 -g -std=c11 -Wall -Wextra -Werror -fPIC -shared -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all -I$(PY_INCLUDE) \
		src/mcpkit/json/_speedups.c -o $(FUZZ_DIR)/_speedups$(EXT_SUFFIX)
	LD_PRELOAD=$$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
		$(PY) tools/fuzz_codec.py $(FUZZ_DIR)/_speedups$(EXT_SUFFIX) $(FUZZ_SEED) $(FUZZ_ITERATIONS)

# bench/codec.py first, then any other benchmark script.
BENCH_SCRIPTS := bench/codec.py $(filter-out bench/codec.py,$(wildcard bench/*.py))

bench: venv
	for script in $(BENCH_SCRIPTS); do $(PY) "$$script"; done
	$(MAKE) --no-print-directory bench-http

# The side-by-side HTTP benchmark against mcp 2.3.0 and fastmcp 4.1.6 (issue 7; method in
# bench/http/run.py).  bench/http/setup.sh makes the peers' venv (build/bench-peers) and installs
# wrk on first use.  Writes bench/results/<date>.md and latest.md; QUICK=1 for a smoke run.
bench-http: venv
	bash bench/http/setup.sh
	$(PY) -m bench.http.run
	$(PY) -m bench.http.sessions
	$(PY) -m bench.http.listens
	$(PY) -m bench.http.tasks
	$(PY) -m bench.http.oauth
	$(PY) -m bench.http.workers

# 200,000 tools/call against one mcpkit server: RSS, file descriptors and threads must not grow.
soak: venv
	bash bench/http/setup.sh --wrk-only
	$(PY) -m bench.http.soak

clean:
	rm -rf $(VENV) build dist src/*.egg-info .coverage .coverage.* coverage.xml htmlcov \
		.mypy_cache .ruff_cache .pytest_cache .hypothesis .import_linter_cache
	rm -f src/mcpkit/json/*.so
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
