"""Failure family 3, "a bound that fires while the work goes on": zombies and a side effect twice.

A reviewer posts its review with ``run_command`` (``gh pr comment …``), which takes 40 s. A
timeout can stop the waiting, never the work: the command runs on as a loose worker and posts
the comment anyway. Broken: a 30 s timeout on every tool and a model that retries what timed
out (the ``reissue`` reaction): both attempts run to completion, so the comment is posted twice,
two zombies run 10 s each, and the retry costs another model round. reviewlab: the tool's kind
is ``side_effect`` (:mod:`reviewlab.core._kinds`), and the tuner's safety rule
(:func:`reviewlab.analysis._safety.standings`) never bounds a side-effecting tool below its
slowest completed call, so the ladder's first rung above 40 s is its bound: never abandoned,
never retried, posted once. Both run on the twin with the same reaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import numpy as np
from matplotlib.axes import Axes

from reviewlab.analysis._safety import SafetyRules, restrict_ladder, standings
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._vocab import OUTCOME_EXECUTED
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._failure import (
    SCENE_MODEL,
    FailureScene,
    FailureState,
    SceneVerdict,
    tokens_of,
)
from reviewlab.ui.scenes._timeline import Comparison, Timeline

SIDE_EFFECT_TOOL = "run_command"
_ARGS = {"command": "gh pr comment 42 --body 'LGTM, two findings inline'"}
BASE_SEC = 30.0
"""The broken setup's timeout for every tool."""
LADDER = (30.0, 60.0, 120.0, 300.0)
"""The timeouts a tuner may choose from."""
_CALL_SEC = 40.0
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def zombie_episode(call_sec: float = _CALL_SEC) -> Episode:
    """The recording: a send, the posting command (``call_sec``), the final answer."""
    return Episode(
        schema_version=SCHEMA_VERSION_2,  # type: ignore[call-arg]
        id="post-review",
        source="synthetic",
        started_at=_T0,
        model=SCENE_MODEL,
        rounds=[
            Round(
                send_sec=5.0,
                input_tokens=6_000,
                output_tokens=900,
                calls=[Call(tool=SIDE_EFFECT_TOOL, args=_ARGS, duration_sec=call_sec)],
            ),
            Round(send_sec=5.0, input_tokens=7_200, output_tokens=150),
        ],
    )


def protected_policy(episodes: list[Episode]) -> tuple[Policy, str]:
    """reviewlab's policy for the corpus: :data:`BASE_SEC` for every tool, except that a
    side-effecting tool gets the first rung of :data:`LADDER` at or above its slowest completed
    call (the tuner's safety rule); with the rule's reason."""
    policy = Policy(timeouts=TimeoutPolicy(default_sec=BASE_SEC))
    calls: dict[str, int] = {}
    slowest: dict[str, float] = {}
    for episode in episodes:
        for call in episode.calls:
            calls[call.tool] = calls.get(call.tool, 0) + 1
            if call.completed:
                slowest[call.tool] = max(slowest.get(call.tool, 0.0), call.duration_sec)
    rules = SafetyRules(min_calls=1)
    table = {}
    reasons = []
    for tool, standing in standings(policy, calls, slowest, rules).items():
        table[tool] = min(restrict_ladder(LADDER, standing, BASE_SEC))
        reasons.append(f"{tool}: {standing.reason(rules.min_calls, BASE_SEC)}")
    timeouts = TimeoutPolicy(default_sec=BASE_SEC, tools_sec=table, name="reviewlab (safety rule)")
    return policy.replace(timeouts=timeouts), "; ".join(reasons)


@dataclass(frozen=True)
class ZombieRun:
    """The posting episode under one policy (twin, ``reissue`` reaction)."""

    mode: str
    bound_sec: float
    rule: str
    """Why the bound is what it is."""
    attempts: tuple[tuple[float, float, str, float], ...]
    """``(start_sec, wait_sec, outcome, zombie_sec)`` of each attempt of the command."""
    executions: int
    """How many attempts ran to completion (each posted the comment)."""
    zombie_sec: float
    tokens: int
    wall_sec: float


@lru_cache(maxsize=4)
def run_zombies(mode: str) -> ZombieRun:
    """Replay the posting episode on the twin under ``mode`` with the ``reissue`` reaction."""
    episode = zombie_episode()
    if mode == "broken":
        policy = Policy.uniform(BASE_SEC)
        rule = f"every tool {BASE_SEC:g} s; the model retries what timed out"
    else:
        policy, rule = protected_policy([episode])
    result = replay([episode], policy, engine="twin", reaction="reissue")
    calls = result.calls[result.calls["tool"] == SIDE_EFFECT_TOOL]
    zombies = calls["zombie_sec"].to_numpy(dtype=float)
    returned = calls["outcome"].eq(OUTCOME_EXECUTED).to_numpy()
    came_back = calls["source_gap"].eq("native_tool_abandoned").to_numpy() & np.isfinite(zombies)
    # An attempt posted the comment if it returned: inside its bound, or later as a loose worker.
    executions = int((returned | came_back).sum())
    return ZombieRun(
        mode=mode,
        bound_sec=float(calls["bound_sec"].iloc[0]),
        rule=rule,
        attempts=tuple(
            (float(r.start_sec), float(r.wait_sec), str(r.outcome), float(r.zombie_sec))
            for r in calls.itertuples()
        ),
        executions=executions,
        zombie_sec=float(zombies.sum()),
        tokens=tokens_of(result, [episode]),
        wall_sec=float(result.episodes["wall_sec"].iloc[0]),
    )


class ZombieScene(FailureScene):
    """A side-effecting command, a timeout shorter than it, and a model that retries."""

    name = "zombie"
    family = "zombie"
    title = "3. The bound fires, the work goes on: zombies and a side effect done twice"
    claim = (
        "A timeout stops the waiting, not the work: a retried side-effecting call runs twice; "
        "reviewlab never bounds a side-effecting tool below its slowest completed call."
    )
    labels = ("30 s + retry (broken)", "reviewlab: side effects protected")

    def run(self, mode: str) -> ZombieRun:
        """The episode replayed under ``mode``."""
        return run_zombies(mode)

    def compare(self, broken: ZombieRun, reviewlab: ZombieRun) -> tuple[Comparison, ...]:
        """Zombie seconds and tokens."""
        return (
            Comparison("zombie seconds", "s", broken.zombie_sec, reviewlab.zombie_sec),
            Comparison("tokens", "tok", broken.tokens, reviewlab.tokens),
        )

    def draw_run(self, ax: Axes, run: ZombieRun, mode: str) -> None:
        """Each attempt against its bound, its loose worker, and the moment it posted."""
        lanes = [f"{SIDE_EFFECT_TOOL} #{n + 1}" for n in range(max(2, len(run.attempts)))]
        right = max(run.wall_sec, max(a[0] + _CALL_SEC for a in run.attempts)) * 1.1
        line = Timeline(ax, lanes, right)
        for lane, (start, wait, outcome, zombie) in zip(lanes, run.attempts, strict=False):
            line.bound(lane, start, run.bound_sec)
            line.call(lane, start, wait, outcome)
            if outcome == "error":
                line.abandoned(lane, start + wait)
                line.zombie(lane, start + wait, zombie)
            posted = start + wait + (zombie if outcome == "error" else 0.0)
            line.tick(
                lane, posted, label="comment posted (side effect)", color="#c44e52", marker="*"
            )
            line.note(lane, posted, "posted", above=True)
        if len(run.attempts) < len(lanes):
            line.note(lanes[-1], 0.0, "no retry: the command was never abandoned")
        ax.set_title(f"gh pr comment takes {seconds_text(_CALL_SEC)}; bound "
                     f"{seconds_text(run.bound_sec)}", fontsize=9)  # fmt: skip
        line.legend()

    def verdict(self, state: FailureState) -> SceneVerdict:
        """How many times the comment was posted, and the rule behind the bound."""
        run: ZombieRun = state.run
        sentences = [
            f"<b class='rl-outcome'>Posted {run.executions}×</b>; loose workers ran "
            f"{seconds_text(run.zombie_sec)} after nobody waited for them.",
            f"Bound {seconds_text(run.bound_sec)}: {run.rule}.",
        ]
        return sentences, {"outcome": f"posted-{run.executions}", "executions": run.executions}, []
