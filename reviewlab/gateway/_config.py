"""What a gateway is set up with: the upstream servers it fronts, and its limits.

The servers are the ``mcpServers`` file desktop hosts already use:

``{"mcpServers": {NAME: {"command": ..., "args": [...], "env": {...}, "cwd": ...}
| {"url": ..., "headers": {...}}}}`` — a stdio server the gateway starts, or a Streamable HTTP
server it connects to. A host's own keys that say nothing about how to reach a server
(``type``, ``disabled``, ``autoApprove``, ``timeout``…) are tolerated; ``"disabled": true``
leaves the server out. An entry that runs a gateway on the very file being read is refused (it
would start itself without end). Every error names the file and the key.

:class:`GatewayLimits` holds what bounds the gateway beyond the policy (a session budget, the
loose-call cap, how long an abandoned call is still watched, its grace to stop).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.live._aio import DEFAULT_GRACE_SEC
from reviewlab.live._executor_base import DEFAULT_LOOSE_CAP

GATEWAY_CANCEL_WATCH_SEC = 60.0
"""How long an abandoned call's upstream is still listened to (and the call counted loose)."""
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
_HTTP_KEYS = frozenset({"url", "headers"})
_IGNORED_KEYS = frozenset(
    {"type", "transport", "disabled", "autoApprove", "alwaysAllow", "timeout", "description"}
)


class GatewayConfigError(ValueError):
    """A servers file the gateway cannot use; the message names the file and the key."""


@dataclass(frozen=True)
class UpstreamSpec:
    """How to reach one upstream server: ``command`` (stdio) or ``url`` (Streamable HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """What a person reads to recognise the server (its URL or its command line)."""
        return self.url if self.url is not None else " ".join(self.command)


@dataclass(frozen=True)
class GatewayLimits:
    """What bounds a gateway's calls beyond the policy, one value the parts read by name.

    ``session_budget_sec`` (``None``: no budget) narrows every call of a host session by what
    is left of that many seconds counted from the session's start; ``loose_cap`` (``None``: no
    cap) is how many abandoned calls may still run on one upstream before its next call is
    refused; ``cancel_watch_sec`` is how long an abandoned call's upstream is still listened to
    (the call counts loose meanwhile); ``grace_sec`` is how long it may take to stop before it
    counts as a zombie. A bad value raises :class:`~reviewlab.core.ParameterError` (a
    ``ValueError``) naming the field.
    """

    session_budget_sec: float | None = None
    loose_cap: int | None = DEFAULT_LOOSE_CAP
    cancel_watch_sec: float = GATEWAY_CANCEL_WATCH_SEC
    grace_sec: float = DEFAULT_GRACE_SEC

    def __post_init__(self) -> None:
        budget = self.session_budget_sec
        if budget is not None and not (_is_seconds(budget) and 0 < budget < math.inf):
            raise ParameterError("session_budget_sec", f"expected seconds > 0, got {budget!r}")
        cap = self.loose_cap
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
            raise ParameterError("loose_cap", f"expected a whole number >= 0 or None, got {cap!r}")
        for name in ("cancel_watch_sec", "grace_sec"):
            value = getattr(self, name)
            if not (_is_seconds(value) and 0 <= value < math.inf):
                raise ParameterError(name, f"expected finite seconds >= 0, got {value!r}")


def _is_seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def load_servers(path: str | os.PathLike[str]) -> tuple[UpstreamSpec, ...]:
    """The enabled servers of the ``mcpServers`` file at ``path``, in file order."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise GatewayConfigError(
            f"{where}: cannot read the servers file ({exc.strerror})"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GatewayConfigError(
            f"{where}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})"
        ) from None
    specs = parse_servers(data, where=str(where))
    for spec in specs:
        if _runs_a_gateway_on(spec, where):
            raise GatewayConfigError(
                f"{where}: mcpServers.{spec.name}: runs a gateway on this same file, which would "
                "start itself without end; list the servers it fronts in a file of their own"
            )
    return specs


def _runs_a_gateway_on(spec: UpstreamSpec, path: Path) -> bool:
    """Whether ``spec`` runs ``reviewlab gateway`` with ``--config`` naming ``path`` itself (a
    host's file that lists the gateway cannot be the gateway's own servers file)."""
    argv = spec.command
    if "gateway" not in argv:
        return False
    named = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--config"]
    named += [arg.removeprefix("--config=") for arg in argv if arg.startswith("--config=")]
    here = path.expanduser().resolve()
    for value in named:
        target = Path(value).expanduser()
        if not target.is_absolute() and spec.cwd is not None:
            target = Path(spec.cwd).expanduser() / target
        if target.resolve() == here:
            return True
    return False


def parse_servers(data: Any, *, where: str = "servers") -> tuple[UpstreamSpec, ...]:
    """The enabled servers of an already decoded ``mcpServers`` document."""
    if not isinstance(data, Mapping) or not isinstance(data.get("mcpServers"), Mapping):
        raise GatewayConfigError(f'{where}: expected an object with an "mcpServers" object')
    servers = data["mcpServers"]
    specs = []
    for name, entry in servers.items():
        key = f"{where}: mcpServers.{name}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise GatewayConfigError(
                f"{key}: a server name is 1-64 letters, digits, '_', '-' or '.'"
            )
        if not isinstance(entry, Mapping):
            raise GatewayConfigError(f"{key}: expected an object")
        if not isinstance(entry.get("disabled", False), bool):
            raise GatewayConfigError(f"{key}.disabled: expected true or false")
        if entry.get("disabled") is True:
            continue
        specs.append(_spec(name, entry, key))
    if not specs:
        raise GatewayConfigError(f"{where}: mcpServers lists no enabled server")
    return tuple(specs)


def _spec(name: str, entry: Mapping[str, Any], key: str) -> UpstreamSpec:
    unknown = set(entry) - _STDIO_KEYS - _HTTP_KEYS - _IGNORED_KEYS
    if unknown:
        raise GatewayConfigError(f"{key}.{sorted(unknown)[0]}: not a key of a server entry")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise GatewayConfigError(f'{key}: give exactly one of "command" (stdio) and "url" (HTTP)')
    if has_url:
        stray = set(entry) & _STDIO_KEYS
        if stray:
            raise GatewayConfigError(f"{key}.{sorted(stray)[0]}: only a stdio server takes it")
        url = entry["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise GatewayConfigError(f"{key}.url: expected an http:// or https:// URL")
        headers = _strings(entry.get("headers", {}), key + ".headers")
        return UpstreamSpec(name, url=url, headers=headers)
    stray = set(entry) & _HTTP_KEYS
    if stray:
        raise GatewayConfigError(f"{key}.{sorted(stray)[0]}: only an HTTP server takes it")
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise GatewayConfigError(f"{key}.command: expected a program name")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise GatewayConfigError(f"{key}.args: expected a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise GatewayConfigError(f"{key}.cwd: expected a folder path")
    return UpstreamSpec(
        name, command=(command, *args), env=_strings(entry.get("env", {}), key + ".env"), cwd=cwd
    )


def _strings(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise GatewayConfigError(f"{key}: expected an object of strings")
    for item, text in value.items():
        if not isinstance(text, str):
            raise GatewayConfigError(f"{key}.{item}: expected a string")
    return dict(value)
