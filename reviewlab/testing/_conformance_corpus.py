"""What the engine-conformance suite replays: one policy per part and a corpus built to tell
every engine's answer apart from a wrong one.

:data:`PART_POLICIES` holds one policy per policy part (the per-tool table, the floor, argument
overrides, the deadline clamp, each narrowing, idle timeouts, hedges, the breaker, a learned
rule). :func:`conformance_corpus` is built so that every call ends at least two recorded seconds
from any bound (the real engine's clock jitter stays out of the answers) and its closest
deadline window is 0.2 s below the tool timeout (:data:`~reviewlab.testing._conformance.
NEAR_TIE_SEC`), where the ``deadline`` bound wins exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reviewlab.core._learned import LearnedTimeouts, ToolModel
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Extent, Round

_LEARNED = LearnedTimeouts(
    # read_file's bound grows with the lines it asks for: 2.8 s x (lines + 1) ** 0.3 (shape 1 at
    # the 1 - 1/e quantile), from 4.8 s (5 lines) to 9.1 s (50 lines, whose 12 s read is cut).
    {"read_file": ToolModel(("span:start_line:end_line",), (0.3,), math.log(2.8), 1.0)},
    quantile=-math.expm1(-1.0),
    fixed_sec={"search_code": 8.0, "query_code": 15.0},
    default_sec=10.0,
)

_TABLE = TimeoutPolicy(
    default_sec=10.0,
    tools_sec={"read_file": 5.0, "search_code": 8.0, "query_code": 6.0},
    name="table",
)


def _part_policies() -> dict[str, Policy]:
    table = Policy(timeouts=_TABLE)
    return {
        "timeouts": table,
        "timeouts.floor_sec": Policy(
            timeouts=TimeoutPolicy(default_sec=3.0, tools_sec={"read_file": 2.0}, floor_sec=6.0)
        ),
        "timeouts.override_tools": Policy(
            timeouts=TimeoutPolicy(
                default_sec=10.0,
                override_tools=("run_command",),
                override_ceiling_sec=20.0,
                settlement_margin_sec=1.0,
            )
        ),
        "timeouts.clamp_tools": Policy(
            timeouts=TimeoutPolicy(
                default_sec=10.0,
                tools_sec={"web_search": 30.0},
                clamp_tools=("web_search",),
                clamp_reserve_sec=14.0,
            )
        ),
        "timeouts.learned": Policy(timeouts=_LEARNED),
        "narrowing.none": table.replace(narrowing=Narrowing("none")),
        # 4.5 s, not 5: query_code's window would be exactly its 6 s timeout (a true tie).
        "narrowing.reserve": table.replace(narrowing=Narrowing("reserve", reserve_sec=4.5)),
        "narrowing.fraction": table.replace(narrowing=Narrowing("fraction", fraction=0.75)),
        "narrowing.unbounded": table.replace(narrowing=Narrowing.unbounded()),
        "idle_sec": table.with_idle(read_file=2.0),
        "hedges": table.with_hedge("search_code", after_sec=3.0, max_share=0.5),
        "breaker": table.with_breaker(consecutive=2, cooldown_rounds=1),
        "cap_rule": table.with_idle(read_file=3.0).replace(cap_rule="checked_on_progress"),
        # Tasks run live through an MCP server; every replay engine, the twin too, refuses them.
        "tasks": table.with_tasks(query_code="cancel"),
        "idle_sec+hedges": table.with_idle(read_file=2.0).with_hedge(
            "search_code", after_sec=3.0, max_share=0.5
        ),
        "hedges+breaker": table.with_hedge(
            "search_code", after_sec=3.0, max_share=0.5
        ).with_breaker(consecutive=2, cooldown_rounds=1),
    }


PART_POLICIES: dict[str, Policy] = _part_policies()
"""One policy per part under test (a part's name, then its policy); combinations that once
diverged are cells of their own. ``timeouts.learned`` is a rule that reads each call's arguments
(:class:`~reviewlab.core._learned.LearnedTimeouts`)."""


def _read(path: str, start: int, end: int, sec: float, **more: Any) -> Call:
    args = {"path": path, "start_line": start, "end_line": end}
    return Call(
        tool="read_file",
        args=args,
        duration_sec=sec,
        extent=Extent(path=path, start_line=start, end_line=end),
        result_chars=40 * (end - start + 1),
        **more,
    )


def _call(tool: str, sec: float, args: dict[str, Any] | None = None, **more: Any) -> Call:
    return Call(tool=tool, args=args or {}, duration_sec=sec, result_chars=100, **more)


def conformance_corpus() -> list[Episode]:
    """The corpus every cell replays: each policy part changes the fate of some of its calls.

    Every call returns at least two recorded seconds before or after any bound a part gives it,
    so the real engine's jitter cannot flip an outcome (a censored call is the exception by
    design: under ``wedge`` it never returns).
    """
    at = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def episode(name: str, rounds: Sequence[Sequence[Call]], **more: Any) -> Episode:
        made = [Round(send_sec=1.0, calls=list(calls)) for calls in rounds]
        made.append(Round(send_sec=1.0, calls=[]))  # the final answer
        return Episode.model_validate(
            {
                "schema": SCHEMA_VERSION_2,
                "id": name,
                "source": "synthetic",
                "slot": f"slot-{name}",
                "started_at": at,
                "rounds": made,
                **more,
            }
        )

    return [
        episode(
            "plain",
            [
                [_read("a.py", 1, 40, 2.0), _call("list_files", 1.0, {"path": "."})],
                [_call("search_code", 12.0, {"pattern": "def "})],
                [_read("b.py", 1, 20, 1.0)],
            ],
        ),
        episode(
            "wedged",
            [
                [_call("query_code", 12.5, {"q": "callers"}, completed=False)],
                [_read("a.py", 1, 10, 1.0)],
                [_call("query_code", 13.0, {"q": "again"}, completed=False)],
                [_call("query_code", 2.0, {"q": "quick"}), _read("a.py", 11, 30, 1.0)],
            ],
        ),
        episode(
            "deadline",
            [
                [_read("c.py", 1, 30, 3.0)],
                [_call("query_code", 13.5, {"q": "slow"})],
                [_call("list_files", 0.2, {"path": "src"})],
            ],
            deadline_sec=16.0,
        ),
        episode(
            "override",
            [
                [_call("run_command", 4.0, {"cmd": "make", "timeout_sec": 9})],
                [_call("run_command", 14.0, {"cmd": "make test"})],
            ],
        ),
        episode(
            "clamp",
            [[_call("web_search", 28.0, {"q": "timeouts"})], [_read("d.py", 1, 5, 0.4)]],
            deadline_sec=40.0,
        ),
        episode(
            "progress",
            [
                [_read("e.py", 1, 50, 12.0, progress_sec=[0.5, 1.0, 8.0])],
                [_read("e.py", 51, 60, 3.0, progress_sec=[1.0, 2.0])],
                # Steady progress, then silence past the cap: the cap rules part ways here.
                [_read("e.py", 61, 70, 12.5, progress_sec=[1.0, 2.0, 3.0, 4.0, 4.5])],
            ],
        ),
        # A 4.8 s deadline window under read_file's 5 s: exactly the deadline's where time is
        # exact (1 s send, 5.8 s deadline); the real engine's tie tolerance must stay below 0.2 s.
        # The 7 s read outlives every bound a part gives it (0.3 to 4.8 s) by 2 s or more.
        episode("near-tie", [[_read("f.py", 1, 40, 7.0)]], deadline_sec=5.8),
        episode(
            "slow-search",
            [
                [_call("search_code", 3.5, {"pattern": "x"})],
                [_call("search_code", 2.0, {"pattern": "y"})],
                [_call("search_code", 13.0, {"pattern": "z"})],
            ],
        ),
    ]


# -- entry points -------------------------------------------------------------
