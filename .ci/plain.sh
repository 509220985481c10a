# Sourced by the CI scripts: a plain (unsanitized) qsimd to run tools against.
#   plain_setup DIR   the installed qsimd when there is one (CI installs it first), else a
#                     plain build in a copy of the tree under DIR/plain
#   run_plain CMD...  run CMD (from the tree's root or the copy) with that qsimd importable
# Needs: $PY.
plain_setup() {
    local dir=$1 root installed
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    installed=$(cd / && "$PY" -c "import qsimd; print(qsimd._core.__file__)" 2>/dev/null || true)
    if [ -n "$installed" ] && nm -D "$installed" > "$dir/installed.syms" 2>/dev/null &&
            ! grep -q __asan "$dir/installed.syms"; then
        echo "   plain qsimd: the installed one ($installed)"
        QSIMD_PLAIN_ROOT=$root QSIMD_PLAIN_PATH=""
        return 0
    fi
    QSIMD_PLAIN_ROOT="$dir/plain/src" QSIMD_PLAIN_PATH="$dir/plain/src"
    [ -f "$dir/plain/built" ] && return 0
    rm -rf "$dir/plain" && mkdir -p "$dir/plain/src"
    (cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) \
        | (cd "$dir/plain/src" && tar -xf -)
    echo "-- build: plain, in $dir/plain/src"
    (cd "$dir/plain/src" && QSIMD_BUILD_JOBS=2 "$PY" setup.py -q build_ext --inplace \
        >"$dir/plain/build.log" 2>&1) || { cat "$dir/plain/build.log"; return 1; }
    touch "$dir/plain/built"
}

run_plain() {
    (cd "$QSIMD_PLAIN_ROOT" && PYTHONPATH="$QSIMD_PLAIN_PATH${PYTHONPATH:+:$PYTHONPATH}" "$@")
}
