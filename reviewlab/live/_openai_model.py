"""A live model for review episodes: any OpenAI-compatible chat-completions endpoint.

:class:`OpenAIChatModel` speaks the ``model.chat(messages=..., tools=..., **kw) -> dict``
protocol the episode expects, over any server of ``POST /chat/completions``;
:func:`reviewlab.recording.capture.record_live` records a live episode with it.

Lifecycle of one ``chat``: the messages are reduced to the wire fields, one request goes out
with no automatic retry (a retry would hide a slow send inside ``send_sec``), and the first
choice comes back with ``tool_calls`` in the OpenAI shape and ``usage``. Anything that goes
wrong raises :class:`ModelEndpointError` naming the endpoint and the model. The ``openai``
package is an optional extra, imported when a client is first needed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

DEFAULT_TIMEOUT_SEC = 600.0
"""Transport timeout of one send unless the caller gives one."""
# Keys a chat-completions message may carry on the wire; anything else is local bookkeeping.
_WIRE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")
# Local endpoints (vLLM, Ollama) ignore the key, but the client refuses to start without one.
_PLACEHOLDER_KEY = "sk-no-key-needed"


class ModelEndpointError(RuntimeError):
    """The endpoint refused, failed, timed out or answered something unusable."""


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # the optional extra is missing
        raise ImportError(
            "OpenAIChatModel needs the 'openai' package: pip install 'reviewlab[openai]'"
        ) from exc
    return openai


def _endpoint_label(base_url: str) -> str:
    """The endpoint without user info or query, safe to print and to record."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _wire_message(index: int, message: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
        raise ValueError(
            f"messages[{index}]: expected an object with a string 'role', got {message!r:.200}"
        )
    wire = {key: message[key] for key in _WIRE_KEYS if key in message}
    if not wire.get("tool_calls"):
        wire.pop("tool_calls", None)
        if wire.get("content") is None:
            wire["content"] = ""
    return wire


def _tool_call_dict(index: int, call: Any) -> dict[str, Any]:
    function = getattr(call, "function", None)
    name = getattr(function, "name", None)
    if not isinstance(name, str) or not name:
        raise ModelEndpointError(f"tool_calls[{index}] has no function name")
    arguments = getattr(function, "arguments", None)
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        # Some servers send the arguments as an object; the protocol wants a JSON string.
        arguments = json.dumps(arguments)
    call_id = getattr(call, "id", None) or f"call_{index}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class OpenAIChatModel:
    """A chat model on an OpenAI-compatible endpoint (see the module docstring).

    ``defaults`` are request parameters sent with every call (``temperature``,
    ``max_tokens``, …); keyword arguments of :meth:`chat` override them, and a
    ``None`` value leaves a parameter out. ``api_key=None`` reads
    ``OPENAI_API_KEY`` and otherwise sends a placeholder, which local servers accept.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SEC,
        *,
        max_retries: int = 0,
        **defaults: Any,
    ) -> None:
        if not isinstance(base_url, str) or urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty name, got {model!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.base_url = base_url
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.defaults = dict(defaults)
        self._api_key = api_key
        self._client: Any = None

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.endpoint!r}, {self.model!r})"

    @property
    def endpoint(self) -> str:
        """The endpoint as it may be shown and recorded (no credentials)."""
        return _endpoint_label(self.base_url)

    def _client_or_new(self) -> Any:
        if self._client is None:
            openai = _import_openai()
            key = self._api_key or os.environ.get("OPENAI_API_KEY") or _PLACEHOLDER_KEY
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=key,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    def _prepare(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        kw: Mapping[str, Any],
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The wire messages and the request parameters of one send."""
        request = {
            key: value for key, value in {**self.defaults, **kw}.items() if value is not None
        }
        if tools:
            request["tools"] = list(tools)
        else:
            request.pop("tool_choice", None)  # servers refuse a tool_choice without tools
        wire = [_wire_message(index, message) for index, message in enumerate(messages)]
        return wire, request

    @property
    def _where(self) -> str:
        return f"{self.endpoint} (model {self.model!r})"

    def _failure(self, exc: Exception) -> Exception:
        """The :class:`ModelEndpointError` for an exception of the
        ``openai`` client (else itself)."""
        openai = _import_openai()
        where = self._where
        if isinstance(exc, openai.APIStatusError):
            return ModelEndpointError(f"{where} answered HTTP {exc.status_code}: {exc.message}")
        if isinstance(exc, openai.APITimeoutError):
            return ModelEndpointError(f"{where} did not answer within {self.timeout}s")
        if isinstance(exc, openai.APIConnectionError):
            return ModelEndpointError(f"{where} is unreachable: {exc}")
        if isinstance(exc, openai.OpenAIError):
            return ModelEndpointError(f"{where} failed: {exc}")
        return exc

    def _reply(self, response: Any) -> dict[str, Any]:
        """The first choice of ``response`` as the assistant message dict."""
        choices = getattr(response, "choices", None)
        if not choices:
            raise ModelEndpointError(f"{self._where} answered without choices")
        message = choices[0].message
        result: dict[str, Any] = {"role": "assistant", "content": message.content}
        calls = message.tool_calls or []
        if calls:
            result["tool_calls"] = [
                _tool_call_dict(index, call) for index, call in enumerate(calls)
            ]
        result["finish_reason"] = choices[0].finish_reason
        usage = getattr(response, "usage", None)
        if usage is not None:
            result["usage"] = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
        return result

    def chat(
        self,
        *,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """Send one chat-completions request and return the assistant message as a dict."""
        client = self._client_or_new()
        wire, request = self._prepare(messages, tools, kw)
        try:
            response = client.chat.completions.create(model=self.model, messages=wire, **request)
        except Exception as exc:
            failure = self._failure(exc)
            if failure is exc:
                raise
            raise failure from exc
        return self._reply(response)


class AsyncOpenAIChatModel(OpenAIChatModel):
    """:class:`OpenAIChatModel` over ``openai.AsyncOpenAI``: ``await model.chat(...)``.

    A review episode given this model runs on the async path
    (:meth:`~reviewlab.live._episode.ReviewEpisode.aexecute`); the request, the reply and the
    errors are exactly those of the sync model.
    """

    def __repr__(self) -> str:
        return f"AsyncOpenAIChatModel({self.endpoint!r}, {self.model!r})"

    def _client_or_new(self) -> Any:
        if self._client is None:
            openai = _import_openai()
            key = self._api_key or os.environ.get("OPENAI_API_KEY") or _PLACEHOLDER_KEY
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=key,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    async def chat(  # type: ignore[override]
        self,
        *,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """Send one chat-completions request without blocking the loop; the assistant message."""
        client = self._client_or_new()
        wire, request = self._prepare(messages, tools, kw)
        try:
            response = await client.chat.completions.create(
                model=self.model, messages=wire, **request
            )
        except Exception as exc:
            failure = self._failure(exc)
            if failure is exc:
                raise
            raise failure from exc
        return self._reply(response)
