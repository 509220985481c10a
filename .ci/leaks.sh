#!/usr/bin/env bash
# Memory leaks, on the installed qsimd or else a plain (unsanitized) build in a copy of the tree:
#  - --calls N small calls of every operator and error path (tests/qleak.py, default 1M):
#    RSS and Python's allocated blocks must stay flat;
#  - valgrind memcheck on --vg-calls calls per ISA (default 400) with PYTHONMALLOC=malloc:
#    no definitely-lost block and no error with a qsimd frame, no invalid access anywhere
#    (.ci/valgrind_check.py reads the XML report).
#   Usage: .ci/leaks.sh [--calls N] [--vg-calls N] [--dir DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
calls=1000000 vg_calls=400 dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --calls) calls=$2; shift 2 ;;
        --vg-calls) vg_calls=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
PY=${PYTHON:-python}
if [ -z "$dir" ]; then dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT; fi
start=$(date +%s)
. "$here/plain.sh"
plain_setup "$dir"

if [ "$calls" -gt 0 ]; then
    echo "-- $calls small calls: memory must stay flat"
    run_plain "$PY" tests/qleak.py --calls "$calls"
fi

if [ "$vg_calls" -gt 0 ]; then
    echo "-- valgrind memcheck: $vg_calls calls on every ISA"
    vg="$dir/valgrind.xml"
    run_plain env PYTHONMALLOC=malloc valgrind --tool=memcheck --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=40 \
        --xml=yes --xml-file="$vg" "$PY" tests/qleak.py --calls "$vg_calls" --every-isa
    "$PY" "$here/valgrind_check.py" "$vg"
fi
echo "-- leaks: done in $(( $(date +%s) - start )) s"
