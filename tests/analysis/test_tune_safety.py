"""The tuner's safety rules: tool kinds, --min-calls, side-effecting tools protected unless opted
in by name, and the default abandoned-call budget, each checked against independent replays."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from reviewlab.analysis._safety import SafetyRules
from reviewlab.analysis._tune import recommend
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines._censoring import effective_observation
from reviewlab.engines.twin import simulate
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.recording.interop import import_auto

REAL_LOGS = Path(__file__).resolve().parents[1] / "fixtures"
START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)


def real_logs() -> list[Episode]:
    """Every timed episode of the real OpenHands, Inspect AI and SWE-agent logs shipped."""
    episodes: list[Episode] = []
    for path in sorted(REAL_LOGS.glob("*/*")):
        if path.parent.name == "frameworks":
            continue  # logs written here by the frameworks' releases, not those projects' runs
        untimed = ("log_tool_call_error.json", "networking_1.traj")
        if path.suffix in (".md",) or path.name in untimed:
            continue  # provenance notes; a schema fixture and a 0.x trajectory without timings
        episodes += import_auto(path)[1]
    return episodes


def episode(index: int, calls: list[Call]) -> Episode:
    """One episode: each call in its own round, then a final answer."""
    rounds = [Round(send_sec=1.0, calls=[call]) for call in calls] + [Round(send_sec=1.0)]
    return Episode(id=f"e{index}", source="synthetic", slot="s1", started_at=START, rounds=rounds)


def mixed_corpus(seed: int = 0, episodes: int = 60) -> list[Episode]:
    """Reads (fast, heavy-tailed) and edits (side-effecting, a few slow ones) in every episode."""
    rng = np.random.default_rng(seed)
    corpus = []
    for index in range(episodes):
        calls = [
            Call(
                tool="read_file",
                args={"path": f"f{index}.py"},
                duration_sec=float(rng.lognormal(np.log(0.05), 1.0)),
                extent=Extent(path=f"f{index}.py", start_line=1, end_line=40),
            ),
            Call(tool="edit", duration_sec=float(rng.lognormal(np.log(0.2), 1.2))),
            Call(tool="read_file", duration_sec=float(rng.lognormal(np.log(0.05), 1.0))),
        ]
        corpus.append(episode(index, calls))
    return corpus


def completed_abandoned(corpus: list[Episode], policy: Policy) -> dict[str, int]:
    """Per tool, calls that completed in the recording and the twin abandons under ``policy``."""
    calls = simulate(corpus, policy).calls
    recorded = [effective_observation(c)[1] for ep in corpus for c in ep.calls]
    counts: dict[str, int] = {}
    for tool, gap, done in zip(calls["tool"], calls["source_gap"], recorded, strict=True):
        if gap == SOURCE_GAP_ABANDONED and done:
            counts[tool] = counts.get(tool, 0) + 1
    return counts


def test_real_logs_no_side_effecting_or_rare_tool_abandons_a_completed_call():
    """On the imported real logs with default options, replaying the recommendation in the twin
    abandons no completed call of a side-effecting, unknown or rarely seen tool, and every tool
    seen fewer than 20 times keeps the base timeout."""
    corpus = real_logs()
    assert len(corpus) >= 12
    rec = recommend(corpus)
    base = Policy.ouroboros()
    explain = rec.explain.set_index("tool")
    abandoned = completed_abandoned(corpus, rec.policy)
    for tool, row in explain.iterrows():
        if row["calls"] < 20:
            assert rec.policy.timeout_for(None, tool) == base.timeout_for(None, tool), tool
            assert row["status"] == "kept_rare"
        if row["calls"] < 20 or base.kind_of(tool) != "read_only":
            assert abandoned.get(tool, 0) == 0, tool
    # the import names side-effecting tools as such
    assert explain.loc["run_command", "kind"] == "side_effect"
    assert explain.loc["edit", "kind"] == "side_effect"


def test_a_side_effecting_tool_is_held_at_its_slowest_completed_call_unless_opted_in():
    """Without opting in, ``edit`` keeps every completed call; named in allow_abandoning (and
    with the budgets opened) it may be tightened into abandoning some, as the twin shows."""
    corpus = mixed_corpus()
    slowest = max(
        c.duration_sec for ep in corpus for c in ep.calls if c.tool == "edit" and c.completed
    )
    open_budgets = {
        "max_timeout_coverage_loss": 1.0,
        "max_added_abandoned_rate": None,
        "max_tool_added_abandoned_rate": None,
        "objective": "max_silence",
    }
    held = recommend(corpus, **open_budgets)
    assert held.policy.timeout_for(None, "edit") >= slowest
    assert completed_abandoned(corpus, held.policy).get("edit", 0) == 0
    freed = recommend(corpus, allow_abandoning=["edit"], **open_budgets)
    assert freed.policy.timeout_for(None, "edit") < slowest
    assert completed_abandoned(corpus, freed.policy)["edit"] >= 1
    status = freed.explain.set_index("tool")["status"]
    assert status["edit"] == "opted_in" and status["read_file"] == "tunable"


def test_a_kind_declared_in_the_policy_changes_what_may_be_tightened():
    """Declaring ``edit`` read-only in the base policy lifts the protection, as opting in does;
    declaring ``read_file`` side-effecting adds it."""
    corpus = mixed_corpus()
    open_budgets = {
        "max_timeout_coverage_loss": 1.0,
        "max_added_abandoned_rate": None,
        "max_tool_added_abandoned_rate": None,
        "objective": "max_silence",
    }
    base = Policy.ouroboros().with_kinds(edit="read_only", read_file="side_effect")
    rec = recommend(corpus, base=base, **open_budgets)
    status = rec.explain.set_index("tool")["status"]
    assert status["edit"] == "tunable" and status["read_file"] == "protected"
    assert completed_abandoned(corpus, rec.policy).get("read_file", 0) == 0


def test_a_tool_seen_less_than_min_calls_keeps_the_base_timeout():
    """``edit`` with 60 calls keeps the base under min_calls=100 and is tuned under 10."""
    corpus = mixed_corpus()
    base = TimeoutPolicy.uniform(120.0)
    kept = recommend(corpus, base=base, min_calls=100, allow_abandoning=["edit"])
    assert kept.policy.timeout_for(None, "edit") == 120.0
    assert kept.explain.set_index("tool").loc["edit", "reason"].startswith("kept base 120 s")
    tuned = recommend(corpus, base=base, min_calls=10, allow_abandoning=["edit"])
    assert tuned.policy.timeout_for(None, "edit") < 120.0


def test_the_default_budget_bounds_added_abandonment_per_tool_and_overall():
    """Under the default budget the corpus's added abandonment (twin replay of the
    recommendation minus the loosest timeouts') is within 1 % overall and 5 % per tool, the
    budget table states both, and a zero per-tool budget keeps every completed call."""
    corpus = mixed_corpus(seed=3, episodes=200)
    rec = recommend(corpus, allow_abandoning=["edit"], max_timeout_coverage_loss=1.0)
    budgets = rec.budgets.set_index("budget")
    assert budgets.loc["added_abandoned_call_rate", "limit"] == 0.01
    assert budgets.loc["added_abandoned_call_rate.edit", "limit"] == 0.05
    assert bool(budgets["met"].all())
    loosest = Policy(timeouts=TimeoutPolicy.uniform(1e6))
    ours = simulate(corpus, rec.policy).calls
    free = simulate(corpus, loosest).calls
    added = (ours["source_gap"] == SOURCE_GAP_ABANDONED) & (
        free["source_gap"] != SOURCE_GAP_ABANDONED
    )
    assert added.sum() / len(ours) <= 0.01
    for tool in ("edit", "read_file"):
        mine = ours["tool"] == tool
        assert (added & mine).sum() / mine.sum() <= 0.05
    none = recommend(
        corpus,
        allow_abandoning=["edit"],
        max_timeout_coverage_loss=1.0,
        max_tool_added_abandoned_rate=0.0,
    )
    assert sum(completed_abandoned(corpus, none.policy).values()) == 0


def test_the_rules_are_stated_in_the_rule_and_the_assumptions():
    """The rule sentence names min_calls, the side-effect protection and both budgets."""
    rec = recommend(mixed_corpus(episodes=30), min_calls=7, allow_abandoning=["edit"])
    assert "fewer than 7 recorded calls keeps the base timeout" in rec.rule
    assert "opted in to abandoning: edit" in rec.rule
    assert "1.00% of all dispatched calls and 5.00% of each tool's calls" in rec.rule
    assert rec.assumptions["min_calls"] == 7 and rec.assumptions["allow_abandoning"] == "edit"


def test_bad_rules_are_one_line_errors_naming_the_parameter():
    """min_calls below 1, a rate outside [0, 1] and an unknown tool to opt in are refused."""
    corpus = mixed_corpus(episodes=10)
    with pytest.raises(ValueError, match=r"^min_calls: expected a whole number of calls >= 1"):
        recommend(corpus, min_calls=0)
    with pytest.raises(ValueError, match=r"^max_added_abandoned_rate: expected a rate"):
        recommend(corpus, max_added_abandoned_rate=1.5)
    with pytest.raises(ValueError, match=r"never calls edt \(did you mean edit\?\)"):
        recommend(corpus, allow_abandoning=["edt"])
    with pytest.raises(ValueError, match="allow_abandoning: expected a list"):
        SafetyRules(allow_abandoning="edit")  # type: ignore[arg-type]


def test_a_tool_of_unknown_kind_is_protected_like_a_side_effecting_one():
    """A tool no table names (kind ``unknown``) with enough calls is protected at its slowest
    completed call (4 s), exactly as ``edit`` is; only a read-only tool is tunable from 0."""
    from reviewlab.analysis._safety import standings

    rules = SafetyRules(min_calls=5)
    calls = {"mystery_tool": 10, "edit": 10, "read_file": 10}
    slowest = {"mystery_tool": 4.0, "edit": 4.0, "read_file": 4.0}
    got = standings(Policy.ouroboros(), calls, slowest, rules)
    assert got["mystery_tool"].kind == "unknown"
    assert (got["mystery_tool"].status, got["mystery_tool"].floor_sec) == ("protected", 4.0)
    assert (got["edit"].status, got["edit"].floor_sec) == ("protected", 4.0)
    assert (got["read_file"].status, got["read_file"].floor_sec) == ("tunable", 0.0)


def test_the_rung_equal_to_the_slowest_completed_call_is_kept():
    """A protected tool whose slowest completed call took exactly 2 s keeps the 2 s rung (a
    timeout of 2 s abandons nothing that returned), so its ladder is 2, 5, 10, not 5, 10."""
    from reviewlab.analysis._safety import Standing, restrict_ladder

    standing = Standing("edit", "side_effect", 50, 2.0, "protected", 2.0)
    assert restrict_ladder([1.0, 2.0, 5.0, 10.0], standing, 10.0) == [2.0, 5.0, 10.0]


def test_a_guarantee_never_takes_a_protected_tool_below_its_slowest_completed_call():
    """Under a guarantee a side-effecting tool whose calls are almost all 0.2 s (certified well
    under 1 s) but once took 30 s and returned keeps a timeout of at least 30 s; a read-only
    tool with the same calls gets its certificate."""
    corpus = []
    for index in range(40):
        edit_sec = 30.0 if index == 0 else 0.2
        calls = [
            Call(tool="edit", duration_sec=edit_sec),
            Call(tool="read_file", duration_sec=edit_sec),
        ]
        corpus.append(episode(index, calls))
    rec = recommend(corpus, guarantee=0.5, min_calls=5)
    explain = rec.explain.set_index("tool")
    assert explain.loc["edit", "certified_sec"] < 1.0
    assert rec.policy.timeout_for(None, "edit") >= 30.0
    assert rec.policy.timeout_for(None, "read_file") < 1.0
