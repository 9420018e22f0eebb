"""A folder of foreign logs → episodes: every file a format is recognised in, the rest listed.

:func:`import_folder` walks the folder (sorted, recursively, hidden entries left out), reads
each file with the importer of its detected format (or of the one format asked for), and keeps
the files it could not read in :attr:`FolderImport.skipped` with the reason for each: nothing is
dropped silently. Two files that give the same episode id keep both episodes: the later one's id
is prefixed with its path in the folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from reviewlab.core._vocab import ImportFormat
from reviewlab.recording._schema import Episode
from reviewlab.recording.interop._common import ImportFormatError
from reviewlab.recording.interop._detect import IMPORTERS, detect_format


@dataclass
class FolderImport:
    """What :func:`import_folder` made of a folder."""

    episodes: list[Episode] = field(default_factory=list)
    imported: list[tuple[Path, ImportFormat, int]] = field(default_factory=list)
    """Each file read: its path, its format and how many episodes it gave."""
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    """Each file not read: its path and why."""

    def report(self) -> list[str]:
        """One line per file: what it gave, or why it was skipped."""
        lines = [f"{path}: {fmt}: {count} episode(s)" for path, fmt, count in self.imported]
        lines += [f"{path}: skipped: {reason}" for path, reason in self.skipped]
        return lines


def import_folder(
    folder: str | os.PathLike[str], format: ImportFormat | None = None
) -> FolderImport:
    """Every log under ``folder`` (``format=None``: each file's format detected)."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder")
    result = FolderImport()
    seen: set[str] = set()
    for path in _files(root):
        try:
            found = format if format is not None else detect_format(path)
            episodes = IMPORTERS[found](path)
        except (ImportFormatError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
            result.skipped.append((path, _reason(exc, path)))
            continue
        for episode in episodes:
            if episode.id in seen:
                episode = episode.model_copy(
                    update={"id": f"{path.relative_to(root).as_posix()}:{episode.id}"}
                )
            seen.add(episode.id)
            result.episodes.append(episode)
        result.imported.append((path, found, len(episodes)))
    return result


def _files(root: Path) -> list[Path]:
    found = []
    for directory, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        found += [Path(directory) / n for n in sorted(names) if not n.startswith(".")]
    return found


def _reason(exc: Exception, path: Path) -> str:
    if isinstance(exc, ImportFormatError):
        text = f"{exc.where}: {exc.message}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text.replace(f"{path}: ", "").splitlines()[0] if text else type(exc).__name__
