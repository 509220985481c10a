"""Sphinx configuration of qsimd's documentation site: the Markdown pages of docs/ (through
MyST) and the API reference from the installed package's docstrings (autodoc).

    pip install -e ".[docs]" && sphinx-build -W -b html docs build/docs
"""
import qsimd

project = "qsimd"
author = "the qsimd authors"
copyright = "the qsimd authors; Apache-2.0"
release = version = qsimd.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3           # links to sections of another page, as GitHub makes them
myst_enable_extensions = ["dollarmath"]

# The reference documents what the signatures and docstrings say, in source order; type hints
# are in the stubs (qsimd/*.pyi), which autodoc does not read.
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": False}

html_theme = "alabaster"
html_title = f"qsimd {release}"
html_theme_options = {"description": "Exact, fast ONNX boundary quantization",
                      "page_width": "1100px", "sidebar_width": "230px"}
html_static_path: list = []
