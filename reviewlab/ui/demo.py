"""The main job (``reviewlab demo``, ``make demo``): reviewlab end to end in under two minutes.

Steps, in order, each printed as it finishes:

1. **Live episode.** A real :class:`~reviewlab.live.episode.ReviewEpisode` over the
   bundled demo workspace with a :class:`~reviewlab.live.episode.ScriptedModel`,
   under the ouroboros policy scaled 1/1000 (600 s → 0.6 s). One tool,
   ``search_code``, is wedged: its worker blocks on an :class:`threading.Event`
   that is set only when the demo ends. The episode abandons it at its bound,
   tells the model, and carries on; the receipts and usage are printed.
2. **Incident.** The recorded wedged ``query_code`` episode replayed under the
   pre-fix behaviour (:meth:`Narrowing.unbounded`: 26,160 s of silence) and
   under the ouroboros policy (silence ≤ 600 s).
3. **Corpus.** The bundled synthetic corpus replayed under both policies.
4. **Sweep and recommendation.** A default grid swept, a policy recommended
   under a 1 % coverage-loss budget, and the recommendation replayed.
5. **Report.** ``OUT/report.html`` with its charts as PNG files beside it.

Invariant: the wedged worker of step 1 is released whatever happens (a
``finally``), so the demo never leaves a thread behind. Every figure is
computed by the library (replay, sweep, tune, metrics); this module only
chooses inputs and arranges outputs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("MPLBACKEND", "Agg")  # the demo draws files, never windows

import pandas as pd  # noqa: E402

from reviewlab.core.policy import PRE_FIX_LABEL, Narrowing, Policy, TimeoutPolicy  # noqa: E402
from reviewlab.core.vocab import SOURCE_GAP_ABANDONED  # noqa: E402
from reviewlab.resources import BUNDLED_CORPUS, INCIDENT_DAY, data_path  # noqa: E402
from reviewlab.ui.report import (  # noqa: E402
    Report,
    assumptions_line,
    receipts_table,
    summary_table,
    sweep_view,
    text_table,
    write_table,
)

__all__ = [
    "CORPUS_PATH",
    "INCIDENT_PATH",
    "DemoResult",
    "live_episode",
    "run_demo",
]

CORPUS_PATH = data_path(BUNDLED_CORPUS)
INCIDENT_PATH = data_path(INCIDENT_DAY)

WEDGED_TOOL = "search_code"
LIVE_SCALE = 0.001
"""The live episode runs the ouroboros policy scaled to 1/1000: the 600 s floor becomes 0.6 s."""
QUICK_EPISODES = 200
"""``--quick`` replays and sweeps only the first episodes of the corpus."""

Echo = Callable[[str], None]


@dataclass
class DemoResult:
    """What the demo computed, for callers and tests."""

    out_dir: Path
    report_path: Path | None = None
    images: list[Path] = field(default_factory=list)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    incident_silence_sec: dict[str, float] = field(default_factory=dict)
    recommended: Policy | None = None
    elapsed_sec: float = 0.0
    steps_sec: dict[str, float] = field(default_factory=dict)


# -- step 1: a live episode with one wedged tool --------------------------------------------
def _live_script() -> list[dict[str, Any]]:
    from reviewlab.live.episode import tool_call

    return [
        {
            "tool_calls": [
                tool_call("list_files", {"path": ".", "recursive": True}, "c1"),
                tool_call("read_file", {"path": "inventory/pricing.py"}, "c2"),
            ]
        },
        {"tool_calls": [tool_call(WEDGED_TOOL, {"pattern": "discount"}, "c3")]},
        {
            "tool_calls": [
                tool_call(
                    "read_file",
                    {"path": "inventory/stock.py", "start_line": 1, "end_line": 20},
                    "c4",
                )
            ]
        },
        {
            "content": '[{"file": "inventory/pricing.py", "finding": "see the discount rule"}]\n'
            "(search_code timed out; the answer is based on the files read.)"
        },
    ]


def live_episode(release: threading.Event, echo: Echo) -> Any:
    """Run the live episode of step 1; ``release`` frees the wedged tool (set it when done)."""
    from reviewlab.live.doubles import wedged_factory
    from reviewlab.live.episode import ReviewEpisode, ScriptedModel
    from reviewlab.live.inspection import demo_workspace

    factory = wedged_factory(WEDGED_TOOL, release)
    policy = TimeoutPolicy.ouroboros().scaled(LIVE_SCALE, name="ouroboros/1000")
    model = ScriptedModel(_live_script())
    episode = ReviewEpisode(demo_workspace(), model, policy=policy, registry_factory=factory)
    result = episode.execute()
    echo(text_table(receipts_table(result.receipts)))
    usage = result.usage
    shown = {key: value for key, value in usage.items() if key != "native_tool_receipts"}
    echo("usage: " + ", ".join(f"{key}={value!r}" for key, value in shown.items()))
    told = _timeout_text_seen(model)
    if told:
        echo(f"the model was told: {told}")
    return result


def _timeout_text_seen(model: Any) -> str:
    """The TOOL_TIMEOUT host text the model received, if any (from its recorded sends)."""
    for call in getattr(model, "calls", []):
        for message in call.get("messages", []):
            content = message.get("content") if isinstance(message, Mapping) else None
            if (
                message.get("role") == "tool"
                and isinstance(content, str)
                and "TOOL_TIMEOUT" in content
            ):
                return content
    return ""


# -- steps 2–4: replay, sweep, recommend -----------------------------------------------------
def _load(path: Path, what: str, make: str) -> list[Any]:
    from reviewlab.recording.files import load_episodes

    if not path.exists():
        raise FileNotFoundError(f"{path}: the bundled {what} is missing; recreate it with `{make}`")
    return list(load_episodes(path))


def _default_grid(quick: bool) -> Any:
    """The grid the demo sweeps: per-tool timeouts of the inspection tools × narrowing modes."""
    from reviewlab.analysis.sweep import make_grid

    if quick:
        return make_grid(
            TimeoutPolicy.ouroboros(),
            tools={"read_file": [30.0, 120.0, 600.0], "query_code": [60.0, 120.0]},
            narrowings=[Narrowing(), Narrowing(mode="reserve", reserve_sec=30.0)],
        )
    return make_grid(
        TimeoutPolicy.ouroboros(),
        tools={
            "read_file": [5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0],
            "search_code": [10.0, 30.0, 60.0, 120.0, 300.0],
            "query_code": [30.0, 60.0, 120.0, 300.0],
        },
        narrowings=[
            Narrowing(),
            Narrowing(mode="reserve", reserve_sec=30.0),
            Narrowing(mode="none"),
        ],
    )


CURVE_TIMEOUTS = {
    tool: [1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0]
    for tool in ("read_file", "list_files", "search_code", "query_code")
}
"""Per-tool timeouts of the one-at-a-time curves drawn in the report."""


def run_demo(out_dir: str | Path = "out", *, quick: bool = False, echo: Echo = print) -> DemoResult:
    """Run the whole demo, print its progress through ``echo`` and write ``out_dir/report.html``."""
    from reviewlab.analysis.sweep import pareto, sweep, tool_curves
    from reviewlab.analysis.tune import recommend
    from reviewlab.engines.replay import replay
    from reviewlab.recording.synth import INCIDENT_EPISODE_ID, INCIDENT_SLOT

    started = time.perf_counter()
    result = DemoResult(out_dir=Path(out_dir))
    report = Report("reviewlab demo: bounding reviewer tool calls", result.out_dir)
    clock = [started]

    def step(name: str) -> None:
        now = time.perf_counter()
        result.steps_sec[name] = now - clock[0]
        clock[0] = now
        echo(f"  [{name}: {result.steps_sec[name]:.1f} s]")
        echo("")

    ouroboros = Policy.ouroboros()
    release = threading.Event()
    try:
        echo(
            "== 1. A live review episode; search_code is wedged (ouroboros policy scaled 1/1000) =="
        )
        live = live_episode(release, echo)
        step("live episode")

        echo("== 2. The incident: a wedged query_code, before and after the fix ==")
        incident = _load(
            INCIDENT_PATH, "incident", f"reviewlab synth --incident -o {INCIDENT_PATH}"
        )
        slots = len({episode.slot for episode in incident})
        # The recording watched the wedged call for 26,160 s: replay what happened (observed);
        # under censored="wedge" the pre-fix silence would be infinite.
        incident_runs = {
            PREFIX: replay(
                incident,
                Policy.unbounded(),
                engine="twin",
                slots=slots,
                censored="observed",
            ),
            "ouroboros": replay(
                incident, ouroboros, engine="twin", slots=slots, censored="observed"
            ),
        }
        echo(assumptions_line(incident_runs[PREFIX].assumptions))
        result.incident_silence_sec = {
            label: run.summary["max_silence_sec"] for label, run in incident_runs.items()
        }
        echo(
            f"{len(incident)} episodes on {slots} reviewer slots; {INCIDENT_EPISODE_ID} on "
            f"{INCIDENT_SLOT} "
            "calls query_code, which never returns:"
        )
        echo(text_table(_incident_calls(incident_runs, INCIDENT_EPISODE_ID)))
        echo("")
        echo(text_table(summary_table(_summaries(incident_runs), INCIDENT_KEYS)))
        calls = incident_runs["ouroboros"].calls
        bounds = calls[
            (calls["episode_id"] == INCIDENT_EPISODE_ID)
            & (calls["source_gap"] == SOURCE_GAP_ABANDONED)
        ]
        echo(
            f"longest silence: {result.incident_silence_sec[PREFIX]:,.1f} s before the fix, "
            f"{result.incident_silence_sec['ouroboros']:,.1f} s after (query_code abandoned at its "
            f"{', '.join(f'{b:g}' for b in bounds['bound_sec'])} s bound)"
        )
        step("incident replay")

        corpus = _load(CORPUS_PATH, "corpus", f"reviewlab synth -n 1000 -o {CORPUS_PATH}")
        if quick:
            corpus = corpus[:QUICK_EPISODES]
        echo(
            f"== 3. {len(corpus)} recorded episodes replayed under the pre-fix and the ouroboros "
            "policy =="
        )
        runs = {
            PREFIX: replay(corpus, Policy.unbounded(), engine="vectorized"),
            "ouroboros": replay(corpus, ouroboros, engine="vectorized"),
        }
        # The vectorized engine must give exactly the twin's answers; show it on this corpus.
        agree = all(
            replay(corpus, run.policy, engine="twin").calls.equals(run.calls)
            for run in runs.values()
        )
        echo(f"vectorized and twin engines agree on every call: {'yes' if agree else 'NO'}")
        step("corpus replay")

        echo("== 4. Sweep, then a recommended policy under a 1% coverage-loss budget ==")
        points = sweep(corpus, _default_grid(quick), engine="vectorized", progress=False)
        points["pareto"] = pareto(points)
        echo(
            f"swept {len(points)} policy points; {int(points['pareto'].sum())} on the Pareto front "
            "(p95 wall time vs coverage loss):"
        )
        echo(text_table(sweep_view(points[points["pareto"]], sort_by="coverage_loss_rate")))
        curves = tool_curves(corpus, CURVE_TIMEOUTS, base=ouroboros, progress=False)
        recommendation = recommend(corpus, max_timeout_coverage_loss=0.01, objective="wall_p95")
        recommended, explanation = recommendation.policy, recommendation.explain
        result.recommended = recommended
        runs["recommended"] = replay(corpus, recommended, engine="vectorized")
        echo("")
        echo(text_table(explanation[[c for c in explanation.columns if c not in EXPLAIN_HIDDEN]]))
        step("sweep and tune")

        result.summaries = _summaries(runs)
        summary = summary_table(result.summaries)
        echo("== Summary ==")
        echo(text_table(summary))
        write_table(points, result.out_dir / "sweep.csv")
        recommended.save(result.out_dir / "recommended-policy.toml")
        _write_report(
            report,
            live=live,
            incident=incident,
            incident_runs=incident_runs,
            corpus=corpus,
            runs=runs,
            points=points,
            curves=curves,
            explanation=explanation,
            recommended=recommended,
            summary=summary,
            agree=agree,
        )
        step("report")
    finally:
        release.set()  # the wedged worker returns now; its late value is credited to nothing

    result.elapsed_sec = time.perf_counter() - started
    result.report_path = report.out_dir / "report.html"
    result.images = list(report.images)
    echo(
        f"report: {result.report_path} ({len(result.images)} charts); also sweep.csv and "
        "recommended-policy.toml"
    )
    echo(f"demo finished in {result.elapsed_sec:.1f} s")
    return result


PREFIX = PRE_FIX_LABEL
EXPLAIN_HIDDEN = ("duration_p50_sec", "duration_p90_sec", "duration_p99.5_sec")
"""Explanation columns left out of the terminal (the report shows them all)."""


def _summaries(runs: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {label: run.summary for label, run in runs.items()}


INCIDENT_KEYS = (
    "calls",
    "abandoned_call_rate",
    "max_silence_sec",
    "wall_max_sec",
    "zombie_sec",
    "wedged_zombies",
    "peak_loose_workers",
)


def _incident_calls(runs: Mapping[str, Any], episode_id: str) -> pd.DataFrame:
    """The incident episode's calls under each policy, side by side (rows of the replay frames)."""
    columns = [
        "round",
        "tool",
        "duration_sec",
        "completed",
        "bound_sec",
        "bound_by",
        "outcome",
        "source_gap",
    ]
    parts = []
    for label, run in runs.items():
        calls = run.calls[run.calls["episode_id"] == episode_id][columns]
        parts.append(calls.assign(policy=label)[["policy", *columns]])
    return pd.concat(parts, ignore_index=True)


# -- step 5: the report ---------------------------------------------------------------------
def _write_report(
    report: Report,
    *,
    live: Any,
    incident: list[Any],
    incident_runs: Mapping[str, Any],
    corpus: list[Any],
    runs: Mapping[str, Any],
    points: pd.DataFrame,
    curves: pd.DataFrame,
    explanation: pd.DataFrame,
    recommended: Policy,
    summary: pd.DataFrame,
    agree: bool,
) -> None:
    from reviewlab.recording.synth import INCIDENT_EPISODE_ID
    from reviewlab.ui import charts

    report.heading("Summary")
    report.paragraph(
        f"The bundled corpus ({runs['ouroboros'].summary['episodes']} episodes) replayed under "
        "the pre-fix behaviour (no tool bound), the ouroboros policy and the recommended "
        "policy. The vectorized and the twin engines "
        f"{'agree on every call' if agree else 'DISAGREE'} on this corpus."
    )
    report.table(summary)

    report.heading("The incident: one wedged query_code")
    report.paragraph(
        "A recorded day of a reviewer pool. One query_code call never returned. Before the "
        "fix the episode waited for it and its slot stayed silent; with the ouroboros policy "
        "the call is abandoned at its bound and the episode goes on."
    )
    report.table(summary_table(_summaries(incident_runs), INCIDENT_KEYS))
    report.table(
        _incident_calls(incident_runs, INCIDENT_EPISODE_ID), f"The calls of {INCIDENT_EPISODE_ID}"
    )
    report.figure(
        charts.pool_timeline(incident_runs[PREFIX], episodes=incident),
        "incident-pool-prefix",
        "Pre-fix: the reviewer pool over the day; one slot is silent on a tool for hours.",
    )
    report.figure(
        charts.pool_timeline(incident_runs["ouroboros"], episodes=incident),
        "incident-pool-ouroboros",
        "Ouroboros: the same day with every call bounded.",
    )
    report.figure(
        charts.episode_timeline(incident_runs["ouroboros"], INCIDENT_EPISODE_ID, episode=incident),
        "incident-episode-ouroboros",
        "The incident episode under ouroboros: query_code is abandoned at its bound; its "
        "loose worker runs on.",
    )

    report.heading("Per tool, under the ouroboros policy")
    report.table(runs["ouroboros"].per_tool())
    report.figure(
        charts.rates_vs_timeout(curves),
        "rates-vs-timeout",
        "Each tool's timeout varied alone (the others at ouroboros): abandoned calls and "
        "lost read coverage.",
    )

    report.heading("Sweep")
    report.figure(
        charts.pareto_front(points, named=_summaries(runs)),
        "pareto",
        "p95 wall time against coverage loss over the sweep; the Pareto front in red.",
    )
    report.table(
        sweep_view(points[points["pareto"]], sort_by="coverage_loss_rate"),
        f"The Pareto front of {len(points)} policy points (all in sweep.csv)",
    )

    report.heading("Recommended policy")
    report.paragraph(
        "Per-tool timeouts chosen to minimise p95 episode wall time while losing at most 1% "
        "more read coverage than never abandoning; duration quantiles are Kaplan–Meier "
        "estimates that count calls which never returned."
    )
    report.table(explanation, "Why each tool got its timeout")
    report.figure(
        charts.survival_curves(corpus, recommended),
        "survival",
        "Share of each tool's calls still running after t seconds, with the recommended bounds.",
    )
    report.code(recommended.to_toml())

    report.heading("Live episode with a wedged tool")
    report.paragraph(
        "A real episode over the bundled demo workspace, ouroboros scaled 1/1000; "
        "search_code blocks until the demo ends."
    )
    report.table(receipts_table(live.receipts))
    report.code(
        "\n".join(
            f"{key} = {value!r}"
            for key, value in live.usage.items()
            if key != "native_tool_receipts"
        )
    )
    report.write()
