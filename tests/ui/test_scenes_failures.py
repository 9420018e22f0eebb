"""The scenes of notebook 07: each failure family, replayed on the twin, shows its harm under the
broken behaviour and its absence under reviewlab's policy, and names the public report."""

from __future__ import annotations

import math

import pytest

from reviewlab.core._receipts import tool_timeout_text
from reviewlab.ui.scenes import FAILURE_SCENES, HiddenClockScene, ZombieScene
from reviewlab.ui.scenes._hidden_clocks import BROKEN_ERROR, CLOCK_STACK, run_hidden_clocks
from reviewlab.ui.scenes._no_bound import REQUESTS, run_pool
from reviewlab.ui.scenes._progress_cap import (
    CAP_SEC,
    IDLE_SEC,
    NEVER_SEC,
    ProgressCheckedCap,
    progress_episode,
    run_progress_cap,
)
from reviewlab.ui.scenes._reports import FAMILIES, REPORTS, reports_html
from reviewlab.ui.scenes._zombies import LADDER, run_zombies

# -- 1. no bound ---------------------------------------------------------------------------------


def test_without_a_bound_the_wedged_call_keeps_its_slot_forever():
    """Pre-fix, the wedged request waits forever and the others queue behind one slot."""
    broken, fixed = run_pool(False), run_pool(True)
    assert math.isinf(broken.wedged_wait_sec)
    assert broken.served_in_horizon < REQUESTS - 1  # the queue delays others past the window
    assert broken.queue_wait_mean_sec > 10 * fixed.queue_wait_mean_sec


def test_with_the_reference_bounds_the_slot_comes_back():
    """``Policy.ouroboros()`` abandons the wedge at its 600 s floor; every request is answered."""
    fixed = run_pool(True)
    assert fixed.wedged_wait_sec == 600.0
    assert fixed.wedged_slot_sec == 600.0
    assert fixed.served_in_horizon == REQUESTS
    assert run_pool(False).wedged_slot_sec > 4 * fixed.wedged_slot_sec


# -- 2. hidden clocks ----------------------------------------------------------------------------


def test_the_hidden_default_fires_first_and_drops_a_result_four_seconds_late():
    """A 64 s call under the stack: the SDK's hidden 60 s fires, twice with the retry."""
    broken = run_hidden_clocks("broken", 64.0)
    assert broken.fired == CLOCK_STACK[0].name and CLOCK_STACK[0].hidden
    assert broken.dropped_results == 2 and len(broken.attempts) == 2
    assert broken.told == BROKEN_ERROR
    assert not any(char.isdigit() for char in BROKEN_ERROR.split(":")[-1])  # names no limit


def test_one_named_bound_delivers_the_result_and_names_what_fires_when_one_does():
    """reviewlab's bound is the configured 300 s: 64 s is delivered, 400 s fires it by name."""
    fixed = run_hidden_clocks("reviewlab", 64.0)
    assert fixed.fired is None and fixed.dropped_results == 0
    assert fixed.attempts[0].bound_sec == 300.0 and fixed.attempts[0].outcome == "executed"
    slow = run_hidden_clocks("reviewlab", 400.0)
    assert slow.fired == "reviewlab bound (tool_timeout)"
    assert slow.told == tool_timeout_text("query_code", 300.0)


def test_the_dropped_results_cost_time_and_tokens():
    """The retry into the same hidden clock costs a model round and a minute."""
    broken, fixed = run_hidden_clocks("broken", 64.0), run_hidden_clocks("reviewlab", 64.0)
    assert broken.tokens > fixed.tokens
    assert broken.wall_sec > fixed.wall_sec


def test_the_call_slider_moves_the_hidden_clock_scene():
    """A 30 s call is delivered even by the broken stack; the outcome says so."""
    scene = HiddenClockScene()
    assert 'data-outcome="fired"' in scene.caption.value
    scene.call.value = 30.0
    assert scene.state.run.fired is None
    assert 'data-outcome="delivered"' in scene.caption.value


# -- 3. zombies ----------------------------------------------------------------------------------


def test_a_retried_side_effecting_call_runs_twice():
    """30 s on a 40 s command and a retry: both attempts post the comment, two zombies run."""
    broken = run_zombies("broken")
    assert broken.executions == 2
    assert [a[2] for a in broken.attempts] == ["error", "error"]
    assert broken.zombie_sec == 2 * (40.0 - 30.0)


def test_a_side_effecting_tool_is_never_bounded_below_its_slowest_completed_call():
    """The safety rule gives ``run_command`` the first rung over 40 s: posted once, no zombie."""
    fixed = run_zombies("reviewlab")
    assert fixed.bound_sec == min(rung for rung in LADDER if rung >= 40.0)
    assert fixed.executions == 1 and fixed.zombie_sec == 0.0
    assert "side-effect" in fixed.rule
    assert run_zombies("broken").tokens > fixed.tokens


def test_the_zombie_scene_toggle_changes_the_count():
    """The toggle's outcome says how many times the comment was posted."""
    scene = ZombieScene()
    assert 'data-outcome="posted-2"' in scene.caption.value
    scene.mode.value = "reviewlab"
    assert 'data-outcome="posted-1"' in scene.caption.value


# -- 4. a cap checked on progress ----------------------------------------------------------------


def test_a_cap_checked_on_progress_fires_only_at_a_report_after_it():
    """The broken timer's bound is the first report at or after the cap, else never."""
    rule = ProgressCheckedCap(CAP_SEC, [progress_episode()])
    chatty = {"query": "index the chatty repository", "job": "chatty"}
    quiet = {"query": "index the quiet repository", "job": "quiet"}
    assert rule.timeout_for(None, "query_code", chatty) == 60.0
    assert rule.checked_at("query_code", quiet) is None
    assert rule.timeout_for(None, "query_code", quiet) == NEVER_SEC


def test_the_quiet_call_is_never_stopped_by_the_cap_but_is_by_the_idle_timeout():
    """Broken: the quiet call is waited on for its whole 25 min; reviewlab: 8 s + the idle 15 s."""
    broken, fixed = run_progress_cap("broken"), run_progress_cap("reviewlab")
    assert broken.wait_of("quiet") == 1500.0
    assert fixed.wait_of("quiet") == 8.0 + IDLE_SEC
    quiet = next(call for call in fixed.calls if call[0] == "quiet")
    assert quiet[3:5] == ("error", "idle")
    chatty = next(call for call in fixed.calls if call[0] == "chatty")
    assert chatty[2:5] == (CAP_SEC, "error", "tool_timeout")  # progress never extends the cap
    assert broken.max_silence_sec > 20 * fixed.max_silence_sec


# -- the public reports and every scene ------------------------------------------------------------


def test_every_family_names_a_public_issue_by_repository_and_number():
    """Each family's reports read ``owner/name#number`` and link to the issue on GitHub."""
    assert set(REPORTS) == set(FAMILIES)
    for family in FAMILIES:
        assert REPORTS[family]
        page = reports_html(family)
        for report in REPORTS[family]:
            assert "/" in report.repository and report.number > 0
            assert report.url == f"https://github.com/{report.repository}/issues/{report.number}"
            assert report.ref in page and report.url in page
    with pytest.raises(KeyError, match="family"):
        reports_html("no_such_family")


@pytest.mark.parametrize("scene_type", FAILURE_SCENES, ids=lambda t: t.__name__)
def test_each_failure_scene_compares_both_behaviours_and_cites_its_report(scene_type):
    """Both toggles draw, the comparison holds one figure in seconds and one in tokens or
    slot-seconds, and the outcome links the family's first report."""
    scene = scene_type()
    first = REPORTS[scene.family][0]
    assert first.url in scene.caption.value and first.ref in scene.caption.value
    units = [comparison.unit for comparison in scene.state.comparisons]
    assert units[0] == "s" and units[1] in {"tok", "slot-s"}
    broken_png = scene.png()
    scene.mode.value = "reviewlab"
    assert scene.state.mode == "reviewlab" and scene.png() != broken_png
    for comparison in scene.state.comparisons:
        assert comparison.reviewlab <= comparison.broken, comparison
