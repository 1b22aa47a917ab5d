#!/usr/bin/env bash
# `make wheel-smoke`: what a user gets from `pip install`. Builds the wheel and the sdist once and
# checks what they hold; installs the wheel with every extra into a fresh venv and, from a folder
# outside the checkout, runs each command once (`serve`, then `conformance` against it: the
# README's main job); installs the sdist into a second fresh venv (a build from source with Rust
# and pip only) and checks that the core runs there without any extra.
# Environment: PYTHON (python3), MATURIN (.venv/bin/maturin), RECIPE_VECTORS, CARGO_TARGET_DIR
# (shared with `make install`'s build, which the wheel reuses; cargo reuses it for the sdist too,
# whose files are older than the artifacts: that step proves the sdist is complete and builds
# through pip and its maturin backend, not how long a cold build takes). The torch download of
# the fresh venv comes from pip's cache after `make install`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
MATURIN="${MATURIN:-$ROOT/.venv/bin/maturin}"
VECTORS="$(cd "${RECIPE_VECTORS:-$ROOT/../shared/vectors}" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/deepseek-recipe-wheel-smoke.XXXXXX")"
KEY="sk-wheel-smoke"
MODEL="DeepSeek-V4-Pro"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { echo "== wheel-smoke: $* ($SECONDS s)"; }

step "build the wheel and the sdist"
(cd "$ROOT" && "$MATURIN" build --release --out "$WORK/dist" && "$MATURIN" sdist --out "$WORK/dist")
WHEEL="$(ls "$WORK"/dist/*.whl)"
SDIST="$(ls "$WORK"/dist/*.tar.gz)"
"$PYTHON" "$ROOT/scripts/check_dist.py" "$WHEEL" "$SDIST"

step "install the wheel with the engine, server and conformance extras into a fresh venv"
"$PYTHON" -m venv "$WORK/wheel-venv"
BIN="$WORK/wheel-venv/bin"
"$BIN/pip" install -q "$WHEEL[engine,server,conformance]"
mkdir "$WORK/user"
cd "$WORK/user"  # nothing of the checkout is importable from here

step "tokenize, count, render, parse, python -m deepseek_recipe"
"$BIN/deepseek-recipe" --version
"$BIN/deepseek-recipe" tokenize "Hello, world"
"$BIN/deepseek-recipe" count "Hello, world"
echo '{"model": "'"$MODEL"'", "messages": [{"role": "user", "content": "Hi"}]}' > request.json
"$BIN/deepseek-recipe" render request.json
echo 'Let me think.</think>Hello!' > output.txt
"$BIN/deepseek-recipe" parse output.txt --request request.json
"$BIN/python" -m deepseek_recipe count "Hello, world"

step "vectors $VECTORS"
"$BIN/deepseek-recipe" vectors "$VECTORS"

step "serve, then the conformance suite against it"
PORT="$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$BIN/deepseek-recipe" serve --port "$PORT" --api-key "$KEY" --log-level warning &
server=$!
for _ in $(seq 1 120); do
  if "$BIN/python" -c "import httpx; httpx.get('http://127.0.0.1:$PORT/v1/models', headers={'Authorization': 'Bearer $KEY'}).raise_for_status()" 2>/dev/null; then
    break
  fi
  kill -0 "$server" 2>/dev/null || { echo "wheel-smoke: the server exited" >&2; exit 1; }
  sleep 1
done
# Model checks on; `serve` caps random-weight answers at 32 tokens, which the suite is told.
"$BIN/deepseek-recipe" conformance --base-url "http://127.0.0.1:$PORT" --api-key "$KEY" \
  --model "$MODEL" --max-completion-tokens 32 --no-progress --html report.html --junit report.xml --json report.json
kill "$server"
wait "$server" 2>/dev/null || true
server=""

step "install the sdist into a fresh venv (build from source), no extras"
"$PYTHON" -m venv "$WORK/sdist-venv"
"$WORK/sdist-venv/bin/pip" install -q "$SDIST"
"$WORK/sdist-venv/bin/deepseek-recipe" count "Hello, world"
for command in "serve" "conformance --help"; do
  # shellcheck disable=SC2086
  if "$WORK/sdist-venv/bin/deepseek-recipe" $command 2> missing.txt; then
    echo "wheel-smoke: '$command' ran without its extra" >&2; exit 1
  fi
  grep -q "pip install 'deepseek-recipe\[" missing.txt || { cat missing.txt >&2; exit 1; }
  cat missing.txt
done
step "passed"
