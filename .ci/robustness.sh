#!/usr/bin/env bash
# Robustness checks in one entry point (about 6 minutes on 2 cores), two lanes in parallel:
#   lane A: .ci/sanitizers.sh  ASan+UBSan build, the whole pytest suite under it,
#                              tests/c/test_kernels.c when present
#           .ci/fuzz.sh        Python API fuzz campaign, half the calls, under ASan+UBSan
#   lane B: .ci/fuzz.sh        libFuzzer on the C API (60 s)
#           .ci/leaks.sh       1M small calls with flat memory; valgrind memcheck on a subset
#           .ci/fuzz.sh        Python API fuzz campaign, other half, plain build (3x faster)
# Exits non-zero if any step fails. Works on a fresh Debian 12 as root: installs the compilers
# and tools with apt, and the Python requirements into a venv, when they are missing. Uses
# $PYTHON (or the active python) when it has the test requirements.
# Sizes: QSIMD_FUZZ_CALLS, QSIMD_LIBFUZZER_SECONDS, QSIMD_LEAK_CALLS, QSIMD_VALGRIND_CALLS (per
# ISA). The gate (.ci/run's default) runs the sanitized suite on the scalar kernels and the best
# SIMD tier (the C parity step under the sanitizers still runs every table) with 100000 fuzz
# calls, 45 s of libFuzzer, 400000 leak calls and 200 valgrind calls; QSIMD_CI_FULL=1 (the
# scheduled campaign) runs it on every ISA with 200000 / 60 s / 1000000 / 400. Either way the
# sanitized suite uses QSIMD_TEST_QUICK's hypothesis budgets (the full budgets run natively
# in the normal pytest step); QSIMD_SAN_FULL=1 gives it the full budgets (+2-3 minutes).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
start=$(date +%s)
if [ "${QSIMD_CI_FULL:-0}" = 1 ]; then
    d_calls=200000 d_lf=60 d_leak=1000000 d_vg=400 san_isas=()
else
    d_calls=100000 d_lf=45 d_leak=400000 d_vg=200 san_isas=(--ends)
fi
calls=${QSIMD_FUZZ_CALLS:-$d_calls}
lf_seconds=${QSIMD_LIBFUZZER_SECONDS:-$d_lf}
leak_calls=${QSIMD_LEAK_CALLS:-$d_leak}
vg_calls=${QSIMD_VALGRIND_CALLS:-$d_vg}
work=$(mktemp -d)
lane_b_pid=""
cleanup() {
    if [ -n "$lane_b_pid" ]; then kill "$lane_b_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "== robustness: tools"
need=()
command -v gcc >/dev/null || need+=(gcc g++ make)
command -v clang >/dev/null || need+=(clang)
command -v valgrind >/dev/null || need+=(valgrind)
command -v git >/dev/null || need+=(git)
command -v nm >/dev/null || need+=(binutils)
# libFuzzer and the sanitizer runtimes of clang
clang_rt=$( (clang -print-resource-dir 2>/dev/null || true) )
if [ -z "$clang_rt" ] || ! ls "$clang_rt"/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
    ver=$( (clang --version 2>/dev/null || echo "version 14.") | sed -n 's/.*version \([0-9]*\)\..*/\1/p' | head -1)
    need+=("libclang-rt-${ver:-14}-dev")
fi
PY=${PYTHON:-$(command -v python || command -v python3 || true)}
py_ok() { [ -n "$1" ] && "$1" -c "import numpy, ml_dtypes, onnx, hypothesis, pytest, Cython, setuptools" 2>/dev/null; }
if ! py_ok "$PY"; then
    command -v python3 >/dev/null || need+=(python3)
    python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
fi
py_inc=$( ("${PY:-python3}" -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null) || true)
[ -f "$py_inc/Python.h" ] || need+=(python3-dev)
if [ ${#need[@]} -gt 0 ]; then
    echo "-- apt-get install ${need[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! py_ok "$PY"; then
    echo "-- venv with the build and test requirements"
    python3 -m venv "$work/venv"
    PY="$work/venv/bin/python"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install -q "Cython>=3.0" "numpy>=2.0" "setuptools>=77" \
        wheel "ml_dtypes>=0.5" "pytest>=7" "onnx>=1.18" "hypothesis>=6"
fi
export PYTHON=$PY
echo "   python: $PY ($("$PY" --version 2>&1)); gcc $(gcc -dumpversion); $(clang --version | head -1)"

half=$(( calls / 2 ))
seed=${QSIMD_FUZZ_SEED:-$(( $(date +%s) % 100000 ))}

# lane B in the background, its output kept for the end
lane_b() {
    local rc=0
    # its library's sanitized -O0 build runs beside lane A's: minutes on 2 shared cores
    local t=0
    timeout 1500 bash "$here/fuzz.sh" --seconds "$lf_seconds" --calls 0 --dir "$work" || t=$?
    if [ "$t" = 124 ]; then echo "FAILED: libFuzzer (timed out after 1500 s)"; rc=1
    elif [ "$t" != 0 ]; then echo "FAILED: libFuzzer"; rc=1; fi
    timeout 360 bash "$here/leaks.sh" --calls "$leak_calls" --vg-calls "$vg_calls" --dir "$work" || { echo "FAILED: leaks"; rc=1; }
    timeout 300 bash "$here/fuzz.sh" --plain --seconds 0 --calls $(( calls - half )) --seed $(( seed + 1 )) \
        --dir "$work" || { echo "FAILED: Python API fuzz (second half)"; rc=1; }
    return $rc
}
lane_b >"$work/lane_b.log" 2>&1 &
lane_b_pid=$!

failed=()
echo "== robustness lane A: sanitizers, Python API fuzz (first half)"
sq=(--quick); [ "${QSIMD_SAN_FULL:-0}" = 1 ] && sq=()
timeout 1800 bash "$here/sanitizers.sh" "${sq[@]}" "${san_isas[@]}" --dir "$work" || failed+=("sanitizers")
touch "$work/lane_a_done"
if [ -f "$work/asan/built" ]; then
    timeout 300 bash "$here/fuzz.sh" --seconds 0 --calls "$half" --seed "$seed" --dir "$work" \
        || failed+=("Python API fuzz (first half)")
fi

echo "== robustness lane B: libFuzzer, leaks, valgrind, Python API fuzz (second half)"
lane_b_rc=0
wait "$lane_b_pid" || lane_b_rc=$?
lane_b_pid=""
cat "$work/lane_b.log"
[ "$lane_b_rc" = 0 ] || failed+=($(sed -n 's/^FAILED: //p' "$work/lane_b.log" | tr ' ' '_'))

took=$(( $(date +%s) - start ))
if [ ${#failed[@]} -gt 0 ]; then
    echo "== robustness: FAILED (${failed[*]}) after $took s"
    exit 1
fi
echo "== robustness: sanitizers, fuzzing ($calls Python calls, ${lf_seconds} s libFuzzer), leaks and valgrind all passed in $took s"
