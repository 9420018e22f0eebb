"""Every notebook page shows its executed charts: a page under ``notebooks/`` whose doctree holds
no image after execution is a warning, so a failed strict build.

Each shipped notebook draws at least one chart (``tests/cross/test_notebooks.py`` checks it on
a kernel); this is the same promise checked on the pages the site publishes, so a renderer or a
backend that drops the PNG outputs (a ``MPLBACKEND=Agg`` inherited by the kernel, say) cannot
publish chartless notebook pages unnoticed.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

FOLDER = "notebooks/"
"""Where the site's notebook pages live (``docs/notebooks/``, the build's copy)."""


def check_charts(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Warn when a notebook page has no image in it."""
    if docname.startswith(FOLDER) and next(iter(doctree.findall(nodes.image)), None) is None:
        logger.warning(
            "%s: the executed notebook shows no chart (no image output on its page)",
            docname,
            location=docname,
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-resolved", check_charts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
