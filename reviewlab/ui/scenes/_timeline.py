"""The drawing vocabulary of the scenes: lanes on one time axis, and broken-versus-reviewlab bars.

A :class:`Timeline` draws on one Axes whose lanes are named top to bottom. Its marks say the
same thing in every scene: a model send is a purple bar, a call a bar in its outcome's colour,
a bound a dashed box from dispatch, an abandonment a black ✕ at the bound, a loose worker a
hatched orange tail after it, and a call still running when the recording ended a grey tail.
Anything that runs past the right edge (a wedge, a long zombie) is clipped there with an arrow
and its length in words. :func:`compare_bars` draws the figures of the broken behaviour and of
reviewlab's policy side by side, the one in view highlighted. Layout only: the numbers come
from the engines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reviewlab.core._policy import PRE_FIX_LABEL
from reviewlab.ui._numbers import INFINITY, count_text, seconds_text
from reviewlab.ui.charts._palette import METRIC_COLORS, OUTCOME_COLORS, POLICY_COLORS

SEND_COLOR = METRIC_COLORS["model_send"]
ZOMBIE_COLOR = METRIC_COLORS["zombie"]
BROKEN_COLOR = POLICY_COLORS[PRE_FIX_LABEL]
REVIEWLAB_COLOR = POLICY_COLORS["recommended"]
DEADLINE_COLOR = POLICY_COLORS["ouroboros"]
CENSORED_COLOR = "#b8b8b8"
"""A call still running when the recording ended (light grey: what nobody saw)."""


@dataclass(frozen=True)
class Hatched:
    """A patterned bar's look: the hatch (``"///"``), its colour, and the bar's opacity."""

    pattern: str
    color: str = "#7a4f00"
    alpha: float = 1.0


class Timeline:
    """Lanes (named rows, the first at the top) on one time axis from 0 to ``right_sec``."""

    def __init__(self, ax: Axes, lanes: Sequence[str], right_sec: float, *, unit: str = "s"):
        self.ax = ax
        self.lanes = list(lanes)
        self.right = float(right_sec) if right_sec > 0 else 1.0
        self._labels: dict[str, Patch | None] = {}
        ax.set_yticks(range(len(self.lanes)), self.lanes)
        ax.set_ylim(len(self.lanes) - 0.5, -0.5)
        ax.set_xlim(0, self.right)
        ax.set_xlabel(f"time since the request arrived ({unit})")
        ax.grid(axis="x", color="#eeeeee", zorder=0)
        ax.tick_params(axis="y", length=0)

    def row(self, lane: str) -> int:
        """The row of ``lane`` (0 at the top)."""
        return self.lanes.index(lane)

    def _once(self, label: str | None, patch: Patch | None = None) -> str | None:
        if label is None or label in self._labels:
            return None
        self._labels[label] = patch
        return label

    def _clip(self, start: float, length: float) -> tuple[float, float, bool]:
        """``(start, length, clipped)`` of a bar cut at the right edge."""
        start = min(max(start, 0.0), self.right)
        end = start + length
        if not math.isfinite(end) or end > self.right:
            return start, self.right - start, True
        return start, length, False

    def bar(
        self,
        lane: str,
        start: float,
        length: float,
        color: str,
        *,
        label: str | None = None,
        height: float = 0.55,
        hatched: Hatched | None = None,
        clipped_text: str | None = None,
    ) -> None:
        """A filled bar (``hatched``: patterned); one running past the right edge ends there
        with ``clipped_text`` →."""
        left, width, clipped = self._clip(start, length)
        self.ax.barh(
            self.row(lane),
            width,
            left=left,
            height=height,
            color=color,
            hatch=None if hatched is None else hatched.pattern,
            alpha=1.0 if hatched is None else hatched.alpha,
            edgecolor=color if hatched is None else hatched.color,
            linewidth=0 if hatched is None else 0.4,
            label=self._once(label),
            zorder=2,
        )
        if clipped:
            text = clipped_text or f"runs {seconds_text(length)}"
            self.note(lane, self.right, f"{text} →", align="right", above=True)

    def bars(
        self,
        lane: str,
        spans: Sequence[tuple[float, float]],
        color: str,
        *,
        label: str | None = None,
        height: float = 0.55,
    ) -> None:
        """Many filled bars ``(start, length)`` of one kind on one lane, as one collection (cut
        at the right edge without a note)."""
        cut = [self._clip(start, length)[:2] for start, length in spans]
        if not cut:
            return
        row = self.row(lane)
        self.ax.broken_barh(
            cut, (row - height / 2, height), facecolors=color, edgecolor="none",
            label=self._once(label), zorder=2,
        )  # fmt: skip

    def send(self, lane: str, start: float, length: float) -> None:
        """A model send."""
        self.bar(lane, start, length, SEND_COLOR, label="model send", height=0.6)

    def call(
        self,
        lane: str,
        start: float,
        length: float,
        outcome: str,
        *,
        clipped_text: str | None = None,
    ) -> None:
        """The time the episode waited on a call, in its outcome's colour."""
        self.bar(
            lane,
            start,
            length,
            OUTCOME_COLORS.get(outcome, "#8c8c8c"),
            label=outcome,
            clipped_text=clipped_text or ("waits forever" if not math.isfinite(length) else None),
        )

    def bound(self, lane: str, start: float, length: float | None, *, label: str = "bound") -> None:
        """A bound: a dashed box from dispatch (nothing for an unbounded call)."""
        if length is None or not math.isfinite(length):
            return
        left, width, _ = self._clip(start, length)
        self.ax.barh(
            self.row(lane),
            width,
            left=left,
            height=0.8,
            fill=False,
            edgecolor="#444444",
            linestyle="--",
            linewidth=0.9,
            label=self._once(label),
            zorder=3,
        )

    def abandoned(self, lane: str, at: float) -> None:
        """The ✕ where a call's bound passed and the episode stopped waiting."""
        self.ax.plot(
            [min(at, self.right)],
            [self.row(lane)],
            "x",
            color="black",
            markersize=10,
            markeredgewidth=2.2,
            label=self._once("abandoned"),
            zorder=5,
        )

    def zombie(self, lane: str, start: float, length: float, *, text: str | None = None) -> None:
        """A loose worker running on after its abandonment (``inf``: never returns)."""
        clipped = text or ("never returns" if not math.isfinite(length) else None)
        self.bar(
            lane,
            start,
            length,
            ZOMBIE_COLOR,
            label="loose worker (zombie)",
            height=0.3,
            hatched=Hatched("///", alpha=0.75),
            clipped_text=clipped or f"loose {seconds_text(length)}",
        )

    def censored(self, lane: str, start: float) -> None:
        """A grey tail from ``start`` to the right edge: still running when the recording ended."""
        self.bar(
            lane,
            start,
            math.inf,
            CENSORED_COLOR,
            label="still running when the recording ended",
            height=0.55,
            hatched=Hatched("..", color="#8c8c8c"),
            clipped_text="recording ended, still running",
        )

    def tick(
        self,
        lane: str,
        at: float | Sequence[float],
        *,
        label: str | None = None,
        color: str = "#333333",
        marker: str = "|",
    ) -> None:
        """Short upright ticks (progress reports, a stamp) at one or many moments; ``marker="*"``
        for an event that changed the world (a side effect)."""
        moments = [at] if isinstance(at, int | float) else list(at)
        self.ax.plot(
            moments,
            [self.row(lane)] * len(moments),
            linestyle="none",
            marker=marker,
            color=color,
            markersize=12 if marker == "|" else 13,
            label=self._once(label),
            zorder=5,
        )

    def line(self, at: float, text: str, color: str) -> None:
        """A vertical line across every lane, labelled at the top."""
        if not 0 <= at <= self.right:
            return
        self.ax.axvline(at, color=color, linestyle=":", linewidth=1.4, zorder=1)
        self.ax.annotate(
            text,
            (at, -0.5),
            xytext=(2, -2),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=8,
            color=color,
        )

    def note(
        self, lane: str, at: float, text: str, *, align: str = "left", above: bool = False
    ) -> None:
        """A short text at ``at`` on ``lane`` (``above``: just over the bar)."""
        self.ax.annotate(
            text,
            (min(max(at, 0.0), self.right), self.row(lane) - (0.42 if above else 0.0)),
            xytext=(3 if align == "left" else -3, 0),
            textcoords="offset points",
            ha=align,
            va="center",
            fontsize=8,
            bbox={
                "boxstyle": "round,pad=0.15",
                "facecolor": "white",
                "edgecolor": "none",
                "alpha": 0.8,
            },
            zorder=6,
        )

    def legend(self) -> None:
        """The legend at the foot of the figure, one entry per kind of mark drawn."""
        handles, labels = self.ax.get_legend_handles_labels()
        if handles:
            self.ax.figure.legend(
                handles,
                labels,
                loc="lower center",
                ncol=min(len(handles), 5),
                fontsize=7,
                frameon=False,
            )


def fit(figure: Figure, *, left: float = 0.18, right: float = 0.97) -> None:
    """Margins for a figure with one lane chart: room for the lane names on the left, the title
    on top, and the time axis and the legend at the foot (in inches, whatever the height)."""
    height = figure.get_figheight()
    figure.subplots_adjust(left=left, right=right, top=1 - 0.3 / height, bottom=0.82 / height)


@dataclass(frozen=True)
class Comparison:
    """One figure of a failure scene under the broken behaviour and under reviewlab's policy."""

    label: str
    unit: str
    broken: float
    reviewlab: float

    def value(self, mode: str) -> float:
        """The figure under ``mode`` (``broken`` or ``reviewlab``)."""
        return self.broken if mode == "broken" else self.reviewlab


def _value_text(value: float, unit: str) -> str:
    if unit == "s":
        return seconds_text(value)
    return f"{count_text(value)} {unit}" if math.isfinite(value) else INFINITY


def compare_bars(axes: Sequence[Axes], comparisons: Sequence[Comparison], mode: str) -> None:
    """One small Axes per comparison: two bars (broken, reviewlab), the ``mode`` in view solid and
    the other faded. An infinite figure fills its Axes, hatched, labelled ∞."""
    for ax, item in zip(axes, comparisons, strict=True):
        values = [item.broken, item.reviewlab]
        finite = [v for v in values if math.isfinite(v)]
        top = max(finite) if finite else 1.0
        top = top if top > 0 else 1.0
        span = top * (1.6 if len(finite) < len(values) else 1.25)
        for row, (name, value, color) in enumerate(
            (("broken", item.broken, BROKEN_COLOR), ("reviewlab", item.reviewlab, REVIEWLAB_COLOR))
        ):
            width = value if math.isfinite(value) else span
            ax.barh(
                row,
                width,
                color=color,
                alpha=1.0 if name == mode else 0.3,
                hatch=None if math.isfinite(value) else "//",
                edgecolor="black" if name == mode else "none",
                height=0.7,
            )
            ax.annotate(
                _value_text(value, item.unit),
                (min(width, span), row),
                xytext=(-3 if width > span * 0.55 else 3, 0),
                textcoords="offset points",
                ha="right" if width > span * 0.55 else "left",
                va="center",
                fontsize=8,
                fontweight="bold" if name == mode else "normal",
            )
        ax.set_xlim(0, span)
        ax.set_yticks([0, 1], ["broken", "reviewlab"], fontsize=8)
        ax.set_ylim(1.6, -0.6)
        ax.set_xticks([])
        ax.set_title(item.label, fontsize=8, loc="left")
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
