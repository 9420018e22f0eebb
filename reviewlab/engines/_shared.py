"""What every replay engine does to its input and output the same way.

:func:`check_corpus` refuses anything but a list of episodes with distinct ids (the rule of
:mod:`reviewlab.recording._ids`), :func:`arrival_times` fixes when each request arrives
(recorded or Poisson, seeded), and :func:`calls_frame` builds the ``calls`` frame from row
tuples with the dtypes of :data:`reviewlab.core._metrics.CALL_DTYPES`. The twin, the vectorized
and the real engine import these from here, so no engine reaches into another's package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._errors import ParameterError
from reviewlab.core._vocab import ARRIVAL_MODES
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._schema import Episode

_ARRIVAL_STREAM = 0xA7
"""Seed stream for Poisson arrivals, kept apart from the imputation draws of the same seed."""


def check_corpus(episodes: Sequence[Episode]) -> None:
    """Refuse anything but reviewlab Episodes with distinct ids, naming the position."""
    seen: dict[str, int] = {}
    for position, episode in enumerate(episodes):
        if not isinstance(episode, Episode):
            raise TypeError(
                f"episodes[{position}]: expected a reviewlab Episode, got {type(episode).__name__}"
            )
        first = seen.setdefault(episode.id, position)
        if first != position:
            raise ParameterError(
                f"episodes[{position}].id", f"{duplicate_id(episode.id, f'episodes[{first}]')}"
            )


def arrival_times(
    episodes: Sequence[Episode],
    mode: str | None = None,
    *,
    rate_per_sec: float | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Seconds from the corpus start at which each request arrives.

    ``recorded`` (default): ``started_at - min(started_at)``. ``poisson``: a
    Poisson stream of rate ``rate_per_sec`` starting at 0, seeded; episodes take
    the arrivals in corpus order.
    """
    if mode in (None, "recorded"):
        if not episodes:
            return np.empty(0)
        first = min(e.started_at for e in episodes)
        return np.array([(e.started_at - first).total_seconds() for e in episodes], dtype=float)
    if mode != "poisson":
        raise ParameterError(
            "arrivals", f"expected one of {', '.join(ARRIVAL_MODES)}, got {mode!r}"
        )
    if rate_per_sec is None or not np.isfinite(rate_per_sec) or rate_per_sec <= 0:
        raise ParameterError(
            "arrival_rate",
            f"Poisson arrivals need a positive rate per second, got {rate_per_sec!r}",
        )
    rng = np.random.default_rng((seed, _ARRIVAL_STREAM))
    return np.cumsum(rng.exponential(1.0 / rate_per_sec, len(episodes)))


def calls_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """The ``calls`` frame from row tuples in :data:`~reviewlab.core._metrics.CALL_COLUMNS` order,
    then :data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`."""
    columns: list[Any] = (
        list(zip(*rows, strict=True)) if rows else [[] for _ in metrics.ENGINE_CALL_COLUMNS]
    )
    return pd.DataFrame(
        {
            name: np.asarray(values, dtype=metrics.CALL_DTYPES[name])
            for name, values in zip(metrics.ENGINE_CALL_COLUMNS, columns, strict=True)
        }
    )
