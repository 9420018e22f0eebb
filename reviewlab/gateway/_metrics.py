"""What a gateway counts, in the Prometheus text format (``prometheus_client``).

One registry per gateway (two gateways in one process never mix their counts):
``reviewlab_gateway_calls_total{server,tool,outcome}`` (``returned``, ``error``, ``abandoned``,
``refused``, ``cancelled`` by the host), ``reviewlab_gateway_abandoned_calls_total`` and
``reviewlab_gateway_refusals_total`` per server and tool, the gauge
``reviewlab_gateway_loose_workers{server}`` (read from each upstream's ledger when scraped), and
the histogram ``reviewlab_gateway_call_duration_seconds{server,tool}`` of the calls that
returned (an abandoned call's time is its bound: it would only echo the policy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

METRIC_OUTCOMES = ("returned", "error", "abandoned", "refused", "cancelled")
"""The ``outcome`` label of ``reviewlab_gateway_calls_total``."""
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The media type of :meth:`GatewayMetrics.render`."""


class GatewayMetrics:
    """The gateway's counters (see the module docstring)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.calls = Counter(
            "reviewlab_gateway_calls",
            "Tool calls the gateway answered, by outcome.",
            ("server", "tool", "outcome"),
            registry=self.registry,
        )
        self.abandoned = Counter(
            "reviewlab_gateway_abandoned_calls",
            "Tool calls abandoned at their bound.",
            ("server", "tool"),
            registry=self.registry,
        )
        self.refusals = Counter(
            "reviewlab_gateway_refusals",
            "Tool calls refused because the upstream's loose-call cap was full.",
            ("server", "tool"),
            registry=self.registry,
        )
        self.loose = Gauge(
            "reviewlab_gateway_loose_workers",
            "Abandoned calls whose upstream may still be working on them.",
            ("server",),
            registry=self.registry,
        )
        self.latency = Histogram(
            "reviewlab_gateway_call_duration_seconds",
            "Seconds from dispatch to answer of the calls that returned inside their bound.",
            ("server", "tool"),
            registry=self.registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, float("inf")),
        )

    def watch_loose(self, ledgers: Mapping[str, Callable[[], int]]) -> None:
        """Read each upstream's loose-call count when scraped."""
        for server, loose in ledgers.items():
            self.loose.labels(server).set_function(loose)

    def count(self, server: str, tool: str, outcome: str, duration_sec: float | None) -> None:
        """One answered call."""
        self.calls.labels(server, tool, outcome).inc()
        if outcome == "abandoned":
            self.abandoned.labels(server, tool).inc()
        elif outcome == "refused":
            self.refusals.labels(server, tool).inc()
        elif outcome == "returned" and duration_sec is not None:
            self.latency.labels(server, tool).observe(duration_sec)

    def render(self) -> bytes:
        """The current values in the Prometheus text format."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def value(self, name: str, **labels: Any) -> float:
        """One sample's current value (0 when it was never set)."""
        found = self.registry.get_sample_value(name, labels)
        return 0.0 if found is None else float(found)
