"""Hypothesis strategies every engine test draws from: one ``corpora()``, one ``policies()``.

Engines are compared on the same distribution of corpora. The knobs change the scale, not the
kinds of things drawn: ``seconds`` (durations and sends cluster where the policies' bounds are,
so returns exactly at a bound are common), the tools, how many episodes, rounds and calls, and
whether calls carry progress times (format 2). Needs the ``test`` extra (hypothesis).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from reviewlab.core._breaker import BreakerRule
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.recording._schema import SCHEMA_VERSION, SCHEMA_VERSION_2, Call, Episode, Extent
from reviewlab.recording._schema import Round as _Round
from reviewlab.testing._builders import START

DRAWN_TOOLS = ("read_file", "list_files", "search_code", "query_code")
"""The tools a drawn call uses by default (the inspection tools and the slow query)."""
PATHS = ("a.py", "b.py")
"""The paths drawn calls read and search (two, so skip_target has something to skip)."""
SMALL_SECONDS = st.one_of(
    st.sampled_from([0.0, 0.3, 0.4, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 7.0]),
    st.floats(0.0, 12.0, allow_nan=False, allow_infinity=False),
)
"""Durations around the small bounds :func:`policies` draws (ties with them are common)."""


@st.composite
def calls(
    draw: st.DrawFn,
    *,
    tools: Sequence[str] = DRAWN_TOOLS,
    seconds: st.SearchStrategy[float] = SMALL_SECONDS,
    progress: bool = False,
    remote: bool = False,
) -> Call:
    """One recorded call: a read with an extent, or another tool; some censored, some failing,
    some censored calls seen coming back later; with ``progress``, some report progress (also
    after the call was last seen); with ``remote``, each names its transport and some were
    cancelled, with the server seen stopping some time after."""
    tool = draw(st.sampled_from(list(tools)))
    path = draw(st.sampled_from(PATHS))
    args: dict[str, Any] = {"path": path}
    if tool == "run_command":
        args = {"cmd": "make", "timeout_sec": draw(st.sampled_from([None, 0, 5, 700, True, "60"]))}
    extent = None
    if tool == "read_file":
        first = draw(st.integers(1, 200))
        extent = Extent(path=path, start_line=first, end_line=first + draw(st.integers(0, 120)))
    duration = draw(seconds)
    completed = draw(st.integers(0, 4)) > 0
    returned_after = None
    if not completed and draw(st.booleans()):
        returned_after = duration + draw(seconds)
    moments = None
    if progress and draw(st.booleans()):
        moments = sorted(draw(st.lists(st.floats(0.0, duration * 1.5 + 3.0), max_size=4)))
    more: dict[str, Any] = {}
    if remote:
        more = {
            "transport": draw(st.sampled_from(["mcp", "async", "thread"])),
            "cancel_sent": draw(st.booleans()),
            "cancel_honoured_sec": draw(st.none() | st.sampled_from([0.0, 0.4]) | seconds),
        }
    return Call(
        tool=tool,
        args=args,
        duration_sec=duration,
        completed=completed,
        status=draw(st.sampled_from(["ok", "ok", "ok", "error"])),
        extent=extent,
        returned_after_sec=returned_after,
        progress_sec=moments,
        **more,
    )


@st.composite
def corpora(
    draw: st.DrawFn,
    *,
    tools: Sequence[str] = DRAWN_TOOLS,
    seconds: st.SearchStrategy[float] = SMALL_SECONDS,
    max_episodes: int = 6,
    max_rounds: int = 4,
    max_calls: int = 3,
    deadlines: Sequence[float] = (2.5, 4.0, 9.5, 40.0),
    slots: Sequence[str] = ("s", "t", ""),
    progress: bool = False,
    remote: bool = False,
) -> list[Episode]:
    """1..``max_episodes`` episodes over ``slots``, each of 1..``max_rounds`` rounds of
    0..``max_calls`` calls (:func:`calls`), some with an inherited deadline from
    ``deadlines``; ids are unique, starts spread over a minute."""
    episodes = []
    for index in range(draw(st.integers(1, max_episodes))):
        rounds = [
            _Round(
                send_sec=draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])),
                calls=draw(
                    st.lists(
                        calls(tools=tools, seconds=seconds, progress=progress, remote=remote),
                        max_size=max_calls,
                    )
                ),
            )
            for _ in range(draw(st.integers(1, max_rounds)))
        ]
        v2 = remote or any(c.progress_sec is not None for r in rounds for c in r.calls)
        episodes.append(
            Episode.model_validate(
                {
                    "schema": SCHEMA_VERSION_2 if v2 else SCHEMA_VERSION,
                    "id": f"e{index}",
                    "source": "synthetic",
                    "slot": draw(st.sampled_from(list(slots))),
                    "started_at": START + timedelta(seconds=draw(st.integers(0, 60))),
                    "deadline_sec": draw(st.none() | st.sampled_from(list(deadlines))),
                    "rounds": rounds,
                }
            )
        )
    return episodes


def narrowings() -> st.SearchStrategy[Narrowing]:
    """Every narrowing mode, with a few reserves and fractions."""
    return st.one_of(
        st.just(Narrowing()),
        st.just(Narrowing("none")),
        st.just(Narrowing.unbounded()),
        st.builds(lambda r: Narrowing("reserve", reserve_sec=r), st.sampled_from([0.0, 1.0, 3.0])),
        st.builds(lambda f: Narrowing("fraction", fraction=f), st.sampled_from([0.25, 0.5, 1.0])),
    )


@st.composite
def breakers(draw: st.DrawFn) -> BreakerRule:
    """Breaker rules: counts, windows, cool-downs in rounds or seconds, both scopes."""
    consecutive = draw(st.integers(1, 3))
    in_rounds = draw(st.booleans())
    return BreakerRule(
        consecutive,
        draw(st.none() | st.integers(consecutive, consecutive + 3)),
        draw(st.integers(1, 3)) if in_rounds else None,
        None if in_rounds else draw(st.sampled_from([0.5, 3.0, 20.0])),
        draw(st.sampled_from(["episode", "slot"])),
    )


@st.composite
def policies(
    draw: st.DrawFn,
    *,
    idle: bool = True,
    hedges: bool = True,
    breaker: bool = True,
) -> Policy:
    """A policy with small bounds (a uniform one, a table, or a table with a floor), a
    narrowing, and — each when allowed and drawn — idle timeouts, hedged reads and a breaker."""
    timeouts = draw(
        st.sampled_from(
            [
                TimeoutPolicy.uniform(1.0),
                TimeoutPolicy.uniform(5.0),
                TimeoutPolicy(default_sec=3.0, tools_sec={"read_file": 2.0, "query_code": 6.0}),
                TimeoutPolicy(default_sec=1.0, tools_sec={"search_code": 0.5}, floor_sec=2.0),
            ]
        )
    )
    policy = Policy(timeouts=timeouts, narrowing=draw(narrowings()))
    if idle and draw(st.booleans()):
        policy = policy.with_idle(read_file=draw(st.sampled_from([0.5, 1.0, 2.0])))
    if hedges and draw(st.booleans()):
        policy = policy.with_hedge(
            "read_file",
            after_sec=draw(st.sampled_from([0.2, 0.4, 0.8])),
            max_share=draw(st.sampled_from([0.2, 0.5, 1.0])),
        )
    if breaker and draw(st.booleans()):
        policy = policy.replace(breaker=draw(breakers()))
    return policy
