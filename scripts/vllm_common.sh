# Shared by scripts/test_vllm.sh and scripts/vllm_stock.sh (sourced): the cached vLLM environment
# and a vLLM OpenAI server on 127.0.0.1 serving the tiny random model.
# Needs BIN (the project's venv bin), OUT (a report folder), VLLM_PORT.

# VPY (the vLLM venv's python) and MODEL (the tiny model's folder), built if missing or stale.
vllm_environment() {
  local env_json
  env_json="$("$BIN/python" -m tests.vllm.environment setup)"
  VPY="$("$BIN/python" -c 'import json, sys; print(json.load(sys.stdin)["python"])' <<<"$env_json")"
  MODEL="$("$BIN/python" -c 'import json, sys; print(json.load(sys.stdin)["model"])' <<<"$env_json")"
}

# Start vLLM in the background with the common options plus "$@"; sets VLLM_PID, logs to
# $OUT/vllm.log. Float32 and eager mode keep the CPU build exact and quick to start.
start_vllm() {
  VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE=1 VLLM_LOGGING_LEVEL=WARNING \
    nice "$VPY" -m vllm.entrypoints.openai.api_server --model "$MODEL" \
    --host 127.0.0.1 --port "$VLLM_PORT" --max-model-len 4096 --dtype float32 --enforce-eager \
    --enable-prompt-tokens-details --seed 0 "$@" >"$OUT/vllm.log" 2>&1 &
  VLLM_PID=$!
}

# Wait until GET $1/v1/models answers 200 (sending key $2 if given); fail if process $3 exits
# or after $4 seconds (default 600).
wait_for_models() {
  local url="$1" key="${2:-}" pid="$3" limit="${4:-600}"
  for _ in $(seq 1 "$limit"); do
    if "$BIN/python" -c "
import httpx, sys
headers = {'authorization': 'Bearer $key'} if '$key' else {}
httpx.get('$url/v1/models', headers=headers, timeout=5).raise_for_status()" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server behind $url exited" >&2
      return 1
    fi
    sleep 1
  done
  echo "$url did not answer within $limit s" >&2
  return 1
}

# Stop a background process and wait for it (no error if it is gone).
stop_process() {
  kill -INT "$1" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$1" 2>/dev/null || break
    sleep 1
  done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
