"""Cancel faithfulness: when a cancel was sent, did the server stop, and how fast?

Each recorded cancel gets one verdict (:data:`VERDICTS`): ``answered_anyway`` (a valid result
came after it), ``kept_working`` (progress came, no result) or ``stopped`` (neither;
``acknowledged`` when an error answer said so). ``stop_sec``: the error answer's delay, or for a
server that kept working the last progress seen. :func:`cancel_calls` gives the cancels,
:func:`cancel_faithfulness` the table per server and tool. docs/mcp.md, "Cancel faithfulness".
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import pandas as pd

from reviewlab.engines._corpus import CorpusSource, open_corpus

VERDICTS: Final = ("stopped", "kept_working", "answered_anyway")
"""What a server did after a cancel (see the module docstring)."""
CANCEL_COLUMNS: Final = (
    "server",
    "episode_id",
    "call_index",
    "tool",
    "cancel_sec",
    "verdict",
    "stop_sec",
    "late_result_sec",
    "progress_after",
)
"""The columns of :func:`cancel_calls`, one row per cancel sent."""
FAITHFULNESS_COLUMNS: Final = (
    "server",
    "tool",
    "cancels_sent",
    "stopped",
    "kept_working",
    "answered_anyway",
    "acknowledged",
    "stop_median_sec",
    "late_median_sec",
)
"""The columns of :func:`cancel_faithfulness`, one row per server and tool."""


def cancel_calls(corpus: CorpusSource) -> pd.DataFrame:
    """One row per recorded cancel (:data:`CANCEL_COLUMNS`). ``server`` is the episode's
    ``meta["mcp"]`` (the command or URL ``reviewlab record --mcp`` names), else its source;
    ``cancel_sec`` is when the cancel went out (the call's recorded abandonment)."""
    opened = open_corpus(corpus)
    rows = []
    for episode in opened.episodes(reason="cancels: each call's recorded cancel facts"):
        server = episode.meta.get("mcp") or episode.meta.get("server") or episode.source
        for index, call in enumerate(episode.calls):
            if not call.cancel_sent:
                continue
            rows.append(_row(server, episode.id, index, call))
    return pd.DataFrame(rows, columns=list(CANCEL_COLUMNS))


def _row(server: str, episode_id: str, index: int, call: Any) -> dict[str, Any]:
    sent = call.duration_sec  # an abandoned call is recorded censored at its bound
    after = [p - sent for p in (call.progress_sec or []) if p > sent]
    if call.late_result_sec is not None:
        verdict, stop = "answered_anyway", call.late_result_sec
    elif after:
        verdict, stop = "kept_working", max(after)
    else:
        verdict = "stopped"
        stop = call.cancel_honoured_sec if call.cancel_honoured_sec is not None else math.nan
    return {
        "server": server,
        "episode_id": episode_id,
        "call_index": index,
        "tool": call.tool,
        "cancel_sec": sent,
        "verdict": verdict,
        "stop_sec": stop,
        "late_result_sec": math.nan if call.late_result_sec is None else call.late_result_sec,
        "progress_after": len(after),
    }


def cancel_faithfulness(calls: pd.DataFrame | CorpusSource) -> pd.DataFrame:
    """Per server and tool: cancels sent; how many stopped, kept working or answered anyway;
    how many of the stopped said so (``acknowledged``: an error answer); the median time to
    stop (servers that said so) and how late the answers came (:data:`FAITHFULNESS_COLUMNS`).
    Takes :func:`cancel_calls`'s frame or a corpus."""
    frame = calls if isinstance(calls, pd.DataFrame) else cancel_calls(calls)
    rows = []
    for (server, tool), group in frame.groupby(["server", "tool"], sort=True):
        counts = group["verdict"].value_counts()
        stopped = group[group["verdict"] == "stopped"]["stop_sec"].to_numpy(dtype=float)
        late = group["late_result_sec"].to_numpy(dtype=float)
        rows.append(
            {
                "server": server,
                "tool": tool,
                "cancels_sent": len(group),
                **{verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS},
                "acknowledged": int(np.isfinite(stopped).sum()),
                "stop_median_sec": _median(stopped),
                "late_median_sec": _median(late),
            }
        )
    return pd.DataFrame(rows, columns=list(FAITHFULNESS_COLUMNS))


def _median(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(np.median(values)) if values.size else math.nan
