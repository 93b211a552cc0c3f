# Tokens & Attention: every job a reader or CI needs.
#   make test     install (into .venv unless a venv is active), run every test
#   make course   install, then build the course
#   make lab      open the chapters in JupyterLab
#   make bench    benchmarks (ratios against numpy, torch, tiktoken)

ifdef VIRTUAL_ENV
VENV := $(VIRTUAL_ENV)
else
VENV := .venv
endif
PY := $(VENV)/bin/python
STAMP := $(VENV)/.netcl_lite-installed

.PHONY: install test test-lib test-chapters course lab bench sync clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

NBVAL := --nbval --nbval-current-env --nbval-sanitize-with chapters/sanitize.cfg

test: install
	$(PY) -m pytest tests chapters $(NBVAL)

course: install
	$(PY) -m pytest -q tests/test_section6.py

lab: install
	$(VENV)/bin/jupyter lab chapters

bench: install
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) bench/tokenizer.py

clean:
	rm -rf _build dist build *.egg-info
