"""Sphinx configuration of reviewlab's documentation site (``make docs``; why Sphinx:
``docs/site.md``).

The build is strict: ``make docs`` runs ``sphinx-build -W --keep-going -n``, so every warning
(a broken link or cross-reference, a page missing from the navigation, a docstring that does not
parse, a notebook cell that raises) fails it. The Markdown pages are read by MyST, the notebooks
under ``notebooks/`` (a link to the shipped ones) are executed on every build by MyST-NB, and the
API reference is generated from the docstrings of every name in a package's ``__all__``
(``_ext/public_api.py``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

SHIPPED_NOTEBOOKS = (HERE.parent / "notebooks").resolve()
"""The notebooks as shipped (``notebooks`` is a link to ``reviewlab/notebooks``)."""
NOTEBOOK_PAGES = HERE / "notebooks"
"""Where the site reads them: a git-ignored copy, refreshed on every build. Sphinx reads a
linked folder, but MyST resolves a page's link to ``../notebooks/X.ipynb`` through the link,
out of ``docs/``, and calls it missing; a copy keeps those links checked."""


def copy_notebooks() -> None:
    """Copy every numbered notebook into ``docs/notebooks/``, dropping copies of notebooks
    that no longer exist."""
    NOTEBOOK_PAGES.mkdir(exist_ok=True)
    shipped = {path.name: path for path in SHIPPED_NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")}
    for copy in NOTEBOOK_PAGES.glob("*.ipynb"):
        if copy.name not in shipped:
            copy.unlink()
    for name, path in shipped.items():
        shutil.copyfile(path, NOTEBOOK_PAGES / name)


copy_notebooks()

project = "reviewlab"
author = "the reviewlab authors"
copyright = "2026, the reviewlab authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "public_api",
    "notebook_charts",
]

root_doc = "index"
# docs/README.md is the folder's table of contents for readers of the repository; the site's
# is index.md. _build is where the site goes (git-ignored).
exclude_patterns = ["_build", "README.md", "_ext", "**/.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}

html_theme = "furo"
html_title = "reviewlab"
html_static_path: list[str] = []

# MyST: heading anchors so links like semantics.md#the-bound resolve (and are checked).
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]

# MyST-NB: run every notebook on every build, from its own folder (the kernel starts where the
# notebook is, as in Jupyter), and fail the build on the first cell that raises.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# autodoc: the docstrings as written (reStructuredText: ``code``, :func: roles, definition
# lists; none uses Google or NumPy sections, so no napoleon), signatures with their annotations,
# members in the order of the source (the order the docstrings explain them in).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_class_signature = "separated"

# Strict cross-references inside reviewlab; names of other libraries (pandas, numpy, the
# standard library) are not documented here and are not checked.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!reviewlab\b).*")]
