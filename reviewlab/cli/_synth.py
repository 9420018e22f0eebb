"""``reviewlab synth``: a synthetic corpus (or the wedged-query_code incident day) written to a
file."""

from __future__ import annotations

import argparse

from reviewlab.cli._args import JSONL_SUFFIXES, echo, output_path, seed
from reviewlab.cli._checks import refuse_ignored
from reviewlab.cli._command import Command
from reviewlab.cli._errors import UserError


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-n", type=int, default=None, help="episodes (default 1000; not with --incident)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--incident",
        action="store_true",
        help="write the incident day instead: a six-slot pool whose reviewer-3 wedges on "
        "query_code for 26,160 s",
    )
    p.add_argument(
        "--arg-effect",
        type=float,
        default=None,
        metavar="E",
        help="how strongly a call's arguments set its duration (a read lasts (lines/120)**E "
        "times its draw; default 0: not at all; not with --incident)",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl[.gz]|OUT.parquet")


def cmd_synth(args: argparse.Namespace) -> int:
    """Write ``-n`` synthetic episodes (or the incident day) to ``-o``."""
    out = output_path(args.output, (*JSONL_SUFFIXES, ".parquet"))
    seed(args.seed)
    why = "--incident writes the incident day, whose size and durations are fixed"
    refuse_ignored(
        [
            ("-n", args.n is not None, not args.incident, why),
            ("--arg-effect", args.arg_effect is not None, not args.incident, why),
        ]
    )
    n = 1000 if args.n is None else args.n
    arg_effect = 0.0 if args.arg_effect is None else args.arg_effect
    if args.incident:
        from reviewlab.recording.synth import write_incident

        written = write_incident(out, seed=args.seed)
        echo(f"wrote the incident day ({written} episodes, one wedged query_code) to {out}")
        return 0
    if n < 1:
        raise UserError(f"-n: expected at least 1 episode, got {n:,}")
    from reviewlab.recording.synth import SynthSizeError, SynthSpec, check_size, write_synthetic

    try:
        check_size(n)  # before anything is drawn or written
    except SynthSizeError as exc:
        raise UserError(f"-n: {exc}") from None
    try:
        SynthSpec(arg_effect=arg_effect)
    except ValueError as exc:
        raise UserError(f"--arg-effect: {exc}") from None
    written = write_synthetic(out, n, seed=args.seed, arg_effect=arg_effect)
    echo(f"wrote {written} episode(s) to {out}")
    return 0


SYNTH = Command(
    name="synth",
    help="write a synthetic corpus (or the wedged-query_code incident)",
    arguments=_arguments,
    handler=cmd_synth,
    examples="  reviewlab synth -n 1000 --seed 0 -o corpus.jsonl.gz\n"
    "  reviewlab synth -n 100000 -o corpus.parquet\n"
    "  reviewlab synth --incident -o incident.jsonl\n"
    "  reviewlab synth -n 2000 --arg-effect 1 -o sized.jsonl.gz",
)
