"""Results show themselves in Jupyter (reviewlab/ui/_rich_display.py): each object's
``_repr_html_`` holds its figures in the one number style, its assumptions, a chart where one
says more, and escapes every string a recording or a user supplied."""

from __future__ import annotations

import base64
import html
import re
from functools import cache

import pandas as pd

import reviewlab
from reviewlab.analysis._tune import recommend
from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.engines._corpus import open_corpus
from reviewlab.engines._replay import replay, replay_bounds
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import Episode
from reviewlab.resources import corpus_path
from reviewlab.testing._builders import call, episode

SCRIPT = "<script>alert(1)</script>"
"""A tool name a hostile recording could carry."""


def _corpus() -> list[Episode]:
    """Two episodes, four calls: under a 5 s bound the 10 s search is abandoned (1 of 4 calls,
    25 %); the second episode's script tool was last seen at 2 s, not returned (censored)."""
    return [
        episode("e1", [[call("read_file", 1.0)], [call("search_code", 10.0)]]),
        episode("e2", [[call(SCRIPT, 2.0, completed=False)], [call("read_file", 3.0)]]),
    ]


def cell_after(page: str, label: str) -> str:
    """The text of the table cell right after the row label ``label``."""
    found = re.search(re.escape(html.escape(label)) + r"</td><td[^>]*>([^<]*)</td>", page)
    assert found, f"no row {label!r}"
    return html.unescape(found.group(1))


def png_count(page: str) -> int:
    """Inline PNG charts in ``page`` (each decodes to a PNG file)."""
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert all(base64.b64decode(data).startswith(b"\x89PNG") for data in images)
    return len(images)


@cache
def _bundled() -> list[Episode]:
    return list(load_episodes(corpus_path()))[:150]


def test_importing_the_package_registers_the_renderers_without_pandas():
    """``import reviewlab`` registers a renderer for every kind and loads no pandas or
    matplotlib doing so (a fresh interpreter)."""
    import subprocess
    import sys

    probe = (
        "import sys, reviewlab\n"
        "from reviewlab.core import _display as display\n"
        "print(sorted(display._RENDERERS) == sorted(display.DISPLAY_KINDS), "
        "'pandas' in sys.modules, 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False"]
    assert reviewlab.__name__ == "reviewlab"


def test_a_replay_shows_its_summary_assumptions_per_tool_rates_and_chart():
    """A replay's HTML holds its counts and abandoned-call rate (1 of 4 calls: 25 %, as its own
    call frame says), its assumptions, one row per tool and the per-tool rates chart."""
    result = replay(_corpus(), Policy.uniform(5.0), engine="twin", censored="wedge")
    abandoned = (result.calls["source_gap"] == SOURCE_GAP_ABANDONED).sum()
    assert (abandoned, len(result.calls)) == (2, 4)  # the search, and the censored call (wedge)
    page = result._repr_html_()
    assert page is not None
    assert cell_after(page, "episodes") == "2"
    assert cell_after(page, "calls") == "4"
    assert cell_after(page, "abandoned-call rate") == "50 %"
    assert "assumes: censored=wedge" in page and "engine=twin" in page
    assert "reaction=as_recorded" in page
    assert cell_after(page, "read_file") == "2"  # its calls
    assert png_count(page) == 1


def test_a_tool_named_script_is_escaped_everywhere():
    """A recorded tool called ``<script>…`` never reaches the HTML as markup: the replay and the
    corpus show it escaped."""
    corpus = _corpus()
    pages = [
        replay(corpus, Policy.uniform(5.0), engine="twin")._repr_html_(),
        open_corpus(corpus)._repr_html_(),
    ]
    for page in pages:
        assert page is not None
        assert "<script" not in page
        assert html.escape(SCRIPT) in page


def test_both_censoring_ends_side_by_side():
    """The bounds show the censored call returning (observed: 1 of 4 abandoned, 25 %) and
    never returning (wedge: 2 of 4, 50 %), and say they are the two ends."""
    bounds = replay_bounds(_corpus(), Policy.uniform(5.0), engine="twin")
    page = bounds._repr_html_()
    assert page is not None
    row = re.search(r"abandoned-call rate</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", page)
    assert row and row.groups() == ("25 %", "50 %")
    assert "censored=bounds" in page and "optimistic (censored=observed)" in page


def test_a_corpus_shows_its_size_tools_and_censored_calls():
    """A corpus's HTML counts its episodes, calls, tools and censored calls as its episodes
    do, and one row per tool with its calls."""
    episodes = _bundled()
    calls = [c for e in episodes for r in e.rounds for c in r.calls]
    tools = sorted({c.tool for c in calls})
    censored = sum(not c.completed for c in calls)
    page = open_corpus(episodes)._repr_html_()
    assert page is not None
    assert (
        f"{len(episodes):,} episodes, {len(calls):,} calls, {len(tools)} tools, "
        f"{censored} censored calls" in html.unescape(page)
    )
    for tool in tools:
        assert cell_after(page, tool) == f"{sum(c.tool == tool for c in calls):,}"
    assert "assumes: durations as recorded" in page


def test_a_policy_shows_each_tools_timeout_and_its_parts():
    """A policy's HTML gives each listed tool its timeout (seconds, the one style), any other
    tool the default, its idle timeout, its narrowing and its TOML."""
    policy = Policy.uniform(30.0).with_tool_timeouts(read_file=2.5).with_idle(search_code=4.0)
    page = policy._repr_html_()
    assert page is not None
    assert cell_after(page, "read_file") == "2.5 s"
    row = re.search(r"search_code</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", page)
    assert row and row.groups() == ("30 s", "4 s")
    assert cell_after(page, "(any other tool)") == "30 s"
    assert "narrowing: inherit" in page and "[idle]" in page
    assert "assumes: no deadline in force" in page
    assert html.escape(policy.label) in page


def test_a_recommendation_shows_its_verdict_budgets_tools_and_changes():
    """A recommendation's HTML says whether its budgets are met (as its budget frame says),
    lists every budget and every tool with its chosen timeout, and what was saved and paid."""
    rec = recommend(corpus_path())
    page = rec._repr_html_()
    assert page is not None
    text = html.unescape(page)
    verdict = "every budget met" if bool(rec.budgets["met"].all()) else "a budget is NOT met"
    assert verdict in text
    assert text.count("</tr>") >= len(rec.budgets) + len(rec.explain)
    for tool, seconds in zip(rec.explain["tool"], rec.explain["timeout_sec"], strict=True):
        assert seconds == rec.policy.timeout_for(None, tool, remaining_sec=None)
        timeout = re.escape(f"{seconds:g} s")
        assert re.search(
            re.escape(tool) + r"</td>(<td[^>]*>[^<]*</td>){5}<td[^>]*>" + timeout, page
        )
    assert "rule: " + rec.rule in text
    assert rec.summary["wall_max_sec"] < rec.baseline["wall_max_sec"]  # so it says what it saved
    assert "saved: " in text and "wall max" in text.split("saved: ")[1]
    assert "censored=wedge" in text and "confidence=0.95" in text


def test_a_sweep_frame_shows_its_points_chart_rows_and_assumptions():
    """A sweep over one tool's timeout shows how many points, the rates against that timeout
    as a chart, each row's abandoned-call rate (as the frame holds it) and its assumptions."""
    frame = sweep(_bundled(), make_grid(Policy.ouroboros(), tools={"read_file": [0.01, 1.0]}))
    page = frame._repr_html_()
    assert page is not None
    assert "Sweep of 2 policy points" in page
    assert png_count(page) == 1 and "rates against the timeout of read_file" in page
    rates = re.findall(r"<tr><td[^>]*>[^<]*</td><td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td>", page)
    expected = [f"{100 * rate:.3g} %" for rate in frame["abandoned_call_rate"]]
    assert rates == expected
    assert "assumes: censored=wedge" in page and "engine=vectorized" in page


def test_a_sliced_sweep_frame_still_shows_itself():
    """A frame sliced to its parameters shows its rows as pandas does; one sliced to one row
    still shows its figure and its assumptions, without a chart (one point draws no curve)."""
    frame = sweep(_bundled(), make_grid(Policy.ouroboros(), scales=[0.1, 1.0]))
    only_params = frame[["scale"]]
    assert only_params._repr_html_() == pd.DataFrame(only_params)._repr_html_()
    one = frame[frame["scale"] == 1.0]
    page = one._repr_html_()
    assert page is not None and png_count(page) == 0
    assert "Sweep of 1 policy points" in page
    rate = float(one["timeout_coverage_loss_rate"].iloc[0])
    assert f"{100 * rate:.3g} %" in page
    assert "assumes: censored=wedge" in page


def test_a_cluster_summary_shows_its_figures_without_frames():
    """A replay answered without frames (a cluster's ReplaySummary) shows its summary and
    assumptions, and no per-tool table or chart it has no frames for."""
    from reviewlab.engines._result import ReplaySummary

    framed = replay(_corpus(), Policy.uniform(5.0), engine="twin")
    summary = ReplaySummary(
        summary=dict(framed.summary),
        engine="cluster",
        policy=framed.policy,
        assumptions={"censored": "wedge", "reaction": "as_recorded", "engine": "cluster"},
    )
    page = summary._repr_html_()
    assert page is not None
    assert cell_after(page, "abandoned-call rate") == "50 %"
    assert "engine=cluster" in page and "per tool" not in page and png_count(page) == 0


def test_a_learned_or_custom_policy_shows_what_its_rule_names():
    """A learned rule lists its fixed tools and its default; a custom rule, which names no
    tool, gives only what any tool gets and says it has no file form."""
    from reviewlab.core._learned import LearnedTimeouts

    learned = Policy(timeouts=LearnedTimeouts(models={}, fixed_sec={"read_file": 3.0}))
    page = learned._repr_html_()
    assert page is not None
    assert cell_after(page, "read_file") == "3 s"
    assert cell_after(page, "(any other tool)") == "360 s"  # LearnedTimeouts' default_sec

    class Seven:
        def timeout_for(self, tools, tool_name, tool_args=None):
            return 7.0

    page = Policy(timeouts=Seven())._repr_html_()
    assert page is not None
    assert cell_after(page, "(any other tool)") == "7 s"
    assert "a custom rule (Seven)" in page and "TOML" not in page


def test_a_chart_is_an_inline_png_and_its_figure_is_cleared():
    """A chart becomes one decodable inline PNG with its alt text escaped, and its figure holds
    no Axes afterwards."""
    from matplotlib.figure import Figure

    from reviewlab.ui._rich_display import png_html

    figure = Figure(figsize=(2.0, 1.0))
    figure.add_subplot().plot([0, 1], [1, 0])
    page = png_html(figure, "rates of <b>")
    assert png_count(page) == 1 and 'alt="rates of &lt;b&gt;"' in page
    assert figure.axes == []


def test_names_in_titles_are_escaped():
    """A policy's name and a corpus's name reach a title as text, never as markup."""
    hostile = "<img src=x onerror=alert(1)>"
    policy_page = Policy.uniform(5.0).replace(name=hostile)._repr_html_()
    replay_page = replay(_corpus(), Policy.uniform(5.0).replace(name=hostile))._repr_html_()
    corpus_page = open_corpus(_corpus())._repr_html_()  # named <episodes>
    for page in (policy_page, replay_page):
        assert page is not None and "<img src=x" not in page
        assert html.escape(hostile) in page
    assert corpus_page is not None and "Corpus &lt;episodes&gt;" in corpus_page
