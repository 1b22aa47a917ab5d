#!/usr/bin/env bash
# The side-by-side bench and the thread-scaling table on a machine that reaches no package
# registry (the 16-core GPU machine), with every package it lacks carried as wheels in .whl/.
#
#   scripts/device_bench.sh prepare        # here, with PyPI: fill .whl/ (git-ignored)
#   scripts/device_bench.sh scaling [ARGS] # there: python -m bench --scaling ARGS
#   scripts/device_bench.sh suite [ARGS]   # there: python -m bench ARGS
#   scripts/device_bench.sh profile        # there: per-call faults and switches, perf profiles
#   scripts/device_bench.sh spread [ARGS]  # there: python -m bench.cpu_spread ARGS (every CPU)
#
# `prepare` downloads, for CPython 3.12 on manylinux x86-64, the published deepseek-recipe 0.2.0
# (the peer), pydantic with its own dependencies (this package's one runtime dependency) and
# tiktoken with regex. The machine there must also have the extension built here, with the
# release profile: carry `deepseek_recipe/_native.abi3.so` and `.whl` with the working tree.
# There the script installs the wheels into /tmp/recipe-site (on PYTHONPATH) and the peer into
# bench/.peer-venv, then writes its report into $OUT (default: reports/device): scaling.md, or
# bench.md and bench.json, each with the machine, the date and the command in its header.
# `profile` writes calls.md (python -m bench.call_probe: best time, minor faults and involuntary
# context switches per call of the short chat and the document) and, when `prepare` found `perf`
# here (Debian's, bundled with its libraries and loader into .whl/perf.tar.xz: the machine there
# has none), perf-short.txt and perf-document.txt: software-clock profiles of each loop.
# `spread` writes spread.md: the short chat's per-call time and the plain corpus against tiktoken
# on each CPU in turn (the suite pins its one-thread processes to the last CPU only).
set -euo pipefail

cd "$(dirname "$0")/.."
WHEELS=.whl
SITE=/tmp/recipe-site
PYTHON=${PYTHON:-python3}
OUT=${OUT:-reports/device}

prepare() {
    mkdir -p "$WHEELS"
    local platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
        --platform manylinux2014_x86_64)
    "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp "${platforms[@]}" -d "$WHEELS" \
        deepseek-recipe==0.2.0 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 \
        typing-inspection==0.4.5 typing-extensions==4.16.0 tiktoken==0.14.0 regex
    if command -v perf >/dev/null; then
        bundle_perf
    fi
    ls -l "$WHEELS"
}

# Debian's perf with every library it loads and the dynamic loader, as one archive.
bundle_perf() {
    local dir
    dir=$(mktemp -d)
    mkdir "$dir/perf"
    cp "$(command -v perf)" "$dir/perf/"
    ldd "$(command -v perf)" | awk '/=>/ {print $3}' | xargs -I{} cp -L {} "$dir/perf/"
    cp -L /lib64/ld-linux-x86-64.so.2 "$dir/perf/"
    tar -C "$dir" -cJf "$WHEELS/perf.tar.xz" perf
    rm -rf "$dir"
}

profile() {
    "$PYTHON" -m bench.call_probe | tee "$OUT/calls.md"
    [ -f "$WHEELS/perf.tar.xz" ] || {
        echo "no $WHEELS/perf.tar.xz: run prepare where perf is installed" >&2
        return
    }
    local tools
    tools=$(mktemp -d)
    tar -C "$tools" -xJf "$WHEELS/perf.tar.xz"
    local perf=("$tools/perf/ld-linux-x86-64.so.2" --library-path "$tools/perf" "$tools/perf/perf")
    for workload in short document; do
        "${perf[@]}" record -q -e cpu-clock -F 2999 -o "$tools/$workload.data" -- \
            taskset -c 1 "$PYTHON" -m bench.call_probe --loop "$workload" 6
        "${perf[@]}" report -i "$tools/$workload.data" --stdio --no-children --sort dso,sym \
            --percent-limit 0.3 >"$OUT/perf-$workload.txt" 2>&1
        head -40 "$OUT/perf-$workload.txt"
    done
}

install() {
    [ -f deepseek_recipe/_native.abi3.so ] || {
        echo "deepseek_recipe/_native.abi3.so is missing: build it here and carry it" >&2
        exit 1
    }
    # Packages the machine already has stay as they are (its tiktoken, tokenizers, numpy).
    local wanted=()
    for wheel in "$WHEELS"/*.whl; do
        local name
        name=$(basename "$wheel" | cut -d- -f1)
        [ "$name" = deepseek_recipe ] && continue
        "$PYTHON" -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" "$name" \
            2>/dev/null || wanted+=("$wheel")
    done
    if [ ${#wanted[@]} -gt 0 ]; then
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "${wanted[@]}"
    fi
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    local peer=bench/.peer-venv
    if ! "$peer/bin/python" -I -c "import deepseek_recipe" 2>/dev/null; then
        rm -rf "$peer"
        "$PYTHON" -m venv --without-pip "$peer"
        local packages
        packages=$("$peer/bin/python" -I -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$packages" \
            "$WHEELS"/deepseek_recipe-0.2.0-*.whl
    fi
    mkdir -p "$OUT"
}

case "${1:-}" in
    prepare)
        prepare
        ;;
    scaling)
        shift
        install
        "$PYTHON" -m bench --scaling --markdown "$OUT/scaling.md" "$@"
        ;;
    suite)
        shift
        install
        "$PYTHON" -m bench --markdown "$OUT/bench.md" --json "$OUT/bench.json" "$@"
        ;;
    profile)
        install
        profile
        ;;
    spread)
        shift
        install
        "$PYTHON" -m bench.cpu_spread --markdown "$OUT/spread.md" "$@"
        ;;
    *)
        sed -n '2,20p' "$0"
        exit 2
        ;;
esac
