"""A host session's calls appended as they finish: the gateway's crash-safe recording.

One file per session, ``DIR/<id>.session.jsonl``, format ``reviewlab.session/1`` (``_lines``): a
header, one line per finished call and its dispatch time, updates of what a call learnt later,
at most one end line. :func:`read_session` folds a file into a ``reviewlab.episode/2`` episode
(rounds inferred from call overlap, as ``ToolCallLog`` does); a folder of sessions is a corpus.

Lifecycle of a :class:`SessionJournal`: opened (the file appears with its whole header) →
``call`` / ``update`` lines, one ``os.write`` each under a lock → ``close`` (end line; idempotent).
Without an end line a session reads as ``log_end``: its writer is still running, or died.

Invariants: a SIGKILL of the writer loses at most the line being written, which a reader sees as
a last line without its newline and leaves out; every other defect is an ``EpisodeFormatError``
naming file, line and field (or a ``SkippedLine``). docs/recording-format.md, "Gateway sessions".
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.recording.journal._lines import SESSION_SCHEMA, SESSION_SUFFIX, UPDATABLE_FIELDS
    from reviewlab.recording.journal._reader import (
        is_session_folder,
        iter_sessions,
        read_session,
        session_paths,
    )
    from reviewlab.recording.journal._writer import SessionJournal

_HOMES = {
    "SESSION_SCHEMA": "reviewlab.recording.journal._lines",
    "SESSION_SUFFIX": "reviewlab.recording.journal._lines",
    "SessionJournal": "reviewlab.recording.journal._writer",
    "UPDATABLE_FIELDS": "reviewlab.recording.journal._lines",
    "is_session_folder": "reviewlab.recording.journal._reader",
    "iter_sessions": "reviewlab.recording.journal._reader",
    "read_session": "reviewlab.recording.journal._reader",
    "session_paths": "reviewlab.recording.journal._reader",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.recording.journal`` loads only what is asked for."""

__all__ = [
    "SESSION_SCHEMA",
    "SESSION_SUFFIX",
    "UPDATABLE_FIELDS",
    "SessionJournal",
    "is_session_folder",
    "iter_sessions",
    "read_session",
    "session_paths",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
