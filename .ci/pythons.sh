#!/usr/bin/env bash
# The supported CPythons besides the one .ci/run tests in full (3.11): for each, a fresh venv,
# the README's commands -- `pip install -e ".[test]"` (so the build and the tests use the NumPy
# pip picks for that Python) and `python -m qsimd` -- then the test suite in quick mode on
# this CPU's best instruction set. The kernels and the C library are plain C, the same for
# every Python: the full run covers every instruction set, the CMake builds and the C API, so
# these lanes leave those out. One lane (3.10) runs again with the oldest NumPy and ml_dtypes
# pyproject.toml admits, against the extension built with NumPy 2.
#
# The lanes work in a copy of the tree (the tracked and new files), so that their in-place
# builds never touch the tree another run may be testing at the same time (.ci/run runs this
# beside its main test stage).
#
# Interpreters: pythonX.Y on PATH, else pyenv's newest X.Y; a missing one is an error.
#   QSIMD_PYTHONS="3.10 3.12 3.13"   the versions      QSIMD_OLDEST_NUMPY_ON=3.10   that lane
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
versions=${QSIMD_PYTHONS:-3.10 3.12 3.13}
oldest_on=${QSIMD_OLDEST_NUMPY_ON:-3.10}
oldest_pins="numpy==1.25.* ml_dtypes==0.5.*"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$work/src" -xf -
cd "$work/src"
# The C core and the kernels compile the same for every Python: with ccache (apt-installed
# when missing and this runs as root) the lanes after the first reuse their objects and only
# the Cython module, which includes Python.h, is compiled again.
if ! command -v ccache >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache >/dev/null 2>&1 || true
fi
build_env=()   # for the builds only: tests compile with $CC themselves
if command -v ccache >/dev/null && [ -z "${CC:-}" ]; then
    build_env=("CC=ccache gcc" "CCACHE_DIR=$work/ccache" CCACHE_NOHASHDIR=1 "CCACHE_BASEDIR=$work")
fi
T0=$(date +%s)
say() { echo "   [$(( $(date +%s) - T0 )) s] $*"; }

find_python() {
    local v=$1 p
    if p=$(command -v "python$v") && "$p" -c "import sys; sys.exit('%d.%d' % sys.version_info[:2] != '$v')" 2>/dev/null; then
        echo "$p"; return 0
    fi
    if command -v pyenv >/dev/null; then
        for p in $(ls -d "$(pyenv root)/versions/$v".* 2>/dev/null | sort -t. -k3 -n -r); do
            [ -x "$p/bin/python$v" ] && { echo "$p/bin/python$v"; return 0; }
        done
    fi
    return 1
}

# the test suite, quick, on the best instruction set; C-library-only modules left out
run_tests() {
    local py=$1 log=$2 isa
    isa=$("$py" -c 'import qsimd; print(qsimd.available_isas()[-1])')
    if ! QSIMD_TEST_QUICK=1 QSIMD_TEST_ISAS=$isa "$py" -m pytest -q -p no:cacheprovider \
            --ignore=tests/test_c_api.py --ignore=tests/test_c_hostile.py \
            --deselect tests/test_distribution.py::test_cmake_isa_options_and_find_package \
            tests >"$log" 2>&1; then
        tail -40 "$log"; echo "pythons.sh: the tests failed" >&2; exit 1
    fi
    say "pytest ($isa): $(tail -1 "$log")"
}

for v in $versions; do
    py=$(find_python "$v") || { echo "pythons.sh: no CPython $v here (pyenv install $v)" >&2; exit 1; }
    say "CPython $("$py" -c 'import platform; print(platform.python_version())') ($py)"
    "$py" -m venv "$work/$v"
    vpy=$work/$v/bin/python
    env "${build_env[@]}" "$vpy" -m pip install -q -e ".[test]" >"$work/$v.log" 2>&1 ||
        { tail -30 "$work/$v.log"; echo "pythons.sh: pip install -e failed on $v" >&2; exit 1; }
    say "installed: $("$vpy" -c 'import numpy, ml_dtypes; print("numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)')"
    (cd "$work" && "$vpy" -m qsimd >"$work/$v-selfcheck.log" 2>&1) ||
        { cat "$work/$v-selfcheck.log"; echo "pythons.sh: python -m qsimd failed on $v" >&2; exit 1; }
    say "python -m qsimd: $(tail -1 "$work/$v-selfcheck.log")"
    run_tests "$vpy" "$work/$v-pytest.log"
    if [ "$v" = "$oldest_on" ]; then
        # shellcheck disable=SC2086
        "$vpy" -m pip install -q $oldest_pins >>"$work/$v.log" 2>&1 ||
            { tail -20 "$work/$v.log"; echo "pythons.sh: cannot install $oldest_pins" >&2; exit 1; }
        say "oldest admitted: $("$vpy" -c 'import numpy, ml_dtypes; print("numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)')"
        (cd "$work" && "$vpy" -m qsimd >"$work/$v-selfcheck.log" 2>&1) ||
            { cat "$work/$v-selfcheck.log"; echo "pythons.sh: python -m qsimd failed" >&2; exit 1; }
        run_tests "$vpy" "$work/$v-pytest-oldest.log"
    fi
done
if [ ${#build_env[@]} -gt 0 ]; then
    say "ccache: $(CCACHE_DIR=$work/ccache ccache -s 2>/dev/null | grep -iE '^ *(hits|misses):' |
                   tr -s ' ' | tr '\n' ' ')"
fi
