#!/usr/bin/env bash
# The documentation site: the Markdown pages of docs/ and the API reference generated from the
# installed package's docstrings (Sphinx, MyST, autodoc), warnings as errors.
# Expects the project's venv with qsimd installed; installs the `docs` extra's tools.
#   .ci/docs.sh [OUTPUT_DIR]   (default build/docs)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
python -c "import sphinx, myst_parser" 2>/dev/null || python -m pip install -q "sphinx>=7" "myst-parser>=2"
out=${1:-build/docs}
rm -rf "$out"
python -m sphinx -W --keep-going -q -b html docs "$out"
echo "   $(find "$out" -name '*.html' | wc -l) pages in $out"
