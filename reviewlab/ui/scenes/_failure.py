"""What the four failure scenes of notebook 07 share: the broken/reviewlab toggle, the two-panel
figure, the public reports under the outcome, and token counts.

A :class:`FailureScene` replays its small corpus on the SimPy twin twice per update — under the
broken behaviour (as the framework in the public report had it) and under reviewlab's policy —
with the same assumptions (censoring, the model's reaction), so the toggle changes the policy and
nothing else. The left panel draws the run in view; the right panel compares a figure in seconds
and one in tokens or slot-seconds for both (:func:`~reviewlab.ui.scenes._timeline.compare_bars`).
Replays are pure functions of their arguments, so each subclass caches them.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

import ipywidgets as w
from matplotlib.axes import Axes

from reviewlab.analysis._cost import replay_cost
from reviewlab.core._prices import ModelPrice, PriceTable
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui.scenes._base import Scene, outcome_html
from reviewlab.ui.scenes._reports import REPORTS, reports_html
from reviewlab.ui.scenes._timeline import Comparison, compare_bars

FIGURES_PER_SCENE = 2
"""How many figures every failure scene compares (one in seconds, one in tokens or slot-seconds)."""
MODES = ("broken", "reviewlab")
"""The toggle's two positions."""
SCENE_MODEL = "scene-model"
"""The model named by the scenes' recordings (token counts only; its prices are placeholders)."""
SceneVerdict = tuple[list[str], dict[str, Any], list[dict[str, Any]]]
"""What a failure scene says: ``(sentences, facts, rows)`` (see :meth:`FailureScene.verdict`)."""
_PRICES = PriceTable(models={SCENE_MODEL: ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)})


def tokens_of(result: ReplayResult, episodes: list[Episode]) -> int:
    """Model tokens (input + output) the replay spent: every recorded round plus every round the
    replay added (:func:`~reviewlab.analysis._cost.replay_cost`)."""
    frame = replay_cost(result, episodes, _PRICES).episodes
    return int(frame["input_tokens"].sum() + frame["output_tokens"].sum())


@dataclass(frozen=True)
class FailureState:
    """One update of a failure scene: the run in view, both runs, and the compared figures."""

    mode: str
    runs: dict[str, Any]
    """``broken`` and ``reviewlab`` → the subclass's run record."""
    comparisons: tuple[Comparison, ...]

    @property
    def run(self) -> Any:
        """The run in view."""
        return self.runs[self.mode]


class FailureScene(Scene):
    """A failure family replayed under the broken behaviour and under reviewlab's policy.

    Subclasses set :attr:`family` (a key of :data:`~reviewlab.ui.scenes._reports.REPORTS`) and
    the button labels, and implement :meth:`run`, :meth:`compare`, :meth:`draw_run` and
    :meth:`verdict`; :meth:`extra_controls` may add controls (the run then depends on them).
    """

    family: ClassVar[str] = ""
    labels: ClassVar[tuple[str, str]] = ("broken", "reviewlab")
    """The toggle's button labels for ``broken`` and ``reviewlab``."""
    figsize = (10.0, 3.4)
    left = 0.17

    def __init__(self, mode: str = "broken") -> None:
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        super().__init__()
        self.mode = w.ToggleButtons(
            options=list(zip(self.labels, MODES, strict=True)), value=mode,
            description="behaviour", style={"button_width": "15em"},
        )  # fmt: skip
        extra = self.extra_controls()
        self.watch(self.mode, *extra)
        self._finish([self.mode, *extra])

    # -- to implement ------------------------------------------------------------------------
    def extra_controls(self) -> list[w.ValueWidget]:
        """Controls besides the toggle (none by default)."""
        return []

    @abc.abstractmethod
    def run(self, mode: str) -> Any:
        """The twin's replay of the scene's corpus under ``mode`` (cache it)."""

    @abc.abstractmethod
    def compare(self, broken: Any, reviewlab: Any) -> tuple[Comparison, ...]:
        """The figures the right panel compares (seconds, then tokens or slot-seconds)."""

    @abc.abstractmethod
    def draw_run(self, ax: Axes, run: Any, mode: str) -> None:
        """Draw ``run`` on the left panel."""

    @abc.abstractmethod
    def verdict(self, state: FailureState) -> SceneVerdict:
        """``(sentences, facts, rows)`` of the outcome for ``state``."""

    # -- shared ------------------------------------------------------------------------------
    def compute(self) -> FailureState:
        """Both runs (the comparison needs them), the one in view by the toggle."""
        runs = {mode: self.run(mode) for mode in MODES}
        return FailureState(self.mode.value, runs, self.compare(runs["broken"], runs["reviewlab"]))

    def make_axes(self) -> list[Axes]:
        """The run's Axes on the left, one small Axes per compared figure stacked on the right."""
        grid = self.figure.add_gridspec(
            FIGURES_PER_SCENE, 2, width_ratios=(3.2, 1.0), wspace=0.12, hspace=0.9,
            left=self.left, right=0.985, top=0.9, bottom=0.82 / self.figsize[1],
        )  # fmt: skip
        return [
            self.figure.add_subplot(grid[:, 0]),
            *(self.figure.add_subplot(grid[row, 1]) for row in range(FIGURES_PER_SCENE)),
        ]

    def draw(self, state: FailureState) -> None:
        """The run in view on the left, the compared figures stacked on the right."""
        self.draw_run(self.axes[0], state.run, state.mode)
        compare_bars(self.axes[1:], state.comparisons, state.mode)

    def describe(self, state: FailureState) -> str:
        """The verdict, then the public reports of the family."""
        sentences, facts, rows = self.verdict(state)
        facts = {"family": self.family, "mode": state.mode, **facts}
        first = REPORTS[self.family][0]
        sentences = [
            *sentences,
            f"Reported in public ({first.ref} and more):{reports_html(self.family)}",
        ]
        return outcome_html(self.name, facts, sentences, rows)
