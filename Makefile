# clawplane — two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.clawplane-installed

.PHONY: help setup prerequisites demo demo-steps test durations lint oracles browser schema docs bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,k8s]'
	touch $(STAMP)

setup: $(STAMP) ## Create .venv and install clawplane with its test tools

DEMO := examples/quickstart
# The quickstart's stdio server is written with the mcp SDK: the venv's python3 must come first.
DEMO_ENV := PATH="$(CURDIR)/$(BIN):$$PATH" NOTES_API_TOKEN="$${NOTES_API_TOKEN:-demo-token}"
# ModelProvider/local is an OpenAI-compatible server on 127.0.0.1:4000. Without LOCAL_LLM_API_KEY
# the demo serves a fake one there (written for the tests), so it needs no model server or network.
DEMO_FAKE := tests/fixtures/providers/fake_provider.py
DEMO_FAKE_ARGS := --port 4000 --key demo-fake-key --models llama-3.1-8b-instruct,qwen2.5-coder-32b-instruct

demo: setup ## Set up, then converge the quickstart, show its status, and tear it down
	$(BIN)/clawplane validate $(DEMO)
	@if [ -n "$$LOCAL_LLM_API_KEY" ]; then \
	  echo "== ModelProvider/local: probing YOUR model server at http://127.0.0.1:4000/v1 with LOCAL_LLM_API_KEY"; \
	  $(MAKE) --no-print-directory demo-steps; \
	else \
	  fake=$$($(BIN)/python $(DEMO_FAKE) $(DEMO_FAKE_ARGS) --background) || { \
	    echo "== port 4000 is taken: run your model server there and set LOCAL_LLM_API_KEY, or free the port"; exit 1; }; \
	  echo "== ModelProvider/local: no LOCAL_LLM_API_KEY set, so the demo probes a LOCAL FAKE provider"; \
	  echo "==   ($(DEMO_FAKE), pid $$fake, on 127.0.0.1:4000) - not a real model server"; \
	  trap "kill $$fake 2>/dev/null" EXIT; \
	  LOCAL_LLM_API_KEY=demo-fake-key $(MAKE) --no-print-directory demo-steps; \
	fi

# Whatever fails, the supervisor the demo started is stopped before make reports the failure.
demo-steps:
	$(DEMO_ENV) $(BIN)/clawplane apply $(DEMO) --yes || { $(BIN)/clawplane down $(DEMO); exit 1; }
	$(DEMO_ENV) $(BIN)/clawplane status $(DEMO) \
	  && $(DEMO_ENV) $(BIN)/clawplane plan $(DEMO) --detailed-exitcode; \
	  code=$$?; $(BIN)/clawplane down $(DEMO); exit $$code

oracles: ## Install the third-party oracles (OpenClaw, Codex, MCP peers) into a cache
	bash tests/oracles/install.sh

# One xdist worker per core plus one (tests share no ports, folders or state): with one per core
# a third of the CPU sat idle while tests waited on the processes they drive. Whole files go to
# workers, longest first (tests/support/schedule.py), so the run does not end on one slow file.
# The 25 slowest tests are listed.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_ARGS ?= -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# tests/browser drive Debian's Chromium through Playwright (Playwright's own download cannot work offline).
browser: ## Install Chromium for the browser tests when it is missing
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }

# The suite starts ~1,000 Python processes (CLIs, supervisors, fixture servers). An editable install
# leaves our sources uncompiled and PYTHONDONTWRITEBYTECODE (set in many CI images) stops Python
# caching them, so each process would compile them again: compile once, as pip does for packages.
COMPILE := $(BIN)/python -m compileall -q -j 0 operator tests examples >/dev/null

# The venv, the oracles and Chromium are independent: on a fresh machine they install side by
# side (about a minute less than one after another); each one's output is printed whole (-O).
prerequisites:
	@$(MAKE) --no-print-directory -j3 -O setup oracles browser

test: prerequisites ## Set up, then run the whole test suite (unit, integration, compat, lint)
	$(COMPILE)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

durations: prerequisites ## Run the suite and re-record each test file's seconds (the run order)
	$(COMPILE)
	CLAWPLANE_RECORD_DURATIONS=tests/support/durations.json $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup ## Run ruff, mypy --strict and import-linter only
	$(BIN)/ruff check operator tests bench
	$(BIN)/ruff format --check operator
	$(BIN)/mypy
	$(BIN)/lint-imports

schema: setup ## Regenerate schemas/, the CRDs and the docs references from the models
	$(BIN)/clawplane schema

docs: setup ## Build the documentation site (docs/, mkdocs.yml) strictly into site/
	$(BIN)/mkdocs build --strict --site-dir site

bench: setup ## Run the benchmarks and print their numbers
	@for b in bench/*_bench.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
