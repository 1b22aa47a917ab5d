#!/usr/bin/env bash
# Fuzzes the image decoders (cargo-fuzz target `image_decode`) for a bounded time, starting from
# the committed seeds. CI calls this; needs a nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`). Usage: scripts/fuzz_images.sh [seconds, default 20]
set -euo pipefail
seconds="${1:-20}"
cd "$(dirname "$0")/../recipe-rs/deepseek-recipe"
mkdir -p fuzz/corpus/image_decode
cargo +nightly fuzz run image_decode fuzz/corpus/image_decode fuzz/seeds/image_decode -- \
    -max_total_time="$seconds" -rss_limit_mb=2048
