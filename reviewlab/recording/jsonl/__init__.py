"""JSON Lines corpora decoded straight into the columnar table (no ``Episode`` per line).

:func:`jsonl_table` and :func:`jsonl_batches` give the same table, checked by the same rules,
as reading the lines with :func:`reviewlab.recording._files.iter_episodes` and building it from
the episodes; the line format itself is in :mod:`reviewlab.recording._files`.
"""

from reviewlab.recording.jsonl._arrow import jsonl_batches, jsonl_table

__all__ = [
    "jsonl_batches",
    "jsonl_table",
]
