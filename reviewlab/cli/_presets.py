"""``reviewlab presets``: other frameworks' timeout defaults, and what they would cost here.

``reviewlab presets`` lists the presets (:func:`~reviewlab.analysis._presets.preset_table`):
bounds, expiry, retries, breaker, version and source, unverified values marked.
``reviewlab presets score CORPUS`` replays every preset, ouroboros and the corpus's own
recommendation (:func:`~reviewlab.analysis._tune.recommend` with its defaults, tuned on a seeded
part of the episodes) on the held-out rest and prints
:func:`~reviewlab.analysis._presets.score_presets`' table with its assumptions.
"""

from __future__ import annotations

import argparse
import math

from reviewlab.cli._args import (
    CORPUS_HELP,
    EXAMPLE_CORPUS,
    TABLE_SUFFIXES,
    censored_option,
    echo,
    on_error_option,
    output_path,
    policy_arg,
    seed,
)
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, report_skipped, require_episodes
from reviewlab.cli._json import JSON_SUFFIX, document, emit, is_json, json_option
from reviewlab.cli._library import given, library_option

_LIST_COLUMNS = (
    "preset",
    "framework",
    "tool_sec",
    "shell_sec",
    "idle_sec",
    "total_cap_sec",
    "on_expiry",
    "server",
    "retries",
    "breaker",
    "version",
    "verified",
)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--preset",
        action="append",
        default=[],
        metavar="NAME",
        help="only these presets (repeatable); listed with every field",
    )
    json_option(p)
    actions = p.add_subparsers(dest="presets_action", metavar="ACTION", parser_class=type(p))
    score = actions.add_parser(
        "score",
        help="replay every preset (and ouroboros and the recommendation) on a corpus",
        description="replay every preset (and ouroboros and the recommendation) on a corpus",
    )
    score.add_argument("corpus", help=CORPUS_HELP)
    on_error_option(score)
    censored_option(score)
    score.add_argument("--seed", type=int, default=None, help="seed of --censored impute")
    score.add_argument(
        "--no-recommend",
        action="store_true",
        help="leave out the corpus's own recommendation (it is tuned first otherwise)",
    )
    library_option(
        score,
        "--held-out",
        target="reviewlab.analysis._holdout:split_episodes",
        type=float,
        metavar="SHARE",
        help="the share of episodes every policy is scored on; the recommendation is tuned on "
        "the rest, so it is not scored on the data it was chosen on (default "
        "%(library_default)s)",
    )
    score.add_argument(
        "--preset",
        dest="score_preset",
        action="append",
        default=[],
        metavar="NAME",
        help="only these presets (repeatable)",
    )
    json_option(score)
    score.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="CSV|PARQUET|JSON",
        help="write the score table (.json: the --json document)",
    )
    score.add_argument(
        "--policy",
        default=None,
        metavar="POLICY",
        help="a policy of yours (POLICY.toml, ouroboros, uniform:SEC) replayed beside them",
    )
    score.add_argument(
        "--export",
        action="append",
        default=[],
        metavar="TARGET",
        help="also replay each reviewlab policy as TARGET's configuration holds it "
        "(reviewlab policy export; repeatable)",
    )


def cmd_presets(args: argparse.Namespace) -> int:
    """List the presets, or score them on a corpus."""
    from reviewlab.analysis._presets import load_presets, preset_table
    from reviewlab.core._presets import find_preset
    from reviewlab.ui._tables import as_table

    presets = load_presets()
    names = args.preset + getattr(args, "score_preset", [])
    if names:
        presets = {name: find_preset(name, presets) for name in names}
    if args.presets_action != "score":
        table = preset_table(presets)
        if args.json:
            emit(
                document(
                    "presets",
                    assumptions=_LISTED,
                    summary={
                        "presets": len(presets),
                        "unverified": sum(not p.verified for p in presets.values()),
                    },
                    tables={"presets": _preset_rows(presets)},
                    units=dict.fromkeys(("presets", "unverified", "breaker_consecutive"), "count"),
                ),
                stdout=True,
            )
            return 0
        if args.preset:  # every field of the chosen presets
            for row in table.to_dict("records"):
                echo("\n".join(f"{key}: {value}" for key, value in row.items()) + "\n")
            return 0
        unverified = [p.name for p in presets.values() if not p.verified]
        notes = [
            f"{len(presets)} presets; none: no bound. Unverified (from documentation, not read "
            f"in code): {', '.join(unverified) or 'none'}. Sources: reviewlab presets --preset NAME"
        ]
        echo(
            as_table(
                table[list(_LIST_COLUMNS)],
                notes=notes,
                assumptions=_LISTED,
            ).text()
        )
        return 0
    return _score(args, presets)


def _preset_rows(presets: dict) -> list[dict]:
    """The presets as numbers: a bound a preset does not set is ``inf`` (no bound), a shell
    bound it does not set is its tool bound, no breaker is ``None``."""
    import dataclasses

    table = []
    for preset in presets.values():
        row = dataclasses.asdict(preset)
        if row["shell_sec"] is None:
            row["shell_sec"] = row["tool_sec"]
        for key in ("tool_sec", "shell_sec", "idle_sec", "total_cap_sec", "episode_cap_sec"):
            row[key] = math.inf if row[key] is None else row[key]
        table.append(row)
    return table


_LISTED = "each framework's documented defaults at the version named; nothing replayed"


def _as_hosts(policies: dict, targets: list[str]) -> dict:
    """Each policy as each target's configuration would hold it (``NAME as TARGET``)."""
    from reviewlab.analysis.export import host_policy, target_of

    for target in targets:
        target_of(target)  # an unknown target is refused before anything is replayed
    return {
        f"{name} as {target}": host_policy(policy, target)
        for target in targets
        for name, policy in policies.items()
    }


def _score(args: argparse.Namespace, presets: dict) -> int:
    from reviewlab.analysis._presets import score_presets
    from reviewlab.cli._checks import refuse_ignored
    from reviewlab.core._policy import Policy
    from reviewlab.ui._report import write_table
    from reviewlab.ui._tables import as_table

    out = output_path(args.output, (*TABLE_SUFFIXES, JSON_SUFFIX)) if args.output else None
    chosen_seed = seed(args.seed)
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
    from reviewlab.analysis._holdout import check_held_out

    if args.held_out is not None:  # before any work; its ParameterError names --held-out
        check_held_out(args.held_out)
    corpus = open_for(args.corpus, args.on_error)
    require_episodes(corpus, args.corpus)
    extra: dict[str, Policy] = {"reviewlab ouroboros": Policy.ouroboros()}
    scored = corpus
    held_note = ""
    with computing_on(args.corpus):
        if not args.no_recommend:
            from reviewlab.analysis._holdout import split_episodes
            from reviewlab.analysis._tune import recommend
            from reviewlab.engines._corpus import open_corpus

            why = "presets score: the recommendation is tuned on one part, scored on the other"
            episodes = corpus.episodes(reason=why)
            chosen_on, reported_on = split_episodes(episodes, **given(args, "held_out"))
            recommendation = recommend(chosen_on, censored=args.censored)
            extra["reviewlab recommended"] = recommendation.policy
            scored = open_corpus(reported_on)
            held_note = (
                f"held out: every policy is scored on {len(reported_on)} of {len(episodes)} "
                f"episodes; the recommendation was tuned on the other {len(chosen_on)} "
                "(--held-out; seed 0)"
            )
        if args.policy is not None:
            extra[f"your {args.policy}"] = policy_arg(args.policy, "--policy")
        extra.update(_as_hosts(extra, args.export))
        frame = score_presets(
            scored,
            presets=presets,
            extra=extra,
            censored=args.censored,
            seed=chosen_seed or 0,
        )
    report_skipped(corpus, args.corpus)
    shown = frame.drop(columns=["policy", "framework"])
    notes = [
        "completed_abandoned: calls that completed in the recording and the preset abandons; "
        "wasted_slot_sec: seconds spent waiting on calls then abandoned; zombie_sec: loose "
        "worker seconds"
    ]
    if held_note:
        notes.append(held_note)
    if not args.json:
        echo(as_table(shown, notes=notes, assumptions=frame.attrs["assumptions"]).text())
    if out is not None and not is_json(out):
        write_table(frame, out)
        if not args.json:  # with --json, stdout holds the document alone
            echo(f"wrote the score table to {out}")
    if args.json or is_json(out):
        doc = document(
            "presets score",
            assumptions=frame.attrs["assumptions"],
            summary={"policies": len(frame), "episodes_scored": len(scored)},
            units={"policies": "count", "episodes_scored": "count"},
            tables={"scores": frame},
            notes=notes,
        )
        emit(doc, stdout=args.json, out=out)
    return 0


PRESETS = Command(
    name="presets",
    help="other frameworks' timeout defaults (list), and each replayed on a corpus (score)",
    arguments=_arguments,
    handler=cmd_presets,
    examples="  reviewlab presets\n"
    "  reviewlab presets --preset swe-agent\n"
    f"  reviewlab presets score {EXAMPLE_CORPUS}\n"
    f"  reviewlab presets score {EXAMPLE_CORPUS} --censored observed -o presets.csv\n"
    f"  reviewlab presets score {EXAMPLE_CORPUS} --policy uniform:30 --export codex-cli --json",
)
