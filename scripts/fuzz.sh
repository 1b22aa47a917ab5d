#!/usr/bin/env bash
# Fuzzes cargo-fuzz targets for a bounded time each (CI: `make fuzz`). Each target starts from
# its committed seeds (`fuzz/seeds/<target>`, read only) plus its growing corpus in the fuzz
# cache (`$FUZZ_CORPUS/<target>`, default ~/.cache/deepseek-recipe/fuzz-corpus), where libFuzzer
# saves every input that reaches new coverage, so each run goes on where the last one stopped.
# A corpus beyond FUZZ_CORPUS_MAX_FILES (default 1000) is minimised after the run (edge
# coverage), so replaying it at the start stays a small part of the time budget. A crash,
# a property failure, a timeout (10 s per input) or 2 GiB of memory fails the script and leaves
# the input in `fuzz/artifacts/<target>/`.
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Usage: scripts/fuzz.sh [seconds per target, default 20] [target ...] (default: every target)
set -euo pipefail
seconds="${1:-20}"
shift || true
corpus_root="${FUZZ_CORPUS:-$HOME/.cache/deepseek-recipe/fuzz-corpus}"
max_files="${FUZZ_CORPUS_MAX_FILES:-1000}"
cd "$(dirname "$0")/../recipe-rs/deepseek-recipe"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build  # every target at once; the runs below find them built
for target in "${targets[@]}"; do
    corpus="$corpus_root/$target"
    mkdir -p "$corpus"
    inputs=("$corpus")
    if [ -d "fuzz/seeds/$target" ]; then
        inputs+=("fuzz/seeds/$target")
    fi
    echo "== fuzz $target: ${seconds}s from ${inputs[*]}"
    cargo +nightly fuzz run "$target" "${inputs[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    if [ "$(find "$corpus" -type f | wc -l)" -gt "$max_files" ]; then
        cargo +nightly fuzz cmin "$target" "$corpus" -- -use_counters=0
    fi
done
