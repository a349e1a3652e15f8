# rflib reproductions. `make` = set up + run every notebook at standard scale; `make test` = set up + all tests.
# Nothing else is needed on a fresh machine than Python 3.11, make and git (and network access to PyPI).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
# The environment's inputs; .venv-<key> is built from them, key = a content hash of them and of Python (see below).
ENV_INPUTS := pyproject.toml requirements.lock requirements-nodeps.txt requirements-nodeps.lock requirements-uv.lock
ENV_KEY    := $(shell $(PYTHON) tools/venvctl.py key $(ENV_INPUTS))
VENV       := .venv
VENV_DIR   := .venv-$(ENV_KEY)
PY         := $(VENV)/bin/python
STAMP      := $(VENV_DIR)/.installed
SEED       ?= 0
RUN     = $(PY) tools/run_notebooks.py --seed $(SEED)

.PHONY: all notebooks report book quick paper test bench lint format venv lock clean distclean ptb-lm

all: notebooks report

# The environment is built only when the *content* of $(ENV_INPUTS) or the Python version changes (an mtime change
# rebuilds nothing): into a new directory .venv-<key> beside the current one; .venv is a symlink that is switched to
# it (one atomic rename) only after every step succeeded, and older .venv-* directories are removed after that. A
# failed build (offline, say) removes its partial directory, says so, exits non-zero and leaves .venv as it was.
# requirements.lock pins the whole transitive set (`make lock` regenerates it from pyproject.toml), every file with
# its SHA-256: every machine installs exactly those files, then rflib itself without resolving again (an editable
# install of the checkout has no hash). uv (pinned and hash-checked too, installed into the venv by pip) installs
# them ~10x faster than pip (5 s vs 100 s here, bytecode aside). The installer commands are variables so that a test
# can stub them.
# --compile-bytecode writes every installed module's .pyc, as pip does and uv does not by default (≈ 20 s more here).
# Where PYTHONDONTWRITEBYTECODE is set (as on this project's machines), Python never caches bytecode itself, and every
# process compiled what it imported (`import jax` 3.0 -> 1.1 s, `import matplotlib.pyplot` 2.5 -> 0.8 s in a slow
# spell; each notebook kernel and test subprocess paid it). An environment built before this flag works the same,
# only slower to start (`make distclean` once rebuilds it with them). $(OWN_PYC) does the same for the checkout's own
# modules before every run that starts many processes (a stale .pyc is never used: Python compares it with its
# source); it is only a speed-up, so a read-only checkout, where it cannot write, runs on without it.
OWN_PYC     = $(PY) -m compileall -q rflib tools benchmarks || echo "make: cannot write the checkout's .pyc; going on"
UV_PIN     := uv==0.13.9
MKVENV      = $(PYTHON) -m venv
BOOTSTRAP   = $(VENV_DIR)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes \
		-r requirements-uv.lock
UV          = $(VENV_DIR)/bin/uv
UV_INSTALL  = $(UV) pip install --quiet --python $(VENV_DIR)/bin/python
CHECK       = $(VENV_DIR)/bin/python -c "import rflib"
$(STAMP): | $(ENV_INPUTS)
	@test -n "$(ENV_KEY)" || { echo "make: '$(PYTHON)' could not hash the environment's inputs (PYTHON=python3.11?)" >&2; exit 1; }
	@$(PYTHON) tools/venvctl.py prepare $(VENV) $(VENV_DIR)
	@set -x; $(MKVENV) $(VENV_DIR) \
		&& $(BOOTSTRAP) \
		&& $(UV_INSTALL) --compile-bytecode --require-hashes -r requirements.lock \
		&& $(UV_INSTALL) --compile-bytecode --require-hashes --no-deps -r requirements-nodeps.lock \
		&& $(UV_INSTALL) --no-deps -e . \
		&& $(CHECK) \
		|| { set +x; $(PYTHON) tools/venvctl.py failed $(VENV) $(VENV_DIR); }
	@$(PYTHON) tools/venvctl.py switch $(VENV) $(VENV_DIR)

## Re-resolve requirements.lock from pyproject.toml's pins (needs PyPI; versions already in the lock are kept
## unless pyproject.toml asks otherwise), the hashed requirements-nodeps.lock and requirements-uv.lock too; the next
## make builds the environment from them.
LOCK = $(VENV)/bin/uv pip compile --python-version 3.11 --custom-compile-command "make lock" --generate-hashes --quiet
lock: $(STAMP)
	$(LOCK) pyproject.toml --extra test --extra book -o requirements.lock
	$(LOCK) requirements-nodeps.txt --no-deps -o requirements-nodeps.lock
	echo "$(UV_PIN)" | $(LOCK) - --no-annotate -o requirements-uv.lock

venv: $(STAMP)

## Every notebook at standard scale (the paper's settings wherever they fit): build/executed, figures/, results/.
notebooks: $(STAMP)
	$(OWN_PYC)
	$(RUN) --scale standard

## REPRODUCTION.md from results/*.json: per paper, every claim, the paper's value, ours, the verdict, a link.
report: $(STAMP)
	$(PY) tools/make_report.py

## The offline HTML book of the executed notebooks (standard scale after `make`, else quick scale, run if needed):
## build/book/_build/html/index.html. MathJax 3 comes from the npm registry (needs npm), pinned by its SHA-512.
book: $(STAMP)
	$(OWN_PYC)
	$(PY) tools/build_book.py

## Train the Penn Treebank LSTM of HRF §4.2 (lm.PTB_RECIPE, seed 0, 17 epochs: ≈ 40 min on 2 cores at the usual
## speed, 2 h 5 min in the slow spell of 2026-11-27) into data/ptb_lstm/: the checkpoint notebook 03 loads at
## standard scale (checked by its SHA-256) and its training log. Paper scale retrains.
ptb-lm: $(STAMP)
	$(PY) tools/train_ptb_lm.py --seed 0

## Every notebook at quick scale (CI smoke settings): build/quick/{executed,figures,results}.
quick: $(STAMP)
	$(OWN_PYC)
	$(RUN) --scale quick

## Every notebook at the paper's full settings (hours; meant for a GPU or a long run): results/paper/, figures/paper/.
paper: $(STAMP)
	$(OWN_PYC)
	$(RUN) --scale paper

## Lint, then every test in float64, including a quick-scale papermill run of every notebook.
# The tests are compile-bound (many small jitted shapes): XLA's backend optimisation level 0 compiles ~30 % faster;
# LLVM optimisation only (no fast-math either way): every tolerance still holds; only large kernels run slower.
# XLA:CPU's newer fusion emitters (jaxlib 0.10.2's default) compile slowly (openxla/xla#41173 reports the same
# emitter's compile-time regression); the classic emitter (--xla_cpu_use_fusion_emitters=false) took the whole run
# from 12 min 52 s to 8 min 46 s (CPU time 22.1 -> 15.9 min, 2026-11-27, same checkout, slow spell); every test holds
# (one memory test compares L and 8L instead of L and 2L: the classic emitter's buffer plan at one length differs).
# Compiling is single-threaded, so one process left a core idle (CPU time 1.24x wall time over the whole run): the
# tests run in one pytest-xdist worker per core, a test file per worker at a time (its tests share compiled
# functions), the notebook runs first (tests/scheduling.py). 2 cores: 9 min 51 s serial -> see README. TEST_WORKERS=0
# runs them in this process, one after another.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m ruff check .
	$(OWN_PYC)
	JAX_ENABLE_X64=1 XLA_FLAGS="$(XLA_FLAGS) --xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false" \
		$(PY) -m pytest --durations=15 \
		-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

## Every benchmark suite at full size (~5 min on the 2-core CPU, plus ~9 for causal_chunks): tables on stdout, JSON in build/benchmarks/.
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
	find . -name __pycache__ -type d -not -path './$(VENV)*' -prune -exec rm -rf {} +

## clean, and remove the virtual environment too (the .venv link and every .venv-* directory).
distclean: clean
	rm -rf $(VENV) $(VENV)-* $(VENV).* *.egg-info
