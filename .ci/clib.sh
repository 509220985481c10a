# Sourced by the CI scripts: build_qsimd_lib "CC FLAGS..." OUTDIR [SRCROOT] compiles the C
# core and this architecture's kernel files (each with its own ISA flags, as setup.py does)
# into OUTDIR/libqsimd.a, and sets QSIMD_LIB_DEFS to the macros the kernel set needs.
build_qsimd_lib() {
    local cc=$1 out=$2 src=${3:-.} objs=() f flags o
    local files=(cpu.c dispatch.c ops/common.c ops/quantize.c ops/dequantize.c ops/dynamic.c
                 ops/parallel.c kernels/scalar.c)
    QSIMD_LIB_DEFS=""
    case "$(uname -m)" in
        x86_64|amd64)
            if [ -f "$src/csrc/kernels/avx2.c" ]; then
                files+=(kernels/sse41.c kernels/avx2.c kernels/avx512.c)
                QSIMD_LIB_DEFS="-DQSIMD_HAVE_X86=1"
            fi ;;
        aarch64|arm64)
            if [ -f "$src/csrc/kernels/neon.c" ]; then
                files+=(kernels/neon.c)
                QSIMD_LIB_DEFS="-DQSIMD_HAVE_NEON=1"
            fi ;;
    esac
    mkdir -p "$out"
    local pids=() p rc=0
    for f in "${files[@]}"; do
        case "$f" in
            */sse41.c) flags="-msse4.1" ;;
            */avx2.c) flags="-mavx2 -mfma -mf16c" ;;
            */avx512.c) flags="-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c" ;;
            *) flags="" ;;
        esac
        o="$out/$(echo "$f" | tr / _).o"
        # all files at once (the kernel files are slow to compile with sanitizers)
        # shellcheck disable=SC2086
        $cc -std=c99 -ffp-contract=off -fno-strict-aliasing -Wall -Wextra -Werror $flags \
            $QSIMD_LIB_DEFS -D_GNU_SOURCE -I"$src/csrc/include" -I"$src/csrc" \
            -c "$src/csrc/$f" -o "$o" &
        pids+=($!)
        objs+=("$o")
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    [ "$rc" = 0 ] || return 1
    rm -f "$out/libqsimd.a"
    ar rcs "$out/libqsimd.a" "${objs[@]}"
}
