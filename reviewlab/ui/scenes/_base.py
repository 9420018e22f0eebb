"""What every scene shares: the widget around it, the timing of its updates, the outcome text.

Lifecycle of a scene: its constructor builds the controls, then :meth:`Scene._finish` lays
them out beside a fixed-size figure and runs one synchronous :meth:`Scene.update`. Every control
change runs one more update on the kernel's thread: :meth:`Scene.compute` asks the library's
engines for the scene's state (nothing is decided here), :meth:`Scene.draw` redraws the figure,
which is rendered as PNG into :attr:`Scene.image`, and :meth:`Scene.describe` writes the outcome
into :attr:`Scene.caption`. :attr:`Scene.state` is the last state: what the notebooks and the
tests assert on. Updates never overlap (a lock), and each one's wall time is kept
(:attr:`Scene.update_secs`; ``benchmarks/bench_widgets.py`` holds every one to 0.3 s).

The outcome text is HTML whose outer ``div`` carries the scene's name and its key facts as
``data-`` attributes (``data-bound-sec``, ``data-outcome`` …), so a browser test reads what
the page says without parsing prose.
"""

from __future__ import annotations

import abc
import html
import io
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import ipywidgets as w
from matplotlib.axes import Axes
from matplotlib.figure import Figure

DPI = 80
"""Dots per inch of a scene's PNG: sharp enough on a projector, cheap enough to redraw."""


def outcome_html(
    scene: str,
    facts: Mapping[str, Any],
    sentences: Sequence[str],
    rows: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The outcome beside a scene's figure: ``sentences`` (HTML), then ``rows`` as a table.

    ``facts`` become ``data-`` attributes of the outer ``div`` (``bound_sec`` →
    ``data-bound-sec``), the values a browser test reads.
    """
    attributes = " ".join(
        f'data-{key.replace("_", "-")}="{html.escape(str(value), quote=True)}"'
        for key, value in facts.items()
    )
    parts = [f'<div class="rl-scene-outcome" data-scene="{scene}" {attributes}>']
    parts += [f"<div style='margin:0.4em 0'>{sentence}</div>" for sentence in sentences]
    if rows:
        head = "".join(f"<th>{html.escape(str(key))}</th>" for key in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row.values()) + "</tr>"
            for row in rows
        )
        parts.append(
            '<table class="rl-receipts" style="font-size:85%"><thead><tr>'
            f"{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    parts.append("</div>")
    return "".join(parts)


class Scene(abc.ABC):
    """One idea of the lesson as a widget: controls, a drawn figure, an outcome (module doc).

    Subclasses set :attr:`name` and :attr:`title`, build their controls, call
    :meth:`_finish`, and implement :meth:`compute`, :meth:`draw` and :meth:`describe`.
    """

    name: ClassVar[str] = "scene"
    """A short id: the outcome's ``data-scene`` and the widget's CSS class ``rl-scene-NAME``."""
    title: ClassVar[str] = ""
    """The scene's heading: the one idea it holds."""
    claim: ClassVar[str] = ""
    """What the scene shows, in one sentence (the lesson page prints it under the title)."""
    figsize: ClassVar[tuple[float, float]] = (9.0, 3.2)
    left: ClassVar[float] = 0.18
    """The figure's left margin (room for the lane names), as a fraction of its width."""

    state: Any
    widget: w.VBox

    def __init__(self) -> None:
        # A fixed layout: the constrained layout engine would double the redraw time.
        self.figure = Figure(figsize=self.figsize, dpi=DPI)
        # Its own size, top-aligned: a flex row would otherwise stretch it to the outcome's height.
        width = f"{self.figsize[0] * DPI:g}px"
        self.image = w.Image(
            format="png",
            layout=w.Layout(
                width=width, max_width=width, height="auto", align_self="flex-start",
                object_fit="contain", flex="0 0 auto",
            ),
        )  # fmt: skip
        self.caption = w.HTML(layout=w.Layout(max_width="30em", margin="0 0 0 1em"))
        self.axes: list[Axes] = []
        """The figure's Axes, made once (:meth:`make_axes`) and cleared before each draw."""
        self.update_secs: list[float] = []
        """Wall seconds of every update so far (the first one, at construction, included)."""
        self.state = None
        self._lock = threading.RLock()

    # -- to implement ------------------------------------------------------------------------
    def make_axes(self) -> list[Axes]:
        """The figure's Axes (default: one, with room for lane names and a legend)."""
        from reviewlab.ui.scenes._timeline import fit

        ax = self.figure.add_subplot()
        fit(self.figure, left=self.left)
        return [ax]

    @abc.abstractmethod
    def compute(self) -> Any:
        """The scene's state for the controls' current values (the engines' answer)."""

    @abc.abstractmethod
    def draw(self, state: Any) -> None:
        """Redraw :attr:`figure` for ``state``."""

    @abc.abstractmethod
    def describe(self, state: Any) -> str:
        """The outcome beside the figure, as HTML (:func:`outcome_html`)."""

    # -- the lifecycle -------------------------------------------------------------------------
    def _finish(self, controls: Sequence[w.Widget]) -> None:
        """Lay the controls out above the figure and the outcome, then run the first update."""
        self.widget = w.VBox(
            [
                w.HTML(
                    f"<h3>{html.escape(self.title)}</h3><p><i>{html.escape(self.claim)}</i></p>"
                ),
                w.HBox(list(controls), layout=w.Layout(flex_flow="row wrap")),
                w.HBox([self.image, self.caption]),
            ]
        )
        self.widget.add_class("rl-scene")
        self.widget.add_class(f"rl-scene-{self.name}")
        self.update()

    def watch(self, *controls: w.ValueWidget) -> None:
        """Run :meth:`update` whenever one of ``controls`` changes value."""
        for control in controls:
            control.observe(self._changed, names="value")

    def on_click(self, button: w.Button, action: Callable[[], None]) -> None:
        """Run ``action`` then :meth:`update` when ``button`` is clicked."""

        def clicked(_: w.Button) -> None:
            try:
                action()
            finally:
                self._changed(None)

        button.on_click(clicked)

    def _changed(self, _: Any) -> None:
        try:
            self.update()
        except Exception as exc:  # a failed update shows on the page, it must not go silent
            self.caption.value = (
                f"<pre style='color:#c44e52;white-space:pre-wrap'>{html.escape(repr(exc))}</pre>"
            )

    def update(self) -> Any:
        """Compute, draw and show the state for the controls' current values; return it."""
        with self._lock:
            started = time.perf_counter()
            state = self.compute()
            # Clearing the Axes is cheaper than making new ones (ticks, spines, transforms).
            if not self.axes:
                self.axes = self.make_axes()
            else:
                for ax in self.axes:
                    ax.cla()
                self.figure.legends.clear()
            self.draw(state)
            self.image.value = self.png()
            self.caption.value = self.describe(state)
            self.state = state
            self.update_secs.append(time.perf_counter() - started)
        return state

    @property
    def last_update_sec(self) -> float:
        """Wall seconds the last update took."""
        return self.update_secs[-1] if self.update_secs else 0.0

    def png(self) -> bytes:
        """The figure as PNG bytes."""
        buffer = io.BytesIO()
        # Fast zlib: the image is sent once to the page, its size matters less than the wait.
        self.figure.savefig(buffer, format="png", dpi=DPI, pil_kwargs={"compress_level": 1})
        return buffer.getvalue()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
