# Sourced by the CI scripts: the ASan + UBSan build of the Python extension, in a copy of
# the working tree so the normal (in-place or installed) build is never touched.
#   asan_build DIR   copy the tree to DIR/src and build it there, unless DIR/src already
#                    holds a sanitized build (robustness.sh builds once for every step)
#   run_asan CMD...  run CMD in DIR/src with the ASan runtime preloaded into Python
# Needs: $PY (python with the build requirements), clang with its ASan runtime
# (libclang-rt-NN-dev). clang at -O0 because the SIMD kernel files are large: with the
# sanitizers, gcc or -O1 take minutes each to compile, clang -O0 ~10 s.
QSIMD_ASAN_CC=${CC_SAN:-clang}
QSIMD_ASAN_OPT=${QSIMD_ASAN_OPT:--O0}
QSIMD_ASAN_SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Python leaks by design at exit: leak checking off. A huge request must come back as NULL
# (MemoryError), not abort. Any other report aborts the process (and fails the step).
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
. "$(dirname "${BASH_SOURCE[0]}")/clib.sh"   # qsimd_unrunnable

# The shared ASan runtime (UBSan's handlers included) that Python must preload.
asan_runtime() {
    local f
    if $QSIMD_ASAN_CC --version 2>/dev/null | grep -q clang; then
        f=$($QSIMD_ASAN_CC -print-file-name="libclang_rt.asan-$(uname -m).so")
    else
        f=$($QSIMD_ASAN_CC -print-file-name=libasan.so)
    fi
    [ -f "$f" ] || { echo "no shared ASan runtime for $QSIMD_ASAN_CC ($f)" >&2; return 1; }
    echo "$f"
}

asan_build() {
    QSIMD_ASAN_DIR=$1
    local root so shared=""
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    QSIMD_ASAN_RT=$(asan_runtime) || return 1
    if [ -f "$QSIMD_ASAN_DIR/built" ]; then return 0; fi
    QSIMD_UNRUNNABLE=$(qsimd_unrunnable)
    # clang links its ASan runtime statically unless told: a Python extension needs the
    # shared one (the one preloaded), and so do the programs the tests compile
    $QSIMD_ASAN_CC --version | grep -q clang && shared="-shared-libasan"
    mkdir -p "$QSIMD_ASAN_DIR/bin"
    # C programs the tests compile (CC) get the same instrumentation. Tools the tests start
    # must not inherit the runtime preloaded for Python: it makes the compiler and cmake
    # several times slower (and they are not what is under test).
    printf '#!/bin/sh\nexec env -u LD_PRELOAD %s %s %s -Wl,-rpath,%s "$@"\n' "$QSIMD_ASAN_CC" \
        "$QSIMD_ASAN_SAN" "$shared" "$(dirname "$QSIMD_ASAN_RT")" > "$QSIMD_ASAN_DIR/cc-san"
    if command -v cmake >/dev/null; then
        printf '#!/bin/sh\nexec env -u LD_PRELOAD %s "$@"\n' "$(command -v cmake)" \
            > "$QSIMD_ASAN_DIR/bin/cmake"
    fi
    chmod +x "$QSIMD_ASAN_DIR/cc-san" "$QSIMD_ASAN_DIR"/bin/*
    rm -rf "$QSIMD_ASAN_DIR/src" && mkdir -p "$QSIMD_ASAN_DIR/src"
    # tracked and untracked files, not ignored ones (no build products)
    (cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) \
        | (cd "$QSIMD_ASAN_DIR/src" && tar -xf -)
    echo "-- build: ASan + UBSan ($QSIMD_ASAN_CC $QSIMD_ASAN_OPT) in $QSIMD_ASAN_DIR/src;" \
        "uninstrumented: ${QSIMD_UNRUNNABLE:-none}"
    local t0=$SECONDS
    if ! (cd "$QSIMD_ASAN_DIR/src" && CC=$QSIMD_ASAN_CC QSIMD_SANITIZE=address,undefined \
            QSIMD_OPT=$QSIMD_ASAN_OPT QSIMD_BUILD_JOBS=2 QSIMD_UNSANITIZED=$QSIMD_UNRUNNABLE \
            CFLAGS="-fno-sanitize-recover=all -fno-omit-frame-pointer -g $shared" \
            LDFLAGS="$shared" "$PY" setup.py -q build_ext --inplace \
            >"$QSIMD_ASAN_DIR/build.log" 2>&1); then
        cat "$QSIMD_ASAN_DIR/build.log"
        return 1
    fi
    # a silently uninstrumented build would pass everything: check it is instrumented
    so=$(ls "$QSIMD_ASAN_DIR"/src/qsimd/_core*.so)
    nm -D "$so" > "$QSIMD_ASAN_DIR/symbols"   # not piped into grep -q: SIGPIPE + pipefail
    if ! grep -q __asan_report "$QSIMD_ASAN_DIR/symbols" ||
            ! grep -q __ubsan_handle "$QSIMD_ASAN_DIR/symbols"; then
        echo "the sanitized build has no ASan/UBSan instrumentation" >&2
        return 1
    fi
    echo "   built in $(( SECONDS - t0 )) s"
    touch "$QSIMD_ASAN_DIR/built"
}

run_asan() {
    (cd "$QSIMD_ASAN_DIR/src" && LD_PRELOAD="$QSIMD_ASAN_RT" CC="$QSIMD_ASAN_DIR/cc-san" \
        PYTHONPATH="$QSIMD_ASAN_DIR/src" QSIMD_UNDER_ASAN=1 PATH="$QSIMD_ASAN_DIR/bin:$PATH" "$@")
}

# ASan warns on every refused huge allocation (the MemoryError cases, as intended): noise.
asan_filter() { grep --line-buffered -v "WARNING: AddressSanitizer failed to allocate" || true; }
