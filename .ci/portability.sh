#!/usr/bin/env bash
# Portability and packaging checks that need no Docker:
#  - the C core and the C example with clang (run), mingw-w64 for Windows (compile + link),
#    the aarch64 cross gcc (run under qemu when the ARM environment exists) and the armv7
#    (32-bit ARM, hard float) cross gcc: scalar kernels, run under qemu-arm;
#  - the CMake library cross-built for aarch64 (scalar + NEON), the example linked statically
#    against it through find_package(qsimd): stripped, at most 0.4 MB;
#  - the size gate (.ci/size_gate.py) on the wheel that python -m build makes;
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
command -v arm-linux-gnueabihf-gcc >/dev/null || need+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
command -v qemu-arm-static >/dev/null || need+=(qemu-user-static)
command -v cmake >/dev/null || need+=(cmake)
if [ ${#need[@]} -gt 0 ]; then
    echo "-- apt-get install ${need[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

. .ci/clib.sh   # qsimd_sources: csrc/sources.txt, the list CMake and setup.py read
warn="-std=c99 -O2 -ffp-contract=off -Wall -Wextra -Werror"

# build_lib CC OUT ARCH: compile the core with per-file ISA flags into a static library
build_lib() {
    local cc=$1 out=$2 arch=$3 objs=() defs=() groups=core line f flags p rc=0
    mkdir -p "$out"
    if [ "$arch" = x86 ] && [ -f csrc/kernels/avx2.c ]; then
        defs=(-DQSIMD_HAVE_X86=1)
        groups="core sse41 avx2 avx512"
    elif [ "$arch" = arm64 ] && [ -f csrc/kernels/neon.c ]; then
        defs=(-DQSIMD_HAVE_NEON=1)
        groups="core neon"
    fi
    # shellcheck disable=SC2086
    while read -r line; do
        f=${line%% *}
        flags=""
        [ "$f" = "$line" ] || flags=${line#* }
        local o="$out/$(echo "$f" | tr / _).o"
        # two compilations at a time (2 cores); a failed one fails the build
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || rc=1; done
        # shellcheck disable=SC2086
        $cc $warn $flags "${defs[@]}" -D_GNU_SOURCE -Icsrc/include -Icsrc -c "csrc/$f" -o "$o" &
        objs+=("$o")
    done < <(qsimd_sources . $groups)
    for p in $(jobs -p); do wait "$p" || rc=1; done
    [ $rc = 0 ] || { echo "build_lib: $cc failed" >&2; return 1; }
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

echo "-- armv7 (32-bit ARM, hard float) cross gcc: C core (scalar kernels) + example"
build_lib arm-linux-gnueabihf-gcc "$tmp/armv7" other
arm-linux-gnueabihf-gcc $warn -static -Icsrc/include examples/c/quantize_image.c \
    -o "$tmp/armv7/example" "$tmp/armv7/libqsimd.a" -lm -pthread
if command -v qemu-arm-static >/dev/null; then
    QEMU_CPU=cortex-a7 qemu-arm-static "$tmp/armv7/example" | head -1 | sed "s/^/   cortex-a7: /"
fi

echo "-- CMake, cross-built for aarch64 (scalar + NEON): the example through find_package, static"
cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
       -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_BUILD_TYPE=Release)
cmake -S csrc -B "$tmp/cm-a64" "${cross[@]}" -DQSIMD_BUILD_SHARED=OFF >"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/cm-a64" -j2 >>"$tmp/cmake.log" 2>&1 &&
    cmake --install "$tmp/cm-a64" --prefix "$tmp/a64" >>"$tmp/cmake.log" 2>&1 &&
    cmake -S examples/c -B "$tmp/cm-a64-ex" "${cross[@]}" -DCMAKE_PREFIX_PATH="$tmp/a64" \
        -DCMAKE_FIND_ROOT_PATH="$tmp/a64" >>"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/cm-a64-ex" >>"$tmp/cmake.log" 2>&1 || { tail -30 "$tmp/cmake.log"; exit 1; }
grep -q "qsimd 0.1.0 with scalar;neon" "$tmp/cmake.log"
aarch64-linux-gnu-strip -o "$tmp/a64-example" "$tmp/cm-a64-ex/quantize_image"
size=$(stat -c %s "$tmp/a64-example")
echo "   stripped example (static libqsimd, scalar + NEON): $size bytes (budget 400000)"
[ "$size" -le 400000 ] || { echo "over budget" >&2; exit 1; }
bad=$(aarch64-linux-gnu-nm -g --defined-only "$tmp/a64/lib/libqsimd.a" | awk 'NF == 3 && $3 !~ /^qsimd_/')
[ -z "$bad" ] || { echo "libqsimd.a globals without the qsimd_ prefix: $bad" >&2; exit 1; }
if command -v qemu-aarch64-static >/dev/null; then
    QEMU_LD_PREFIX=/usr/aarch64-linux-gnu qemu-aarch64-static "$tmp/a64-example" | head -1 |
        sed "s/^/   /"
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
# the licence text in both (pyproject.toml's license-files), the typing marker and the stubs
# in the wheel (listings in files: grep -q on a pipe would SIGPIPE the lister under pipefail)
unzip -l "$tmp"/dist/*.whl >"$tmp/wheel.lst"
tar tzf "$tmp"/dist/*.tar.gz >"$tmp/sdist.lst"
grep -q "dist-info/licenses/LICENSE$" "$tmp/wheel.lst" && grep -q "^qsimd-[^/]*/LICENSE$" "$tmp/sdist.lst" ||
    { echo "LICENSE missing from the wheel or the sdist" >&2; exit 1; }
for f in py.typed _core.pyi __init__.pyi quark.pyi onnx.pyi; do
    grep -q "qsimd/$f$" "$tmp/wheel.lst" || { echo "the wheel lacks qsimd/$f" >&2; exit 1; }
done
echo "   LICENSE in the wheel and the sdist; py.typed and the stubs in the wheel"
echo "-- size gate (budgets, no debug info, exported and global symbols)"
python .ci/size_gate.py "$tmp"/dist/*.whl
echo "-- no RUNPATH in the extension"
unzip -q -o "$tmp"/dist/*.whl 'qsimd/_core*' -d "$tmp/whl"
if readelf -d "$tmp"/whl/qsimd/_core*.so | grep -E "RPATH|RUNPATH"; then exit 1; fi
echo "   none"

# python -m build made the wheel from the unpacked sdist, so the sdist alone builds; that
# wheel, installed with the test extra in a fresh venv, must pass the sdist's own tests
echo "-- the sdist alone: its wheel installed with the test extra in a fresh venv, its tests"
python -m venv "$tmp/sdist-venv"
"$tmp/sdist-venv/bin/pip" install -q "$(ls "$tmp"/dist/*.whl)[test]"
mkdir "$tmp/sdist-src" && tar xzf "$tmp"/dist/*.tar.gz -C "$tmp/sdist-src"
# the wheel workflow's quick subset (the whole suite already ran on the tree in CI's pytest
# stage) plus the modules that need files beside the package: examples, C sources, onnx
sd=$(echo "$tmp"/sdist-src/qsimd-*)
# on the best instruction set only: the pytest stage ran every one on the tree
best=$(cd "$tmp" && "$tmp/sdist-venv/bin/python" -c "import qsimd; print(qsimd.available_isas()[-1])")
(cd "$tmp" && QSIMD_TEST_QUICK=1 QSIMD_TEST_ISAS=$best "$tmp/sdist-venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$sd"/tests/test_reference.py "$sd"/tests/test_simd_parity.py "$sd"/tests/test_types.py \
    "$sd"/tests/test_pieces.py "$sd"/tests/test_result_cache.py "$sd"/tests/test_distribution.py \
    "$sd"/tests/test_c_api.py "$sd"/tests/test_onnx_boundary.py \
    --deselect "$sd/tests/test_c_api.py::test_example_from_cmake_build" | tail -3)

echo "-- cibuildwheel build matrix"
for p in linux macos windows; do
    ids=$(cibuildwheel --print-build-identifiers --platform "$p" | tr '\n' ' ')
    echo "   $p: $ids"
    [ -n "$ids" ]
done
