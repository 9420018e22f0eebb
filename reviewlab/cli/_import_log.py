"""``reviewlab import``: another agent system's log turned into ``reviewlab.episode`` JSONL."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reviewlab.cli._args import JSONL_SUFFIXES, echo, existing_file, output_path
from reviewlab.cli._command import Command
from reviewlab.cli._errors import UserError, one_line
from reviewlab.core._vocab import IMPORT_CHOICES


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "format",
        choices=IMPORT_CHOICES,
        help="the log's format; auto: detect it from the content",
    )
    p.add_argument(
        "file",
        help="OpenHands trajectory (.json/.jsonl), Inspect AI eval log (.json/.eval), SWE-agent "
        "trajectory (.traj), mini-swe-agent trajectory (.traj.json), OpenAI Agents SDK trace "
        "export (AgentsTraceFile) or OpenTelemetry trace (OTLP/JSON, e.g. the Collector's file "
        "exporter); a folder: every file in it a format is recognised in; "
        "bundled:real-logs/<file> names a shipped log",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")


def _log_importer(name: str) -> Any:
    """The importer of format ``name`` (``auto``: detected from the file's content).

    An OpenTelemetry import also prints what it made of the spans, with the ones it could
    not place counted by reason.
    """
    from reviewlab.recording.interop import IMPORTERS, ImportFormatError, detect_format, read_otel

    def run(source: Path) -> list[Any]:
        found = detect_format(source) if name == "auto" else name
        if found == "otel":
            result = read_otel(source)
            echo(f"{source}: otel: {result.report()}")
            return list(result.episodes)
        if name == "auto":
            echo(f"{source}: detected format {found}")
        try:
            return IMPORTERS[found](source)  # type: ignore[index]
        except ImportFormatError as exc:
            hint = _other_format(source, name)
            if hint is None:
                raise
            raise UserError(f"{exc}; the content looks like {hint}: try 'import {hint}'") from None

    return run


def _other_format(source: Path, name: str) -> str | None:
    """The format ``source`` looks like when that is not ``name`` (``None``: no better guess)."""
    from reviewlab.recording.interop import detect_format

    if name == "auto":
        return None
    try:
        found = detect_format(source)
    except ValueError:
        return None
    return found if found != name else None


def cmd_import(args: argparse.Namespace) -> int:
    """Import the log into ``-o``; print how many episodes, calls and priced rounds it held."""
    from reviewlab.recording._files import save_episodes
    from reviewlab.resources import resolve

    resolved = Path(str(resolve(args.file)))
    if resolved.is_dir():
        out = output_path(args.output, JSONL_SUFFIXES)
        return _import_folder(resolved, args.format, out)
    source = existing_file(str(resolved))
    out = output_path(args.output, JSONL_SUFFIXES)
    importer = _log_importer(args.format)
    try:
        episodes = importer(source)
    except (KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError) as exc:
        # A log of the wrong shape: say which file, not which line of the importer.
        raise UserError(
            f"{args.file}: not a readable {args.format} log ({type(exc).__name__}: {one_line(exc)})"
        ) from None
    if not episodes:
        raise UserError(f"{args.file}: no episodes found in this {args.format} log")
    save_episodes(episodes, out)
    _summary(episodes, str(source), out)
    return 0


def _import_folder(folder: Path, name: str, out: Path) -> int:
    """Import every recognised log under ``folder``; list each file read or skipped, and why."""
    from reviewlab.recording._files import save_episodes
    from reviewlab.recording.interop import import_folder

    result = import_folder(folder, None if name == "auto" else name)  # type: ignore[arg-type]
    for line in result.report():
        echo(line)
    if not result.episodes:
        raise UserError(
            f"{folder}: no file in this folder is a log reviewlab reads "
            f"({len(result.skipped)} skipped, listed above)"
        )
    save_episodes(result.episodes, out)
    _summary(result.episodes, f"{len(result.imported)} file(s) of {folder}", out)
    if result.skipped:
        echo(f"skipped {len(result.skipped)} file(s) (reasons above)")
    return 0


def _summary(episodes: list[Any], source: str, out: Path) -> None:
    """The two lines every import prints: what was imported, and how much usage it reports."""
    calls = sum(len(episode.calls) for episode in episodes)
    censored = sum(not call.completed for episode in episodes for call in episode.calls)
    echo(
        f"imported {len(episodes)} episode(s), {calls} call(s) ({censored} censored) from {source} "
        f"to {out}"
    )
    rounds = sum(len(episode.rounds) for episode in episodes)
    priced = sum(rnd.usage_known for episode in episodes for rnd in episode.rounds)
    echo(f"token usage: {priced} of {rounds} round(s) report it (the others are unknown)")


IMPORT = Command(
    name="import",
    help="convert another agent system's log into reviewlab.episode/1",
    arguments=_arguments,
    handler=cmd_import,
    examples="  reviewlab import openhands "
    "bundled:real-logs/openhands/multi_swe_bench_examples_output.jsonl -o openhands.jsonl\n"
    "  reviewlab import inspect bundled:real-logs/inspect_ai/log_message_deduplication.eval "
    "-o inspect.jsonl\n"
    "  reviewlab import otel bundled:real-logs/frameworks/langgraph-1.2.24_node-timeout.otlp.jsonl "
    "-o traces.jsonl\n"
    "  reviewlab import auto bundled:real-logs/swe_agent/marshmallow-code__marshmallow-1867.traj "
    "-o swe.jsonl\n"
    "  reviewlab import auto bundled:real-logs/openhands -o all.jsonl   # every log of a folder",
)
