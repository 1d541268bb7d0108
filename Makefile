# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv on first use and install everything the app needs.

PYTHON ?= python3
VENV ?= .venv
# The torch to install. The default is the build this project is tested with; point it at
# your own (e.g. a CUDA build) with TORCH=... and PIP_TORCH_ARGS="--index-url URL".
TORCH ?= torch==2.13.0
PIP_TORCH_ARGS ?=
PYTEST_ARGS ?=
FILE ?=

BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := resources/examples/first_graph.py

.PHONY: run test lint screenshot bench clean system-deps

# A window needs Qt's xcb libraries too; every other target runs Qt offscreen. Target-specific,
# so the system-deps check that `run` pulls in (through $(STAMP)) checks the window set.
run: SYSTEM_DEPS_ARGS = --window
run: $(STAMP)
	$(BIN)/autograd-viz $(FILE)

# `make test` also needs a browser: the replay page is tested in headless Chromium.
test: SYSTEM_DEPS_ARGS = --test
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen AUTOGRAD_VIZ_THREADS=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests resources setup.py
	$(BIN)/lint-imports

screenshot: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/autograd-viz $(EXAMPLE) --run --screenshot docs/screenshot.png

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	AUTOGRAD_VIZ_THREADS=1 $(BIN)/python -m benchmarks.bench_capture
	AUTOGRAD_VIZ_THREADS=1 $(BIN)/python -m benchmarks.bench_peers
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m benchmarks.bench_canvas
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m benchmarks.bench_descent
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m benchmarks.bench_startup
	QT_QPA_PLATFORM=offscreen AUTOGRAD_VIZ_THREADS=1 $(BIN)/python -m benchmarks.bench_picture
	AUTOGRAD_VIZ_THREADS=1 $(BIN)/python -m benchmarks.bench_devices

# Qt's system libraries (and make, python3-venv), checked in a fraction of a second on every
# run and installed when missing: pip cannot bring them. Order-only, so it never reinstalls.
system-deps:
	@PYTHON="$(PYTHON)" VENV="$(VENV)" bash scripts/system_deps.sh $(SYSTEM_DEPS_ARGS)

$(STAMP): pyproject.toml setup.py | system-deps
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_TORCH_ARGS) "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache
