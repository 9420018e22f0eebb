"""Which tools a corpus calls, and the refusal of a grid over a tool it never calls.

A sweep over ``raed_file=5,10`` (a typo) would replay the corpus unchanged at
every point and say nothing. :func:`check_tools` refuses such a name in one line
naming it, its closest known names (:func:`difflib.get_close_matches`) and every
tool the corpus calls; :func:`reviewlab.analysis.sweep.sweep` and the CLI call it
unless the user allows unknown tools.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.recording._schema import Episode


class UnknownTools(ParameterError):
    """Tools a grid or an option names that the corpus never calls. It carries what a caller
    needs to say it in its own words: ``parameter`` (the library's name for what named them),
    ``unknown``, ``known`` and ``override`` (the parameter that allows them anyway)."""

    def __init__(
        self, parameter: str, unknown: Sequence[str], known: Sequence[str], override: str
    ) -> None:
        self.unknown, self.known, self.override = list(unknown), list(known), override
        super().__init__(parameter, self.because(override))

    def __reduce__(self) -> Any:
        return type(self), (self.parameter, self.unknown, self.known, self.override)

    def because(self, override: str | None = None) -> str:
        """Why, naming ``override`` (default: the library's) as the way to allow them."""
        parts = []
        for tool in self.unknown:
            close = closest(tool, self.known)
            parts.append(tool + (f" (did you mean {' or '.join(close)}?)" if close else ""))
        return (
            f"the corpus never calls {'; '.join(parts)}; it calls "
            f"{', '.join(self.known) or 'no tool'} ({override or self.override} sweeps it anyway)"
        )

    def message(self, parameter: str | None = None, override: str | None = None) -> str:
        """The one line, naming ``parameter`` and ``override`` (default: the library's)."""
        return f"{parameter or self.parameter}: {self.because(override)}"


def closest(name: str, known: Iterable[str]) -> list[str]:
    """The known names closest to ``name`` (at most three): the one did-you-mean of reviewlab."""
    return difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)


def corpus_tools(episodes: Sequence[Episode] | CompiledCorpus) -> list[str]:
    """The tools a corpus calls, sorted."""
    if isinstance(episodes, CompiledCorpus):
        return sorted(episodes.tools)
    return sorted({call.tool for episode in episodes for call in episode.calls})


def check_tools(
    tools: Iterable[str],
    known: Iterable[str],
    *,
    what: str = "tools",
    override: str = "allow_unknown_tools=True",
) -> None:
    """Refuse a tool name the corpus never calls: a typo would otherwise sweep nothing.

    The error (:class:`UnknownTools`, a ``ValueError``) is one line naming every unknown tool
    with the closest known names (:func:`difflib.get_close_matches`) and the known tools.
    """
    known = sorted(set(known))
    unknown = [tool for tool in tools if tool not in known]
    if unknown:
        raise UnknownTools(what, unknown, known, override)


def grid_tools(points: Iterable[Any]) -> list[str]:
    """The tools whose timeouts the grid sets (its ``timeout.<tool>``
    parameters), in first-seen order."""
    seen: dict[str, None] = {}
    for point in points:
        for key in point.params:
            if key.startswith("timeout."):
                seen.setdefault(key.removeprefix("timeout."), None)
    return list(seen)
