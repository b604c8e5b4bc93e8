# utf8fuzz: `make fuzz` (the nightly-style job) and `make test` (the whole suite).
# Both set themselves up: system packages, .venv, and the package with its C
# extension. Targets further down are for developers.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
FUZZ_TIME ?= 60

.PHONY: fuzz test setup lint clean

fuzz: setup
	$(VENV)/bin/utf8fuzz fuzz --time $(FUZZ_TIME)

test: setup
	$(PY) -m ruff check src tests fuzz
	$(PY) -m pytest -q

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py $(wildcard src/utf8fuzz/fast/*.c src/utf8fuzz/fast/*.h) scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,peers,fuzz]'
	touch $(STAMP)

lint: setup
	$(PY) -m ruff check src tests fuzz

clean:
	rm -rf build $(VENV) src/*.egg-info src/utf8fuzz/fast/*.so
