#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer:
#  1. the extension built with ASan+UBSan in a copy of the tree (the normal build is not
#     touched) and the WHOLE pytest suite run under it, on every ISA (the `isa` fixture); the
#     C API tests' programs are compiled with the sanitizers too;
#  2. the C kernel parity test (tests/c/test_kernels.c, every SIMD table against the scalar
#     one) built by its Makefile with the sanitizers (leak checking on) and run;
#  3. tests/c/test_api_threads.c under ThreadSanitizer;
#  4. tests/test_ort.py (the onnxruntime custom-op library) in onnxruntime's process.
# Any sanitizer report fails. Needs clang with its sanitizer runtimes (libclang-rt-NN-dev) and
# a Python with the test requirements ($PYTHON, default python).
#   Usage: .ci/sanitizers.sh [--quick] [--ends] [--dir DIR]
#   --quick  QSIMD_TEST_QUICK=1: the same tests with fewer hypothesis examples
#   --ends   the suite on the scalar kernels and the best SIMD tier only, without the C
#            example's CMake build (step 2 still runs every SIMD table with guard pages)
#   --dir    build in (or reuse the sanitized build in) DIR instead of a temporary one
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
quick=0 ends=0 dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
        --ends) ends=1; shift ;;
        --dir) dir=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
PY=${PYTHON:-python}
if [ -z "$dir" ]; then dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT; fi
start=$(date +%s)
. "$here/asan.sh"
asan_build "$dir/asan"

run_asan "$PY" -c "import qsimd; f = qsimd._core.__file__; assert f.startswith('$dir'), f; \
print('   sanitized module:', f, '- ISAs', qsimd.available_isas())"

if [ "$ends" = 1 ]; then
    QSIMD_TEST_ISAS=$(run_asan "$PY" -c "import qsimd; print('scalar,' + qsimd.available_isas()[-1])")
    export QSIMD_TEST_ISAS
    echo "-- pytest under ASan + UBSan ($QSIMD_TEST_ISAS)"
else
    echo "-- pytest under ASan + UBSan (every ISA)"
fi
if [ "$quick" = 1 ]; then export QSIMD_TEST_QUICK=1; fi
# onnxruntime (the peer of the boundary and Quark tests) and PyTorch (of the tensor tests; the
# DLPack paths run there through NumPy's exporter) stay out of the sanitized process
export QSIMD_TEST_NO_ORT=1 QSIMD_TEST_NO_TORCH=1
# the gate leaves out the C example's own CMake build of the library under the sanitizers
# (minutes: every kernel file again); the example linked with the package's library runs
deselect=()
[ "$ends" = 1 ] && deselect=(--deselect tests/test_c_api.py::test_example_from_cmake_build)
run_asan "$PY" -m pytest -q -p no:cacheprovider --durations=5 "${deselect[@]}" tests 2>&1 | asan_filter

# qsimd's onnxruntime custom-op library (the sanitized extension itself) inside onnxruntime:
# every op, the malformed nodes, the intra-op threads. onnxruntime is not instrumented; its
# allocations go through the preloaded runtime all the same, so an access outside a tensor
# by the library is still caught.
echo "-- tests/test_ort.py under ASan + UBSan, in onnxruntime's process"
if "$PY" -c "import onnxruntime" 2>/dev/null; then
    QSIMD_TEST_NO_ORT= run_asan "$PY" -m pytest -q -p no:cacheprovider tests/test_ort.py 2>&1 \
        | asan_filter
else
    echo "   onnxruntime is not installed: skipped"
fi

src="$dir/asan/src"
if [ -f "$src/tests/c/Makefile" ] && [ -f "$src/tests/c/test_kernels.c" ]; then
    # the parity test's own build, with the sanitizers added; -M: no single-byte misaligned
    # typed buffers (UB that UBSan reports by design), -q: the quick sweep (the full one runs
    # natively in the C test's own CI step). SIMDe's emulated AVX-512 table is left out: it
    # takes minutes to compile with the sanitizers.
    echo "-- tests/c/test_kernels.c under ASan + UBSan (leak checking on)"
    # No -g: the -O0 kernel files compile ~35 % faster without it (rebuild with it to read a
    # report's lines); the tiers this CPU cannot run are left uninstrumented.
    make -s -j2 -C "$src/tests/c" OUT="$dir/ckernels" CC="$QSIMD_ASAN_CC" SIMDE_INC=/nonexistent \
        EXTRA="$QSIMD_ASAN_SAN $QSIMD_ASAN_OPT" PLAIN="$(qsimd_unrunnable)" all
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 "$dir/ckernels/test_kernels" -M -q
else
    echo "-- tests/c/test_kernels.c is not in this tree: skipped"
fi

if [ -f "$src/tests/c/test_api_threads.c" ]; then
    echo "-- tests/c/test_api_threads.c under ThreadSanitizer (first use, set_isa, every operator)"
    cc="$QSIMD_ASAN_CC -fsanitize=thread -g $QSIMD_ASAN_OPT"
    QSIMD_LIB_KERNEL_FLAGS=-g0 QSIMD_LIB_PLAIN=$(qsimd_unrunnable) \
        build_qsimd_lib "$cc" "$dir/tsanlib" "$src"
    $cc -std=c99 -Wall -Wextra -Werror -I"$src/csrc/include" "$src/tests/c/test_api_threads.c" \
        "$dir/tsanlib/libqsimd.a" -lm -pthread -o "$dir/test_api_threads"
    for env_isa in "" scalar no-such-isa; do   # the lazy choice, forced, and its error path
        QSIMD_ISA=$env_isa TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
            "$dir/test_api_threads"
    done
fi
echo "-- sanitizers: done in $(( $(date +%s) - start )) s"
