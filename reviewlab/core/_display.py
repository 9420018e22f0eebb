"""How a result shows itself in a notebook without a lower layer importing the ui.

Jupyter asks an object for ``_repr_html_``. The objects that answer (a replay's result and
bounds, a recommendation, a policy, a corpus, a sweep frame) live below :mod:`reviewlab.ui`, and
imports only go down (docs/architecture.md), so they never import the renderer: each asks
:func:`html_of` for its :data:`DisplayKind` (through :class:`RichDisplay`, or a method of its
own where a base class cannot be added), and :mod:`reviewlab.ui._rich_display` registers one
renderer per kind when it is imported (``import reviewlab`` imports it, so every object made
through the package finds its renderer).

Lifecycle: no renderer registered for a kind → :func:`html_of` answers ``None`` and Jupyter
shows the text repr; registered → the renderer's HTML. A renderer that fails raises (IPython
prints the error and falls back to the text repr), never a half-written page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, get_args

from reviewlab.core._errors import ParameterError

DisplayKind = Literal[
    "corpus", "policy", "recommendation", "replay_bounds", "replay_result", "sweep"
]
"""What a notebook renderer draws: one kind per class that has a ``_repr_html_``."""

DISPLAY_KINDS: tuple[DisplayKind, ...] = get_args(DisplayKind)

Renderer = Callable[[Any], str]
"""Takes the object, returns its HTML (every user string escaped)."""

_RENDERERS: dict[str, Renderer] = {}


def register_html(kind: DisplayKind, renderer: Renderer) -> None:
    """Make ``renderer`` the HTML of every object of ``kind`` (a later one replaces it)."""
    if kind not in DISPLAY_KINDS:
        raise ParameterError("kind", f"expected one of {', '.join(DISPLAY_KINDS)}, got {kind!r}")
    if not callable(renderer):
        raise TypeError(f"renderer: expected a callable, got {type(renderer).__name__}")
    _RENDERERS[kind] = renderer


def html_of(kind: DisplayKind, value: Any) -> str | None:
    """``value``'s HTML by the renderer registered for ``kind``; ``None`` when none is."""
    renderer = _RENDERERS.get(kind)
    return None if renderer is None else renderer(value)


class RichDisplay:
    """A base that gives a class Jupyter's ``_repr_html_`` by the renderer of its kind, named
    where the class is defined: ``class Policy(RichDisplay, display="policy")``. Subclasses
    inherit the kind."""

    display_kind: ClassVar[DisplayKind]
    """The renderer this class's objects are drawn by."""

    def __init_subclass__(cls, /, display: DisplayKind | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if display is not None:
            if display not in DISPLAY_KINDS:
                raise ParameterError(
                    "display", f"expected one of {', '.join(DISPLAY_KINDS)}, got {display!r}"
                )
            cls.display_kind = display

    def _repr_html_(self) -> str | None:
        """This object's HTML by the renderer registered for its kind (``None``: none is)."""
        return html_of(self.display_kind, self)
