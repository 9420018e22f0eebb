"""``reviewlab incident``: the longest silences of a corpus, and what candidate policies bound
them to.

The handler calls :func:`~reviewlab.analysis._incident.longest_silences` on the opened corpus with
the candidates ``--policy`` names (default: the pre-fix behaviour and ``ouroboros``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reviewlab.cli._args import (
    CORPUS_HELP,
    POLICY_HELP,
    censored_option,
    echo,
    policy_arg,
)
from reviewlab.cli._checks import check_policy_file, refuse_ignored, strict_option
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, require_episodes
from reviewlab.cli._json import document, emit, json_option
from reviewlab.cli._library import given, library_option


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help=CORPUS_HELP)
    library_option(
        p,
        "--top",
        target="reviewlab.analysis._incident:longest_silences",
        type=int,
        help="silences to show (default %(library_default)s)",
    )
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="TOML",
        help="a candidate policy (repeatable; default: the pre-fix behaviour and ouroboros); "
        + POLICY_HELP,
    )
    censored_option(p)
    p.add_argument("--seed", type=int, default=None, help="seed of --censored impute (default 0)")
    strict_option(p)
    json_option(p)


def _candidate_name(spec: str, policy: Any) -> str:
    """How the incident table names a ``--policy`` candidate: a preset by its spelling, a file
    by its policy's name (else the file's stem); the pre-fix behaviour by its label."""
    from reviewlab.core._policy import PRE_FIX_LABEL

    if policy.narrowing.mode == "unbounded":
        return PRE_FIX_LABEL
    if spec == "ouroboros" or spec.startswith("uniform:"):
        return spec
    return str(policy.name or Path(spec).stem)


def cmd_incident(args: argparse.Namespace) -> int:
    """Print the ``--top`` longest silences, each with the bounds of every candidate policy."""
    refuse_ignored(
        [
            (
                "--seed",
                args.seed is not None,
                args.censored == "impute",
                "only --censored impute draws",
            )
        ]
    )
    candidates: dict[str, Any] | None = None
    typed: list[tuple[str, Any]] = []
    if args.policy:
        candidates = {}
        for spec in args.policy:
            policy = policy_arg(spec)
            typed.append((spec, policy))
            name = _candidate_name(spec, policy)
            candidates[spec if name in candidates else name] = policy
    corpus = open_for(args.corpus)
    require_episodes(corpus, args.corpus)
    for spec, policy in typed:
        check_policy_file(spec, policy, corpus.tools, strict=args.strict)
    from reviewlab.analysis._incident import longest_silences
    from reviewlab.ui._answers import incident_text

    options = given(args, "seed", "top")
    with computing_on(args.corpus):
        silences = longest_silences(corpus, candidates, censored=args.censored, **options)
    if args.json:
        emit(_document(silences), stdout=True)
    else:
        echo(incident_text(silences))
    return 0


def _document(silences: Any) -> dict[str, Any]:
    """The ``--json`` document: the longest silences, each with every candidate's bound
    (``completed`` false: the silence was still running when the recording stopped)."""
    from reviewlab.ui._numbers import SILENCE

    longest = silences["silence_sec"].max() if len(silences) else None
    return document(
        "incident",
        assumptions=dict(silences.attrs.get("assumptions", {})),
        summary={
            "episodes": silences.attrs.get("episodes"),
            "silences": len(silences),
            "longest_silence_sec": longest,
        },
        tables={"silences": silences},
        units={"silences": "count"},
        notes=[
            SILENCE,
            "bounded_sec.POLICY: that round replayed under POLICY; a silence with completed "
            "false was still running when the recording stopped (at least silence_sec)",
        ],
    )


INCIDENT = Command(
    name="incident",
    help="find the longest silences of a recorded corpus: slot, episode, round, tool, arguments, "
    "clock time, and what each candidate policy bounds them to",
    arguments=_arguments,
    handler=cmd_incident,
    examples="  reviewlab incident bundled:incident\n"
    "  reviewlab incident bundled:incident --top 10 --policy ouroboros --policy uniform:60 --json",
)
