"""The protocol's conformance suite sees the same server through the gateway as without it.

``@modelcontextprotocol/conformance`` 0.1.16 (pinned in tests/mcp) runs every server scenario,
once against the reference ``server-everything`` over Streamable HTTP and once against
``reviewlab gateway --listen`` fronting that same URL. A scenario that passes directly must pass
through the gateway, and every check must end the same way (a scenario the reference server
fails, for lack of the suite's own test tools, fails through the gateway for the same reason).
Two differences are allowed. ``dns-rebinding-protection``: the reference server accepts a
foreign ``Host``/``Origin``, the gateway refuses it (issue 35, "Safe by default"). And the SSE
scenarios: the gateway answers a POST whose answer comes alone as one JSON body
(reviewlab.gateway._framing), which the suite itself reports as "SSE checks not applicable"; a
scenario where it says so is compared on its other checks, and must still pass if it passed.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from reference_kit import SUITE, everything_over_http, gateway_over_http, node_binary

REBINDING = "dns-rebinding-protection"
# The scenarios the pinned server-everything passes on its own (issue 35 counts 11).
PASS_DIRECTLY = {
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
}


@pytest.fixture(scope="module")
def node() -> str:
    """Node 24 from the test extra's wheel (the pinned packages installed if missing)."""
    return node_binary()


@pytest.fixture(scope="module")
def targets(node, tmp_path_factory) -> Iterator[dict[str, str]]:
    """server-everything over HTTP, and the gateway over HTTP in front of it: their URLs."""
    folder = tmp_path_factory.mktemp("conformance-gateway")
    with (
        everything_over_http(node, folder) as direct,
        gateway_over_http(folder, {"everything": direct}) as through,
    ):
        yield {"direct": direct, "gateway": through}


def server_scenarios(node: str) -> set[str]:
    """Every server scenario the suite lists."""
    listing = subprocess.run(
        [node, str(SUITE), "list", "--server"], capture_output=True, text=True, timeout=60
    )
    return set(re.findall(r"^\s*- (\S+)", listing.stdout, flags=re.MULTILINE))


# The suite's own checks that say a POST was answered with JSON, so its SSE checks do not apply.
JSON_FRAMED = {"server-sse-content-type", "server-sse-streams-functional"}
SSE_ONLY = {"server-sse-priming-event", "server-sse-retry-field", "incoming-sse-event"}
SSE_ONLY |= {"server-sse-streams-functional", "server-sse-disconnect-resume"}


def suite_run(node: str, url: str, out: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Every server scenario against ``url`` in one run: scenario -> its checks' (id, status,
    reason), the suite's informational lines left out, except that a scenario in which the
    suite found a JSON answer where it looks for a stream gets a ``("json-framed", ...)`` mark."""
    subprocess.run(
        [node, str(SUITE), "server", "--url", url, "--suite", "all", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )  # exit status 1 whenever a scenario fails: the checks say which
    verdicts = {}
    for checks_file in out.glob("server-*/checks.json"):
        match = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", checks_file.parent.name)
        assert match, checks_file.parent.name
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        verdicts[match.group(1)] = [
            (check["id"], check["status"], check.get("errorMessage") or "")
            for check in checks
            if check["status"] != "INFO"
        ]
        if any(
            check["id"] in JSON_FRAMED
            and check["status"] == "INFO"
            and "JSON" in str((check.get("details") or {}).get("message", ""))
            for check in checks
        ):
            verdicts[match.group(1)].append(("json-framed", "INFO", ""))
    return verdicts


def passed(checks: list[tuple[str, str, str]]) -> bool:
    """The suite's pass: some check succeeded and none failed (a WARNING is a pass)."""
    statuses = {status for _, status, _ in checks}
    return "SUCCESS" in statuses and "FAILURE" not in statuses


def compared(
    checks: list[tuple[str, str, str]], framing: list[tuple[str, str, str]]
) -> list[tuple[str, str]]:
    """``checks`` as (id, status) pairs, without the stream-only ones when ``framing`` (a run's
    checks of the same scenario) says the suite found a JSON answer where it looks for a stream.
    """
    json_framed = any(check_id == "json-framed" for check_id, _, _ in framing)
    return [
        c[:2] for c in checks if c[0] != "json-framed" and not (json_framed and c[0] in SSE_ONLY)
    ]


@pytest.mark.slow
def test_every_scenario_ends_the_same_through_the_gateway_and_rebinding_is_refused(
    node, targets, tmp_path
):
    """Each scenario that passes against server-everything passes through the gateway, every
    check ends the same way with the same reason, and the gateway refuses DNS rebinding."""
    listed = server_scenarios(node)
    direct = suite_run(node, targets["direct"], tmp_path / "direct")
    through = suite_run(node, targets["gateway"], tmp_path / "gateway")
    assert REBINDING in listed and listed >= PASS_DIRECTLY
    assert set(direct) == listed and set(through) == listed

    assert {name for name, checks in direct.items() if passed(checks)} == PASS_DIRECTLY
    lost = {name: through[name] for name in PASS_DIRECTLY if not passed(through[name])}
    assert not lost, f"passed directly, not through the gateway: {lost}"
    changed = {
        name: {"direct": direct[name], "gateway": through[name]}
        for name in listed - {REBINDING}
        if compared(direct[name], through[name]) != compared(through[name], through[name])
    }
    assert not changed, f"the gateway changed what the suite saw: {changed}"

    # The reference server lets a foreign Host/Origin in; the gateway answers it with a 4xx.
    assert not passed(direct[REBINDING])
    assert passed(through[REBINDING]), through[REBINDING]
