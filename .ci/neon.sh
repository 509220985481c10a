#!/usr/bin/env bash
# .ci/neon.sh - build and test the NEON kernels on an x86-64 Debian 12 host, under qemu.
#
# Run from anywhere inside the repository, as root (the ARM setup apt-installs what it needs).
#
#   1. sets up the emulated aarch64 environment with .ci/arm_env.sh (idempotent; ~20-40 s the
#      first time);
#   2. copies the source tree to a temporary directory and builds the extension for aarch64
#      there, so the x86 in-place build and its virtualenv are left alone;
#   3. builds tests/c/test_kernels.c (every kernel table entry against the scalar kernel, on
#      every layout form, with guard pages) and runs it, and on the first CPU model the strided
#      division sweep (tests/c/sweep_division.c) of the NEON table;
#   4. runs pytest under the emulated aarch64 CPython with QSIMD_TEST_QUICK=1;
#   steps 3-4 once per CPU model: neoverse-n1 (with fp16 arithmetic) and cortex-a72 (without).
#   The kernels never compute in fp16, so the second model differs only in what it reports.
#   The gate (.ci/run's default) runs step 3 on both models, step 4 with the NEON kernels on
#   the first and three kernel-driving modules on the second; QSIMD_CI_FULL=1 (the weekly
#   campaign) runs the whole suite on scalar and NEON on the first model and NEON on the second.
# Exits non-zero on any failure. `.ci/neon.sh --setup-only` does step 1 only. Knobs: QSIMD_NEON_CPUS (CPU models), QSIMD_NEON_PARITY_ROUNDS,
# QSIMD_NEON_SWEEP_STRIDE (default 2048),
# QSIMD_HOST_PYTHON (a host CPython 3.11 with Cython, setuptools and numpy cross-builds faster;
# without one the build runs under emulation), PYTEST_ARGS (extra pytest arguments).
set -euo pipefail

T0=$(date +%s)
log() { printf '[neon.sh %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/.." && pwd))
CPUS=${QSIMD_NEON_CPUS:-neoverse-n1 cortex-a72}
ROUNDS=${QSIMD_NEON_PARITY_ROUNDS:-1}
SWEEP_STRIDE=${QSIMD_NEON_SWEEP_STRIDE:-2048}

# ---------------------------------------------------------------- 1. emulated aarch64 env
export ARM_ENV=${ARM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/qsimd-aarch64}
export ARM_PY_PKGS=${ARM_PY_PKGS:-numpy pytest cython setuptools wheel pip ml_dtypes hypothesis onnx}
log "ARM setup (.ci/arm_env.sh)"
bash "$here/arm_env.sh"
# --setup-only: step 1 alone (.ci/run does it first, so that the rest, which it runs in the
# background, never holds apt's lock beside another stage's apt-get)
[ "${1:-}" != --setup-only ] || exit 0
# shellcheck source=/dev/null
. "$ARM_ENV/env.sh"
unset QSIMD_ISA   # the tests must see the automatic choice

# ---------------------------------------------------------------- 2. private copy + build
WORK=$(mktemp -d "${TMPDIR:-/tmp}/qsimd-neon.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/src
mkdir -p "$SRC"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    # tracked and new files as they are in the working tree; no build products
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard) |
        tar -C "$ROOT" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$SRC" -xf -
else
    tar -C "$ROOT" --exclude=.git --exclude=build --exclude='*.so' --exclude='*.pyd' \
        --exclude=__pycache__ --exclude='*.egg-info' --exclude=qsimd/_core.c -cf - . |
        tar -C "$SRC" -xf -
fi

# numpy's headers from the aarch64 numpy that will import the module (ahead of the host's)
NP_INC=$(arm64-python -c 'import numpy; print(numpy.get_include())')
export CPPFLAGS="-I$NP_INC $ARM_PY_CPPFLAGS"
export QSIMD_WERROR=1
HOSTPY=${QSIMD_HOST_PYTHON:-python3}
if "$HOSTPY" -c 'import sys, Cython, setuptools, numpy; sys.exit(sys.version_info[:2] != (3, 11) or int(Cython.__version__.split(".")[0]) < 3)' 2>/dev/null; then
    log "cross-building aarch64 extension with host $("$HOSTPY" -c 'import sys; print(sys.executable)')"
    build() { env $ARM_CROSS_ENV "$HOSTPY" setup.py build_ext --inplace; }
else
    log "cross-building aarch64 extension under emulation (no host CPython 3.11 with Cython/numpy)"
    build() { arm64-python setup.py build_ext --inplace; }
fi
(cd "$SRC" && build) >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; echo "neon.sh: build failed" >&2; exit 1; }
ls "$SRC"/qsimd/_core.cpython-*-aarch64-linux-gnu.so >/dev/null ||
    { echo "neon.sh: no aarch64 extension was built" >&2; exit 1; }

# The size gate on what an aarch64 wheel ships (the package as built, zipped as a wheel is:
# the same files but the few-KB dist-info): 0.5 MB zipped, 1.2 MB installed, stripped, only
# PyInit__core and RegisterCustomOps exported, only qsimd_* global in libqsimd.a.
log "size gate (aarch64)"
(cd "$SRC" && python3 - "$WORK/gate/qsimd-0.0-cp311-cp311-linux_aarch64.whl" <<'PY'
import glob, os, sys, zipfile
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(glob.glob("qsimd/*.py") + glob.glob("qsimd/_core*.so")
                    + glob.glob("qsimd/lib/*") + glob.glob("qsimd/include/*")):
        z.write(f)
PY
) && python3 "$SRC/.ci/size_gate.py" "$WORK/gate"

log "building tests/c/test_kernels.c and tests/c/sweep_division.c"
cflags="-std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -Wall -Wextra -Werror -DQSIMD_HAVE_NEON"
(cd "$SRC" && aarch64-linux-gnu-gcc $cflags -Icsrc/include -Icsrc -c csrc/kernels/neon.c \
    -o "$WORK/neon.o" &&
    aarch64-linux-gnu-gcc $cflags -Icsrc/include -Icsrc tests/c/test_kernels.c \
        csrc/kernels/scalar.c csrc/cpu.c "$WORK/neon.o" -lm -static -o "$WORK/test_kernels" &&
    aarch64-linux-gnu-gcc $cflags -Icsrc/include -Icsrc -Icsrc/kernels tests/c/sweep_division.c \
        csrc/kernels/scalar.c csrc/cpu.c "$WORK/neon.o" -lm -lpthread -static \
        -o "$WORK/sweep_division")

# ---------------------------------------------------------------- 3+4. per CPU model
# The CPU models run concurrently (qemu-user is single-threaded); each writes its own log,
# printed whole when it ends.
# the MX / BFP kernels: the NEON build of mxbfp_impl.h against its scalar build (tests/c/Makefile
# builds the same test for x86), with the flags csrc/sources.txt gives each file
mxflags=$(awk '$2 == "kernels/mxbfp_neon.c" { $1 = $2 = ""; print }' "$SRC/csrc/sources.txt")
(cd "$SRC" && for f in scalar neon; do
    fl=""; [ $f = neon ] && fl=$mxflags
    aarch64-linux-gnu-gcc -std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -Wall -Wextra \
        -Werror -DQSIMD_HAVE_NEON -Icsrc/include -Icsrc $fl -c csrc/kernels/mxbfp_$f.c \
        -o "$WORK/mxbfp_$f.o" || exit 1
done && aarch64-linux-gnu-gcc -std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -Wall \
    -Wextra -Werror -DQSIMD_HAVE_NEON -Icsrc/include -Icsrc tests/c/test_mxbfp.c csrc/cpu.c \
    "$WORK/mxbfp_scalar.o" "$WORK/mxbfp_neon.o" -lm -static -o "$WORK/test_mxbfp")

run_cpu() {
    local cpu=$1 rc=0
    export QEMU_CPU=$cpu
    echo "== $cpu: C parity (tests/c/test_kernels.c -r $ROUNDS)"
    local t=$(date +%s)
    arm64-run "$WORK/test_kernels" -r "$ROUNDS" >"$WORK/parity-$cpu.log" 2>&1 || rc=1
    grep -E 'MISMATCH|entries|kernel parity' "$WORK/parity-$cpu.log" ||
        { tail -5 "$WORK/parity-$cpu.log"; rc=1; }
    echo "   ($(( $(date +%s) - t )) s)"
    if [ "$cpu" = "$FIRST_CPU" ]; then
        echo "== $cpu: MX / BFP parity (tests/c/test_mxbfp.c)"
        arm64-run "$WORK/test_mxbfp" >"$WORK/mx-$cpu.log" 2>&1 || rc=1
        grep -E 'mismatch|FAIL' "$WORK/mx-$cpu.log" || { tail -5 "$WORK/mx-$cpu.log"; rc=1; }
        # the exact reciprocal form against IEEE division: every SWEEP_STRIDE-th float32 bit
        # pattern of the hard scales (x86 CI takes every 256th; under qemu 1024 took 132 s on 2
        # shared cores beside the other CPU model, 2048 keeps it near a minute)
        echo "== $cpu: division sweep (tests/c/sweep_division.c --stride $SWEEP_STRIDE --hard)"
        t=$(date +%s)
        arm64-run "$WORK/sweep_division" --stride "$SWEEP_STRIDE" --hard \
            >"$WORK/sweep-$cpu.log" 2>&1 || rc=1
        grep -E 'MISMATCH|division sweep' "$WORK/sweep-$cpu.log" ||
            { tail -5 "$WORK/sweep-$cpu.log"; rc=1; }
        echo "   ($(( $(date +%s) - t )) s)"
    fi
    echo "== $cpu: get_isa"
    (cd "$SRC" && arm64-python -c '
import qsimd
isa = qsimd.get_isa()
print("   get_isa() =", isa, " available:", qsimd.available_isas(), " fp16:", qsimd.cpu_features().get("fp16"))
assert isa == "neon", isa') || rc=1
    echo "== $cpu: pytest (QSIMD_TEST_QUICK=1)"
    t=$(date +%s)
    # the scalar-parametrised tests run identically on every CPU model: once is enough. The
    # gate runs the NEON-parametrised ones only (the scalar kernels' aarch64 build is what the
    # C parity step compares every NEON entry with), the second model only the modules that
    # drive every kernel, and leaves the CMake build of test_c_api to the portability stage
    # (which cross-builds it for aarch64 and runs its example under qemu)
    local only="" sel=tests
    if [ "${QSIMD_CI_FULL:-0}" != 1 ]; then
        only=neon
        sel="tests --deselect tests/test_c_api.py::test_example_from_cmake_build"
        [ "$cpu" = "$FIRST_CPU" ] ||
            sel="tests/test_simd_parity.py tests/test_reference.py tests/test_types.py"
    elif [ "$cpu" != "$FIRST_CPU" ]; then
        only=neon
    fi
    # shellcheck disable=SC2086
    (cd "$SRC" && QSIMD_TEST_ISAS=$only QSIMD_TEST_QUICK=1 arm64-python -m pytest -q \
        -p no:cacheprovider ${PYTEST_ARGS:-} $sel) || rc=1
    echo "   ($(( $(date +%s) - t )) s)"
    return $rc
}

FIRST_CPU=${CPUS%% *}
pids=()
for cpu in $CPUS; do
    log "starting $cpu"
    run_cpu "$cpu" >"$WORK/run-$cpu.log" 2>&1 &
    pids+=($!)
done
status=0
i=0
for cpu in $CPUS; do
    if wait "${pids[$i]}"; then r=ok; else r=FAILED; status=1; fi
    echo
    cat "$WORK/run-$cpu.log"
    log "$cpu: $r"
    i=$((i + 1))
done
log "total; $([ $status = 0 ] && echo 'all passed' || echo 'FAILURES')"
exit $status
