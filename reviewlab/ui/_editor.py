"""The policy editor (ipywidgets): :class:`PolicyEditor` edits one
:class:`~reviewlab.core._policy.Policy`.

A log-scale slider per tool, the narrowing mode and its parameter, presets, and TOML load and
save (:meth:`~reviewlab.core._policy.Policy.load`, :meth:`~reviewlab.core._policy.Policy.save`).
:attr:`~PolicyEditor.policy` is always a valid, frozen ``Policy`` built from the controls;
callbacks registered with :meth:`~PolicyEditor.on_change` run once per user change.

Invariants: slider timeouts keep three significant figures; the editor's policy has no floor
(a preset's floor is folded into the slider values, so every tool resolves as under the preset
until a slider moves); a tool name typed or loaded is checked with the one did-you-mean
(:mod:`reviewlab.ui._tool_names`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w

from reviewlab.core._policy import PRE_FIX_LABEL, Narrowing, Policy, PolicyError, TimeoutPolicy
from reviewlab.core._vocab import NARROWING_MODES

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
    """The presets every editor offers, read from the one registry (:meth:`Policy.parse`): the
    reference policy, uniform bounds and the pre-fix behaviour."""
    specs = {
        "ouroboros": "ouroboros",
        "uniform 30 s": "uniform:30",
        "uniform 120 s": "uniform:120",
        "uniform 600 s": "uniform:600",
        PRE_FIX_LABEL: "unbounded",
    }
    return {name: Policy.parse(spec) for name, spec in specs.items()}


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
            from reviewlab.analysis._known_tools import closest

            close = closest(tool, self.sliders)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise KeyError(
                f"set_timeout: no slider for tool {tool!r}{hint} sliders: {', '.join(self.sliders)}"
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
                "timeouts",
                "the editor edits a TimeoutPolicy's table, not a custom rule "
                f"({type(spine.timeouts).__name__})",
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
        from reviewlab.ui._tool_names import unknown_policy_tools, unknown_tools_text

        policy = Policy.load(path)
        self.set(policy)
        unknown = unknown_policy_tools(policy, self.tools)
        self.status.value = f"loaded {html.escape(str(path))}" + (
            f"<br><span style='color:#c44e52'>warning: "
            f"{html.escape(unknown_tools_text(str(path), unknown))}</span>"
            if unknown
            else ""
        )

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
