"""A policy written as the configuration of the host that runs the agent (``policy export``).

Lifecycle: :func:`export_policy` ``(policy, target)`` → a
:class:`~reviewlab.analysis.export._plan.ExportPlan` (what the format holds, by the target's
declaration, and what it cannot express) → the target's writer → an :class:`Export` (the text,
where the host reads it, and the lines lost). :func:`host_policy` is the same plan read back as
a reviewlab :class:`~reviewlab.core._policy.Policy`, so a replay shows what the host's limits cost
(``reviewlab presets score CORPUS --export TARGET``). The targets, their formats and the rule
for a number that covers several tools: docs/frameworks.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewlab.analysis.export._plan import ExportPlan, Target, plan
from reviewlab.analysis.export._targets import TARGETS
from reviewlab.core._narrowing import Narrowing
from reviewlab.core._policy import Policy
from reviewlab.core._presets import SHELL_TOOLS, find_preset
from reviewlab.core._timeouts import TimeoutPolicy

__all__ = ["EXPORT_TARGETS", "Export", "Target", "export_policy", "host_policy", "target_of"]

EXPORT_TARGETS = tuple(TARGETS)
"""The target names ``policy export --to`` takes."""


@dataclass(frozen=True)
class Export:
    """A policy as one host's configuration."""

    target: Target
    text: str
    """The configuration file's text."""
    cannot: tuple[str, ...]
    """What the format cannot express and the setting chosen instead, one line each."""
    plan: ExportPlan


def target_of(name: str) -> Target:
    """The target called ``name``; else a ``ValueError`` listing the targets."""
    if name not in TARGETS:
        raise ValueError(f"unknown export target {name!r}; targets: {', '.join(EXPORT_TARGETS)}")
    return TARGETS[name][0]


def export_policy(
    policy: Policy | TimeoutPolicy, target: str, *, servers: tuple[str, ...] = ("tools",)
) -> Export:
    """``policy`` as ``target``'s configuration; per-server formats get ``servers`` entries."""
    declared = target_of(target)
    if not servers:
        raise ValueError("policy export: servers must name at least one MCP server")
    steps = plan(Policy.of(policy), declared)
    text = TARGETS[target][1](steps, servers)
    return Export(declared, text, tuple(steps.cannot), steps)


def host_policy(policy: Policy | TimeoutPolicy, target: str) -> Policy:
    """What ``target`` would enforce of ``policy``, as a policy a replay runs.

    The host's numbers bound the tools they cover, with no narrowing, idle bound or hedges; a
    breaker only where the host has one. Shell commands the format cannot bound keep the host's
    own bound (its preset's) or, with none known, the policy's.
    """
    steps = plan(Policy.of(policy), target_of(target))
    if steps.target.granularity == "exact":
        return steps.policy
    shell = steps.shell_sec if steps.shell_sec is not None else _host_shell(target, steps)
    tools = dict(steps.tools_sec)
    for tool in SHELL_TOOLS:
        tools.setdefault(tool, shell)
    timeouts = TimeoutPolicy(default_sec=steps.other_sec, tools_sec=tools, name=f"{target}")
    breaker = steps.policy.breaker if steps.target.breaker else None
    if breaker is not None and breaker.window is not None:
        breaker = None
    label = f"{steps.policy.label} as {target}"
    return Policy(timeouts=timeouts, narrowing=Narrowing(mode="none"), breaker=breaker, name=label)


def _host_shell(target: str, steps: ExportPlan) -> float:
    """The host's own shell bound (its preset's hard one), else the policy's shell number."""
    try:
        preset = find_preset(target)
    except ValueError:
        return steps.other_sec
    own = preset.shell_sec if preset.shell_sec is not None else preset.tool_sec
    return float(own) if own is not None else steps.other_sec
