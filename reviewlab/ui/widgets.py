"""Interactive policy editing and exploration in Jupyter (ipywidgets):
:class:`PolicyEditor`, :func:`explore`.

:class:`PolicyEditor` edits one :class:`~reviewlab.core.policy.Policy`: a
log-scale slider per tool, a slider for every other tool, the narrowing mode
and its parameter, presets, and TOML load/save through
:meth:`~reviewlab.core.policy.Policy.load` / :meth:`~reviewlab.core.policy.Policy.save`.
Its :attr:`~PolicyEditor.policy` is always a valid, frozen ``Policy``
built from the controls; callbacks registered with
:meth:`~PolicyEditor.on_change` run once per user change (a preset or a file
load that moves many controls is one change).

Slider timeouts are kept to three significant figures (the browser snaps a
log slider to its step). The editor's policy has no floor: a preset's
floor is folded into the slider
values when the preset is applied (``base_for`` of each tool), so every tool
resolves exactly as under the preset until a slider moves, and a slider moved
below the old floor really lowers that tool's timeout.

:class:`Explorer` (made by :func:`explore`) puts the editor beside the live
metrics of a replay of the corpus under the edited policy and a chart. Each
change schedules one update after a short quiet period (debounce), so dragging
a slider replays once, not per pixel; :meth:`Explorer.update` runs one
synchronously (tests, scripts). Updates never overlap: a change that arrives
while one runs schedules the next.
"""

from __future__ import annotations

import html
import io
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
from matplotlib.figure import Figure

from reviewlab.core.policy import (
    NARROWING_MODES,
    PRE_FIX_LABEL,
    Narrowing,
    Policy,
    PolicyError,
    TimeoutPolicy,
)
from reviewlab.engines.replay import replay
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode
from reviewlab.ui.charts import LiveRates

__all__ = [
    "DEFAULT_TOOLS",
    "Explorer",
    "PolicyEditor",
    "default_presets",
    "explore",
    "figure_png",
    "summary_html",
]

DEFAULT_TOOLS = ("read_file", "list_files", "search_code", "query_code")
_OTHER = "other tools"
# Slider range: 0.1 s to 10,000 s on a log10 scale. The browser snaps a slider's value to
# the step in exponent space (600 s would come back as 599.79 s); keeping timeouts to
# three significant figures (:func:`_nice`) undoes that snap exactly, since one step (0.23
# %) is finer than the rounding.
_LOG_MIN, _LOG_MAX, _LOG_STEP = -1.0, 4.0, 0.001


def _nice(seconds: float) -> float:
    """A slider value as a timeout: three significant figures."""
    return float(f"{seconds:.3g}")


def default_presets() -> dict[str, Policy]:
    """The presets every editor offers: the reference policy, uniform
    bounds and the pre-fix behaviour."""
    return {
        "ouroboros": Policy.ouroboros(),
        "uniform 30 s": Policy.uniform(30.0),
        "uniform 120 s": Policy.uniform(120.0),
        "uniform 600 s": Policy.uniform(600.0),
        PRE_FIX_LABEL: Policy.unbounded(),
    }


def _clamp_log(seconds: float) -> float:
    return min(max(seconds, 10**_LOG_MIN), 10**_LOG_MAX)


class PolicyEditor:
    """Edit a policy's timeouts and narrowing with sliders; read the result from :attr:`policy`.

    ``tools`` get one log-scale slider each (seconds); ``other tools`` sets
    the default for every tool without a slider. The narrowing ``mode``
    dropdown shows ``reserve`` (seconds) or ``fraction`` only when they apply.
    ``presets`` (default :func:`default_presets`) maps a name to a :class:`Policy`;
    ``preset`` picks the initial one. The preset's other parts (idle timeouts, hedges,
    breaker) are kept in :attr:`policy` as they are.
    """

    def __init__(
        self,
        tools: Sequence[str] = DEFAULT_TOOLS,
        *,
        presets: Mapping[str, Policy] | None = None,
        preset: str | None = None,
    ) -> None:
        self.tools = tuple(dict.fromkeys(tools))
        if not self.tools:
            raise ValueError("PolicyEditor: tools must name at least one tool")
        self.presets = dict(presets) if presets is not None else default_presets()
        if not self.presets:
            raise ValueError("PolicyEditor: presets must not be empty")
        self._base = Policy(timeouts=TimeoutPolicy())
        self._name = "custom"
        self._callbacks: list[Callable[[PolicyEditor], None]] = []
        self._quiet = 0  # > 0 while a batch of control changes must not fire callbacks
        self.sliders: dict[str, w.FloatLogSlider] = {
            name: w.FloatLogSlider(
                value=60.0,
                base=10,
                min=_LOG_MIN,
                max=_LOG_MAX,
                step=_LOG_STEP,
                description=name,
                readout_format=".3g",
                continuous_update=True,
                style={"description_width": "7.5em"},
                layout=w.Layout(width="26em"),
            )
            for name in (*self.tools, _OTHER)
        }
        self.mode = w.Dropdown(
            options=list(NARROWING_MODES),
            value="inherit",
            description="narrowing",
            style={"description_width": "7.5em"},
        )
        self.reserve = w.FloatSlider(
            value=0.0,
            min=0.0,
            max=600.0,
            step=1.0,
            description="reserve (s)",
            style={"description_width": "7.5em"},
        )
        self.fraction = w.FloatSlider(
            value=1.0,
            min=0.05,
            max=1.0,
            step=0.05,
            description="fraction",
            style={"description_width": "7.5em"},
        )
        self.preset = w.Dropdown(
            options=list(self.presets), description="preset", style={"description_width": "7.5em"}
        )
        self.path = w.Text(
            value="policy.toml", description="TOML file", style={"description_width": "7.5em"}
        )
        self.load_button = w.Button(
            description="Load", icon="folder-open", layout=w.Layout(width="6em")
        )
        self.save_button = w.Button(description="Save", icon="save", layout=w.Layout(width="6em"))
        self.status = w.HTML(value="")
        self.apply_preset(preset if preset is not None else next(iter(self.presets)))
        for control in (*self.sliders.values(), self.mode, self.reserve, self.fraction):
            control.observe(self._changed, names="value")
        self.preset.observe(self._preset_picked, names="value")
        self.load_button.on_click(lambda _: self._file_action(self.load))
        self.save_button.on_click(lambda _: self._file_action(self.save))
        self.widget = w.VBox(
            [
                self.preset,
                w.HTML("<b>Per-tool timeout</b> (s, log scale)"),
                *self.sliders.values(),
                self.mode,
                self.reserve,
                self.fraction,
                w.HBox([self.path, self.load_button, self.save_button]),
                self.status,
            ]
        )
        self._show_parameters()

    # -- reading ---------------------------------------------------------------
    @property
    def policy(self) -> Policy:
        """The edited policy: the current preset's rules with the sliders' timeouts (no floor)
        and the narrowing controls' narrowing; its other parts as the preset has them."""
        base: TimeoutPolicy = self._base.timeouts
        fields = base.to_dict()
        fields.pop("floor_sec", None)
        table = {tool: base.base_for(None, tool) for tool in base.tools_sec}
        table.update({tool: _nice(self.sliders[tool].value) for tool in self.tools})
        fields.update(
            default_sec=_nice(self.sliders[_OTHER].value), tools_sec=table, name=self._name
        )
        return self._base.replace(
            timeouts=TimeoutPolicy(**fields), narrowing=self._narrowing(), name=""
        )

    @property
    def name(self) -> str:
        """The preset or file the controls show, or ``"edited"`` once a control moved."""
        return self._name

    def _narrowing(self) -> Narrowing:
        """The narrowing the controls show (mode and its parameters)."""
        return Narrowing(
            mode=self.mode.value,
            reserve_sec=float(self.reserve.value),
            fraction=float(self.fraction.value),
        )

    def on_change(self, callback: Callable[[PolicyEditor], None]) -> None:
        """Call ``callback(editor)`` after every change of the policy or the narrowing."""
        self._callbacks.append(callback)

    # -- writing -----------------------------------------------------------------
    def set_timeout(self, tool: str, seconds: float) -> None:
        """Move one tool's slider (``"other tools"`` for the default) to ``seconds``."""
        if tool not in self.sliders:
            raise KeyError(
                f"set_timeout: no slider for tool {tool!r}; sliders: {', '.join(self.sliders)}"
            )
        self.sliders[tool].value = _clamp_log(float(seconds))

    def set(
        self,
        policy: Policy | TimeoutPolicy,
        narrowing: Narrowing | None = None,
        *,
        name: str | None = None,
    ) -> None:
        """Show ``policy`` (:meth:`Policy.of` with ``narrowing``) in the controls; callbacks run
        once. Its timeouts must be a :class:`TimeoutPolicy` (sliders edit its table)."""
        spine = Policy.of(policy, narrowing)
        if not isinstance(spine.timeouts, TimeoutPolicy):
            raise PolicyError(
                f"timeouts: the editor edits a TimeoutPolicy's table, not a custom rule "
                f"({type(spine.timeouts).__name__})"
            )
        timeouts: TimeoutPolicy = spine.timeouts
        self._quiet += 1
        try:
            self._base = spine
            self._name = name or spine.name or timeouts.name
            for tool in self.tools:
                self.sliders[tool].value = _clamp_log(timeouts.base_for(None, tool))
            self.sliders[_OTHER].value = _clamp_log(timeouts.default_base_sec())
            narrowing = spine.narrowing
            self.reserve.value = narrowing.reserve_sec
            self.fraction.value = narrowing.fraction
            self.mode.value = narrowing.mode
        finally:
            self._quiet -= 1
        self._show_parameters()
        self._notify()

    def apply_preset(self, name: str) -> None:
        """Load the preset called ``name`` into the controls."""
        if name not in self.presets:
            raise KeyError(f"apply_preset: no preset {name!r}; presets: {', '.join(self.presets)}")
        policy = self.presets[name]
        self._quiet += 1
        try:
            self.preset.value = name
        finally:
            self._quiet -= 1
        self.set(policy, name=name)

    def load(self, path: str | Path) -> None:
        """Read a TOML policy file into the controls (errors are
        :class:`PolicyError` naming the file)."""
        self.set(Policy.load(path))
        self.status.value = f"loaded {html.escape(str(path))}"

    def save(self, path: str | Path) -> None:
        """Write the edited policy as a TOML file :meth:`load` reads back."""
        self.policy.save(path)
        self.status.value = f"saved {html.escape(str(path))}"

    # -- plumbing ---------------------------------------------------------------
    def _file_action(self, action: Callable[[str], None]) -> None:
        try:
            action(self.path.value)
        except (PolicyError, OSError) as exc:
            self.status.value = f"<span style='color:#c44e52'>{html.escape(str(exc))}</span>"

    def _preset_picked(self, change: Any) -> None:
        if not self._quiet:
            self.apply_preset(change["new"])

    def _changed(self, _change: Any) -> None:
        if self._quiet:
            return
        self._name = "edited"
        self._show_parameters()
        self._notify()

    def _show_parameters(self) -> None:
        mode = self.mode.value
        self.reserve.layout.display = None if mode == "reserve" else "none"
        self.fraction.layout.display = None if mode == "fraction" else "none"
        for slider in self.sliders.values():
            slider.disabled = mode == "unbounded"

    def _notify(self) -> None:
        for callback in list(self._callbacks):
            callback(self)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


# -- the explorer ------------------------------------------------------------------------

_SUMMARY_ROWS = (
    ("abandoned_call_rate", "abandoned-call rate", "pct"),
    ("coverage_loss_rate", "coverage-loss rate", "pct"),
    ("wall_p50_sec", "wall p50", "sec"),
    ("wall_p95_sec", "wall p95", "sec"),
    ("wall_p99_sec", "wall p99", "sec"),
    ("max_silence_sec", "longest silence", "sec"),
    ("zombie_sec", "zombie seconds", "sec"),
    ("wedged_zombies", "wedged zombies", "int"),
    ("peak_loose_workers", "peak loose workers", "int"),
    ("deadline_bound_share", "deadline-bound share", "pct"),
)


def _cell(value: float, kind: str) -> str:
    if kind == "pct":
        return f"{100 * value:.2f} %"
    if kind == "int":
        return f"{int(value):,}"
    return f"{value:,.1f} s"


def summary_html(
    summary: Mapping[str, Any],
    baseline: Mapping[str, Any] | None = None,
    *,
    title: str = "edited",
    baseline_title: str = "baseline",
) -> str:
    """The summary as an HTML table (one row per metric), beside ``baseline`` when given."""
    head = f"<th>metric</th><th>{html.escape(title)}</th>"
    if baseline is not None:
        head += f"<th>{html.escape(baseline_title)}</th>"
    rows = []
    for key, label, kind in _SUMMARY_ROWS:
        value = _cell(summary[key], kind)
        cells = f"<td>{label}</td><td class='rl-value' data-metric='{key}'>{value}</td>"
        if baseline is not None:
            cells += f"<td>{_cell(baseline[key], kind)}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return (
        f"<table class='rl-summary'><caption>{summary['episodes']:,} episodes, "
        f"{summary['calls']:,} calls"
        f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


class Explorer:
    """The editor beside live metrics and a per-tool chart of a replay of ``episodes``.

    Lifecycle: built idle with one synchronous :meth:`update`; every editor
    change then starts (or restarts) a ``debounce_sec`` timer whose expiry runs
    :meth:`update` on a worker thread. :attr:`result` is the last replay,
    :attr:`updates` counts finished updates, :attr:`last_update_sec` is the
    wall time the last one took.
    """

    def __init__(
        self,
        episodes: Sequence[Episode],
        *,
        editor: PolicyEditor | None = None,
        engine: str = "vectorized",
        debounce_sec: float = 0.15,
        chart: bool = True,
        **replay_options: Any,
    ) -> None:
        self.episodes = list(episodes)
        if not self.episodes:
            raise ValueError("explore: no episodes to replay")
        self.engine = engine
        self.debounce_sec = float(debounce_sec)
        self.replay_options = replay_options
        tools = sorted({call.tool for episode in self.episodes for call in episode.calls})
        self.editor = editor or PolicyEditor(tools=tools or DEFAULT_TOOLS)
        self._corpus = self._compile()
        self.baseline = self._replay(self.editor.policy).summary
        self.baseline_title = self.editor.name
        self.result: ReplayResult | None = None
        self.updates = 0
        self.last_update_sec = 0.0
        self.metrics = w.HTML()
        self.chart = w.Image(format="png", layout=w.Layout(max_width="640px")) if chart else None
        # A fixed layout: the constrained layout engine would double the redraw time.
        self._figure = Figure(figsize=(6.0, 3.2))
        self._figure.subplots_adjust(left=0.1, right=0.98, bottom=0.1, top=0.9)
        self._rates = LiveRates(self._figure.add_subplot())
        self._lock = threading.Lock()  # guards the timer and the generation
        self._update_lock = (
            threading.RLock()
        )  # one replay-and-redraw at a time (figure() re-enters it)
        self._generation = 0
        self._timer: threading.Timer | None = None
        self._settled = threading.Event()
        self._settled.set()
        self.editor.on_change(lambda _: self.schedule())
        self.widget = w.HBox(
            [self.editor.widget, w.VBox([self.metrics, *([self.chart] if self.chart else [])])]
        )
        self.update()

    def _compile(self) -> Any:
        """The corpus compiled once for the vectorized engine, so each update only evaluates it."""
        if self.engine != "vectorized":
            return None
        from reviewlab.engines.vectorized import compile_corpus

        return compile_corpus(self.episodes, **self.replay_options)

    def _replay(self, policy: Policy) -> ReplayResult:
        if self._corpus is not None:
            return self._corpus.result(policy)
        return replay(self.episodes, policy, engine=self.engine, **self.replay_options)  # type: ignore[arg-type]

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
            result = self._replay(self.editor.policy)
            self.result = result
            self.metrics.value = summary_html(
                result.summary, self.baseline, baseline_title=self.baseline_title
            )
            if self.chart is not None:
                self.chart.value = figure_png(self.figure(result))
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


def explore(episodes: Sequence[Episode], **options: Any) -> Explorer:
    """An :class:`Explorer` over ``episodes`` (options as
    :class:`Explorer`); display it in a notebook."""
    return Explorer(episodes, **options)
