"""Replay recorded episodes under another policy: one entry point, one result type, three engines.

* ``engine="twin"`` — the SimPy discrete-event twin (:mod:`reviewlab.engines.twin`), the
  reference; the only engine that simulates a reviewer pool (``slots=N``).
* ``engine="vectorized"`` — NumPy over all calls of all episodes at once
  (:mod:`reviewlab.engines.vectorized`); exactly the twin's answers for episodes
  without a pool, far faster.
* ``engine="real"`` — every episode through the real :class:`ReviewEpisode` and
  :class:`BoundedExecutor` on threads (:mod:`reviewlab.engines.real`), with tools
  that sleep their recorded duration times ``time_scale``.

Every engine returns a :class:`ReplayResult` whose frames have the columns of
:data:`reviewlab.core.metrics.CALL_COLUMNS` and :data:`reviewlab.core.metrics.EPISODE_COLUMNS`
and whose summary is :func:`reviewlab.core.metrics.summarize`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewlab.core.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core.vocab import CENSORING_MODES, ENGINES, CensoringMode, EngineName
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode

__all__ = ["replay"]


def replay(
    episodes: Iterable[Episode],
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: EngineName = "twin",
    censored: CensoringMode = "wedge",
    slots: int | None = None,
    time_scale: float = 0.001,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` under ``policy`` (default :meth:`TimeoutPolicy.ouroboros`) and ``narrowing``.

    ``censored`` says what a censored call does once abandoned: ``"wedge"``
    never returns, ``"impute"`` returns at a time drawn (seeded by
    ``options["seed"]``) from the tool's censoring-aware duration distribution.
    ``slots`` simulates a reviewer pool (twin only). ``time_scale`` multiplies
    recorded durations for ``engine="real"``.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    policy = policy if policy is not None else TimeoutPolicy.ouroboros()
    narrowing = narrowing or Narrowing()
    episodes = list(episodes)
    if engine == "twin":
        from reviewlab.engines.twin import simulate

        return simulate(episodes, policy, narrowing, censored=censored, slots=slots, **options)
    if slots is not None:
        raise ValueError(
            f"slots: a reviewer pool is simulated only by engine='twin', not {engine!r}"
        )
    if engine == "vectorized":
        from reviewlab.engines.vectorized import replay_vectorized

        return replay_vectorized(episodes, policy, narrowing, censored=censored, **options)
    from reviewlab.engines.real import replay_real

    return replay_real(
        episodes, policy, narrowing, censored=censored, time_scale=time_scale, **options
    )
