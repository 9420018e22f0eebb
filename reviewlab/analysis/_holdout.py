"""One seeded split of a corpus into the episodes a figure is chosen on and those it is reported on.

A figure chosen as "best" on a sample and reported on that same sample is an optimist (the
minimum of a noisy curve; docs/metrics.md, "Restart cutoffs, honestly"). Every analysis that
picks something on a corpus (the baselines' recommendation, hedge delays, a recommendation
scored beside the presets) picks on the first part of :func:`split_episodes` and reports on the
second. Invariants: the split depends on the seed and the episodes' order only; both parts keep
corpus order; neither is empty, or the error names ``held_out`` and the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from reviewlab.core._errors import ParameterError

T = TypeVar("T")


def check_held_out(held_out: object) -> float:
    """``held_out`` as a share strictly between 0 and 1, else a ``ValueError`` naming it."""
    if (
        isinstance(held_out, bool)
        or not isinstance(held_out, int | float)
        or not (0.0 < held_out < 1.0)
    ):
        raise ParameterError(
            "held_out", f"expected a share strictly between 0 and 1, got {held_out!r}"
        )
    return float(held_out)


def split_episodes(
    episodes: Sequence[T], held_out: float = 0.5, seed: int = 0
) -> tuple[list[T], list[T]]:
    """``(chosen_on, reported_on)``: a seeded random ``1 - held_out`` share of ``episodes`` and
    the rest, each in corpus order."""
    held_out = check_held_out(held_out)
    order = np.random.default_rng(seed).permutation(len(episodes))
    cut = int(round(len(episodes) * (1 - held_out)))
    if cut < 1 or cut >= len(episodes):
        raise ParameterError(
            "held_out", f"{held_out:g} of {len(episodes)} episode(s) leaves a part empty"
        )
    return [episodes[i] for i in sorted(order[:cut])], [episodes[i] for i in sorted(order[cut:])]
