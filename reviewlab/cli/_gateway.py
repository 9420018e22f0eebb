"""``reviewlab gateway``: reviewlab between an MCP host and its servers (docs/gateway.md).

``reviewlab gateway --config SERVERS.json [--policy POLICY] [--record DIR] [--listen HOST:PORT]``
serves until the host closes stdio or a stop signal comes; ``reviewlab gateway check`` starts
each upstream, prints the bound and kind each tool would get, and names the policy's typos
(exit 1 when there is one). Logs go to stderr, never to stdout (stdout is the MCP channel).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from reviewlab.cli._args import echo
from reviewlab.cli._command import Command
from reviewlab.cli._errors import UserError
from reviewlab.cli._library import given, library_option

_EXAMPLES = """\
  reviewlab gateway --config ~/.cursor/mcp.json --policy gateway.toml --record gw-rec
  reviewlab gateway --config servers.json --listen 127.0.0.1:8765 --metrics 127.0.0.1:9464
  reviewlab gateway check --config servers.json --policy gateway.toml
  reviewlab tune gw-rec --base gateway.toml -o gateway.toml   # the gateway picks it up live"""


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=["check"], help="check: validate and exit")
    p.add_argument("--config", required=True, metavar="SERVERS.json", help="mcpServers file")
    p.add_argument(
        "--policy",
        default=None,
        metavar="POLICY",
        help="policy file (re-read when it changes) or ouroboros|unbounded|uniform:SEC|PRESET "
        "(default: uniform:60)",
    )
    p.add_argument("--record", default=None, metavar="DIR", help="record every call into DIR")
    p.add_argument(
        "--record-args", action="store_true", help="keep the calls' arguments (default: hash)"
    )
    p.add_argument("--listen", default=None, metavar="HOST:PORT", help="Streamable HTTP at /mcp")
    p.add_argument("--token-file", default=None, metavar="FILE", help="bearer token for HTTP")
    p.add_argument("--metrics", default=None, metavar="HOST:PORT", help="serve /metrics there")
    limits = "reviewlab.gateway._config:GatewayLimits"
    library_option(
        p,
        "--session-budget",
        target=limits,
        dest="session_budget_sec",
        type=float,
        metavar="SEC",
        help="per-session budget (default %(library_default)s)",
    )
    library_option(
        p,
        "--loose-cap",
        target=limits,
        dest="loose_cap",
        type=int,
        metavar="N",
        help="loose calls per server (default %(library_default)s)",
    )
    library_option(
        p,
        "--cancel-watch",
        target=limits,
        dest="cancel_watch_sec",
        type=float,
        metavar="SEC",
        help="how long an abandoned call's server is still listened to "
        "(default %(library_default)s s)",
    )


def _address(text: str, flag: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise UserError(f"{flag}: expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def cmd_gateway(args: argparse.Namespace) -> int:
    """Serve (or check) a gateway over the servers of ``--config``."""
    import asyncio  # here, not at the top: every command's --help would load it

    from reviewlab.gateway import (
        Gateway,
        GatewayConfigError,
        GatewayLimits,
        Listen,
        PolicyFile,
        load_servers,
    )
    from reviewlab.gateway._check import check_gateway, default_names, render
    from reviewlab.gateway._serve import run_gateway

    try:
        specs = load_servers(args.config)
    except GatewayConfigError as exc:
        raise UserError(f"--config: {exc}") from None
    try:
        policy = PolicyFile(args.policy)
    except (ValueError, OSError) as exc:
        raise UserError(f"--policy: {exc}") from None
    limits = GatewayLimits(**given(args, "session_budget_sec", "loose_cap", "cancel_watch_sec"))
    # The gateway's own lines (a policy reload, a kept policy) at INFO; libraries' at WARNING
    # (the HTTP client would log every upstream request).
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    logging.getLogger("reviewlab").setLevel(logging.INFO)
    gateway = Gateway(
        specs,
        policy=policy,
        record=args.record,
        record_args=args.record_args,
        limits=limits,
    )
    if args.action == "check":
        report = asyncio.run(check_gateway(gateway, defaults=default_names()))
        for line in render(report):
            echo(line)
        return 0 if report.ok else 1
    listen = None
    if args.listen is not None:
        host, port = _address(args.listen, "--listen")
        token = None
        if args.token_file is not None:
            try:
                token = Path(args.token_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                why = f"cannot read {args.token_file} ({exc.strerror})"
                raise UserError(f"--token-file: {why}") from None
            if not token:
                raise UserError(f"--token-file: {args.token_file} is empty")
        try:
            listen = Listen(host, port, token)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    metrics = _address(args.metrics, "--metrics") if args.metrics else None

    def ready(where: str) -> None:
        sys.stderr.write(f"reviewlab gateway: serving {len(specs)} server(s) on {where}\n")
        sys.stderr.flush()

    asyncio.run(run_gateway(gateway, listen=listen, metrics_listen=metrics, ready=ready))
    return 0


GATEWAY = Command(
    name="gateway",
    help="put reviewlab between an MCP host and its servers: bound, record, re-tune live",
    arguments=_arguments,
    handler=cmd_gateway,
    examples=_EXAMPLES,
)
