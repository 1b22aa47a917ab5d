#!/usr/bin/env bash
# The main job: boot the reference server (tiny model) on 127.0.0.1 and run the conformance suite
# against it, writing terminal, HTML and JUnit reports. Exit status: the suite's.
set -euo pipefail
BIN="${BIN:-.venv/bin}"
PORT="${PORT:-8765}"
KEY="sk-selftest"
OUT="${OUT:-reports}"
mkdir -p "$OUT"
# The serve defaults: the official pass-back rejection, answers capped at 32 tokens (random weights).
"$BIN/deepseek-recipe" serve --port "$PORT" --api-key "$KEY" --threads 1 --log-level warning &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if "$BIN/python" -c "import httpx, sys; httpx.get('http://127.0.0.1:$PORT/v1/models', headers={'Authorization': 'Bearer $KEY'}).raise_for_status()" 2>/dev/null; then
    break
  fi
  kill -0 "$server" 2>/dev/null || { echo "the reference server exited" >&2; exit 1; }
  sleep 1
done
"$BIN/deepseek-recipe" conformance --base-url "http://127.0.0.1:$PORT" --api-key "$KEY" \
  --model DeepSeek-V4-Pro --max-completion-tokens 32 \
  --html "$OUT/conformance.html" --junit "$OUT/conformance.xml" --json "$OUT/conformance.json"
