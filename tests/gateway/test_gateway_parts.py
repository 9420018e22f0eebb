"""The gateway's small rules, each against a hand-computed case: the servers file, the names a
host sees, the kinds annotations give, the deadline a call inherits, the size of a result, and
the policy file re-read while the gateway runs."""

from __future__ import annotations

import json
import logging
import os
from types import SimpleNamespace

import pytest

from reviewlab.core._policy import Policy
from reviewlab.gateway import (
    GatewayConfigError,
    GatewayLimits,
    Listen,
    PolicyFile,
    annotated_kind,
    parse_servers,
)
from reviewlab.gateway._calls import DEADLINE_META_KEY, content_chars, remaining_sec
from reviewlab.gateway._routes import effective_policy, host_names
from reviewlab.gateway._serve import is_loopback


def test_a_servers_file_reads_stdio_and_http_servers_and_skips_disabled_ones():
    """The desktop hosts' shape: command/args/env, url/headers; a disabled server is left out."""
    specs = parse_servers(
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server"], "env": {"A": "1"}},
                "web": {"url": "https://example.test/mcp", "headers": {"X": "y"}},
                "off": {"command": "x", "disabled": True},
            }
        }
    )
    assert [s.name for s in specs] == ["fs", "web"]
    assert specs[0].command == ("npx", "-y", "server") and specs[0].env == {"A": "1"}
    assert specs[1].url == "https://example.test/mcp" and specs[1].headers == {"X": "y"}


@pytest.mark.parametrize(
    ("servers", "named"),
    [
        ({"a": {"command": "x", "url": "http://h/mcp"}}, "exactly one"),
        ({"a": {}}, "exactly one"),
        ({"a": {"command": "x", "args": "no"}}, "mcpServers.a.args"),
        ({"a": {"url": "ftp://h"}}, "mcpServers.a.url"),
        ({"a": {"command": "x", "headers": {}}}, "mcpServers.a.headers"),
        ({"a": {"command": "x", "colour": 1}}, "mcpServers.a.colour"),
        ({"a b": {"command": "x"}}, "mcpServers.a b"),
        ({"a": {"command": "x", "disabled": True}}, "no enabled server"),
        ({"a": {"command": "x", "disabled": "yes"}}, "mcpServers.a.disabled"),
    ],
)
def test_a_bad_servers_file_names_the_key(servers, named):
    """Each defect is one error naming the file and the offending key."""
    with pytest.raises(GatewayConfigError, match="servers.json") as caught:
        parse_servers({"mcpServers": servers}, where="servers.json")
    assert named in str(caught.value)


def test_names_are_unchanged_with_one_upstream_and_prefixed_only_where_two_share_one():
    """One upstream: its names; two: a shared name becomes SERVER__NAME, the rest stay."""
    one = host_names({"a": [{"name": "echo"}, {"name": "add"}]})
    assert list(one) == ["echo", "add"]
    two = host_names({"a": [{"name": "echo"}, {"name": "add"}], "b": [{"name": "echo"}]})
    assert sorted(two) == ["a__echo", "add", "b__echo"]
    assert (two["b__echo"].upstream, two["b__echo"].name) == ("b", "echo")
    assert list(host_names({"a": [{"name": "x"}, {"name": "x"}]})) == ["x"]  # no one to share


def test_annotations_give_kinds_and_the_policy_kinds_win():
    """readOnlyHint -> read_only; destructive or not read-only -> side_effect; silence -> None;
    the policy's own [kinds] entry beats the annotation, idempotentHint adds idempotence."""
    assert annotated_kind({"annotations": {"readOnlyHint": True}}) == "read_only"
    assert annotated_kind({"annotations": {"destructiveHint": True}}) == "side_effect"
    assert annotated_kind({"annotations": {"readOnlyHint": False}}) == "side_effect"
    assert annotated_kind({"annotations": {}}) is None
    tools = host_names(
        {
            "s": [
                {"name": "peek", "annotations": {"readOnlyHint": True, "idempotentHint": True}},
                {"name": "wipe", "annotations": {"destructiveHint": True}},
                {"name": "mine", "annotations": {"readOnlyHint": True}},
            ]
        }
    )
    policy = effective_policy(Policy.uniform(5).with_kinds(mine="side_effect"), tools)
    assert policy.kind_of("peek") == "read_only"
    assert policy.kind_of("wipe") == "side_effect"
    assert policy.kind_of("mine") == "side_effect"
    assert "peek" in policy.idempotent_tools and "wipe" not in policy.idempotent_tools


def test_a_call_inherits_the_sooner_of_the_hosts_deadline_and_the_session_budget():
    """min(host's seconds, budget left), never negative; neither: no deadline."""
    host = SimpleNamespace(deadline_at=110.0)
    assert remaining_sec(host, {DEADLINE_META_KEY: 4.0}, now=100.0) == 4.0
    assert remaining_sec(host, {DEADLINE_META_KEY: 40.0}, now=100.0) == 10.0
    assert remaining_sec(host, {}, now=120.0) == 0.0
    assert remaining_sec(SimpleNamespace(deadline_at=None), {}, now=1.0) is None
    assert remaining_sec(SimpleNamespace(deadline_at=None), {DEADLINE_META_KEY: -3}, 1.0) == 0.0
    with pytest.raises(ValueError, match=DEADLINE_META_KEY):
        remaining_sec(SimpleNamespace(deadline_at=None), {DEADLINE_META_KEY: "soon"}, 1.0)


def test_a_results_size_counts_text_characters_and_other_blocks_as_json():
    """Text blocks by characters; an image block and structuredContent by their compact JSON."""
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    result = {
        "content": [{"type": "text", "text": "héllo"}, image],
        "structuredContent": {"n": 1},
    }
    expected = 5 + len(json.dumps(image, separators=(",", ":"))) + len('{"n":1}')
    assert content_chars(result) == expected


def test_the_policy_file_is_re_read_and_a_bad_save_keeps_the_old_one(tmp_path, caplog):
    """A change is taken on the next look; a file that no longer parses keeps the policy in
    force and logs one line naming the file."""
    path = tmp_path / "gateway.toml"
    Policy.uniform(5).save(path)
    watched = PolicyFile(path)
    assert watched.current.timeout_for(None, "any") == 5
    Policy.uniform(2).save(path)
    os.utime(path, ns=(1, 1))  # a new stamp even within the file system's time resolution
    assert watched.check() is True
    assert watched.current.timeout_for(None, "any") == 2
    path.write_text("[policy\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="reviewlab.gateway"):
        assert watched.check() is False
    assert watched.current.timeout_for(None, "any") == 2
    assert len(caplog.records) == 1 and str(path) in caplog.records[0].getMessage()
    assert watched.check() is False  # nothing changed since: no second line
    assert len(caplog.records) == 1


def test_listening_off_loopback_needs_a_token():
    """127.0.0.1, ::1 and localhost are loopback; another address without a token is refused."""
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    with pytest.raises(ValueError, match="token"):
        Listen("0.0.0.0", 8765)
    assert Listen("0.0.0.0", 8765, token="s3cret").url == "http://0.0.0.0:8765/mcp"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("session_budget_sec", 0.0),
        ("session_budget_sec", float("nan")),
        ("loose_cap", -1),
        ("loose_cap", True),
        ("cancel_watch_sec", float("inf")),
        ("grace_sec", -0.1),
    ],
)
def test_the_limits_refuse_a_bad_value_by_its_name(field, value):
    """A limit that is not a sensible number is refused with the field's name in the message."""
    with pytest.raises(ValueError, match=f"^{field}: .*{value!r}"):
        GatewayLimits(**{field: value})


def test_the_gateway_reads_its_limits_by_name(tmp_path):
    """The loose cap and grace reach every upstream's executor, the cancel watch every upstream;
    without limits the defaults hold (16 loose calls, a 60 s watch, a 0.5 s grace)."""
    from gateway_kit import demo_gateway

    limits = GatewayLimits(loose_cap=3, cancel_watch_sec=7.0, grace_sec=0.25)
    gateway = demo_gateway(tmp_path, limits=limits)
    (executor,) = gateway.executors.values()
    (upstream,) = gateway.upstreams.values()
    assert (executor.loose_cap, executor.grace_sec, upstream.cancel_watch_sec) == (3, 0.25, 7.0)
    plain = demo_gateway(tmp_path)
    (executor,) = plain.executors.values()
    (upstream,) = plain.upstreams.values()
    assert (executor.loose_cap, executor.grace_sec, upstream.cancel_watch_sec) == (16, 0.5, 60.0)


def test_a_call_counts_from_its_arrival_on_the_wire():
    """A request stamped on arrival (stdio: its message's context; HTTP: its scope) is read
    back; the executor waits what is left of the bound after the queue, while the recorded
    duration, start and bound are the host's (arrival to answer)."""
    from reviewlab.core._narrowing import Bound
    from reviewlab.gateway._calls import Taken
    from reviewlab.gateway._stdio import RECEIVED_AT_KEY, Received, received_at
    from reviewlab.live._call_results import CallStatus

    assert received_at(SimpleNamespace(request=Received(12.5))) == 12.5
    scoped = SimpleNamespace(request=SimpleNamespace(scope={RECEIVED_AT_KEY: 3.0}))
    assert received_at(scoped) == 3.0
    assert received_at(SimpleNamespace(request=None)) is None
    policy_bound = Bound(2.0, "tool_timeout", 2.0)
    ran = SimpleNamespace(
        status=CallStatus.ABANDONED,
        bound=Bound(1.75, "tool_timeout", 2.0),
        notes=None,
        started_wall=1000.25,
        duration_sec=1.75,
    )
    taken = Taken(ran, policy_bound, queued=0.25)
    assert taken.duration_sec == 2.0 and taken.started_wall == 1000.0
    assert taken.bound is policy_bound and taken.by == "tool_timeout"
    refused = SimpleNamespace(**{**vars(ran), "status": CallStatus.REFUSED, "duration_sec": 0.0})
    assert Taken(refused, policy_bound, queued=0.25).duration_sec == 0.0
