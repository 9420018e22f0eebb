"""What a host's configuration can hold of a policy, and the numbers it gets: the export plan.

A :class:`Target` declares what its format expresses (per tool, per server or one number; a
separate shell bound; its unit; an idle bound; a breaker; the abandonment text). :func:`plan`
reads a :class:`~reviewlab.core._policy.Policy` once and gives the :class:`ExportPlan` every writer
uses: the seconds per tool the host can hold and one line per part of the policy the format
cannot express.

The rule for a number that covers several tools (docs/frameworks.md, "The rule"): the
**maximum** of the policy's timeouts over the tools it covers (``default_sec`` standing for the
tools the policy does not name), rounded **up** to the host's unit, so the host never cuts a
call the policy lets run; the price is that calls the policy would abandon sooner run longer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from reviewlab.core._policy import Policy
from reviewlab.core._presets import SHELL_TOOLS
from reviewlab.core._timeouts import TimeoutPolicy

Granularity = Literal["exact", "per_tool", "per_server", "global"]
"""How finely a format sets tool bounds: reviewlab's own policy, one number per tool, one per
MCP server (every tool of it), or one for every tool."""
ShellBound = Literal["own", "shared", "none"]
"""How a format bounds shell commands: a setting of their own, the tools' setting, or not at all
(the host's built-in bound stays)."""


@dataclass(frozen=True)
class Target:
    """A host whose configuration ``policy export`` writes, and what that format can hold."""

    name: str
    """The preset name (``reviewlab presets``), or ``gateway`` and ``mini-swe-agent``."""
    framework: str
    version: str
    """The release whose configuration format was read."""
    filename: str
    """Where the host reads it (a suggestion for ``-o``)."""
    granularity: Granularity
    shell: ShellBound
    unit_sec: float
    """The host's unit: 0.001 (milliseconds), 1.0 (whole seconds) or 0.0 (any float)."""
    idle: bool = False
    breaker: bool = False
    abandon_text: bool = False
    """Whether the text the model reads at a timeout can be reviewlab's."""
    shell_only: bool = False
    """Every tool of this host is a shell command (one number covers them all)."""
    notes: tuple[str, ...] = ()
    """Format limits beyond the declared ones, one line each."""


@dataclass(frozen=True)
class ExportPlan:
    """The numbers a target's configuration gets from one policy, and what it loses."""

    target: Target
    policy: Policy
    tools_sec: Mapping[str, float]
    """Per named tool (per-tool targets); each already rounded to the host's unit."""
    other_sec: float
    """The bound of every tool the configuration cannot name (a server's, or the global one)."""
    shell_sec: float | None
    """The bound of shell commands (``other_sec`` where they share it; ``None``: not settable)."""
    cannot: list[str] = field(default_factory=list)
    """What the format cannot express and the setting chosen instead, one line each."""


def rounded_up(seconds: float, unit: float) -> float:
    """``seconds`` rounded up to a whole number of ``unit`` (``0``: unchanged)."""
    if unit <= 0:
        return seconds
    steps = math.ceil(round(seconds / unit, 9))
    return max(1, steps) * unit if unit >= 1 else round(max(1, steps) * unit, 6)


def plan(policy: Policy, target: Target) -> ExportPlan:
    """The export plan of ``policy`` for ``target`` (see the module docstring for the rule)."""
    timeouts = policy.timeouts
    if not isinstance(timeouts, TimeoutPolicy):
        raise ValueError(
            f"policy export: the policy's timeouts are a custom rule "
            f"({type(timeouts).__name__}); only a TimeoutPolicy has numbers a host can hold"
        )
    named = sorted(set(timeouts.tools_sec) | set(policy.idle_sec))
    each = {tool: timeouts.timeout_for(None, tool) for tool in named}
    default = timeouts.timeout_for(None, "\x00any other tool")
    shells = {tool: sec for tool, sec in each.items() if tool in SHELL_TOOLS}
    others = {tool: sec for tool, sec in each.items() if tool not in SHELL_TOOLS}
    unit = target.unit_sec
    cannot: list[str] = []
    if target.granularity == "exact":
        return ExportPlan(target, policy, each, default, max(shells.values(), default=default))
    if target.shell_only:
        number = rounded_up(max([default, *each.values()]), unit)
        if len(set(each.values()) | {default}) > 1:
            chosen = f"one number for every command, the maximum: {number:g} s"
            cannot.append(_lost("per-tool timeouts", chosen))
        return _finish(ExportPlan(target, policy, {}, number, number, cannot))
    if target.granularity == "per_tool":
        tools_sec = {tool: rounded_up(sec, unit) for tool, sec in each.items()}
        other_sec = rounded_up(default, unit)
        own = rounded_up(max(shells.values(), default=default), unit)
        return _finish(ExportPlan(target, policy, tools_sec, other_sec, own, cannot))
    pool = [default, *(each if target.shell == "shared" else others).values()]
    other_sec = rounded_up(max(pool), unit)
    scope = "one per MCP server" if target.granularity == "per_server" else "one for all tools"
    if len(set(pool)) > 1:
        chosen = f"{scope}, the maximum of the tools' timeouts: {other_sec:g} s"
        cannot.append(_lost("per-tool timeouts", chosen))
    shell_sec: float | None = {
        "own": rounded_up(max(shells.values(), default=default), unit),
        "shared": other_sec,
        "none": None,
    }[target.shell]
    return _finish(ExportPlan(target, policy, {}, other_sec, shell_sec, cannot))


def _finish(result: ExportPlan) -> ExportPlan:
    """Add the lines every non-exact target shares: narrowing, idle, breaker, text, hedges."""
    policy, target, cannot = result.policy, result.target, result.cannot
    timeouts = policy.timeouts
    assert isinstance(timeouts, TimeoutPolicy)
    if policy.narrowing.mode != "none":
        cannot.append(_lost("narrowing by the inherited deadline", "no deadline is inherited"))
    if timeouts.override_tools:
        cannot.append(
            _lost(
                f"argument overrides of {', '.join(timeouts.override_tools)}",
                "the tool's own bound whatever the call asks",
            )
        )
    if timeouts.clamp_tools:
        cannot.append(_lost("the deadline clamp list", "no clamp"))
    if policy.idle_sec and not target.idle:
        cannot.append(_lost("idle timeouts", "the hard bound alone"))
    breaker = policy.breaker
    if breaker is not None and (not target.breaker or breaker.window is not None):
        cannot.append(_lost("the breaker", "no breaker"))
    elif breaker is not None:
        cannot.append(
            _lost("the breaker's cool-down", f"the run exits after {breaker.consecutive} in a row")
        )
    if policy.hedges:
        cannot.append(_lost("hedges", "no second attempt"))
    if not target.abandon_text:
        cannot.append(_lost("the TOOL_TIMEOUT abandonment text", "the host's own timeout error"))
    cannot.extend(target.notes)
    return result


def _lost(what: str, instead: str) -> str:
    return f"cannot express {what}; instead: {instead}"
