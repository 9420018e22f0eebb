"""Interactive policy exploration in Jupyter (ipywidgets): :func:`explore`, beside the
:class:`~reviewlab.ui._editor.PolicyEditor` it drives (re-exported here).

:class:`Explorer` (made by :func:`explore`) puts the editor beside the live
metrics of a replay of the corpus under the edited policy and a chart. Each
change schedules one update after a short quiet period (debounce), so dragging
a slider replays once, not per pixel; :meth:`Explorer.update` runs one
synchronously (tests, scripts). Updates never overlap: a change that arrives
while one runs schedules the next. Under the metrics, the trade-off curve
(:mod:`reviewlab.ui.charts._tradeoff`): the edited policy with every timeout scaled, the
current policy marked, the presets beside it, drawn and tabulated.

Every number is written by :mod:`reviewlab.ui._numbers`, as in the report and the CLI; a tool
name typed in a file or given to the editor is checked with the one did-you-mean
(:mod:`reviewlab.ui._tool_names`).
"""

from __future__ import annotations

import html
import io
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as w
from matplotlib.figure import Figure

from reviewlab.core._metric_names import METRICS
from reviewlab.core._policy import Policy, PolicyError
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._engine import Engine
from reviewlab.engines._replay import replay
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui._editor import DEFAULT_TOOLS, PolicyEditor
from reviewlab.ui._numbers import cell, column_kind, infinity_footnote, is_infinite, label_of
from reviewlab.ui._tables import assumptions_line
from reviewlab.ui.charts import LiveRates
from reviewlab.ui.charts._tradeoff import TRADEOFF_AXES, tradeoff_curve, tradeoff_frame

# -- the explorer ------------------------------------------------------------------------

_SUMMARY_ROWS = tuple(metric.key for metric in METRICS if metric.brief)
"""The metrics the explorer shows, each written in the one number style."""


def summary_html(
    summary: Mapping[str, Any],
    baseline: Mapping[str, Any] | None = None,
    *,
    title: str = "edited",
    baseline_title: str = "baseline",
    assumptions: Mapping[str, Any] | None = None,
) -> str:
    """The summary as an HTML table (one row per metric), beside ``baseline`` when given, with
    the ∞ footnote (once) and the replay's assumptions under it."""
    head = f"<th>metric</th><th>{html.escape(title)}</th>"
    if baseline is not None:
        head += f"<th>{html.escape(baseline_title)}</th>"
    rows = []
    infinite = False
    for key in _SUMMARY_ROWS:
        if key not in summary:
            continue
        kind = column_kind(key)
        infinite = infinite or is_infinite(summary[key])
        cells = (
            f"<td>{html.escape(label_of(key))}</td>"
            f"<td class='rl-value' data-metric='{key}'>{cell(summary[key], kind)}</td>"
        )
        if baseline is not None:
            infinite = infinite or is_infinite(baseline.get(key))
            cells += f"<td>{cell(baseline.get(key), kind)}</td>"
        rows.append(f"<tr>{cells}</tr>")
    notes = [infinity_footnote(assumptions)] if infinite else []
    if assumptions is not None:
        notes.append(assumptions_line(assumptions))
    foot = "".join(f"<p class='rl-note'>{html.escape(note)}</p>" for note in notes)
    return (
        f"<table class='rl-summary'><caption>{cell(summary['episodes'], 'count')} episodes, "
        f"{cell(summary['calls'], 'count')} calls"
        f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{foot}"
    )


def tradeoff_html(curve: Any, presets: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The trade-off curve as a table: one row per scale of the current policy's timeouts (the
    current one, × 1, marked ``data-current``), then the presets; every cell carries its
    ``data-curve`` column so a reader (or a browser test) can find it."""
    columns = ["timeout_coverage_loss_rate", *(column for column, _, _ in TRADEOFF_AXES)]
    head = "<th>timeouts</th>" + "".join(f"<th>{html.escape(label_of(c))}</th>" for c in columns)
    rows = []
    for row in curve.to_dict("records"):
        current = row["scale"] == 1.0
        mark = " data-current='1' style='font-weight:bold'" if current else ""
        name = "current policy" if current else f"× {row['scale']:g}"
        cells = "".join(
            f"<td data-curve='{c}'>{cell(row[c], column_kind(c))}</td>" for c in columns
        )
        rows.append(f"<tr class='rl-curve'{mark}><td>{name}</td>{cells}</tr>")
    for name, summary in (presets or {}).items():
        cells = "".join(f"<td>{cell(summary[c], column_kind(c))}</td>" for c in columns)
        rows.append(f"<tr class='rl-preset'><td>preset: {html.escape(name)}</td>{cells}</tr>")
    return (
        "<table class='rl-tradeoff'><caption>the trade-off: the current policy with every "
        "timeout scaled, and the presets</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


class Explorer:
    """The editor beside live metrics and a per-tool chart of a replay of ``corpus`` (anything
    :func:`~reviewlab.engines._corpus.open_corpus` takes: episodes, a path, an opened corpus,
    which is then the one handle every replay uses), and under them the trade-off curve of the
    edited policy with the presets beside it.

    Lifecycle: built idle with one synchronous :meth:`update`; every editor
    change then starts (or restarts) a ``debounce_sec`` timer whose expiry runs
    :meth:`update` on a worker thread. :attr:`result` is the last replay,
    :attr:`curve` the last trade-off curve (:func:`~reviewlab.ui.charts.tradeoff_frame`),
    :attr:`preset_summaries` the presets' replays (made once), :attr:`updates` counts
    finished updates, :attr:`last_update_sec` is the wall time the last one took.
    """

    def __init__(
        self,
        corpus: CorpusSource,
        *,
        editor: PolicyEditor | None = None,
        engine: Engine | str = "vectorized",
        debounce_sec: float = 0.15,
        chart: bool = True,
        **replay_options: Any,
    ) -> None:
        self._corpus = open_corpus(corpus)  # one handle: compiled once, cached there
        self.episodes: list[Episode] = self._corpus.episodes(reason="the explorer's episodes")
        if not self.episodes:
            raise ValueError("explore: no episodes to replay")
        self.engine = engine
        self.debounce_sec = float(debounce_sec)
        self.replay_options = replay_options
        self.editor = editor or PolicyEditor(tools=self._corpus.tools or DEFAULT_TOOLS)
        self.baseline = self._replay(self.editor.policy).summary
        self.baseline_title = self.editor.name
        self.preset_summaries = self._preset_summaries()
        self.result: ReplayResult | None = None
        self.curve: Any = None
        self.updates = 0
        self.last_update_sec = 0.0
        self.metrics = w.HTML()
        self.tradeoff = w.HTML()
        self.notice = w.HTML(value=self._tool_notice(self._corpus.tools))
        self.chart = w.Image(format="png", layout=w.Layout(max_width="640px")) if chart else None
        self.tradeoff_chart = (
            w.Image(format="png", layout=w.Layout(max_width="900px")) if chart else None
        )
        # A fixed layout: the constrained layout engine would double the redraw time. The
        # legend goes under the tick labels, where it hides no bar.
        self._figure = Figure(figsize=(6.0, 3.4))
        self._figure.subplots_adjust(left=0.1, right=0.98, bottom=0.27, top=0.9)
        self._rates = LiveRates(self._figure.add_subplot())
        self._tradeoff_figure = Figure(figsize=(10.0, 3.4))
        self._tradeoff_figure.subplots_adjust(left=0.07, right=0.76, bottom=0.16, top=0.88)
        self._tradeoff_axes = list(self._tradeoff_figure.subplots(1, 2))
        self._lock = threading.Lock()  # guards the timer and the generation
        self._update_lock = (
            threading.RLock()
        )  # one replay-and-redraw at a time (figure() re-enters it)
        self._generation = 0
        self._timer: threading.Timer | None = None
        self._settled = threading.Event()
        self._settled.set()
        self.editor.on_change(lambda _: self.schedule())
        top = w.HBox(
            [
                self.editor.widget,
                w.VBox([self.notice, self.metrics, *([self.chart] if self.chart else [])]),
            ]
        )
        below = [*([self.tradeoff_chart] if self.tradeoff_chart else []), self.tradeoff]
        self.widget = w.VBox([top, *below])
        self.update()

    def _preset_summaries(self) -> dict[str, Mapping[str, Any]]:
        """Each preset's replay summary (made once: the presets never change); a preset this
        engine cannot replay is left out and named in the notice."""
        found: dict[str, Mapping[str, Any]] = {}
        for name, policy in self.editor.presets.items():
            try:
                found[name] = self._replay(policy).summary
            except (PolicyError, ValueError):
                continue
        return found

    def _tool_notice(self, corpus_tools: Sequence[str]) -> str:
        """A warning naming the editor's tools the corpus never calls (did you mean …)."""
        from reviewlab.analysis._known_tools import closest

        unknown = [tool for tool in self.editor.tools if tool not in corpus_tools]
        if not unknown or not corpus_tools:
            return ""
        parts = []
        for tool in unknown:
            close = closest(tool, corpus_tools)
            parts.append(tool + (f" (did you mean {' or '.join(close)}?)" if close else ""))
        return (
            "<p style='color:#c44e52'>warning: the corpus never calls "
            f"{html.escape('; '.join(parts))}: those sliders change nothing</p>"
        )

    def _replay(self, policy: Policy) -> ReplayResult:
        """One replay through the dispatch, on the one opened corpus (whose handle keeps the
        compiled columns between updates)."""
        result = replay(self._corpus, policy, engine=self.engine, **self.replay_options)
        if not isinstance(result, ReplayResult):
            raise ValueError("engine: the explorer draws frames; pick an in-process engine")
        return result

    def schedule(self) -> None:
        """Run :meth:`update` once the controls have been still for ``debounce_sec``."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._generation += 1
            self._settled.clear()
            self._timer = threading.Timer(
                self.debounce_sec, self._debounced, args=(self._generation,)
            )
            self._timer.daemon = True
            self._timer.start()

    def _debounced(self, generation: int) -> None:
        try:
            self.update()
        except Exception as exc:  # a failed replay must show, not kill the timer thread silently
            self.metrics.value = f"<pre style='color:#c44e52'>{html.escape(repr(exc))}</pre>"
        finally:
            with self._lock:
                # Only the latest change settles the explorer; an older
                # timer's update is superseded.
                if generation == self._generation:
                    self._settled.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no debounced update is pending; False if ``timeout`` passed first."""
        return self._settled.wait(timeout)

    def update(self) -> ReplayResult:
        """Replay under the editor's policy now, and refresh the metrics table and the chart."""
        with self._update_lock:
            started = time.perf_counter()
            policy = self.editor.policy
            result = self._replay(policy)
            self.result = result
            self.curve = tradeoff_frame(policy, lambda p: self._replay(p).summary)
            # The charts first, the tables last: a page that sees the metrics change already
            # has the charts that go with them.
            if self.chart is not None:
                self.chart.value = figure_png(self.figure(result))
            if self.tradeoff_chart is not None:
                tradeoff_curve(
                    self.curve,
                    current=result.summary,
                    presets=self.preset_summaries,
                    axes=self._tradeoff_axes,
                )
                self.tradeoff_chart.value = figure_png(self._tradeoff_figure)
            self.tradeoff.value = tradeoff_html(self.curve, self.preset_summaries)
            self.metrics.value = summary_html(
                result.summary,
                self.baseline,
                baseline_title=self.baseline_title,
                assumptions=result.assumptions,
            )
            self.updates += 1
            self.last_update_sec = time.perf_counter() - started
        return result

    def figure(self, result: ReplayResult | None = None) -> Figure:
        """The explorer's chart showing ``result`` (default: the last
        one); one figure, redrawn in place."""
        with self._update_lock:
            result = result or self.result
            assert result is not None
            self._rates.draw(result)
            return self._figure

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def figure_png(figure: Figure, dpi: int = 80) -> bytes:
    """``figure`` rendered as PNG bytes (for an ``ipywidgets.Image``)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def explore(corpus: CorpusSource, **options: Any) -> Explorer:
    """An :class:`Explorer` over ``corpus`` (episodes, a path or an opened corpus; options as
    :class:`Explorer`); display it in a notebook."""
    return Explorer(corpus, **options)
