"""JSON Lines corpora decoded straight into the columnar table (no ``Episode`` per line).

:func:`jsonl_table` and :func:`jsonl_batches` give the same table, checked by the same rules,
as reading the lines with :func:`reviewlab.recording._files.iter_episodes` and building it from
the episodes; the line format itself is in :mod:`reviewlab.recording._files`.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording.jsonl._arrow import jsonl_batches, jsonl_table

_HOMES = {
    "jsonl_batches": "reviewlab.recording.jsonl._arrow",
    "jsonl_table": "reviewlab.recording.jsonl._arrow",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.jsonl`` loads only what is asked for."""

__all__ = [
    "jsonl_batches",
    "jsonl_table",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
