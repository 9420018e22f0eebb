"""The policy editor and the explorer, driven from Python as a notebook user would drive them."""

from __future__ import annotations

import pytest

from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.recording.synth import synth_corpus
from reviewlab.ui._editor import default_presets
from reviewlab.ui._numbers import rate_text
from reviewlab.ui._widgets import PolicyEditor, explore, summary_html

_TOOLS = ("read_file", "list_files", "search_code", "query_code")


@pytest.fixture(scope="module")
def corpus():
    return synth_corpus(200, seed=7)


def test_editor_starts_on_the_ouroboros_preset_and_resolves_like_it():
    """Until a slider moves, every tool (listed, unknown, overridden,
    clamped) resolves as under ouroboros."""
    editor = PolicyEditor(_TOOLS)
    reference = TimeoutPolicy.ouroboros()
    cases = [
        ("read_file", None),
        ("query_code", None),
        ("some_other_tool", None),
        ("run_command", {"timeout_sec": 1500}),
        ("web_search", None),
    ]
    for tool, args in cases:
        for remaining in (None, 200.0):
            assert editor.policy.timeout_for(
                None, tool, args, remaining_sec=remaining
            ) == reference.timeout_for(None, tool, args, remaining_sec=remaining)
    assert editor.policy.narrowing == Narrowing()
    assert editor.sliders["query_code"].value == 600.0  # the 600 s floor folded into the slider
    assert editor.name == "ouroboros"


def test_moving_a_slider_changes_that_tool_only_and_calls_back_once():
    """A slider move below the old floor really lowers that tool's
    timeout, and each callback sees it."""
    editor = PolicyEditor(_TOOLS)
    seen: list[float] = []
    editor.on_change(lambda ed: seen.append(ed.policy.timeout_for(None, "query_code")))
    editor.sliders["query_code"].value = 7.5
    assert seen == [7.5]
    assert editor.policy.timeout_for(None, "query_code") == 7.5
    assert editor.policy.timeout_for(None, "read_file") == 600.0
    assert editor.policy.timeouts.floor_sec is None
    assert editor.name == "edited"
    editor.set_timeout("other tools", 42.0)
    assert editor.policy.timeout_for(None, "never_seen_tool") == 42.0
    assert len(seen) == 2


def test_sliders_are_log_scale_from_a_tenth_of_a_second_to_hours():
    """Each tool's slider is a FloatLogSlider spanning 0.1 s to 10,000 s."""
    editor = PolicyEditor(_TOOLS)
    slider = editor.sliders["read_file"]
    assert type(slider).__name__ == "FloatLogSlider"
    assert (slider.base, slider.min, slider.max) == (10, -1.0, 4.0)


def test_a_preset_moves_every_control_with_one_callback():
    """Picking a preset in the dropdown sets all sliders and the narrowing, and calls back once."""
    editor = PolicyEditor(_TOOLS)
    calls: list[Narrowing] = []
    editor.on_change(lambda ed: calls.append(ed.policy.narrowing))
    editor.preset.value = "uniform 30 s"
    assert len(calls) == 1
    assert {editor.policy.timeout_for(None, tool) for tool in (*_TOOLS, "x")} == {30.0}
    editor.preset.value = "pre-fix (unbounded)"
    assert editor.policy.narrowing.mode == "unbounded"
    assert all(slider.disabled for slider in editor.sliders.values())
    assert len(calls) == 2


def test_narrowing_mode_shows_only_its_own_parameter():
    """The reserve slider shows under ``reserve``, the fraction slider under
    ``fraction``, and they set the narrowing."""
    editor = PolicyEditor(_TOOLS)
    assert editor.reserve.layout.display == "none" and editor.fraction.layout.display == "none"
    editor.mode.value = "reserve"
    editor.reserve.value = 90.0
    assert editor.reserve.layout.display is None and editor.fraction.layout.display == "none"
    assert editor.policy.narrowing == Narrowing(mode="reserve", reserve_sec=90.0)
    editor.mode.value = "fraction"
    editor.fraction.value = 0.5
    assert editor.policy.narrowing.mode == "fraction" and editor.policy.narrowing.fraction == 0.5
    assert editor.fraction.layout.display is None


def test_save_and_load_round_trip_through_toml(tmp_path):
    """The Save button writes a file Policy.load reads back; Load
    shows a saved file in the controls."""
    editor = PolicyEditor(_TOOLS)
    editor.sliders["search_code"].value = 12.0
    editor.mode.value = "reserve"
    editor.reserve.value = 30.0
    editor.path.value = str(tmp_path / "mine.toml")
    editor.save_button.click()
    policy = Policy.load(tmp_path / "mine.toml")
    assert policy.timeout_for(None, "search_code", remaining_sec=None) == 12.0
    assert policy.narrowing == Narrowing(mode="reserve", reserve_sec=30.0)
    assert "saved" in editor.status.value

    Policy.of(TimeoutPolicy.uniform(3.0), Narrowing(mode="fraction", fraction=0.25)).save(
        tmp_path / "other.toml"
    )
    other = PolicyEditor(_TOOLS)
    other.path.value = str(tmp_path / "other.toml")
    other.load_button.click()
    assert other.policy.timeout_for(None, "read_file") == 3.0
    assert other.policy.narrowing == Narrowing(mode="fraction", fraction=0.25)


def test_a_bad_policy_file_is_reported_in_the_editor_not_raised(tmp_path):
    """Loading a broken file leaves the controls alone and shows the error naming the file."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[policy]\ndefault_sec = -1\n", encoding="utf-8")
    editor = PolicyEditor(_TOOLS)
    before = editor.policy
    editor.path.value = str(bad)
    editor.load_button.click()
    assert "bad.toml" in editor.status.value and "default_sec" in editor.status.value
    assert editor.policy == before


def test_explorer_metrics_follow_the_sliders(corpus):
    """Lowering query_code's timeout raises the abandoned-call rate
    shown, exactly as a replay says."""
    explorer = explore(corpus, debounce_sec=0.05)
    shown_before = explorer.metrics.value
    chart_before = explorer.chart.value
    rate_before = explorer.result.summary["abandoned_call_rate"]
    explorer.editor.sliders["query_code"].value = 1.0
    explorer.update()
    # The explorer replays with the vectorized engine; the twin is the independent reference.
    expected = replay(corpus, explorer.editor.policy, engine="twin")
    assert explorer.result.summary == pytest.approx(expected.summary, rel=1e-12, abs=1e-12)
    expected = expected.summary
    assert explorer.result.summary["abandoned_call_rate"] > rate_before
    assert explorer.metrics.value != shown_before
    assert rate_text(expected["abandoned_call_rate"]) in explorer.metrics.value
    assert bytes(explorer.chart.value) != bytes(chart_before)
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")


def test_explorer_debounces_a_burst_of_slider_moves(corpus):
    """Many quick moves give fewer updates than moves, and the last update shows the final value."""
    explorer = explore(corpus, debounce_sec=1.0, chart=False)
    before = explorer.updates
    for seconds in (100.0, 50.0, 20.0, 10.0, 5.0):
        explorer.editor.sliders["query_code"].value = seconds
    assert explorer.wait(timeout=30.0), "the debounced update never ran"
    assert 1 <= explorer.updates - before < 5
    assert explorer.result.policy.timeout_for(None, "query_code") == 5.0


def test_explorer_compares_against_the_policy_it_opened_with(corpus):
    """The metrics table carries the opening preset as a baseline column."""
    explorer = explore(corpus, chart=False)
    assert "<th>ouroboros</th>" in explorer.metrics.value
    twin = replay(corpus, TimeoutPolicy.ouroboros(), engine="twin").summary
    assert explorer.baseline == pytest.approx(twin, rel=1e-12, abs=1e-12)


def test_summary_html_lists_every_metric_with_units():
    """The summary table writes rates in percent and times in seconds as every output does,
    lists the coverage lost to timeouts, writes ∞ with one footnote, and states the assumptions."""
    summary = {
        "episodes": 3,
        "calls": 10,
        "abandoned_call_rate": 0.1,
        "timeout_coverage_loss_rate": 0.0125,
        "coverage_loss_rate": 0.25,
        "wall_p50_sec": 1.0,
        "wall_p95_sec": 2.0,
        "wall_p99_sec": 3.0,
        "max_silence_sec": 26160.0,
        "zombie_sec": float("inf"),
        "wedged_zombies": 1,
        "peak_loose_workers": 2,
        "deadline_bound_share": 0.0,
    }
    text = summary_html(summary, assumptions={"censored": "wedge", "engine": "vectorized"})
    assert "10 %" in text and "25 %" in text and "26,160 s" in text
    assert "data-metric='timeout_coverage_loss_rate'>1.25 %" in text
    assert "coverage lost to timeouts" in text
    assert text.count("∞: never ends") == 1 and "assumes: censored=wedge" in text
    assert "3 episodes, 10 calls" in text


def test_explorer_draws_the_tradeoff_curve_through_the_current_policy(corpus):
    """The trade-off curve is the edited policy with every timeout scaled; its × 1 point is the
    current replay, it moves when a slider moves, and the presets sit beside it."""
    explorer = explore(corpus)
    curve = explorer.curve
    current = curve[curve["scale"] == 1.0].iloc[0]
    assert current["abandoned_call_rate"] == explorer.result.summary["abandoned_call_rate"]
    assert set(explorer.preset_summaries) == set(default_presets())
    assert "data-current='1'" in explorer.tradeoff.value
    assert "preset: uniform 30 s" in explorer.tradeoff.value
    chart_before = bytes(explorer.tradeoff_chart.value)
    table_before = explorer.tradeoff.value
    explorer.editor.sliders["query_code"].value = 1.0
    explorer.update()
    moved = explorer.curve[explorer.curve["scale"] == 1.0].iloc[0]
    assert moved["abandoned_call_rate"] > current["abandoned_call_rate"]
    assert explorer.tradeoff.value != table_before
    assert bytes(explorer.tradeoff_chart.value) != chart_before


def test_a_tool_name_typed_at_the_editor_gets_the_did_you_mean():
    """A slider asked for by a misspelt name is a KeyError naming the closest tool."""
    editor = PolicyEditor(_TOOLS)
    with pytest.raises(KeyError, match="did you mean read_file"):
        editor.set_timeout("raed_file", 5.0)


def test_a_policy_file_naming_an_unknown_tool_warns_in_the_editor(tmp_path):
    """Loading a file whose table names ``raed_file`` loads it and warns, naming read_file."""
    typo = tmp_path / "typo.toml"
    typo.write_text("[policy]\ndefault_sec = 60\n[policy.tools_sec]\nraed_file = 5\n")
    editor = PolicyEditor(_TOOLS)
    editor.load(typo)
    assert "loaded" in editor.status.value
    assert "warning" in editor.status.value and "did you mean read_file" in editor.status.value


def test_an_editor_tool_the_corpus_never_calls_is_named_in_the_explorer(corpus):
    """An editor made with a misspelt tool tells, above the metrics, which tool it meant."""
    explorer = explore(corpus, chart=False, editor=PolicyEditor(("raed_file", "query_code")))
    assert "did you mean read_file" in explorer.notice.value


def test_a_value_snapped_by_the_browser_keeps_the_intended_timeout():
    """A slider value snapped to the log step (600 s arrives as 10**2.778 s) still means 600 s."""
    editor = PolicyEditor(_TOOLS)
    editor.sliders["read_file"].value = 10**2.778
    editor.sliders["query_code"].value = 10**0.875
    assert editor.policy.timeout_for(None, "read_file") == 600.0
    assert editor.policy.timeout_for(None, "query_code") == 7.5


def test_the_explorer_opens_any_corpus_source_once(corpus, tmp_path):
    """A path or an opened corpus explores like the episodes themselves, and an opened corpus
    is the handle every replay of the explorer uses (no second handle)."""
    from reviewlab.engines._corpus import open_corpus
    from reviewlab.recording._files import save_episodes

    path = tmp_path / "corpus.jsonl"
    save_episodes(corpus, path)
    handle = open_corpus(path)
    from_list = explore(corpus, chart=False)
    from_path = explore(path, chart=False)
    from_handle = explore(handle, chart=False)
    assert from_handle._corpus is handle
    expected = replay(corpus, from_list.editor.policy, engine="vectorized").summary
    for explorer in (from_list, from_path, from_handle):
        assert [e.id for e in explorer.episodes] == [e.id for e in corpus]
        assert explorer.baseline == expected
        assert list(explorer.editor.tools) == sorted({c.tool for e in corpus for c in e.calls})
