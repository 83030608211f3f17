# Every target creates and uses the local virtual environment .venv, so a
# fresh machine with only Python 3.11 and git needs nothing else.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: commands-doc docs demo transcripts test test-fast soak mutation bench bench-scale bench-retrieval bench-guard update-rules lint format validate-memory clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint,mcp,anthropic,web,semantic]'
	# An editable install leaves the sources uncompiled; compile them as pip
	# does for a regular install (a .pyc is used even under PYTHONDONTWRITEBYTECODE).
	$(BIN)/python -m compileall -q grimoire_cli > /dev/null
	touch $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# Each memory system's example usage (tests/adapter_examples.py, what the adapter tests play)
# through its adapter as Markdown: each call as written and its result, what `mem` shows of
# what it wrote, and `N calls, M failed` per system; fails if a call raised. SYSTEM=sabre: one.
transcripts: $(STAMP)
	$(BIN)/python scripts/adapter_transcripts.py $(if $(SYSTEM),--system $(SYSTEM))

# One process per core (pytest-xdist), each running whole files in file order:
# a file's last test may read what its earlier ones counted (test_model.py's
# rules, the crash matrix). Not --dist loadgroup: with pytest 9.2 it silently
# stops grouping (pytest-dev/pytest-xdist#1386). The files go out in the order
# tests/conftest.py gives (the longest first), not xdist's (the most tests first).
XDIST := -n auto --dist loadfile --no-loadscope-reorder

test: $(STAMP)
	$(BIN)/python -m pytest $(XDIST)

# The inner loop: no slow tests, Hypothesis's dev profile (a tenth of the
# examples). `make test` (every test, the ci profile) is what CI runs.
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest $(XDIST) -m "not slow"

# The model test of the whole store (tests/test_model.py) at 25 times CI's
# sequences: over 50,000 steps, for finding rare ones. Not in CI.
soak: $(STAMP)
	HYPOTHESIS_PROFILE=soak $(BIN)/python -m pytest tests/test_model.py tests/test_team.py -p no:cacheprovider

# Mutation testing (issue 44; not in CI): mutmut, a dev-only tool installed
# here and never a dependency of the package, run by scripts/mutation.py group
# by group (MODULES: guard journal merge write catalog entry_rules search; default all), each
# against only the tests that bear on it, with one child process: a whole-suite
# run is hours on two cores. The score per module and every survivor (killed,
# equivalent with the reason, or not) go to benchmarks/mutation.md;
# `$(BIN)/python scripts/mutation.py --show NAME` prints one mutant. Under
# mutmut a mutant runs in the test process only (a `mem` subprocess imports
# the unmutated package); the fresh-process checks that follow put the
# mutated package on PYTHONPATH, so a `mem` process a test starts runs it too.
MODULES ?=
MUTMUT := $(VENV)/.mutmut
$(MUTMUT): $(STAMP)
	$(BIN)/python -m pip install --quiet 'mutmut==3.8.1'
	touch $(MUTMUT)

mutation: $(MUTMUT)
	$(BIN)/python scripts/mutation.py $(MODULES)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_mcp.py
	$(BIN)/python benchmarks/bench_mcp_start.py
	$(BIN)/python benchmarks/bench_web.py
	$(BIN)/python benchmarks/bench_scale.py

# The bulk paths at 1k and 10k same-day entries and their fitted exponents;
# a path past 1.2 fails it. `make bench-scale SCALE_MAX=100000` adds 100k.
# Then the indexed near-duplicate lookup's recall against the full scan (fails past 1 % missed).
bench-scale: $(STAMP)
	SCALE_MAX=$(SCALE_MAX) $(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_near.py

# LoCoMo (../shared/benchmarks/locomo; LOCOMO=PATH for another copy). BENCH_SEMANTIC=1: the
# hybrid ranking of the semantic extra, with its model where one can be fetched (lexical, said so, where not).
bench-retrieval: $(STAMP)
	$(BIN)/python benchmarks/bench_retrieval.py $(if $(LOCOMO),--data $(LOCOMO)) $(if $(BENCH_SEMANTIC),--semantic)

bench-guard: $(STAMP)
	$(BIN)/python benchmarks/bench_guard.py

# Re-vendor gitleaks' rules from a checkout of github.com/gitleaks/gitleaks:
# `make update-rules GITLEAKS=../gitleaks` (fails, writing nothing, on a rule
# that cannot be converted to Python's re).
update-rules: $(STAMP)
	$(BIN)/python scripts/update_rules.py $(GITLEAKS)

# The code: formatted as ruff formats it, its lint rules, and types
# ([tool.ruff] and [tool.mypy] in pyproject.toml). `make format` applies the
# formatter and the fixes ruff can make itself.
LINTED := grimoire_cli tests benchmarks scripts
lint: $(STAMP)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

# The docs as a static site in site/ (mkdocs.yml): warnings are errors, so a
# broken link, anchor or page fails it. MkDocs is installed here, on first use,
# not by every `make test`.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

# docs/commands.md's generated blocks, made anew from the commands and their
# operations (grimoire_cli/cli/commands_doc.py); tests/test_commands_doc.py fails when stale.
commands-doc: $(STAMP)
	$(BIN)/python -m grimoire_cli.cli.commands_doc

# This project's own grimoire (its design decisions), validated by mem itself.
validate-memory: $(STAMP)
	$(BIN)/mem validate grimoires/loa/memory

clean:
	rm -rf $(VENV) build dist site *.egg-info
