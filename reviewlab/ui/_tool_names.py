"""Tool names a person typed — in a policy file, a ``--hedge``, a widget — checked against the
tools that exist, with the one did-you-mean (:func:`reviewlab.analysis._known_tools.closest`).

A tool is *known* when the corpus calls it, when reviewlab's kinds table names it
(:data:`~reviewlab.core._kinds.DEFAULT_TOOL_KINDS`: the bundled registry, the reference
system's tools, the importers' names), when the ouroboros preset names it, or when the
policy itself declares its kind (``[kinds]``). A policy file naming any other tool is
probably a typo (``raed_file = 5`` would bound nothing): :func:`unknown_policy_tools` finds
each such name, where the file names it and the closest known names;
:func:`unknown_tools_text` says it in one line (the CLI's warning, an error with
``--strict``, the editor's status line).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reviewlab.analysis._known_tools import closest
from reviewlab.core._kinds import DEFAULT_TOOL_KINDS
from reviewlab.core._policy import Policy, TimeoutPolicy


@dataclass(frozen=True)
class UnknownTool:
    """A tool name no known tool matches: the name, where it was typed, the closest known ones."""

    tool: str
    where: str
    close: tuple[str, ...]

    def text(self) -> str:
        """``raed_file (in [policy] tools_sec; did you mean read_file?)``."""
        hint = f"; did you mean {' or '.join(self.close)}?" if self.close else ""
        return f"{self.tool} (in {self.where}{hint})"


def _preset_tools() -> set[str]:
    reference = TimeoutPolicy.ouroboros()
    return {*reference.tools_sec, *reference.override_tools, *reference.clamp_tools}


def known_tools(corpus_tools: Iterable[str] = (), policy: Policy | None = None) -> set[str]:
    """Every tool name that exists for this check (see the module docstring)."""
    known = {*corpus_tools, *DEFAULT_TOOL_KINDS, *_preset_tools()}
    if policy is not None:
        known |= set(policy.tool_kinds)
    return known


def policy_tools(policy: Policy) -> dict[str, list[str]]:
    """``tool → where the policy names it`` (``[policy] tools_sec``, ``[idle]``, ``[hedges]``,
    ``[policy] clamp_tools`` …), in the policy file's terms."""
    found: dict[str, list[str]] = {}

    def add(tools: Iterable[str], where: str) -> None:
        for tool in tools:
            found.setdefault(tool, []).append(where)

    timeouts: Any = policy.timeouts
    if isinstance(timeouts, TimeoutPolicy):
        add(timeouts.tools_sec, "[policy] tools_sec")
        add(timeouts.override_tools, "[policy] override_tools")
        add(timeouts.clamp_tools, "[policy] clamp_tools")
    add(policy.idle_sec, "[idle]")
    add(policy.hedges, "[hedges]")
    add(policy.idempotent_tools, "[policy] idempotent_tools")
    return found


def unknown_policy_tools(policy: Policy, corpus_tools: Iterable[str] = ()) -> list[UnknownTool]:
    """The tools ``policy`` names that neither the corpus nor reviewlab knows, sorted."""
    known = known_tools(corpus_tools, policy)
    return [
        UnknownTool(tool, ", ".join(where), tuple(closest(tool, known)))
        for tool, where in sorted(policy_tools(policy).items())
        if tool not in known
    ]


def unknown_tools_text(source: str, unknown: Iterable[UnknownTool]) -> str:
    """One line naming every unknown tool of ``source`` (a file, an option) and its closest
    known names."""
    names = "; ".join(u.text() for u in unknown)
    return (
        f"{source}: names a tool that neither the corpus calls nor reviewlab knows, so its "
        f"setting bounds nothing: {names}"
    )
