"""What the user typed that the library cannot judge: tool names, and options an invocation
would ignore.

* A tool name typed anywhere is checked against the tools that exist, with the one
  did-you-mean (:mod:`reviewlab.ui._tool_names`): a ``--tool`` or ``--hedge`` the corpus never
  calls is an error (``--allow-unknown-tools`` sweeps it anyway); a policy *file* naming an
  unknown tool is a warning on stderr naming it and the closest known tools, an error with
  ``--strict``.
* An option the invocation would ignore (``synth --incident -n 5``, ``sweep --hedge-share``
  without ``--hedge``, ``--seed`` where nothing is drawn) is an error naming it, never
  silently dropped: :func:`refuse_ignored`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from reviewlab.cli._errors import PROG, UserError, one_line


def strict_option(p: argparse.ArgumentParser) -> None:
    """Add ``--strict``: an unknown tool in a policy file is an error, not a warning."""
    p.add_argument(
        "--strict",
        action="store_true",
        help="a policy file naming a tool that neither the corpus calls nor reviewlab knows is "
        "an error (default: a warning on stderr with the closest known names)",
    )


def is_preset(spec: str | None) -> bool:
    """Whether a ``--policy`` value names a preset (``ouroboros``, ``unbounded``, ``uniform:SEC``)
    rather than a file the user wrote."""
    return (
        spec is None
        or spec in ("ouroboros", "unbounded", "pre-fix", "prefix")
        or (spec.startswith("uniform:"))
    )


def check_policy_file(
    spec: str | None,
    policy: Any,
    corpus_tools: Iterable[str] = (),
    *,
    strict: bool = False,
    flag: str = "--policy",
) -> None:
    """Warn (or, ``strict``, refuse) when the policy file ``spec`` names a tool that neither the
    corpus calls nor reviewlab knows."""
    if is_preset(spec):
        return
    from reviewlab.ui._tool_names import unknown_policy_tools, unknown_tools_text

    unknown = unknown_policy_tools(policy, corpus_tools)
    if not unknown:
        return
    text = unknown_tools_text(f"{flag} {spec}", unknown)
    if strict:
        raise UserError(text)
    sys.stderr.write(f"{PROG}: warning: {text} (--strict makes this an error)\n")


def check_typed_tools(option: str, tools: Iterable[str], corpus_tools: Iterable[str]) -> None:
    """Refuse a tool an option names that the corpus never calls (did you mean …)."""
    from reviewlab.analysis._known_tools import check_tools

    try:
        check_tools(list(tools), corpus_tools, what=option, override="--allow-unknown-tools")
    except ValueError as exc:
        raise UserError(one_line(exc)) from None


def refuse_ignored(rules: Sequence[tuple[str, bool, bool, str]]) -> None:
    """Each rule is ``(option, given, used, why)``: an option given that this invocation would
    not use is an error naming it and why."""
    for option, given, used, why in rules:
        if given and not used:
            raise UserError(f"{option}: {why}; this invocation would ignore it")
