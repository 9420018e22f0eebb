"""JSON Lines corpora decoded straight into the columnar table (no ``Episode`` per line).

:func:`jsonl_table` and :func:`jsonl_batches` give the same table, checked by the same rules,
as reading the lines with :func:`reviewlab.recording._files.iter_episodes` and building it from
the episodes; the line format itself is in :mod:`reviewlab.recording._files`.
"""

from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    """A public name, imported from its home on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'reviewlab.recording.jsonl' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
