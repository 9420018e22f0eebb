"""The ``AsyncOpenAI``-compatible model: same requests, replies and errors as the sync one.

Both models talk to the same loopback stub server; the async one drives a review episode on
the async path.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from stub_openai import StubError, StubOpenAI

from reviewlab.live._episode import ReviewEpisode
from reviewlab.live._openai_model import AsyncOpenAIChatModel, ModelEndpointError, OpenAIChatModel


def _call(name: str, args: dict[str, object], call_id: str) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def _script() -> list[dict[str, object]]:
    return [
        {"content": None, "tool_calls": [_call("read_file", {"path": "a.py"}, "c1")]},
        {"content": "[]"},
    ]


def test_the_async_model_sends_and_parses_exactly_what_the_sync_model_does(tmp_path):
    """Over one episode each, the two models send the same requests and end the same way."""
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    results, requests = {}, {}
    for kind, cls in (("sync", OpenAIChatModel), ("async", AsyncOpenAIChatModel)):
        with StubOpenAI(_script()) as stub:
            model = cls(stub.base_url, "stub-reviewer", temperature=0.0)
            results[kind] = ReviewEpisode(tmp_path, model).execute()
            requests[kind] = stub.requests
    assert requests["async"] == requests["sync"] and len(requests["sync"]) == 2
    for result in results.values():
        receipt = result.usage["native_tool_receipts"][0]
        assert receipt["outcome"] == "executed" and receipt["opened_path"] == "a.py"
        assert result.raw_text == "[]" and result.usage["native_end_reason"] == "final_answer"


def test_an_http_error_is_a_model_endpoint_error_naming_endpoint_and_model():
    """A refused request raises ModelEndpointError with the status, the endpoint and the model."""
    with StubOpenAI([StubError(503, "overloaded")]) as stub:
        model = AsyncOpenAIChatModel(stub.base_url, "stub-reviewer")
        with pytest.raises(ModelEndpointError, match=r"answered HTTP 503.*") as caught:
            asyncio.run(model.chat(messages=[{"role": "user", "content": "review"}]))
    assert "stub-reviewer" in str(caught.value) and "127.0.0.1" in str(caught.value)


def test_a_model_error_ends_the_async_episode_as_a_record(tmp_path):
    """On the async path a failing send ends the episode with ``model_error``, not a crash."""
    with StubOpenAI([StubError(500, "boom")]) as stub:
        model = AsyncOpenAIChatModel(stub.base_url, "stub-reviewer")
        result = ReviewEpisode(tmp_path, model).execute()
    assert result.usage["native_end_reason"] == "model_error"
    assert "HTTP 500" in result.usage["native_model_error"]
