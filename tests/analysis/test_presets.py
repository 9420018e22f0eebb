"""Other frameworks' timeout presets: the shipped data, their policies, their scores on a
corpus (against twin replays and counts by hand) and the command (reviewlab/analysis/_presets.py,
reviewlab/cli/_presets.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewlab.analysis._presets import load_presets, preset_policy, preset_table, score_presets
from reviewlab.cli import main
from reviewlab.core._policy import PRE_FIX_LABEL, Policy
from reviewlab.core._presets import SHELL_TOOLS, find_preset
from reviewlab.engines._replay import replay
from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import Call, Episode, Extent, Round

START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)


def corpus() -> list[Episode]:
    """Reads, commands and edits of known durations; one command never returned (censored)."""
    durations = [0.5, 3.0, 8.0, 20.0, 45.0, 90.0, 150.0, 400.0]
    episodes = []
    for index, seconds in enumerate(durations):
        calls = [
            Call(
                tool="read_file",
                duration_sec=seconds / 10,
                extent=Extent(path=f"f{index}.py", start_line=1, end_line=50),
            ),
            Call(tool="run_command", duration_sec=seconds, completed=index != 7),
            Call(tool="edit", duration_sec=seconds / 4),
        ]
        rounds = [Round(send_sec=1.0, calls=[call]) for call in calls] + [Round(send_sec=1.0)]
        episodes.append(
            Episode(id=f"e{index}", source="synthetic", slot="s", started_at=START, rounds=rounds)
        )
    return episodes


def test_at_least_twelve_presets_each_with_a_version_and_a_source():
    """The shipped file holds at least 12 frameworks, each naming its version and source;
    the listing marks the unverified ones."""
    presets = load_presets()
    assert len(presets) >= 12
    for preset in presets.values():
        assert preset.version and preset.source and preset.on_expiry
    table = preset_table(presets).set_index("preset")
    assert set(table["verified"]) == {"verified", "unverified"}
    assert table.loc["claude-code", "verified"] == "unverified"
    assert table.loc["mcp-typescript-sdk", "tool_sec"] == "60"
    assert table.loc["mcp-python-sdk", "tool_sec"] == "none"
    assert table.loc["swe-agent", "breaker"] == "3 in a row"


def test_a_preset_becomes_the_policy_its_file_describes():
    """Commands get the shell bound, other tools the tool bound, an idle bound acts from the
    start where it is shorter, no bound at all is the pre-fix policy, and SWE-agent's three
    timeouts in a row become a breaker."""
    presets = load_presets()
    tools = ["read_file", "run_command", "edit"]
    codex = preset_policy(presets["codex-cli"], tools)
    assert codex.timeout_for(None, "run_command") == 10.0
    assert codex.timeout_for(None, "read_file") == 60.0
    openhands = preset_policy(presets["openhands"], tools)
    assert openhands.timeout_for(None, "run_command") == 10.0  # no output for 10 s
    assert openhands.timeout_for(None, "edit") == 120.0
    assert preset_policy(presets["mcp-python-sdk"], tools).label == PRE_FIX_LABEL
    swe = preset_policy(presets["swe-agent"], tools)
    assert swe.timeout_for(None, "edit") == 30.0
    assert swe.breaker is not None and swe.breaker.consecutive == 3
    assert "run_command" in SHELL_TOOLS and "read_file" not in SHELL_TOOLS


def test_scores_agree_with_twin_replays_and_counts_by_hand(tmp_path):
    """Each preset's abandoned-call rate, coverage loss and longest silence equal the twin's
    replay of its policy; completed calls abandoned and wasted slot seconds equal counts made
    from the recorded durations and the preset's bounds."""
    episodes = corpus()
    path = tmp_path / "c.jsonl"
    save_episodes(episodes, path)
    presets = load_presets()
    frame = score_presets(path, extra={"ouroboros": Policy.ouroboros()}).set_index("preset")
    assert list(frame.index) == [*presets, "ouroboros"]
    tools = ["read_file", "run_command", "edit"]
    for name, preset in presets.items():
        policy = preset_policy(preset, tools)
        twin = replay(episodes, policy, engine="twin").summary
        row = frame.loc[name]
        for key in ("abandoned_call_rate", "timeout_coverage_loss_rate", "max_silence_sec"):
            assert row[key] == pytest.approx(twin[key]), (name, key)
        if preset.breaker_consecutive is not None or not preset.bounded:
            continue
        completed = wasted = 0.0
        for ep in episodes:
            for call in ep.calls:
                bound = policy.timeout_for(None, call.tool)
                if not call.completed or call.duration_sec > bound:
                    wasted += bound
                    completed += call.completed
        assert row["completed_abandoned"] == completed, name
        assert row["wasted_slot_sec"] == pytest.approx(wasted), name
    assert frame.attrs["assumptions"]["censored"] == "wedge"


def test_a_bad_presets_file_names_the_file_the_preset_and_the_field(tmp_path):
    """An unknown field, a negative bound, an unknown server outcome and a mix of bounded and
    unbounded calls are each refused naming where."""
    head = (
        '[presets.x]\nframework = "X"\ncomponent = "c"\nversion = "1"\nsource = "s"\n'
        'verified = true\non_expiry = "e"\nserver_cancelled = "keeps running"\nretries = 0\n'
    )
    cases = {
        "colour = 1\n": r"presets\.x: unknown field\(s\) colour",
        "tool_sec = -1.0\n": r"presets\.x\.tool_sec: expected positive, finite seconds",
        "shell_sec = 5.0\n": r"presets\.x: some calls are bounded and others not",
    }
    for extra, message in cases.items():
        path = tmp_path / "p.toml"
        path.write_text(head + extra, encoding="utf-8")
        with pytest.raises(ValueError, match=rf"^{path}: {message}"):
            load_presets(path)
    path.write_text(head.replace("keeps running", "maybe"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"server_cancelled: expected one of"):
        load_presets(path)


def test_an_unknown_preset_name_suggests_the_closest():
    """find_preset names the closest presets and lists the known ones."""
    with pytest.raises(ValueError, match=r"^preset: no preset named 'swe-agnt'; did you mean"):
        find_preset("swe-agnt")


def test_the_command_lists_and_scores_the_presets(tmp_path, capsys):
    """``reviewlab presets`` lists every preset with its version, ``presets score`` prints one
    row per preset plus ouroboros and the recommendation, and an unknown name is one line."""
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    for name in load_presets():
        assert name in out
    assert "unverified" in out
    path = tmp_path / "c.jsonl"
    save_episodes(corpus(), path)
    assert main(["presets", "score", str(path), "-o", str(tmp_path / "s.csv")]) == 0
    out = capsys.readouterr().out
    assert "reviewlab ouroboros" in out and "reviewlab recommended" in out
    assert "assumes: " in out and (tmp_path / "s.csv").is_file()
    assert main(["presets", "--preset", "swe-agnt"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean swe-agent" in err[0] and "--preset" in err[0]


def test_presets_score_reports_the_recommendation_on_episodes_it_was_not_tuned_on(tmp_path, capsys):
    """The command tunes its recommendation on a seeded half and scores every policy on the
    other half: its rows equal recommend() on split_episodes' first part and score_presets()
    on the second, computed here by hand, and the table says so."""
    import pandas as pd

    from reviewlab.analysis._holdout import split_episodes
    from reviewlab.analysis._tune import recommend

    episodes = corpus()
    path = tmp_path / "c.jsonl"
    save_episodes(episodes, path)
    out = tmp_path / "s.csv"
    argv = ["presets", "score", str(path), "--preset", "codex-cli", "-o", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "scored on 4 of 8 episodes; the recommendation was tuned on the other 4" in printed
    chosen_on, reported_on = split_episodes(episodes, held_out=0.5, seed=0)
    assert len(reported_on) == 4
    tuned = recommend(chosen_on).policy
    expected = score_presets(
        reported_on,
        presets={"codex-cli": load_presets()["codex-cli"]},
        extra={"reviewlab ouroboros": Policy.ouroboros(), "reviewlab recommended": tuned},
    )
    written = pd.read_csv(out)
    columns = ["abandoned_call_rate", "completed_abandoned", "wasted_slot_sec", "max_silence_sec"]
    assert written[columns].to_numpy() == pytest.approx(expected[columns].to_numpy(), rel=1e-12)
    assert main(["presets", "score", str(path), "--held-out", "1.5"]) == 2
    assert "--held-out" in capsys.readouterr().err
