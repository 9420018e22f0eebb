"""``reviewlab gateway`` as a process: it stops cleanly on every stop signal and when its host
closes stdio, a SIGKILL loses no answered call, the policy file is re-read while it serves, and
its HTTP front asks for the token, checks Origin and serves its metrics."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time

import httpx
import pytest
from gateway_kit import GatewayProcess, http_host, running, text_of

from reviewlab.core._policy import Policy
from reviewlab.core._receipts import tool_timeout_text
from reviewlab.recording import load_episodes

pytestmark = pytest.mark.slow


def wait_exit(gateway: GatewayProcess, seconds: float = 30.0) -> int:
    """The gateway's exit status (it must exit within ``seconds``)."""
    return gateway.process.wait(seconds)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_leaves_no_process_no_listener_and_a_closed_recording(tmp_path, sig):
    """After one call, the signal stops the gateway: exit 0, its upstream gone, its port
    closed, and the session's recording ended (not cut)."""
    with GatewayProcess(tmp_path, "--record", str(tmp_path / "rec")) as gateway:

        async def one_call():
            async with http_host(gateway.url) as host:
                return await host.call_tool("read_file", {"path": "README.md"})

        assert not asyncio.run(one_call()).is_error
        upstreams = gateway.children()
        assert upstreams, "the demo upstream runs as the gateway's child"
        gateway.process.send_signal(sig)
        assert wait_exit(gateway) == 0
    assert not any(running(pid) for pid in upstreams)
    with pytest.raises(httpx.ConnectError):
        httpx.get(gateway.url, timeout=2)
    (episode,) = load_episodes(tmp_path / "rec")
    assert episode.end_reason == "final_answer" and len(episode.calls) == 1


def test_a_host_closing_stdio_stops_the_gateway_and_its_upstreams(tmp_path):
    """Over stdio, the end of the host's input is the end of the gateway: nothing stays."""
    with GatewayProcess(tmp_path, stdio=True) as gateway:
        upstreams = gateway.children()
        assert upstreams
        assert gateway.process.stdin is not None
        gateway.process.stdin.close()
        assert wait_exit(gateway) == 0
    assert not any(running(pid) for pid in upstreams)


def test_a_sigkill_in_a_burst_keeps_every_answered_call(tmp_path):
    """40 reads at once; the gateway is killed after the host had 15 answers: each answered
    call is in the recording, whole (its argument hash names which one it was)."""
    import hashlib
    import json

    paths = ["README.md", "CHANGES.md", "inventory/__init__.py", "inventory/pricing.py"]
    calls = [{"path": paths[i % 4], "n": i} for i in range(40)]  # n makes every call distinct

    answered: list[dict] = []  # filled before the host's session dies with the gateway

    with GatewayProcess(tmp_path, "--record", str(tmp_path / "rec")) as gateway:

        async def burst():
            count = 0
            async with http_host(gateway.url) as host:
                tasks = [asyncio.create_task(host.call_tool("read_file", a)) for a in calls]
                order = {task: args for task, args in zip(tasks, calls, strict=True)}
                for finished in asyncio.as_completed(tasks):
                    try:
                        await finished
                    except Exception:  # noqa: BLE001 - the calls cut by the kill
                        break
                    count += 1
                    if count == 15:
                        gateway.process.kill()
                        break
                answered.extend(order[t] for t in tasks if t.done() and not t.exception())
                for task in tasks:
                    task.cancel()

        # the host's session may fail on leaving: it dies with the gateway
        with contextlib.suppress(BaseException):
            asyncio.run(burst())
        gateway.process.wait(30)
    assert len(answered) >= 15
    recorded = {
        call.args_sha256: call
        for episode in load_episodes(tmp_path / "rec")
        for call in episode.calls
    }
    for args in answered:
        canonical = json.dumps(args, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        assert digest in recorded, f"answered call {args} is missing"
        assert recorded[digest].completed and recorded[digest].status == "ok"


def test_the_policy_file_is_re_read_while_the_gateway_serves(tmp_path):
    """A wedged call is abandoned at 0.3 s; after the file says 0.6 s, calls that start later get
    0.6 s; a broken save keeps 0.6 s in force and logs one line naming the file."""
    policy = tmp_path / "gateway.toml"
    Policy.uniform(0.3).save(policy)
    with GatewayProcess(tmp_path, "--policy", str(policy)) as gateway:

        async def session():
            async with http_host(gateway.url) as host:
                before = text_of(await host.call_tool("wedge", {}))
                Policy.uniform(0.6).save(policy)
                after = before
                end = time.monotonic() + 20
                while after == before and time.monotonic() < end:
                    after = text_of(await host.call_tool("wedge", {}))
                policy.write_text("[policy\n", encoding="utf-8")
                await asyncio.sleep(1.0)
                kept = text_of(await host.call_tool("wedge", {}))
                return before, after, kept

        before, after, kept = asyncio.run(session())
        gateway.process.send_signal(signal.SIGTERM)
        wait_exit(gateway)
        log = gateway.rest_of_log()
    assert before == tool_timeout_text("wedge", 0.3)
    assert after == tool_timeout_text("wedge", 0.6)
    assert kept == tool_timeout_text("wedge", 0.6)
    assert sum("kept the policy in force" in line for line in log.splitlines()) == 1
    assert str(policy) in log


def test_the_http_front_asks_for_the_token_checks_origin_and_serves_metrics(tmp_path):
    """No token or a wrong one: 401; a foreign Origin: 403; /metrics counts the calls made."""
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n", encoding="utf-8")
    with GatewayProcess(tmp_path, "--token-file", str(token_file)) as gateway:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        plain = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(gateway.url, json=body, headers=plain).status_code == 401
        wrong = {**plain, "Authorization": "Bearer nope"}
        assert httpx.post(gateway.url, json=body, headers=wrong).status_code == 401
        foreign = {**plain, "Authorization": "Bearer s3cret", "Origin": "http://evil.test"}
        assert httpx.post(gateway.url, json=body, headers=foreign).status_code == 403

        async def calls():
            async with http_host(gateway.url, token="s3cret") as host:
                await host.call_tool("read_file", {"path": "README.md"})
                await host.call_tool("read_file", {"path": "CHANGES.md"})

        asyncio.run(calls())
        metrics_url = gateway.url.replace("/mcp", "/metrics")
        assert httpx.get(metrics_url).status_code == 401
        text = httpx.get(metrics_url, headers={"Authorization": "Bearer s3cret"}).text
    line = 'reviewlab_gateway_calls_total{outcome="returned",server="demo",tool="read_file"} 2.0'
    assert line in text


def test_a_non_loopback_address_without_a_token_is_refused_in_one_line(tmp_path, capsys):
    """--listen 0.0.0.0 with no token: exit 2, one line saying a token is needed."""
    from gateway_kit import demo_entry, servers_file

    from reviewlab.cli import main

    config = servers_file(tmp_path, {"demo": demo_entry()})
    status = main(["gateway", "--config", str(config), "--listen", "0.0.0.0:8765"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "token" in err[0]


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--loose-cap", "-1", "loose_cap"),
        ("--session-budget", "0", "session_budget_sec"),
        ("--cancel-watch", "inf", "cancel_watch_sec"),
    ],
)
def test_a_bad_limit_is_the_librarys_refusal_named_by_its_option(
    tmp_path, capsys, flag, value, field
):
    """The limits' checks are GatewayLimits' own: exit 2, one line naming the option, with the
    library's reason for that field (the CLI restates no rule and no default)."""
    from gateway_kit import demo_entry, servers_file

    from reviewlab.cli import main
    from reviewlab.gateway import GatewayLimits

    config = servers_file(tmp_path, {"demo": demo_entry()})
    with pytest.raises(ValueError) as refused:
        GatewayLimits(**{field: int(value) if field == "loose_cap" else float(value)})
    reason = str(refused.value).partition(": ")[2]
    status = main(["gateway", "check", "--config", str(config), flag, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    assert err[0].endswith(f"{flag}: {reason}")


def test_gateway_check_lists_bounds_and_kinds_and_names_a_typo(tmp_path, capsys):
    """check starts the demo upstream: read_file is read_only and idempotent from its
    annotations, crash side_effect, wedge at the policy's 7 s; a policy naming read_fle is a
    typo, exit 1, with the nearest real name."""
    from gateway_kit import demo_entry, servers_file

    from reviewlab.cli import main

    config = servers_file(tmp_path, {"demo": demo_entry()})
    policy = tmp_path / "gateway.toml"
    Policy.uniform(7).with_idle(read_fle=1.0).save(policy)
    status = main(["gateway", "check", "--config", str(config), "--policy", str(policy)])
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out[1:] if not line.startswith("policy")}
    assert rows["read_file"][1:] == ["demo", "7s", "tool_timeout", "read_only", "yes", "-"]
    assert rows["crash"][4] == "side_effect" and rows["crash"][5] == "no"
    assert rows["wedge"][2] == "7s"
    assert status == 1
    assert "policy names 'read_fle', which no upstream serves (did you mean read_file?)" in out


def test_a_host_that_disconnects_mid_call_cancels_the_upstream_and_is_recorded(tmp_path):
    """An HTTP host leaves (its session closed) while a wedged call runs under a 30 s bound:
    the upstream hears the cancel (a second host asks it) and the call is recorded, cut where
    the host left."""
    import json

    with GatewayProcess(
        tmp_path, "--policy", "uniform:30", "--record", str(tmp_path / "rec")
    ) as gateway:

        async def leave_mid_call():
            async with http_host(gateway.url) as host:
                call = asyncio.create_task(host.call_tool("wedge", {}))
                await asyncio.sleep(0.5)  # the call is in flight (a wedge never answers)
                assert not call.done()
                call.cancel()

        async def ask_seen():
            async with http_host(gateway.url) as host:
                for _ in range(200):  # two hops on a loaded machine: up to 20 s
                    seen = json.loads(text_of(await host.call_tool("seen_cancels", {})))
                    if seen:
                        return seen
                    await asyncio.sleep(0.1)
                return []

        with contextlib.suppress(BaseException):
            asyncio.run(leave_mid_call())
        seen = asyncio.run(ask_seen())
        gateway.process.send_signal(signal.SIGTERM)
        wait_exit(gateway)
    assert seen and str(seen[0]).startswith("reviewlab-")
    wedges = [
        call
        for episode in load_episodes(tmp_path / "rec")
        for call in episode.calls
        if call.tool == "wedge"
    ]
    assert len(wedges) == 1
    assert wedges[0].completed is False and wedges[0].cancel_sent is True
    assert 0 < wedges[0].duration_sec < 30  # cut where the host left, not at the bound


def test_metrics_on_their_own_address_beside_a_stdio_gateway(tmp_path):
    """--metrics HOST:PORT serves the Prometheus text while the host talks over stdio."""
    from gateway_kit import free_port

    port = free_port()
    with GatewayProcess(tmp_path, "--metrics", f"127.0.0.1:{port}", stdio=True) as gateway:
        text = ""
        for _ in range(100):
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert gateway.process.stdin is not None
        gateway.process.stdin.close()
        assert wait_exit(gateway) == 0
    assert "# TYPE reviewlab_gateway_calls_total counter" in text
    assert 'reviewlab_gateway_loose_workers{server="demo"} 0.0' in text


def test_a_gateway_whose_parent_dies_stops_with_its_upstreams(tmp_path):
    """A process manager starts the gateway and is SIGKILLed: the gateway sees it is orphaned,
    stops as on a signal (exit 0), and leaves no upstream and no listener behind."""
    import subprocess
    import sys

    from gateway_kit import children_of, demo_entry, free_port, servers_file

    config = servers_file(tmp_path, {"demo": demo_entry()})
    port = free_port()
    started = tmp_path / "gateway.pid"
    launcher = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'reviewlab', 'gateway', '--config', "
        f"{str(config)!r}, '--listen', '127.0.0.1:{port}'])\n"
        f"open({str(started)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", launcher])
    url = f"http://127.0.0.1:{port}/mcp"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        try:
            httpx.get(url.replace("/mcp", "/metrics"), timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    pid = int(started.read_text())
    children = children_of(pid)
    assert children, "the demo upstream runs as the gateway's child"
    parent.kill()
    parent.wait(10)
    end = time.monotonic() + 30
    while running(pid) and time.monotonic() < end:
        time.sleep(0.1)
    assert not running(pid)
    assert not any(running(child) for child in children)
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)
