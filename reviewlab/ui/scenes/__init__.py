"""Scenes: the abandonment semantics and the four ways tool calls hang, as widgets to act on.

Each scene holds one idea, drawn: a control the reader moves, the library's own engines (the
SimPy twin, or the real executor on a scene clock) answering, a timeline of what happened and
the receipts or figures beside it. Notebook 01 shows the semantics (:class:`BoundScene`,
:class:`AbandonmentScene`, :class:`CreditingScene`, :class:`CensoringScene`); notebook 07 the
four failure families of real agent frameworks, each with a broken/reviewlab toggle and the
public issue that reported it (:class:`NoBoundScene`, :class:`HiddenClockScene`,
:class:`ZombieScene`, :class:`ProgressCapScene`); the lesson page (``reviewlab lesson``,
:mod:`reviewlab.ui._lesson`) shows them all. The logic of every scene lives in its module, never
in a notebook; :attr:`Scene.state` is what the notebooks assert.
"""

from reviewlab.ui.scenes._abandonment import AbandonmentScene
from reviewlab.ui.scenes._base import Scene
from reviewlab.ui.scenes._bound import BoundScene
from reviewlab.ui.scenes._censoring import CensoringScene
from reviewlab.ui.scenes._crediting import CREDITING_RULES, CreditingScene
from reviewlab.ui.scenes._hidden_clocks import CLOCK_STACK, HiddenClockScene
from reviewlab.ui.scenes._no_bound import NoBoundScene
from reviewlab.ui.scenes._progress_cap import ProgressCapScene
from reviewlab.ui.scenes._reports import REPORTS, PublicReport
from reviewlab.ui.scenes._zombies import ZombieScene

__all__ = [
    "CLOCK_STACK",
    "CREDITING_RULES",
    "FAILURE_SCENES",
    "REPORTS",
    "SEMANTICS_SCENES",
    "AbandonmentScene",
    "BoundScene",
    "CensoringScene",
    "CreditingScene",
    "HiddenClockScene",
    "NoBoundScene",
    "ProgressCapScene",
    "PublicReport",
    "Scene",
    "ZombieScene",
]

SEMANTICS_SCENES: tuple[type[Scene], ...] = (
    BoundScene,
    AbandonmentScene,
    CreditingScene,
    CensoringScene,
)
"""The scenes of notebook 01, in reading order."""
FAILURE_SCENES: tuple[type[Scene], ...] = (
    NoBoundScene,
    HiddenClockScene,
    ZombieScene,
    ProgressCapScene,
)
"""The scenes of notebook 07, one per failure family, in reading order."""
