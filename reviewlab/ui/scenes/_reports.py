"""Public issue reports of the four ways tool calls hang, the one home of the lesson's links.

Each failure family of notebook 07 is one someone met in a real agent framework and reported
in a public issue tracker; :data:`REPORTS` names the repository and the issue number of each,
with its title as filed, so the text can say who saw it and a reader can go and look.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class PublicReport:
    """One public issue (or pull request) that reported a way a tool call hangs."""

    repository: str
    """``owner/name`` on GitHub."""
    number: int
    title: str
    """The title as filed."""
    what: str
    """What it shows, in one sentence of ours."""
    kind: str = "issues"
    """``issues`` or ``pull`` (the URL path)."""

    @property
    def ref(self) -> str:
        """``owner/name#123``."""
        return f"{self.repository}#{self.number}"

    @property
    def url(self) -> str:
        """The issue's address on GitHub."""
        return f"https://github.com/{self.repository}/{self.kind}/{self.number}"

    def html(self) -> str:
        """A link naming the repository and the number, the title, and what it shows."""
        return (
            f'<a href="{self.url}" target="_blank" rel="noopener">{html.escape(self.ref)}</a> '
            f"“{html.escape(self.title)}”: {html.escape(self.what)}"
        )


FAMILIES: Final = ("no_bound", "hidden_clock", "zombie", "progress_cap")
"""The four failure families, in the order notebook 07 shows them."""

REPORTS: Final[dict[str, tuple[PublicReport, ...]]] = {
    "no_bound": (
        PublicReport(
            "anthropics/claude-code",
            53641,
            "[BUG] MCP per-server timeout not enforced on individual tool calls "
            "(stdio hangs indefinitely)",
            "a tool call to a running MCP server never returned and nothing killed it: "
            "10+ minutes of a frozen session.",
        ),
        PublicReport(
            "langchain-ai/langgraph",
            6412,
            "`ToolNode` `ainvoke` freezes if `sse_read_timeout`",
            "an MCP tool behind LangGraph's ToolNode hangs the whole graph; the node had no "
            "per-call timeout.",
        ),
    ),
    "hidden_clock": (
        PublicReport(
            "anthropics/claude-code",
            43299,
            "MCP_TIMEOUT env var is ineffective — inner @modelcontextprotocol/sdk "
            "requestTimeout (60s) overrides it",
            "two stacked clocks: the SDK's hidden 60 s default fires before the configured one, "
            "and the error does not say which clock it was.",
        ),
        PublicReport(
            "anthropics/claude-code",
            22542,
            "[FEATURE] Make MCP Tool Execution Timeout Configurable in Claude Desktop",
            "a valid result arriving after about 60 s is silently dropped: the client stopped "
            "listening on a clock nobody configured.",
        ),
    ),
    "zombie": (
        PublicReport(
            "browser-use/bubus",
            31,
            "Handler timeout leaves zombie threads (can't cancel blocking sync code)",
            "a timeout fires but the worker thread runs on; 21 zombie threads piled up in "
            "production until new conversations stalled.",
        ),
        PublicReport(
            "ComposioHQ/composio",
            3654,
            "Retried tools.execute / tools.proxy can duplicate non-idempotent side effects; "
            "wire idempotency keys",
            "a retry after a read timeout repeats a side effect that the first, still running "
            "request had already committed.",
        ),
    ),
    "progress_cap": (
        PublicReport(
            "modelcontextprotocol/typescript-sdk",
            2695,
            "`maxTotalTimeout` is never enforced unless a progress notification arrives",
            "the documented hard cap is only checked when progress arrives, so a server that "
            "goes quiet is never stopped by it.",
        ),
        PublicReport(
            "OpenHands/OpenHands",
            7869,
            "[Bug]: OpenHands will interrupt setup.sh if its still running + will interrupt "
            "long-running shell commands, crashing the terminal",
            "the other wrong semantics: a no-output timer treats a quiet but working command "
            "as stuck and interrupts it.",
        ),
    ),
}
"""The public reports of each family (:data:`FAMILIES`), the first one the scene's headline."""


def reports_html(family: str) -> str:
    """The reports of ``family`` as an HTML list (for a scene's outcome and the lesson page)."""
    if family not in REPORTS:
        raise KeyError(f"family: expected one of {', '.join(FAMILIES)}, got {family!r}")
    items = "".join(f"<li>{report.html()}</li>" for report in REPORTS[family])
    return f"<ul class='rl-reports'>{items}</ul>"
