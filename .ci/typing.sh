#!/usr/bin/env bash
# Typing: mypy --strict accepts the examples and typical use (tests/typing/typed_use.py) and
# rejects misuse (every line of tests/typing/misuse.py with an error comment, and no other), and
# stubtest finds the stubs (qsimd/*.pyi) consistent with the installed package.
# Expects the project's venv with qsimd installed (pip install -e .); installs mypy if missing.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
python -c "import mypy" 2>/dev/null || python -m pip install -q mypy
root=$PWD
# from elsewhere: the installed package, not the source tree, is what gets checked
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cfg=(--config-file "$root/pyproject.toml" --cache-dir "$tmp/cache")
# mypy does not follow the import hook of an editable install: it gets the package that
# `import qsimd` finds, through a directory holding only a link to it
pkg=$(cd "$tmp" && python -c 'import os, qsimd; print(os.path.dirname(qsimd.__file__))')
mkdir "$tmp/path" && ln -s "$pkg" "$tmp/path/qsimd"
export MYPYPATH=$tmp/path
echo "   the package: $pkg"
echo "-- mypy --strict: examples and typical use"
(cd "$tmp" && python -m mypy --strict "${cfg[@]}" "$root"/examples/*.py \
    "$root"/tests/typing/typed_use.py)
echo "-- mypy --strict: misuse is rejected, line by line"
set +e
(cd "$tmp" && python -m mypy --strict "${cfg[@]}" --no-error-summary \
    "$root"/tests/typing/misuse.py) >"$tmp/misuse.txt" 2>&1
set -e
want=$(grep -nE "  # error" tests/typing/misuse.py | cut -d: -f1 | sort -n | uniq)
got=$(grep -oE "misuse.py:[0-9]+: error" "$tmp/misuse.txt" | cut -d: -f2 | sort -n | uniq)
if [ "$want" != "$got" ]; then
    echo "expected errors on lines:" $want; echo "reported on lines:" $got
    cat "$tmp/misuse.txt"; exit 1
fi
echo "   $(echo "$want" | wc -l) misuses rejected, nothing else"
echo "-- stubtest (the stubs against the installed package)"
(cd "$tmp" && python -m mypy.stubtest qsimd --allowlist "$root/.ci/stubtest_allowlist.txt" \
    --mypy-config-file "$root/pyproject.toml")
echo "-- the typed use runs"
(cd "$tmp" && python "$root/tests/typing/typed_use.py")
