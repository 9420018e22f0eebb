"""The scenes of notebook 01 show what the semantics say: the bound, abandonment, the crediting
rule and its counterfactual, and the two ends of a censored replay.

The live scenes run the real executor on a scene clock; every wait in them is on an event (the
held tool's release, the executor's ``settled``), never on the clock.
"""

from __future__ import annotations

import math

import pytest
from matplotlib.patches import Rectangle

from reviewlab.core._crediting import Crediting
from reviewlab.core._receipts import tool_timeout_text
from reviewlab.ui.scenes import AbandonmentScene, BoundScene, CensoringScene, CreditingScene
from reviewlab.ui.scenes._abandonment import WEDGED_TOOL, AbandonmentRun
from reviewlab.ui.scenes._bound import NARROWINGS, run_bound
from reviewlab.ui.scenes._censoring import run_censoring
from reviewlab.ui.scenes._crediting import CREDITING_RULES, CreditingRun, ForgetfulCrediting


def _bound_bar_width(scene: BoundScene) -> float:
    """The width of the filled bar drawn on the figure's ``bound`` lane."""
    ax = scene.axes[0]
    row = [label.get_text() for label in ax.get_yticklabels()].index("bound")
    widths = [
        patch.get_width()
        for patch in ax.patches
        if isinstance(patch, Rectangle)
        and patch.get_fill()
        and abs(patch.get_y() + patch.get_height() / 2 - row) < 1e-9
    ]
    assert len(widths) == 1, widths
    return float(widths[0])


# -- the bound ---------------------------------------------------------------------------------


def test_a_far_deadline_leaves_the_tool_timeout_as_the_bound():
    """With more time left than the tool timeout, the bound is the tool timeout and says so."""
    run = run_bound(30.0, 90.0)
    assert (run.bound_sec, run.bound_by) == (30.0, "tool_timeout")
    assert run.abandoned and run.wait_sec == 30.0 and run.zombie_sec == 15.0


def test_a_near_deadline_narrows_the_bound_and_is_named_as_the_clock_that_fired():
    """A deadline 25 s after arrival leaves 15 s at dispatch (after a 10 s send): the bound."""
    run = run_bound(30.0, 25.0)
    assert run.remaining_sec == 15.0
    assert (run.bound_sec, run.bound_by) == (15.0, "deadline")
    assert run.wall_sec == 10.0 + 15.0 + 5.0  # the episode goes on after its calls' deadline


def test_the_twins_bound_is_the_one_resolve_bound_gives():
    """For every narrowing, the twin's bound equals the decision core asked directly."""
    for narrowing in NARROWINGS:
        for deadline in (0.0, 20.0, 38.0, 90.0):
            run = run_bound(30.0, deadline, narrowing)
            assert (run.bound_sec, run.bound_by) == (run.bound.sec, run.bound.by), (
                narrowing,
                deadline,
            )


def test_the_narrowing_modes_each_apply_their_rule():
    """``none`` ignores the deadline, ``reserve`` keeps 10 s back, ``fraction`` takes half."""
    assert run_bound(30.0, 25.0, "none").bound_sec == 30.0
    assert run_bound(30.0, 40.0, "reserve 10 s").bound_sec == 20.0
    assert run_bound(30.0, 40.0, "fraction 0.5").bound_sec == 15.0


def test_moving_the_deadline_slider_redraws_the_bound_and_rewrites_the_outcome():
    """The drawn bound bar and the outcome's data attributes follow the slider and the toggle."""
    scene = BoundScene()
    assert _bound_bar_width(scene) == 30.0
    assert 'data-bound-by="tool_timeout"' in scene.caption.value
    scene.deadline.value = 25.0
    assert scene.state.bound_by == "deadline"
    assert _bound_bar_width(scene) == 15.0
    assert 'data-bound-sec="15"' in scene.caption.value
    assert 'data-bound-by="deadline"' in scene.caption.value
    scene.narrowing.value = "none"
    assert _bound_bar_width(scene) == 30.0 and scene.state.bound_by == "tool_timeout"
    assert len(scene.update_secs) == 3


# -- abandonment -------------------------------------------------------------------------------


@pytest.fixture()
def abandoned():
    """A live run whose wedged worker is released after the test if it is still held."""
    run = AbandonmentRun()
    yield run
    run.release()


def test_the_wedged_call_is_abandoned_and_the_model_reads_the_host_text(abandoned):
    """At its bound the call is an error with the abandonment gap, and its worker is loose."""
    state = abandoned.state()
    receipt = next(r for r in state.receipts if r["tool"] == WEDGED_TOOL)
    assert receipt["outcome"] == "error"
    assert receipt["source_gap"] == "native_tool_abandoned"
    assert state.told == tool_timeout_text(WEDGED_TOOL, 20.0)
    assert state.loose_workers == 1 and state.zombie_sec is None
    assert not state.released and state.late_value_chars is None


def test_releasing_the_worker_brings_a_late_value_that_changes_nothing(abandoned):
    """The released worker returns a value nobody reads: receipts, transcript and credit stay."""
    before = abandoned.state()
    assert abandoned.release()
    after = abandoned.state()
    assert after.released and after.loose_workers == 0
    assert after.zombie_sec is not None and after.zombie_sec >= 0.0
    assert after.late_value_chars and after.late_value_chars > 0
    assert not after.late_value_seen_by_model
    assert after.receipts_unchanged and after.sends_unchanged
    assert after.receipts == before.receipts
    assert after.credited_lines == before.credited_lines == 23  # pricing.py, read before the wedge


def test_the_release_button_updates_the_scene():
    """Clicking the button releases the worker and the outcome says so."""
    scene = AbandonmentScene()
    try:
        assert 'data-outcome="loose"' in scene.caption.value
        scene.release_button.click()
        assert scene.state.released and scene.state.receipts_unchanged
        assert 'data-outcome="released"' in scene.caption.value
        assert scene.release_button.disabled
    finally:
        scene.run.release()


def test_running_again_keeps_the_page_live_and_shows_a_fresh_wedged_episode():
    """The button releases the old worker and, once the fresh episode ends, shows it loose."""
    scene = AbandonmentScene()
    old = scene.run
    try:
        scene.again_button.click()
        assert old.released
        assert scene.wait() and scene.run is not old
        state = scene.state
        assert not state.running and not state.released and state.loose_workers == 1
        assert 'data-outcome="loose"' in scene.caption.value
    finally:
        scene.run.release()


# -- the crediting rule ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def race():
    """One live run of the racing reads (the loose worker has stamped and retired)."""
    return CreditingRun()


def test_the_loose_worker_overwrites_the_reader_stamp_of_a_later_read(race):
    """The racing read stamped its own lines, then the loose worker's stamp replaced them."""
    assert race.registry.own_stamp is not None
    assert race.registry.own_stamp["opened_path"] == "inventory/stock.py"
    state = race.state(sticky=True)
    assert state.racing.outcome == "executed"
    assert state.racing.stamp == "inventory/pricing.py 1–23"


def test_the_sticky_rule_credits_nothing_after_the_abandonment(race):
    """Under the real rule the racing read is credited nothing; the first read keeps its lines."""
    state = race.state(sticky=True)
    assert state.rule_matches_receipts
    assert state.racing.credited is None
    first = next(row for row in state.rows if row.call_id == "c1")
    assert first.credited == first.asked == "inventory/stock.py 1–20"
    assert state.wrongly_credited == ()


def test_without_the_sticky_rule_a_read_is_credited_the_wrong_lines(race):
    """The counterfactual credits the racing read the loose worker's file, not what it asked."""
    state = race.state(sticky=False)
    assert state.racing.asked == "inventory/stock.py 21–42"
    assert state.racing.credited == "inventory/pricing.py 1–23"
    assert [row.call_id for row in state.wrongly_credited] == ["c3"]


def test_the_counterfactual_lives_in_the_scene_and_the_core_rule_stays_sticky():
    """Only the scene's rule forgets an abandonment; the core's remembers it."""
    core, forgetful = Crediting(), ForgetfulCrediting()
    core.note_abandoned()
    forgetful.note_abandoned()
    assert not core.may_credit("read_file", "executed")
    assert forgetful.may_credit("read_file", "executed")


def test_the_crediting_toggle_switches_the_outcome():
    """Turning the rule off makes the scene say wrong lines were credited."""
    scene = CreditingScene()
    assert 'data-outcome="uncredited"' in scene.caption.value
    scene.rule.value = CREDITING_RULES[1]
    assert 'data-outcome="wrong"' in scene.caption.value
    assert "Wrong lines credited" in scene.caption.value


# -- censoring ---------------------------------------------------------------------------------


def test_without_a_bound_the_two_ends_of_a_censored_replay_disagree():
    """Pre-fix: ``wedge`` waits forever, ``observed`` returns when the recording ended."""
    wedge = run_censoring(False, "wedge")
    observed = run_censoring(False, "observed")
    assert math.isinf(wedge.wall_sec) and wedge.source_gap == "native_tool_wedged"
    assert observed.wall_sec == 20.0 + 3.0 + 20.0 + 900.0
    assert not wedge.ends_agree and wedge.other_wall_sec == observed.wall_sec


def test_with_a_bound_both_ends_agree_and_differ_only_in_the_zombie():
    """Bounded at 120 s, both ends abandon the call there; only the loose worker's tail differs."""
    wedge = run_censoring(True, "wedge")
    observed = run_censoring(True, "observed")
    assert wedge.wall_sec == observed.wall_sec == 20.0 + 3.0 + 20.0 + 120.0
    assert wedge.ends_agree and observed.ends_agree
    assert math.isinf(wedge.zombie_sec) and observed.zombie_sec == 900.0 - 120.0


def test_the_censoring_scene_follows_its_toggles():
    """The assumption and the policy toggles change the run and the outcome's facts."""
    scene = CensoringScene()
    assert 'data-outcome="disagree"' in scene.caption.value
    scene.censored.value = "observed"
    assert scene.state.wall_sec == 943.0
    scene.policy.value = scene.POLICIES[1]
    assert 'data-outcome="agree"' in scene.caption.value
