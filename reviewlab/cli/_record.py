"""``reviewlab record``: one live review episode against an OpenAI-compatible endpoint, recorded.

The episode is recorded into a scratch file and the recording at ``-o`` changes only once the
run succeeded (``--append`` adds it, ``--force`` replaces it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from reviewlab.cli._args import JSONL_SUFFIXES, POLICY_HELP, echo, output_path, policy_arg
from reviewlab.cli._checks import check_policy_file, strict_option
from reviewlab.cli._command import Command
from reviewlab.cli._errors import PROG, UserError, one_line


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url", required=True, metavar="URL", help="endpoint, e.g. http://localhost:8000/v1"
    )
    p.add_argument("--model", required=True, metavar="NAME", help="model name sent to the endpoint")
    p.add_argument(
        "--root", required=True, metavar="REPO", help="the workspace the reviewer may read"
    )
    p.add_argument("--task", required=True, metavar="TEXT", help="the review task")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--policy", default=None, metavar="TOML", help=POLICY_HELP)
    strict_option(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl", help="recording to write")
    p.add_argument(
        "--append", action="store_true", help="add the episode to an existing recording at -o"
    )
    p.add_argument(
        "--force", action="store_true", help="replace an existing non-empty recording at -o"
    )
    p.add_argument(
        "--mcp",
        default=None,
        metavar="COMMAND|URL",
        help="give the reviewer the tools of this MCP server, started over stdio in --root "
        '(e.g. "npx @modelcontextprotocol/server-filesystem .") or reached over Streamable HTTP '
        "(an http:// or https:// URL); recorded as reviewlab.episode/2",
    )


def cmd_record(args: argparse.Namespace) -> int:
    """Record one episode; print its receipts and end reason; exit 1 when the model failed."""
    root = Path(args.root)
    if not root.is_dir():
        raise UserError(f"--root {args.root}: no such directory")
    out = output_path(args.output, JSONL_SUFFIXES)
    if args.append and args.force:
        raise UserError("--append and --force: pass one (add to the recording, or replace it)")
    from reviewlab.engines._corpus import open_corpus
    from reviewlab.recording._files import load_episodes, save_episodes

    kept: list[Any] = []
    if out.exists() and (out.is_dir() or out.stat().st_size > 0):
        if args.append:  # checked before the model is called; written again with the new one
            kept = open_corpus(out).episodes(reason="--append: the recording is written again")
        elif not args.force:
            raise UserError(
                f"-o {out}: already holds a recording; pass --append to add to it "
                "or --force to replace it"
            )
    policy = policy_arg(args.policy)
    # The episode's tools are the inspection registry's (an MCP server's are known only once
    # it runs; the known-tools table still catches a typo of a familiar name).
    check_policy_file(args.policy, policy, ("read_file", "list_files", "search_code"),
                      strict=args.strict)  # fmt: skip
    from reviewlab.live._stopping import stopping
    from reviewlab.live.mcp import MCPServerError
    from reviewlab.recording.capture import record_live
    from reviewlab.ui._calls import receipts_table

    options: dict[str, Any] = {"policy": policy}
    if args.api_key is not None:
        options["api_key"] = args.api_key
    if args.mcp:
        options["mcp"] = args.mcp
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as scratch:
        fresh = Path(scratch) / "episode.jsonl"
        try:
            # A stop signal or an orphaning ends the episode as Ctrl-C does: its MCP server is
            # stopped on the way out, and nothing is written.
            with stopping():
                result = record_live(args.base_url, args.model, root, args.task, fresh, **options)
        except MCPServerError as exc:
            raise UserError(f"--mcp {args.mcp!r}: {exc}") from None
        if result.receipts:
            echo(receipts_table(result.receipts).text())
        usage = result.usage
        echo(
            f"end reason: {result.end_reason}; rounds: {usage.get('native_rounds')}; "
            f"tool calls: {usage.get('native_tool_calls')}; "
            f"source gap: {usage.get('native_source_gap') or '-'}"
        )
        if result.end_reason == "model_error":
            reason = one_line(
                ValueError(usage.get("native_model_error") or "the model endpoint failed")
            )
            sys.stderr.write(f"{PROG}: error: {reason} ({out} left unchanged)\n")
            return 1
        written = save_episodes([*kept, *load_episodes(fresh)], out)
    echo(f"recorded 1 episode to {out}" + (f" ({written} in all)" if kept else ""))
    return 0


RECORD = Command(
    name="record",
    help="record one live review episode against an OpenAI-compatible endpoint "
    "into the reviewlab.episode/1 JSONL format",
    arguments=_arguments,
    handler=cmd_record,
    examples="  reviewlab record --base-url http://localhost:8000/v1 --model qwen2.5-coder \\\n"
    "      --root ~/src/project --task 'Review the staged change' -o live.jsonl",
)
