#!/usr/bin/env bash
# Portability and packaging checks that need no Docker:
#  - the C core and the C example with clang (run), mingw-w64 for Windows (compile + link),
#    and the aarch64 cross gcc (run under qemu when the ARM environment exists);
#  - python -m build (sdist, then the wheel from it), auditwheel's manylinux verdict, that wheel
#    tested in a fresh venv with the sdist's tests, and cibuildwheel's build matrix for linux,
#    macos, windows.
# Expects the project's venv to be active (python, pip). Installs compilers with apt if missing.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

need=()
command -v clang >/dev/null || need+=(clang)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
if [ ${#need[@]} -gt 0 ]; then
    echo "-- apt-get install ${need[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

core="csrc/cpu.c csrc/dispatch.c csrc/ops/common.c csrc/ops/quantize.c csrc/ops/dequantize.c csrc/ops/dynamic.c csrc/ops/parallel.c csrc/kernels/scalar.c"
warn="-std=c99 -O2 -ffp-contract=off -Wall -Wextra -Werror"

# build_lib CC OUT ARCH: compile the core with per-file ISA flags into a static library
build_lib() {
    local cc=$1 out=$2 arch=$3 objs=() defs=()
    mkdir -p "$out"
    local files=($core)
    if [ "$arch" = x86 ] && [ -f csrc/kernels/avx2.c ]; then
        defs=(-DQSIMD_HAVE_X86=1)
        files+=(csrc/kernels/sse41.c csrc/kernels/avx2.c csrc/kernels/avx512.c)
    elif [ "$arch" = arm64 ] && [ -f csrc/kernels/neon.c ]; then
        defs=(-DQSIMD_HAVE_NEON=1)
        files+=(csrc/kernels/neon.c)
    fi
    for f in "${files[@]}"; do
        local flags=""
        case "$f" in
            */sse41.c) flags="-msse4.1" ;;
            */avx2.c) flags="-mavx2 -mfma -mf16c" ;;
            */avx512.c) flags="-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c" ;;
        esac
        local o="$out/$(echo "$f" | tr / _).o"
        $cc $warn $flags "${defs[@]}" -D_GNU_SOURCE -Icsrc/include -Icsrc -c "$f" -o "$o"
        objs+=("$o")
    done
    ar rcs "$out/libqsimd.a" "${objs[@]}"
}

echo "-- clang: C core + example, run"
build_lib clang "$tmp/clang" x86
clang $warn -Icsrc/include examples/c/quantize_image.c -o "$tmp/clang/example" "$tmp/clang/libqsimd.a" -lm -pthread
"$tmp/clang/example" | head -2

echo "-- mingw-w64 (Windows x86-64): C core + example, compile and link"
build_lib x86_64-w64-mingw32-gcc "$tmp/mingw" x86
x86_64-w64-mingw32-gcc $warn -Icsrc/include examples/c/quantize_image.c -o "$tmp/mingw/example.exe" \
    "$tmp/mingw/libqsimd.a"
file "$tmp/mingw/example.exe" | grep -q "PE32+" && echo "   example.exe: PE32+ x86-64"

echo "-- aarch64 cross gcc: C core + example"
build_lib aarch64-linux-gnu-gcc "$tmp/arm64" arm64
aarch64-linux-gnu-gcc $warn -static -Icsrc/include examples/c/quantize_image.c -o "$tmp/arm64/example" \
    "$tmp/arm64/libqsimd.a" -lm -pthread
if command -v qemu-aarch64-static >/dev/null; then
    for cpu in neoverse-n1 cortex-a72; do
        QEMU_CPU=$cpu qemu-aarch64-static "$tmp/arm64/example" | head -1 | sed "s/^/   $cpu: /"
    done
fi

echo "-- python -m build (sdist + wheel)"
python -m pip install -q build auditwheel cibuildwheel
python -m build -o "$tmp/dist" . >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; exit 1; }
ls "$tmp/dist"
echo "-- auditwheel show"
auditwheel show "$tmp"/dist/*.whl | tee "$tmp/aw.txt"
grep -q "manylinux_" "$tmp/aw.txt"
unzip -l "$tmp"/dist/*.whl | grep -E "qsimd/(include/qsimd.h|lib/libqsimd.a)" >/dev/null \
    && echo "   wheel ships qsimd.h and libqsimd.a"

# python -m build made the wheel from the unpacked sdist, so the sdist alone builds; that
# wheel, installed with the test extra in a fresh venv, must pass the sdist's own tests
echo "-- the sdist alone: its wheel installed with the test extra in a fresh venv, its tests"
python -m venv "$tmp/sdist-venv"
"$tmp/sdist-venv/bin/pip" install -q "$(ls "$tmp"/dist/*.whl)[test]"
mkdir "$tmp/sdist-src" && tar xzf "$tmp"/dist/*.tar.gz -C "$tmp/sdist-src"
(cd "$tmp" && QSIMD_TEST_QUICK=1 "$tmp/sdist-venv/bin/python" -m pytest -q -p no:cacheprovider "$tmp"/sdist-src/qsimd-*/tests | tail -3)

echo "-- cibuildwheel build matrix"
for p in linux macos windows; do
    ids=$(cibuildwheel --print-build-identifiers --platform "$p" | tr '\n' ' ')
    echo "   $p: $ids"
    [ -n "$ids" ]
done
