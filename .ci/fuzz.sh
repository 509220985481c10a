#!/usr/bin/env bash
# Fuzz campaign:
#  - the Python API fuzzer (tests/qfuzz.py) for --calls N calls (default 200000) against the
#    ASan + UBSan build (.ci/asan.sh), so an out-of-bounds access aborts it too;
#  - the libFuzzer harness of the C API (tests/fuzz/fuzz_c_api.c, clang
#    -fsanitize=fuzzer,address,undefined) for --seconds S (default 60), starting from the
#    seeds and regression inputs in tests/fuzz/corpus.
# A crash leaves its input in the work directory (printed) for replay: ./fuzz_c_api FILE.
#   Usage: .ci/fuzz.sh [--calls N] [--seconds S] [--dir DIR] [--seed N] [--plain]
#   --plain: the Python campaign against the installed / a plain build (3x faster, no ASan)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
calls=200000 seconds=60 dir="" seed="" plain=0
while [ $# -gt 0 ]; do
    case "$1" in
        --calls) calls=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --plain) plain=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
PY=${PYTHON:-python}
if [ -z "$dir" ]; then dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT; fi
start=$(date +%s)

if [ "$seconds" -gt 0 ]; then
    echo "-- libFuzzer: C API harness, $seconds s"
    . "$here/clib.sh"
    lf="$dir/libfuzzer"
    mkdir -p "$lf/corpus"
    # -O0: the SIMD kernel files take minutes to compile with the sanitizers at -O1
    san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O0"
    # the kernel files without -g (~35 % faster to compile at -O0) and, for the tiers this CPU
    # cannot run, uninstrumented
    QSIMD_LIB_KERNEL_FLAGS=-g0 QSIMD_LIB_PLAIN=$(qsimd_unrunnable) \
        build_qsimd_lib "clang -fsanitize=fuzzer-no-link $san" "$lf/lib" "$root"
    clang -fsanitize=fuzzer $san -std=c99 -Wall -Wextra -Werror -I"$root/csrc/include" \
        "$root/tests/fuzz/fuzz_c_api.c" "$lf/lib/libqsimd.a" -lm -pthread -o "$lf/fuzz_c_api"
    cp "$root"/tests/fuzz/corpus/* "$lf/corpus/" 2>/dev/null || true
    # the committed inputs first: each one that once crashed must pass now
    if ! "$lf/fuzz_c_api" "$root"/tests/fuzz/corpus/* >"$lf/replay.log" 2>&1; then
        tail -40 "$lf/replay.log"; echo "a committed input in tests/fuzz/corpus fails"; exit 1
    fi
    echo "   $(ls "$root"/tests/fuzz/corpus | wc -l) committed inputs replayed"
    (cd "$lf" && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ./fuzz_c_api -max_total_time="$seconds" -max_len=512 -timeout=20 -rss_limit_mb=3000 \
        -print_final_stats=1 corpus >"$lf/fuzz.log" 2>&1) && lf_rc=0 || lf_rc=$?
    grep -E "^(INFO: Seed|==|SUMMARY|stat::number_of_executed_units|stat::average_exec|Done)" \
        "$lf/fuzz.log" | grep -v "^==.*INFO" || true
    if [ "$lf_rc" != 0 ]; then
        tail -60 "$lf/fuzz.log"
        ls "$lf"/crash-* "$lf"/leak-* "$lf"/timeout-* "$lf"/oom-* 2>/dev/null || true
        echo "libFuzzer found a failure (exit $lf_rc)"
        exit 1
    fi
    echo "   libFuzzer: $(ls "$lf/corpus" | wc -l) corpus inputs after the run"
fi

if [ "$calls" -gt 0 ] && [ "$plain" = 1 ]; then
    . "$here/plain.sh"
    plain_setup "$dir"
    echo "-- Python API fuzz campaign, plain build: $calls calls"
    run_plain "$PY" tests/qfuzz.py --calls "$calls" ${seed:+--seed "$seed"}
elif [ "$calls" -gt 0 ]; then
    . "$here/asan.sh"
    asan_build "$dir/asan"
    echo "-- Python API fuzz campaign under ASan + UBSan: $calls calls"
    run_asan "$PY" tests/qfuzz.py --calls "$calls" ${seed:+--seed "$seed"} 2>&1 | asan_filter
fi
echo "-- fuzz: done in $(( $(date +%s) - start )) s"
