# Tokens & Attention: every job a reader or CI needs.
#   make test     install (into .venv unless an env is active), run every test
#   make course   install, then build the course (_build/html/index.html)
#   make pdf      install, then the whole course as one PDF (_build/course.pdf)
#   make lab      open the chapters in JupyterLab
#   make bench    benchmarks (ratios against numpy, torch, tiktoken)
#   make test-intel  the library's kernel tests on Intel's OpenCL CPU runtime
#   make system-deps Debian packages the course can use (PoCL, Chromium,
#                    Oclgrind), installed only when you run this; it may ask
#                    for root (sudo). Nothing else here does.

# An active virtualenv, or an active conda env other than base, is used as
# it is; otherwise everything goes into a local .venv.
ifdef VIRTUAL_ENV
VENV := $(VIRTUAL_ENV)
else ifneq ($(filter-out base,$(CONDA_DEFAULT_ENV)),)
VENV := $(CONDA_PREFIX)
else
VENV := .venv
endif
PY := $(VENV)/bin/python
STAMP := $(VENV)/.netcl_lite-installed

.PHONY: install system-deps test test-intel course site pdf lab bench clean

# `make install` changes nothing outside $(VENV), for root too: when no
# OpenCL device here compiles, tools/ensure_opencl.sh adds Intel's runtime
# to the environment (pip) and says how to get Debian's PoCL instead.
install: $(STAMP)

$(STAMP): pyproject.toml Makefile tools/ensure_opencl.sh
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	bash tools/ensure_opencl.sh $(PY)
	@touch $(STAMP)

# Debian's pocl-opencl-icd, chromium and oclgrind, each explained before it
# is installed; packages already there are left alone.
system-deps:
	bash tools/system/debian_packages.sh

NBVAL := --nbval --nbval-current-env --nbval-sanitize-with chapters/sanitize.cfg

test: install
	$(PY) -m pytest tests chapters $(NBVAL)

# The same kernels on a second OpenCL implementation: Intel's CPU runtime
# from PyPI (the [intel] extra), selected by name. The chapters' stored
# outputs were made on PoCL, so this runs the library's tests only.
INTEL_TESTS := tests/ops tests/nn tests/core tests/hardening tests/test_optim.py

test-intel: install
	$(PY) -m pip install --quiet -e ".[intel]"
	NETCL_PLATFORM=intel NETCL_REQUIRE_INTEL=1 $(PY) -m pytest $(INTEL_TESTS)

# The static course, from the chapters' stored outputs (tools/build_site.py):
# _build/html/index.html. `make site` rebuilds it without the install step.
course: install
	$(PY) tools/build_site.py

site:
	$(PY) tools/build_site.py

# The same sources as one page (Sphinx singlehtml), printed by headless
# Chromium with math typeset, figures, code and outputs (tools/build_pdf.py).
pdf: install
	$(PY) tools/build_pdf.py

# JupyterLab on the repository, opened at chapters/ (tools/lab/: the file
# browser lists each chapter once, as its notebook; a MyST twin opened by
# path opens as a notebook too, through jupytext).
LAB_FLAGS := --config="$(CURDIR)/tools/lab/jupyter_lab_config.py" \
	$(if $(filter 0,$(shell id -u)),--allow-root)

lab: install
	$(VENV)/bin/jupyter lab $(LAB_FLAGS)

# torch for the bench's torch columns: the CPU-only wheel (PyPI's pulls CUDA)
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

# One run, one table (bench/report.py also runs bench/tokenizer.py). OpenBLAS
# core-type overrides that some machines set would slow numpy: unset here only.
bench: install
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet torch \
		--index-url $(TORCH_CPU_INDEX) || echo "torch CPU wheel: not reachable"
	$(PY) -m pip install --quiet -e ".[bench]"
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/report.py

clean:
	rm -rf _build dist build *.egg-info
