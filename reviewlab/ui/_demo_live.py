"""Step 1 of the demo (:mod:`reviewlab.ui._demo`): a live review episode over the bundled
workspace with one tool wedged on purpose.

Lifecycle: the scripted model asks for a listing and a read, then the wedged ``search_code``
(its worker blocks on ``release``), then a read, then answers. The episode abandons the wedged
call at its bound, tells the model (the ``TOOL_TIMEOUT`` text), and carries on; the receipts
and usage are printed. Invariant: the caller sets ``release`` when the demo ends, whatever
happens, so no thread is left behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from reviewlab.core._policy import TimeoutPolicy
from reviewlab.ui._calls import receipts_table

WEDGED_TOOL = "search_code"
LIVE_SCALE = 0.001
"""The live episode runs the ouroboros policy scaled to 1/1000: the 600 s floor becomes 0.6 s."""


def _live_script() -> list[dict[str, Any]]:
    from reviewlab.live._episode import tool_call

    return [
        {
            "tool_calls": [
                tool_call("list_files", {"path": ".", "recursive": True}, "c1"),
                tool_call("read_file", {"path": "inventory/pricing.py"}, "c2"),
            ]
        },
        {"tool_calls": [tool_call(WEDGED_TOOL, {"pattern": "discount"}, "c3")]},
        {
            "tool_calls": [
                tool_call(
                    "read_file",
                    {"path": "inventory/stock.py", "start_line": 1, "end_line": 20},
                    "c4",
                )
            ]
        },
        {
            "content": '[{"file": "inventory/pricing.py", "finding": "see the discount rule"}]\n'
            "(search_code timed out; the answer is based on the files read.)"
        },
    ]


LIVE_ASSUMPTIONS = (
    "a live run: real threads on the real clock under ouroboros scaled 1/1000; nothing "
    "censored or replayed"
)


def live_episode(release: threading.Event, echo: Callable[[str], None]) -> Any:
    """Run the live episode of step 1; ``release`` frees the wedged tool (set it when done)."""
    from reviewlab.live._doubles import wedged_factory
    from reviewlab.live._episode import ReviewEpisode, ScriptedModel
    from reviewlab.live._inspection import demo_workspace

    factory = wedged_factory(WEDGED_TOOL, release)
    policy = TimeoutPolicy.ouroboros().scaled(LIVE_SCALE, name="ouroboros/1000")
    model = ScriptedModel(_live_script())
    episode = ReviewEpisode(demo_workspace(), model, policy=policy, registry_factory=factory)
    result = episode.execute()
    echo(receipts_table(result.receipts, assumptions=LIVE_ASSUMPTIONS).text())
    shown = {key: value for key, value in result.usage.items() if key != "native_tool_receipts"}
    echo("usage: " + ", ".join(f"{key}={value!r}" for key, value in shown.items()))
    told = _timeout_text_seen(model)
    if told:
        echo(f"the model was told: {told}")
    return result


def _timeout_text_seen(model: Any) -> str:
    """The TOOL_TIMEOUT host text the model received, if any (from its recorded sends)."""
    for call in getattr(model, "calls", []):
        for message in call.get("messages", []):
            content = message.get("content") if isinstance(message, Mapping) else None
            if (
                message.get("role") == "tool"
                and isinstance(content, str)
                and "TOOL_TIMEOUT" in content
            ):
                return content
    return ""
