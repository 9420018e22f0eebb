"""What each chart shows, checked on small results built by hand."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.ui import charts

_T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
_CALL_FRAME = [*metrics.CALL_COLUMNS, *metrics.CALL_TIMING_COLUMNS]


def _episode() -> Episode:
    """Round 1: a fast read and an abandoned query; round 2: a wedged read; round 3: the answer."""
    extent = Extent(path="a.py", start_line=1, end_line=10)
    return Episode(
        id="e1",
        source="synthetic",
        slot="s0",
        started_at=_T0,
        deadline_sec=None,
        rounds=[
            Round(
                send_sec=2.0,
                calls=[
                    Call(tool="read_file", duration_sec=3.0, extent=extent),
                    Call(tool="query_code", duration_sec=50.0),
                ],
            ),
            Round(
                send_sec=1.0,
                calls=[Call(tool="read_file", duration_sec=40.0, completed=False, extent=extent)],
            ),
            Round(send_sec=1.0),
        ],
    )


def _result() -> ReplayResult:
    """A replay result shaped as every engine returns it, for
    :func:`_episode` under 10/20 s bounds."""
    rows = [
        (
            "e1",
            1,
            0,
            "read_file",
            3.0,
            True,
            10.0,
            "tool_timeout",
            "executed",
            "",
            10,
            10,
            0.0,
            2.0,
            3.0,
        ),
        (
            "e1",
            1,
            1,
            "query_code",
            50.0,
            True,
            20.0,
            "tool_timeout",
            "error",
            "native_tool_abandoned",
            0,
            0,
            30.0,
            5.0,
            20.0,
        ),
        (
            "e1",
            2,
            2,
            "read_file",
            40.0,
            False,
            20.0,
            "tool_timeout",
            "error",
            "native_tool_abandoned",
            10,
            0,
            math.inf,
            26.0,
            20.0,
        ),
    ]
    calls = pd.DataFrame(rows, columns=_CALL_FRAME)
    base = pd.DataFrame(
        {"episode_id": ["e1"], "slot_id": ["s0"], "wall_sec": [47.0], "max_silence_sec": [23.0]}
    )
    episodes = metrics.episode_rows(calls, base)
    summary = metrics.summarize(calls, episodes, peak_loose_workers=2)
    policy = TimeoutPolicy.uniform(20.0).with_tools(read_file=10.0)
    return ReplayResult(calls, episodes, summary, engine="twin", policy=Policy(timeouts=policy))


def _bars(ax, height: float) -> list[Rectangle]:
    return [
        p for p in ax.patches if isinstance(p, Rectangle) and math.isclose(p.get_height(), height)
    ]


def _legend(ax) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, "the chart has no legend"
    return [text.get_text() for text in legend.get_texts()]


def test_charts_never_use_an_interactive_backend():
    """Importing the charts leaves matplotlib on a non-interactive
    backend and draws with plain Figures."""
    figure = charts.episode_timeline(_result(), "e1", episode=_episode())
    assert isinstance(figure, Figure)
    assert matplotlib.get_backend().lower() in {"agg", "module://matplotlib_inline.backend_inline"}


def test_call_timeline_lays_calls_out_as_the_replay_ran_them():
    """Calls start after their round's send and after the waits before them;
    abandoned calls wait their bound."""
    calls, sends = charts.call_timeline(_result(), "e1", episode=[_episode()])
    assert calls["start_sec"].tolist() == [2.0, 5.0, 26.0]
    assert calls["wait_sec"].tolist() == [3.0, 20.0, 20.0]
    assert calls["abandoned"].tolist() == [False, True, True]
    assert sends[["start_sec", "end_sec"]].to_numpy().tolist() == [
        [0.0, 2.0],
        [25.0, 26.0],
        [46.0, 47.0],
    ]
    # The layout ends exactly at the replay's wall time.
    assert sends["end_sec"].iloc[-1] == _result().episodes["wall_sec"].iloc[0]


def test_episode_timeline_draws_each_call_against_its_bound():
    """Each call is a bar as long as its wait, with a dashed bound outline;
    sends are bars on the model row."""
    figure = charts.episode_timeline(_result(), "e1", episode=_episode())
    ax = figure.axes[0]
    waits = sorted((round(b.get_x(), 6), b.get_width()) for b in _bars(ax, 0.55))
    assert waits == [(2.0, 3.0), (5.0, 20.0), (26.0, 20.0)]
    outlines = [b for b in _bars(ax, 0.8) if not b.get_fill()]
    assert sorted(b.get_width() for b in outlines) == [10.0, 20.0, 20.0]
    sends = sorted(b.get_width() for b in _bars(ax, 0.6))
    assert sends == [1.0, 1.0, 2.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "model",
        "r1 read_file",
        "r1 query_code",
        "r2 read_file",
    ]
    assert ax.get_xlabel() == "time since the request arrived (s)"
    assert "e1" in ax.get_title()


def test_episode_timeline_marks_abandonments_and_zombie_tails():
    """Abandoned calls get an ✕ at their bound and a hatched zombie tail; a tail that outlives
    the episode runs to the axis edge and says how long it lasts (the axis spans the episode, not
    its zombies); a wedge's tail never returns."""
    ax = charts.episode_timeline(_result(), "e1", episode=_episode()).axes[0]
    crosses = [line for line in ax.lines if line.get_marker() == "x"]
    assert sorted(float(line.get_xdata()[0]) for line in crosses) == [25.0, 46.0]
    tails = _bars(ax, 0.3)
    assert len(tails) == 2 and all(t.get_hatch() == "///" for t in tails)
    right = ax.get_xlim()[1]
    assert right == pytest.approx(47.0 * 1.08)  # the episode's own span: its wall of 47 s
    finite = [t for t in tails if math.isclose(t.get_x(), 25.0)]
    assert finite and finite[0].get_x() + finite[0].get_width() == pytest.approx(right)
    texts = [t.get_text() for t in ax.texts]
    assert "runs on 30 s →" in texts and "never returns →" in texts
    legend = _legend(ax)
    for label in (
        "model send",
        "bound",
        "executed",
        "error",
        "abandoned at bound",
        "zombie tail (loose worker)",
    ):
        assert label in legend


def test_episode_timeline_draws_into_a_given_axes():
    """With ``ax=`` the chart draws into that Axes and returns its figure."""
    figure = Figure()
    ax = figure.add_subplot()
    assert charts.episode_timeline(_result(), "e1", episode=_episode(), ax=ax) is figure
    assert len(_bars(ax, 0.55)) == 3


def test_episode_timeline_rejects_an_unknown_episode():
    """An id that is not in the result is a KeyError naming it."""
    with pytest.raises(KeyError, match="nope"):
        charts.episode_timeline(_result(), "nope")


def _pool_result() -> ReplayResult:
    """Two slots; slot a is silent on a wedged tool for 26,160 s (the incident's 7 h 16 min)."""
    slots = pd.DataFrame(
        [
            ("a", "busy", 0.0, 600.0, "i1"),
            ("a", "silent", 600.0, 26_760.0, "i1"),
            ("a", "idle", 26_760.0, 30_000.0, ""),
            ("b", "busy", 0.0, 1_000.0, "o1"),
            ("b", "silent", 1_000.0, 1_200.0, "o1"),
            ("b", "idle", 1_200.0, 30_000.0, ""),
        ],
        columns=["slot_id", "state", "start_sec", "end_sec", "episode_id"],
    )
    result = _result()
    result.slots = slots
    result.policy = result.policy.replace(narrowing=Narrowing.unbounded())
    return result


def test_pool_timeline_shows_the_wedge_at_a_glance():
    """Every slot interval is a bar in its state's colour and the longest
    silence is labelled 7 h 16 min."""
    ax = charts.pool_timeline(_pool_result()).axes[0]
    assert len(ax.collections) == 6  # one broken_barh per (state, slot)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert any(t.get_text() == "silent 7 h 16 min" for t in ax.texts)
    assert ax.get_xlabel() == "time since the first request (h)"
    assert _legend(ax) == ["busy", "silent on a tool", "idle"]
    assert "pre-fix (unbounded)" in ax.get_title()
    red = [
        c
        for c in ax.collections
        if np.allclose(c.get_facecolor()[0][:3], matplotlib.colors.to_rgb("#dd3333"))
    ]
    widths = sorted(path.get_extents().width for c in red for path in c.get_paths())
    assert widths == pytest.approx([200 / 3600, 26_160 / 3600])


def test_pool_timeline_needs_a_pool_simulation():
    """A result without slots says how to get one."""
    with pytest.raises(ValueError, match="slots=N"):
        charts.pool_timeline(_result())


def test_rates_vs_timeout_draws_two_curves_per_tool():
    """Each tool gets a solid abandoned-rate curve and a dashed coverage-loss
    curve, in percent, on a log axis."""
    curves = pd.DataFrame(
        {
            "tool": ["read_file"] * 3 + ["search_code"] * 3,
            "timeout_sec": [1.0, 10.0, 100.0] * 2,
            "abandoned_call_rate": [0.5, 0.1, 0.0, 0.4, 0.2, 0.05],
            "coverage_loss_rate": [0.6, 0.2, 0.01, 0.0, 0.0, 0.0],
        }
    )
    ax = charts.rates_vs_timeout(curves, tools=["read_file", "search_code"]).axes[0]
    assert len(ax.lines) == 4
    solid = {line.get_label(): line for line in ax.lines if line.get_linestyle() == "-"}
    assert set(solid) == {"read_file: abandoned calls", "search_code: abandoned calls"}
    assert list(solid["read_file: abandoned calls"].get_ydata()) == [50.0, 10.0, 0.0]
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "rate (%)"
    assert "read_file: coverage loss" in _legend(ax)


def test_rates_vs_timeout_rejects_an_unknown_tool():
    """Asking for a tool the curves do not have names it."""
    curves = pd.DataFrame(
        {
            "tool": ["a"],
            "timeout_sec": [1.0],
            "abandoned_call_rate": [0.0],
            "coverage_loss_rate": [0.0],
        }
    )
    with pytest.raises(ValueError, match="zzz"):
        charts.rates_vs_timeout(curves, tools=["zzz"])


def _front_line(ax):
    return next(line for line in ax.lines if str(line.get_label()).startswith("Pareto front"))


def test_pareto_front_highlights_the_front_and_marks_named_policies():
    """Dominated points are grey dots, the front red dots on a red staircase, each named policy
    a ring whose legend entry carries its longest silence; no note is written over the plot."""
    points = pd.DataFrame(
        {
            "coverage_loss_rate": [0.0, 0.01, 0.05, 0.02, 0.06],
            "wall_p95_sec": [900.0, 300.0, 100.0, 800.0, 500.0],
        }
    )
    named = {"ouroboros": {"coverage_loss_rate": 0.0, "wall_p95_sec": 900.0}, "pick": _result()}
    ax = charts.pareto_front(points, named=named).axes[0]
    front = _front_line(ax)
    assert list(front.get_xdata()) == [0.0, 1.0, 5.0]
    assert list(front.get_ydata()) == [900.0, 300.0, 100.0]
    assert front.get_drawstyle() == "steps-post" and front.get_marker() == "o"
    assert matplotlib.colors.to_hex(front.get_color()) == charts._palette.FRONT_COLOR
    grey = ax.collections[0].get_offsets()
    assert sorted(map(tuple, np.asarray(grey))) == [(2.0, 800.0), (6.0, 500.0)]
    assert not ax.texts  # every note is in the legend, beside the Axes
    assert _legend(ax) == [
        "policy point",
        "Pareto front (3 points)",
        "ouroboros",
        "pick: silent ≤ 23 s",
    ]
    assert ax.get_ylabel() == "p95 episode wall time (s)"


def test_pareto_front_is_computed_on_the_two_objectives_drawn():
    """A ``pareto`` column traded on a third objective is not what the chart marks: a point
    dominated in the drawn plane is never on the drawn front."""
    points = pd.DataFrame(
        {
            "timeout_coverage_loss_rate": [0.0, 0.02, 0.01],
            "wall_p95_sec": [10.0, 8.0, 12.0],
            "max_silence_sec": [600.0, 600.0, 30.0],  # the third point wins only on silence
            "pareto": [True, True, True],
        }
    )
    ax = charts.pareto_front(points).axes[0]
    assert list(_front_line(ax).get_xdata()) == [0.0, 2.0]
    assert np.asarray(ax.collections[0].get_offsets()).tolist() == [[1.0, 12.0]]


def test_pareto_notes_hide_nothing():
    """The legend sits right of the plotting area, so no label covers a point."""
    points = pd.DataFrame(
        {"timeout_coverage_loss_rate": [0.0, 0.01, 0.02], "wall_p95_sec": [60.0, 40.0, 30.0]}
    )
    named = {
        "ouroboros": {"timeout_coverage_loss_rate": 0.0, "wall_p95_sec": 60.0},
        "recommended": {"timeout_coverage_loss_rate": 0.01, "wall_p95_sec": 40.0},
    }
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = charts.pareto_front(points, named=named)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    ax = figure.axes[0]
    renderer = canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    area = ax.get_window_extent(renderer)
    assert legend.x0 >= area.x1  # wholly to the right of the Axes
    assert not ax.texts


def _duration_corpus() -> list[Episode]:
    """Five read_file calls (1, 2, 3, 4 s and one censored at 2.5 s) and two list_files calls."""

    def episode(index: int, calls: list[Call]) -> Episode:
        return Episode(
            id=f"d{index}",
            source="synthetic",
            started_at=_T0,
            rounds=[Round(send_sec=1.0, calls=calls)],
        )

    reads = [Call(tool="read_file", duration_sec=d) for d in (1.0, 2.0, 3.0, 4.0)]
    reads.append(Call(tool="read_file", duration_sec=2.5, completed=False))
    lists = [Call(tool="list_files", duration_sec=d) for d in (0.5, 1.5)]
    return [episode(0, reads[:3]), episode(1, reads[3:] + lists)]


def test_survival_curves_step_down_with_censoring_and_draw_the_bounds():
    """The Kaplan–Meier steps keep the censored call at risk, mark it with +, and the bound says
    what it cuts; a bound two tools share is one line, labelled once; both axes are log."""
    ax = charts.survival_curves(_duration_corpus(), TimeoutPolicy.uniform(2.5)).axes[0]
    steps = {line.get_label(): line for line in ax.lines if line.get_drawstyle() == "steps-post"}
    read = steps["read_file (5 calls, 1 censored): bound 2.5 s abandons 60%"]
    assert list(read.get_xdata()) == [
        0.25,
        1.0,
        2.0,
        3.0,
        4.0,
    ]  # starts below the shortest call (0.5 s)
    # The last step reaches 0: drawn at the log axis' floor, half of one call in five.
    assert list(read.get_ydata()) == pytest.approx([1.0, 0.8, 0.6, 0.3, 0.1])
    assert "list_files (2 calls, 0 censored): bound 2.5 s abandons 0%" in steps
    plus = [line for line in ax.lines if line.get_marker() == "+"]
    assert len(plus) == 1 and list(plus[0].get_xdata()) == [2.5]
    assert list(plus[0].get_ydata()) == pytest.approx([0.6])
    bounds = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert [float(line.get_xdata()[0]) for line in bounds] == [2.5]
    labels = [t.get_text() for t in ax.texts if t.get_text().startswith("bound")]
    assert labels == ["bound 2.5 s: list_files, read_file"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_ylabel() == "share of calls still running"


def test_survival_curves_label_each_distinct_bound_once_in_tool_colours():
    """Tools with different bounds get one line each, in the tool's palette colour."""
    policy = TimeoutPolicy.uniform(2.5).with_tools(list_files=1.0)
    ax = charts.survival_curves(_duration_corpus(), policy).axes[0]
    bounds = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert sorted(float(line.get_xdata()[0]) for line in bounds) == [1.0, 2.5]
    labels = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("bound"))
    assert labels == ["bound 1 s: list_files", "bound 2.5 s: read_file"]
    by_x = {float(line.get_xdata()[0]): line.get_color() for line in bounds}
    assert by_x[2.5] == charts.tool_color("read_file")
    steps = [line for line in ax.lines if line.get_drawstyle() == "steps-post"]
    assert {line.get_color() for line in steps} == {
        charts.tool_color("read_file"),
        charts.tool_color("list_files"),
    }


def test_survival_curves_reject_a_tool_without_calls():
    """Asking for a tool the corpus never called names it."""
    with pytest.raises(ValueError, match="query_code"):
        charts.survival_curves(_duration_corpus(), tools=["query_code"])


def test_episode_timeline_shows_a_wedge_and_the_calls_it_withheld():
    """Under the pre-fix policy the wedged call's bar is labelled with its silence
    and later calls are grey dots."""
    episode = Episode(
        id="w",
        source="incident",
        slot="s",
        started_at=_T0,
        rounds=[
            Round(
                send_sec=5.0,
                calls=[Call(tool="query_code", duration_sec=26_160.0, completed=False)],
            ),
            Round(
                send_sec=0.0,
                calls=[
                    Call(tool="read_file", duration_sec=0.1),
                    Call(tool="list_files", duration_sec=0.1),
                ],
            ),
        ],
    )
    rows = [
        (
            "w",
            1,
            0,
            "query_code",
            26_160.0,
            False,
            math.nan,
            "unbounded",
            "error",
            "native_tool_wedged",
            0,
            0,
            0.0,
            5.0,
            26_160.0,
        ),
        (
            "w",
            2,
            1,
            "read_file",
            0.1,
            True,
            math.nan,
            "unbounded",
            "withheld",
            "",
            0,
            0,
            0.0,
            26_165.0,
            0.0,
        ),
        (
            "w",
            2,
            2,
            "list_files",
            0.1,
            True,
            math.nan,
            "unbounded",
            "withheld",
            "",
            0,
            0,
            0.0,
            26_165.0,
            0.0,
        ),
    ]
    calls = pd.DataFrame(rows, columns=_CALL_FRAME)
    base = pd.DataFrame(
        {
            "episode_id": ["w"],
            "slot_id": ["s"],
            "wall_sec": [26_165.0],
            "max_silence_sec": [26_160.0],
        }
    )
    episodes = metrics.episode_rows(calls, base)
    result = ReplayResult(
        calls,
        episodes,
        metrics.summarize(calls, episodes, peak_loose_workers=0),
        policy=Policy.unbounded(),
    )
    ax = charts.episode_timeline(result, "w", episode=episode).axes[0]
    assert any(t.get_text() == "wedged: silent 7 h 16 min, episode ends" for t in ax.texts)
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == 2 and float(dots[0].get_xdata()[0]) == pytest.approx(26_165.0 / 3600)
    assert _legend(ax).count("withheld (never ran)") == 1
    assert not [
        p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()
    ]  # no bounds to draw
    assert ax.get_xlabel() == "time since the request arrived (h)"


def test_per_tool_rates_draws_paired_bars_from_the_per_tool_breakdown():
    """Per tool, bars of the abandoned rate, the coverage lost to timeouts (when the breakdown has
    it) and the total coverage loss, in percent, labelled with their values."""
    result = _result()
    ax = charts.per_tool_rates(result).axes[0]
    table = result.per_tool()
    kinds = ["abandoned_call_rate", "timeout_coverage_loss_rate", "coverage_loss_rate"]
    kinds = [kind for kind in kinds if kind in table.columns]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == len(kinds) * len(table)
    heights = [b.get_height() for b in bars]
    expected = [value for kind in kinds for value in 100 * table[kind]]
    assert heights == pytest.approx(expected)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(table["tool"])
    assert {"50.0", "100.0"} <= {t.get_text() for t in ax.texts}
    names = {
        "abandoned_call_rate": "abandoned calls",
        "timeout_coverage_loss_rate": "coverage lost to timeouts",
        "coverage_loss_rate": "coverage loss (total)",
    }
    assert _legend(ax) == [names[kind] for kind in kinds]


def test_live_rates_redraws_in_place_with_the_new_figures():
    """A second draw with the same tools moves the same bars and labels to the new values."""
    figure = Figure()
    live = charts.LiveRates(figure.add_subplot())
    first = _result()
    live.draw(first)
    ax = figure.axes[0]
    bars_before = list(ax.patches)
    second = _result()
    second.calls.loc[second.calls["tool"] == "query_code", ["source_gap", "zombie_sec"]] = ["", 0.0]
    live.draw(second)
    assert list(ax.patches) == bars_before  # the same artists
    query = list(second.per_tool()["tool"]).index("query_code")
    assert bars_before[query].get_height() == 0.0
    assert "0.0" in {t.get_text() for t in ax.texts}


def test_call_timeline_starts_a_pooled_episode_after_its_queue_wait():
    """In a twin pool run a queued request's first send starts at its queue
    wait and its calls come after it."""
    first, second = _episode(), _episode().model_copy(update={"id": "e2"})
    result = replay([first, second], TimeoutPolicy.uniform(20.0), engine="twin", slots=1)
    queued = float(result.episodes.set_index("episode_id").loc["e2", "queue_wait_sec"])
    assert queued == 47.0  # e1 held the only slot for its whole 47 s
    calls, sends = charts.call_timeline(result, "e2", episode=[first, second])
    assert sends[["start_sec", "end_sec"]].to_numpy().tolist() == [
        [47.0, 49.0],
        [72.0, 73.0],
        [93.0, 94.0],
    ]
    assert calls["start_sec"].tolist() == [49.0, 52.0, 73.0]
    assert (
        sends["end_sec"].iloc[-1] == result.episodes.set_index("episode_id").loc["e2", "wall_sec"]
    )


def test_call_timeline_draws_the_engines_timing_as_recorded():
    """The layout is the engine's start_sec and wait_sec (here a thread-queued wait),
    never re-derived from the rules."""
    result = _result()
    # As a worker-thread pool reports it: the first read queued 4 s for a
    # thread before running its 3 s.
    result.calls["wait_sec"] = [7.0, 20.0, 20.0]
    result.calls["start_sec"] = [2.0, 9.0, 30.0]
    calls, sends = charts.call_timeline(result, "e1")
    assert calls["wait_sec"].tolist() == [7.0, 20.0, 20.0]
    # Without the recorded episode a round's send still spans the previous
    # wait's end to its first call.
    assert sends[["start_sec", "end_sec"]].to_numpy().tolist() == [[0.0, 2.0], [29.0, 30.0]]


def test_call_timeline_needs_the_engines_timing_columns():
    """A call frame without start_sec and wait_sec is refused, naming the missing columns."""
    result = _result()
    result.calls = result.calls.drop(columns=["start_sec", "wait_sec"])
    with pytest.raises(ValueError, match="start_sec, wait_sec"):
        charts.call_timeline(result, "e1")


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
@pytest.mark.parametrize("censored", ["observed", "wedge"])
def test_call_timeline_of_a_replayed_wedge_ends_where_the_replay_did(engine, censored):
    """Replayed pre-fix, the censored read returns when the recording last saw it (observed: the
    final send follows) or never (wedge: the episode waits forever, the final send never comes);
    the layout ends at the wall time either way."""
    result = replay(
        [_episode()],
        TimeoutPolicy.ouroboros(),
        Narrowing.unbounded(),
        engine=engine,
        censored=censored,
    )
    calls, sends = charts.call_timeline(result, "e1", episode=_episode())
    wedge = censored == "wedge"
    assert calls["outcome"].tolist() == ["executed", "executed", "error" if wedge else "executed"]
    assert calls["wedged"].tolist() == [False, False, wedge]
    assert calls["start_sec"].tolist() == [2.0, 5.0, 56.0]
    # 56 s + the read's 40 s, then the last round's 1 s send (none after a wedge).
    last = [math.inf, math.inf] if wedge else [96.0, 97.0]
    assert sends[["start_sec", "end_sec"]].to_numpy().tolist() == [
        [0.0, 2.0],
        [55.0, 56.0],
        last,
    ]
    assert sends["end_sec"].iloc[-1] == result.episodes["wall_sec"].iloc[0]
    ax = charts.episode_timeline(result, "e1", episode=_episode()).axes[0]
    assert all(math.isfinite(x) for x in ax.get_xlim())
    assert any("never returns" in t.get_text() for t in ax.texts) == wedge


# -- recorded names and clock on pool charts; palette; nested markers ---------------------------


@pytest.fixture(scope="module")
def incident_pool():
    """The incident day replayed on the twin's six-slot pool under the pre-fix policy, the
    wedged call returning when the recording last saw it (as the day really went)."""
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import incident_path

    incident = load_episodes(incident_path())
    run = replay(
        incident,
        TimeoutPolicy.ouroboros(),
        Narrowing.unbounded(),
        engine="twin",
        slots=6,
        censored="observed",
    )
    return incident, run


def test_pool_timeline_labels_rows_with_the_recorded_slots_and_the_clock(incident_pool):
    """Given the recording, rows are its slot names, the wedge sits on reviewer-3's row, and the
    axis is the wall clock: the silence starts at the time the recording implies."""
    import matplotlib.dates as mdates

    incident, run = incident_pool
    ax = charts.pool_timeline(run, episodes=incident).axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == sorted({e.slot for e in incident}) and "slot-0" not in rows
    label = next(t for t in ax.texts if t.get_text().startswith("silent"))
    assert label.get_text() == "silent 7 h 16 min on query_code"
    assert rows[round(label.xy[1])] == "reviewer-3"
    assert ax.get_xlabel().startswith("clock time (UTC")
    first = min(e.started_at for e in incident)
    assert ax.get_xlim()[0] == pytest.approx(mdates.date2num(first))
    wedged = next(e for e in incident if any(not c.completed for c in e.calls))
    silence_start = wedged.started_at.timestamp() + sum(
        r.send_sec + sum(c.duration_sec for c in r.calls) for r in wedged.rounds[:-1]
    )
    silence_start += wedged.rounds[-1].send_sec
    red = [
        c
        for c in ax.collections
        if np.allclose(
            c.get_facecolor()[0][:3], matplotlib.colors.to_rgb(charts.STATE_COLORS["silent"])
        )
    ]
    longest = max((p.get_extents() for c in red for p in c.get_paths()), key=lambda box: box.width)
    assert longest.width * 86_400 == pytest.approx(26_160.0, abs=1e-3)
    assert mdates.num2date(longest.x0).timestamp() == pytest.approx(silence_start, abs=1e-3)


def test_pool_timeline_text_is_never_white(incident_pool):
    """Labels over bars are dark on a white box, never white text on a grey or coloured bar."""
    incident, run = incident_pool
    for figure in (
        charts.pool_timeline(run, episodes=incident),
        charts.pool_timeline(run),
        charts.episode_timeline(run, "incident-reviewer-3-0941", episode=incident),
    ):
        for text in figure.axes[0].texts:
            assert matplotlib.colors.to_rgb(text.get_color()) != (1.0, 1.0, 1.0)


def test_pool_timeline_of_a_wedge_that_never_returns(incident_pool):
    """Under the wedge assumption the silence never ends: the bar runs to the edge and says so."""
    incident, _ = incident_pool
    run = replay(incident, TimeoutPolicy.ouroboros(), Narrowing.unbounded(), engine="twin", slots=6)
    ax = charts.pool_timeline(run, episodes=incident).axes[0]
    label = next(t for t in ax.texts if t.get_text().startswith("silent"))
    assert label.get_text() == "silent on query_code, never returns →"
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows[round(label.xy[1])] == "reviewer-3"
    assert all(math.isfinite(x) for x in ax.get_xlim())
    ax = charts.episode_timeline(run, "incident-reviewer-3-0941", episode=incident).axes[0]
    assert any("never returns" in t.get_text() for t in ax.texts)


def test_pool_timeline_can_keep_the_twins_own_slots(incident_pool):
    """rows='simulated' shows slot-0 … with seconds; rows='recorded' without names is refused."""
    incident, run = incident_pool
    ax = charts.pool_timeline(run, episodes=incident, rows="simulated").axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"slot-{i}" for i in range(6)]
    ax = charts.pool_timeline(run).axes[0]
    assert ax.get_xlabel() == "time since the first request (h)"
    with pytest.raises(ValueError, match="episodes="):
        charts.pool_timeline(run, rows="recorded")
    with pytest.raises(ValueError, match="rows"):
        charts.pool_timeline(run, episodes=incident, rows="by-colour")


def test_named_policies_keep_their_palette_colour_and_never_hide_each_other():
    """Coinciding named policies are nested markers, each smaller and above the previous one, in
    the palette colour of its name; an infinite value is drawn at the top edge and says so."""
    points = pd.DataFrame(
        {
            "timeout_coverage_loss_rate": [0.0, 0.01, 0.02],
            "wall_p95_sec": [60.0, 40.0, 30.0],
            "max_silence_sec": [600.0, 100.0, 50.0],
        }
    )
    named = {
        "pre-fix (unbounded)": {"timeout_coverage_loss_rate": 0.0, "wall_p95_sec": 60.0},
        "ouroboros": {"timeout_coverage_loss_rate": 0.0, "wall_p95_sec": 60.0},
        "recommended": {"timeout_coverage_loss_rate": 0.0, "wall_p95_sec": 60.0},
        "never": {"timeout_coverage_loss_rate": 0.0, "wall_p95_sec": math.inf},
    }
    ax = charts.pareto_front(points, named=named).axes[0]
    marks = {
        str(line.get_label()).split(" (∞")[0]: line
        for line in ax.lines
        if str(line.get_label()).split(" (∞")[0] in named
    }
    nested = [marks[name] for name in ("pre-fix (unbounded)", "ouroboros", "recommended")]
    sizes = [line.get_markersize() for line in nested]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 3
    orders = [line.get_zorder() for line in nested]
    assert orders == sorted(orders) and len(set(orders)) == 3
    for name, line in marks.items():
        assert line.get_color() == charts.policy_color(name)
    named["stuck"] = {
        "timeout_coverage_loss_rate": 0.0,
        "wall_p95_sec": 5.0,
        "max_silence_sec": math.inf,
    }
    legend = _legend(charts.pareto_front(points, named=named).axes[0])
    assert "stuck: a silence never ends" in legend
    infinite = marks["never"]
    assert infinite.get_label() == "never (∞, drawn at the edge)"
    assert infinite.get_marker() == "^"
    assert float(infinite.get_ydata()[0]) > 60.0 and math.isfinite(infinite.get_ydata()[0])
    assert ax.get_xlabel().startswith("coverage lost to timeouts")


def test_policy_colours_are_fixed_and_stable_across_processes():
    """Known policies have fixed colours; any other name maps to the same colour in every process
    (not Python's salted hash)."""
    import os
    import subprocess
    import sys

    from reviewlab.ui.charts._palette import POLICY_COLORS

    assert charts.policy_color("ouroboros") == POLICY_COLORS["ouroboros"]
    assert charts.policy_color("ouroboros, inherit") == POLICY_COLORS["ouroboros"]
    assert charts.policy_color("unbounded (pre-fix)") == POLICY_COLORS["pre-fix (unbounded)"]
    assert charts.policy_color("recommended") != charts.policy_color("ouroboros")
    code = "from reviewlab.ui.charts import policy_color as c; print(c('uniform 60 s'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert seen == {charts.policy_color("uniform 60 s")}


def test_every_colour_comes_from_the_palette_module():
    """Chart modules hard-code no colour but neutral greys: hues live in charts/_palette.py only."""
    import re
    from pathlib import Path

    package = Path(charts.__file__).parent
    for module in package.glob("*.py"):
        if module.name == "_palette.py":
            continue
        for hexcode in re.findall(r"#([0-9a-fA-F]{6})\b", module.read_text(encoding="utf-8")):
            red, green, blue = (int(hexcode[i : i + 2], 16) for i in (0, 2, 4))
            assert red == green == blue, f"{module.name}: #{hexcode} belongs in _palette.py"


def _extent(figure: Figure, artist) -> object:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return artist.get_window_extent(canvas.get_renderer())


def test_the_per_tool_legend_hides_no_bar():
    """The per-tool chart's legend sits under the tick labels, outside the bars' Axes."""
    figure = charts.per_tool_rates(_result())
    ax = figure.axes[0]
    legend = _extent(figure, ax.get_legend())
    assert legend.y1 <= _extent(figure, ax).y0  # wholly below the plotting area


def test_the_incident_episode_is_drawn_in_the_unit_its_span_needs():
    """Under ouroboros the incident episode lasts about ten minutes: its axis is in minutes, not
    the hours its loose worker runs on, and the zombie's length is written at the edge."""
    from reviewlab.core._policy import Policy
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import incident_path

    incident = load_episodes(incident_path())
    run = replay(incident, Policy.ouroboros(), engine="twin", censored="observed")
    ax = charts.episode_timeline(run, "incident-reviewer-3-0941", episode=incident).axes[0]
    assert ax.get_xlabel() == "time since the request arrived (min)"
    assert ax.get_xlim()[1] < 15  # minutes: the episode's own span, not the zombie's 7 h
    assert any(t.get_text().startswith("runs on 7 h") for t in ax.texts)


def test_the_tradeoff_curve_marks_the_current_policy_and_the_presets():
    """Two panels against the coverage lost to timeouts; the current policy a ring on the
    curve's × 1 point, each preset a diamond in its colour, the legend right of the Axes."""
    curve = pd.DataFrame(
        {
            "scale": [0.5, 1.0, 2.0],
            "timeout_coverage_loss_rate": [0.02, 0.01, 0.0],
            "abandoned_call_rate": [0.03, 0.02, 0.01],
            "wall_p95_sec": [40.0, 50.0, 60.0],
            "max_silence_sec": [300.0, 600.0, 1200.0],
        }
    )
    current = curve.iloc[1].to_dict()
    preset = {"timeout_coverage_loss_rate": 0.0, "abandoned_call_rate": 0.0, "wall_p95_sec": 55.0}
    figure = charts.tradeoff_curve(curve, current=current, presets={"ouroboros": preset})
    left, right = figure.axes
    assert left.get_ylabel() == "abandoned-call rate (%)"
    assert right.get_ylabel() == "p95 episode wall time (s)"
    ring = next(line for line in left.lines if line.get_label() == "current policy")
    assert (float(ring.get_xdata()[0]), float(ring.get_ydata()[0])) == (1.0, 2.0)
    diamond = next(line for line in right.lines if line.get_label() == "preset: ouroboros")
    assert matplotlib.colors.to_hex(diamond.get_color()) == charts.policy_color("ouroboros")
    legend = right.get_legend()
    assert _extent(figure, legend).x0 >= _extent(figure, right).x1
