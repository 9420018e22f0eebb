"""Total caps under progress: reviewlab's cap holds; the TypeScript SDK's rule, replayed, overruns.

The SDK's rule is checked against an independent event-by-event rendering of its request timer
(``Protocol._onprogress``: a report past ``maxTotalTimeout`` fails the request, else the full
timeout is re-armed), and the replay against both rules on a recording with progress.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from reviewlab.core._caps import on_progress_fire_sec
from reviewlab.core._policy import Policy, PolicyError, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.live._episode import ReviewEpisode, ScriptedModel
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round


def sdk_timer(progress: list[float], timeout: float, max_total: float) -> float:
    """The TypeScript SDK's timer, event by event: when a request that never answers fails."""
    due = timeout  # setTimeout(timeout) at dispatch
    for at in sorted(progress):
        if at >= due:
            break  # the timer fired before this report arrived
        if at >= max_total:
            return at  # _onprogress: elapsed past maxTotalTimeout rejects the request now
        due = at + timeout  # resetTimeoutOnProgress: the full timeout again
    return due


def test_the_rule_matches_the_sdks_timer_on_random_progress():
    """On random report times the rule's end equals the SDK timer's, case by case."""
    rng = random.Random(7)
    for _ in range(2000):
        progress = sorted(round(rng.uniform(0, 20), 2) for _ in range(rng.randrange(0, 12)))
        timeout, cap = rng.choice([1.0, 2.5, 4.0]), rng.choice([3.0, 5.0, 9.0])
        fire, _why = on_progress_fire_sec(progress, timeout, cap)
        assert fire == pytest.approx(sdk_timer(progress, timeout, cap)), (progress, timeout, cap)


def test_the_rule_overruns_by_up_to_one_idle_period_and_never_fires_without_progress():
    """Reports until 4.5 s then silence end a 5 s cap at 7.5 s; no report at all ends at the idle
    timeout even past the cap; a report past the cap ends the call at that report."""
    assert on_progress_fire_sec([1.0, 2.0, 3.0, 4.0, 4.5], 3.0, 5.0) == (7.5, "idle")
    assert on_progress_fire_sec([], 8.0, 5.0) == (8.0, "idle")
    assert on_progress_fire_sec([1.0, 3.0, 5.5, 6.0], 3.0, 5.0) == (5.5, "cap")


def recording(progress: list[float], duration: float) -> list[Episode]:
    call = Call(
        tool="slow_query",
        args={},
        duration_sec=duration,
        transport="mcp",
        progress_sec=progress,
        result_chars=10,
    )
    episode = Episode.model_validate(
        {
            "schema": SCHEMA_VERSION_2,
            "id": "with-progress",
            "source": "synthetic",
            "started_at": datetime(2026, 12, 1, tzinfo=UTC),
            "rounds": [Round(send_sec=1.0, calls=[call]), Round(send_sec=1.0)],
        }
    )
    return [episode]


@pytest.mark.parametrize(
    ("progress", "timeout", "cap", "sdk_end", "by"),
    [
        ([1.0, 2.0, 3.0, 4.0, 4.5], 3.0, 5.0, 7.5, "idle"),  # one idle period past the cap
        ([], 8.0, 5.0, 8.0, "idle"),  # no progress: the cap never fires
    ],
)
def test_the_typescript_preset_overruns_its_cap_where_reviewlabs_holds(
    progress, timeout, cap, sdk_end, by
):
    """Replayed in the twin on a recording with progress, the TypeScript SDK's preset abandons
    the call past its cap; reviewlab's rule with the same clocks abandons it at the cap."""
    corpus = recording(progress, duration=30.0)
    sdk = replay(
        corpus,
        Policy.typescript_sdk(["slow_query"], timeout_sec=timeout, max_total_sec=cap),
        engine="twin",
    ).calls
    ours = replay(
        corpus,
        Policy(timeouts=TimeoutPolicy.uniform(cap), idle_sec={"slow_query": timeout}),
        engine="twin",
    ).calls
    assert (sdk.loc[0, "bound_sec"], sdk.loc[0, "bound_by"]) == (sdk_end, by)
    assert sdk.loc[0, "wait_sec"] == sdk_end > cap
    assert (ours.loc[0, "bound_sec"], ours.loc[0, "wait_sec"]) == (cap, cap)
    assert ours.loc[0, "bound_by"] == "tool_timeout"


def test_a_call_may_return_past_the_cap_under_the_sdks_rule():
    """Under the SDK's rule a call reporting steadily returns after its cap and is executed."""
    corpus = recording([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], duration=6.5)
    sdk = replay(
        corpus,
        Policy.typescript_sdk(["slow_query"], timeout_sec=2.0, max_total_sec=10.0),
        engine="twin",
    ).calls
    assert sdk.loc[0, "outcome"] == "executed" and sdk.loc[0, "wait_sec"] == 6.5


def test_the_rule_is_refused_by_name_where_it_is_not_replayed(tmp_path):
    """The vectorized engine, the real engine and a live episode refuse ``cap_rule`` by name."""
    corpus = recording([1.0], duration=2.0)
    policy = Policy.typescript_sdk(["slow_query"], timeout_sec=3.0, max_total_sec=5.0)
    for engine in ("vectorized", "real"):
        with pytest.raises(ValueError, match="cap_rule"):
            replay(corpus, policy, engine=engine)
    episode = ReviewEpisode(tmp_path, ScriptedModel([{"content": "[]"}]), policy=policy)
    with pytest.raises(PolicyError, match="cap_rule"):
        episode.execute()


def test_the_rule_is_a_policy_part_in_toml_and_in_the_label():
    """``[caps] rule`` round-trips; an unknown rule is an error naming the field."""
    policy = Policy.typescript_sdk(["a"], timeout_sec=3.0, max_total_sec=5.0)
    assert Policy.from_toml(policy.to_toml()) == policy
    assert "cap_rule" in policy.parts_in_use and "[caps]" in policy.to_toml()
    with pytest.raises(PolicyError, match="cap_rule"):
        Policy(cap_rule="sometimes")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match="caps"):
        Policy.from_toml('[policy]\ndefault_sec = 5\n[caps]\nrule = "hard"\nextra = 1\n')
