"""What the gateway keeps per object: the policy in force (merged with the upstreams'
annotations) and one session per host connection. Neither may be found again through a reused
``id()``: each test forces every ``id()`` the gateway's modules take to be equal, the way a freed
object's address is handed to a new one, and checks the new object is still seen as new."""

from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import pytest
from gateway_kit import demo_gateway

from reviewlab.core._policy import Policy


@pytest.fixture
def equal_ids(monkeypatch):
    """Every ``id()`` called from a gateway module answers 1, whatever the object."""
    for name, module in list(sys.modules.items()):
        if name.startswith("reviewlab.gateway.") and module is not None:
            monkeypatch.setattr(module, "id", lambda obj: 1, raising=False)


class FakeConnection:
    """A host connection as the SDK gives one: compared by identity, closed by its exit stack."""

    def __init__(self) -> None:
        self.exit_stack = contextlib.ExitStack()


def request_on(connection: FakeConnection) -> SimpleNamespace:
    """A request context that came on ``connection``."""
    return SimpleNamespace(session=SimpleNamespace(_connection=connection))


def test_a_replaced_policy_is_in_force_at_once_even_when_ids_collide(tmp_path, equal_ids):
    """A policy put in place of the one in force is the one a call reads next, even when it
    has the old one's id (the merge is not served from the cache)."""
    gateway = demo_gateway(tmp_path, "uniform:5")
    assert gateway.policy.timeout_for(None, "read_file") == 5.0
    for seconds in (2.0, 3.0, 0.5):
        gateway.policy_file.current = Policy.uniform(seconds)
        assert gateway.policy.timeout_for(None, "read_file") == seconds


def test_the_merged_policy_is_reused_while_the_policy_is_the_same_object(tmp_path):
    """Two reads with no reload between them give the very same merged policy (no re-merge)."""
    gateway = demo_gateway(tmp_path, "uniform:5")
    first = gateway.policy
    assert gateway.policy is first
    gateway.policy_file.current = Policy.uniform(5.0)  # equal, but another object: re-merged
    assert gateway.policy is not first and gateway.policy == first


def test_two_live_connections_get_two_sessions_even_when_ids_collide(tmp_path, equal_ids):
    """Two connections with equal ids are two host sessions, each found again by its own."""
    gateway = demo_gateway(tmp_path)
    one, two = FakeConnection(), FakeConnection()
    first = gateway.hosts.of(request_on(one))
    second = gateway.hosts.of(request_on(two))
    assert first is not second
    assert gateway.hosts.of(request_on(one)) is first
    assert gateway.hosts.of(request_on(two)) is second
    assert (first.connection, second.connection) == (one, two)


def test_a_connection_after_a_closed_one_starts_a_new_session(tmp_path, equal_ids):
    """When a connection closes its session goes; the next connection (same id, as a freed
    address reused) gets a fresh session with no calls counted, not the old one."""
    gateway = demo_gateway(tmp_path)
    old = FakeConnection()
    gone = gateway.hosts.of(request_on(old))
    gone.calls = 3
    old.exit_stack.close()
    assert list(gateway.hosts) == []
    new = FakeConnection()
    fresh = gateway.hosts.of(request_on(new))
    assert fresh is not gone and fresh.calls == 0 and fresh.connection is new
    assert list(gateway.hosts) == [new]
