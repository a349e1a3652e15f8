# rflib reproductions. `make` = set up + run every notebook at standard scale; `make test` = set up + all tests.
# Nothing else is needed on a fresh machine than Python 3.11, make and git (and network access to PyPI).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SEED   ?= 0
RUN     = $(PY) tools/run_notebooks.py --seed $(SEED)

.PHONY: all notebooks report book quick paper test bench lint format venv lock clean distclean

all: notebooks report

# The environment is rebuilt from scratch only when pyproject.toml or requirements-nodeps.txt changes. uv (pinned,
# installed into the venv by pip) resolves and installs the same pins as pip would, ~10× faster (5 s vs 100 s here).
UV_PIN := uv==0.13.9
# requirements.lock pins the whole transitive set (`make lock` regenerates it from pyproject.toml): every machine
# installs exactly those versions, then rflib itself without resolving again.
$(STAMP): pyproject.toml requirements.lock requirements-nodeps.txt
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $(UV_PIN)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements.lock
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps -e .
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps -r requirements-nodeps.txt
	touch $(STAMP)

## Re-resolve requirements.lock from pyproject.toml's pins (needs PyPI), then rebuild the environment from it.
lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --extra test --extra book --python-version 3.11 --custom-compile-command "make lock" \
		--quiet -o requirements.lock

venv: $(STAMP)

## Every notebook at standard scale (the paper's settings wherever they fit): build/executed, figures/, results/.
notebooks: $(STAMP)
	$(RUN) --scale standard

## REPRODUCTION.md from results/*.json: per paper, every claim, the paper's value, ours, the verdict, a link.
report: $(STAMP)
	$(PY) tools/make_report.py

## The offline HTML book of the executed notebooks (standard scale after `make`, else quick scale, run if needed):
## build/book/_build/html/index.html. MathJax 3 comes from the npm registry (needs npm), pinned by checksum.
book: $(STAMP)
	$(PY) tools/build_book.py

## Every notebook at quick scale (CI smoke settings): build/quick/{executed,figures,results}.
quick: $(STAMP)
	$(RUN) --scale quick

## Every notebook at the paper's full settings (hours; meant for a GPU or a long run).
paper: $(STAMP)
	$(RUN) --scale paper

## Lint, then every test in float64, including a quick-scale papermill run of every notebook.
# The tests are compile-bound (many small jitted shapes): XLA's backend optimisation level 0 compiles ~30 % faster;
# LLVM optimisation only (no fast-math either way): every tolerance still holds; only large kernels run slower.
test: $(STAMP)
	$(PY) -m ruff check .
	JAX_ENABLE_X64=1 XLA_FLAGS="$(XLA_FLAGS) --xla_backend_optimization_level=0" $(PY) -m pytest --durations=15

## Every benchmark suite at full size (~5 min on the 2-core CPU): tables on stdout, JSON in build/benchmarks/.
## Not part of `make test`: timings depend on the machine. Extra options: make bench BENCH_ARGS="--quick".
bench: $(STAMP)
	$(PY) -m benchmarks $(BENCH_ARGS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

## Remove build outputs (executed notebooks, quick-scale output, caches); figures/ and results/ are kept.
clean:
	rm -rf build .pytest_cache .ruff_cache notebooks/*.ipynb
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -prune -exec rm -rf {} +

## clean, and remove the virtual environment too.
distclean: clean
	rm -rf $(VENV) *.egg-info
