"""``reviewlab policy export POLICY --to TARGET``: a policy as the configuration of its host.

The export itself is :func:`reviewlab.analysis.export.export_policy`; this module reads the
arguments, writes the text (to ``-o`` atomically, else to stdout) and prints what the target's
format cannot express, one line each (to stderr when the text goes to stdout, so it pipes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewlab.cli._args import EXAMPLE_CORPUS, echo, policy_arg
from reviewlab.cli._command import Command
from reviewlab.cli._errors import UserError


def _arguments(p: argparse.ArgumentParser) -> None:
    from reviewlab.analysis.export import EXPORT_TARGETS

    actions = p.add_subparsers(dest="policy_action", metavar="ACTION", parser_class=type(p))
    export = actions.add_parser(
        "export",
        help="write the policy as a host's configuration, and say what that format cannot hold",
        description="write the policy as a host's configuration, and say what that format "
        "cannot hold (docs/frameworks.md)",
    )
    export.add_argument("policy", help="POLICY.toml, or ouroboros | uniform:SEC | PRESET")
    export.add_argument("--to", required=True, choices=EXPORT_TARGETS, metavar="TARGET",
                        help=f"the host: {', '.join(EXPORT_TARGETS)}")  # fmt: skip
    export.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME",
        help="an MCP server the per-server settings go under (repeatable; default: tools)",
    )
    export.add_argument("-o", "--output", default=None, metavar="FILE", help="write it here")


def cmd_policy(args: argparse.Namespace) -> int:
    """Export the policy; print the lines its target cannot express."""
    from reviewlab.analysis.export import export_policy
    from reviewlab.core._atomic import write_text_atomic

    if args.policy_action != "export":
        raise UserError("policy: name an action: reviewlab policy export POLICY --to TARGET")
    policy = policy_arg(args.policy, "POLICY")
    result = export_policy(policy, args.to, servers=tuple(args.server) or ("tools",))
    if args.output is None:
        sys.stdout.write(result.text)
        for line in result.cannot:
            sys.stderr.write(f"{args.to}: {line}\n")
        return 0
    out = Path(args.output)
    if out.is_dir() or (out.parent != Path("") and not out.parent.is_dir()):
        raise UserError(f"-o {args.output}: expected a file in a folder that exists")
    write_text_atomic(out, result.text)
    echo(f"wrote {policy.label!r} as {result.target.framework} configuration to {out}")
    for line in result.cannot:
        echo(f"{args.to}: {line}")
    return 0


POLICY = Command(
    name="policy",
    help="a policy as another host's configuration (export), with what it cannot express",
    arguments=_arguments,
    handler=cmd_policy,
    examples=f"  reviewlab tune {EXAMPLE_CORPUS} -o tuned.toml\n"
    "  reviewlab policy export tuned.toml --to codex-cli --server files\n"
    "  reviewlab policy export tuned.toml --to mini-swe-agent -o mini.yaml\n"
    "  reviewlab policy export tuned.toml --to gateway -o policy.toml",
)
