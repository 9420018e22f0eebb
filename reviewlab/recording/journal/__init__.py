"""A host session's calls appended as they finish: the gateway's crash-safe recording.

One file per session, ``DIR/<id>.session.jsonl``, format ``reviewlab.session/1`` (``_lines``):
a header line, one line per finished call (the schema's
:class:`~reviewlab.recording.schema.Call` and its dispatch time ``at_sec`` from the session
start), update lines adding what a call learnt after it was written (a late result, a cancel
honoured, a loose worker back), and at most one end line. :func:`read_session` folds a file
into a ``reviewlab.episode/2`` episode with rounds inferred from the calls' overlap as
:class:`~reviewlab.recording.capture.ToolCallLog` infers them (``_reader``); a folder of
sessions is a corpus (:func:`iter_sessions`, and so ``load_episodes(DIR)`` and
``open_corpus(DIR)``).

Lifecycle of a :class:`SessionJournal` (``_writer``): opened (the file appears with its whole
header) → ``call`` / ``update`` lines, each one ``os.write`` of a whole line under a lock →
``close`` (end line, fsync; idempotent). Without an end line the session reads as ``log_end``:
its writer is still running, or died.

Invariants: a SIGKILL of the writer loses at most the line being written, which a reader sees
as a last line without its newline and leaves out (a call still in flight); every other defect
is one ``EpisodeFormatError`` naming the file, the line and the field, or with
``on_error="skip"`` one ``SkippedLine``. A reader takes a file as it stands while its writer
appends. The format in full: docs/recording-format.md, "Gateway sessions".
"""

from reviewlab.recording.journal._lines import SESSION_SCHEMA, SESSION_SUFFIX, UPDATABLE_FIELDS
from reviewlab.recording.journal._reader import (
    is_session_folder,
    iter_sessions,
    read_session,
    session_paths,
)
from reviewlab.recording.journal._writer import SessionJournal

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
