#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer:
#  1. the extension built with ASan+UBSan in a copy of the tree (the normal build is not
#     touched) and the WHOLE pytest suite run under it, on every ISA (the `isa` fixture); the
#     C API tests' programs are compiled with the sanitizers too;
#  2. the C kernel parity test tests/c/test_kernels.c, when the tree has it, built from the C
#     sources with the sanitizers (leak checking on) and run.
# Any sanitizer report fails. Needs gcc (libasan, libubsan) and a Python with the test
# requirements ($PYTHON, default python).
#   Usage: .ci/sanitizers.sh [--quick] [--dir DIR]
#   --quick  QSIMD_TEST_QUICK=1: the same tests with fewer hypothesis examples
#   --dir    build in (or reuse the sanitized build in) DIR instead of a temporary one
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
quick=0 dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
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

echo "-- pytest under ASan + UBSan (every ISA)"
if [ "$quick" = 1 ]; then export QSIMD_TEST_QUICK=1; fi
run_asan "$PY" -m pytest -q -p no:cacheprovider --durations=5 tests 2>&1 | asan_filter

src="$dir/asan/src"
if [ -f "$src/tests/c/test_kernels.c" ]; then
    echo "-- tests/c/test_kernels.c under ASan + UBSan"
    . "$here/clib.sh"
    cc="$QSIMD_ASAN_CC $QSIMD_ASAN_SAN -g -O1"
    build_qsimd_lib "$cc" "$dir/clib" "$src"
    # shellcheck disable=SC2086
    $cc -std=c99 -Wall -Wextra -D_GNU_SOURCE $QSIMD_LIB_DEFS -I"$src/csrc/include" \
        -I"$src/csrc" "$src/tests/c/test_kernels.c" "$dir/clib/libqsimd.a" -lm -pthread \
        -o "$dir/test_kernels"
    (cd "$src" && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 "$dir/test_kernels")
else
    echo "-- tests/c/test_kernels.c is not in this tree yet: skipped"
fi
echo "-- sanitizers: done in $(( $(date +%s) - start )) s"
