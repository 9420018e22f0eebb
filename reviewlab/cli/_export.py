"""``reviewlab export``: a corpus written in another system's format (OTLP/JSON traces)."""

from __future__ import annotations

import argparse

from reviewlab.cli._args import CORPUS_HELP, EXAMPLE_CORPUS, echo, output_path
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import computing_on, open_for, require_episodes
from reviewlab.core._vocab import EXPORT_FORMATS


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("format", choices=EXPORT_FORMATS, help="otel: OTLP/JSON, one trace per episode")
    p.add_argument("corpus", help=CORPUS_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")


def cmd_export(args: argparse.Namespace) -> int:
    """Write every episode of the corpus as one OTLP/JSON trace line of ``-o``."""
    corpus = open_for(args.corpus)
    out = output_path(args.output, (".jsonl", ".json"))
    require_episodes(corpus, args.corpus)
    from reviewlab.recording.interop import export_otel

    # One trace per episode object: the export reads every field of every episode.
    episodes = corpus.episodes(reason="export: every field of every episode is written")
    with computing_on(args.corpus):  # e.g. 1e308 s is past what OTLP nanoseconds can hold
        spans = export_otel(episodes, out)
    calls = sum(len(episode.calls) for episode in episodes)
    echo(
        f"exported {len(episodes)} episode(s), {calls} call(s) as {spans} OTLP/JSON span(s) "
        f"to {out}"
    )
    return 0


EXPORT = Command(
    name="export",
    help="write recorded episodes in another system's format",
    arguments=_arguments,
    handler=cmd_export,
    examples=f"  reviewlab export otel {EXAMPLE_CORPUS} -o corpus.otlp.jsonl",
)
