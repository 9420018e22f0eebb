"""``reviewlab convert``: a corpus copied into another format, streamed episode by episode."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reviewlab.cli._args import EXAMPLE_CORPUS, JSONL_SUFFIXES, echo
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import open_for
from reviewlab.cli._errors import PROG, UserError
from reviewlab.core._vocab import ON_ERROR_MODES


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="corpus to read: .jsonl[.gz], .parquet or a partition directory")
    p.add_argument(
        "output", help="corpus to write: .jsonl[.gz], .parquet, or any other name for a directory"
    )
    p.add_argument(
        "--rows-per-partition",
        type=int,
        default=None,
        metavar="N",
        help="write a directory of partitions of N episodes (default 250000 for a directory)",
    )
    p.add_argument(
        "--on-error",
        choices=ON_ERROR_MODES,
        default="raise",
        help="skip: leave out bad episodes, one stderr line each (default: stop at the first)",
    )


def cmd_convert(args: argparse.Namespace) -> int:
    """Copy the source corpus into the output's format (by its suffix)."""
    source = open_for(args.source)  # names a missing source; the copy streams from its path
    from reviewlab.recording._locations import is_url

    out = Path(args.output)  # an fsspec URL (s3://...) is written through fsspec, as given
    if not is_url(args.output) and out.parent != Path("") and not out.parent.is_dir():
        raise UserError(f"{args.output}: directory {out.parent} does not exist")
    if args.rows_per_partition is not None and out.name.endswith((*JSONL_SUFFIXES, ".parquet")):
        raise UserError(
            f"--rows-per-partition: {args.output} is one file, not a directory of partitions; "
            "this invocation would ignore it"
        )
    if args.rows_per_partition is not None and args.rows_per_partition < 1:
        raise UserError(f"--rows-per-partition: expected at least 1, got {args.rows_per_partition}")
    from reviewlab.recording._files import SkippedLine
    from reviewlab.recording.interop import convert_corpus

    assert source.path is not None
    skipped: list[SkippedLine] = []
    partitioned = not any(out.name.endswith(s) for s in (*JSONL_SUFFIXES, ".parquet"))
    written = convert_corpus(
        source.path,
        args.output if is_url(args.output) else out,
        on_error="skip" if args.on_error == "skip" else "raise",
        skipped=skipped,
        rows_per_partition=args.rows_per_partition or (250_000 if partitioned else None),
    )
    for bad in skipped:  # nothing is dropped without a line saying so
        sys.stderr.write(f"{PROG}: skipped {args.source}:{bad.line}: {bad.field}: {bad.message}\n")
    echo(
        f"wrote {written} episode(s) to {args.output if is_url(args.output) else out}"
        + (f" ({len(skipped)} skipped)" if skipped else "")
    )
    return 0


CONVERT = Command(
    name="convert",
    help="copy a corpus into another format: JSONL (.jsonl, .jsonl.gz) or columnar Parquet "
    "(.parquet, or a directory of partitions)",
    arguments=_arguments,
    handler=cmd_convert,
    examples=f"  reviewlab convert {EXAMPLE_CORPUS} corpus.parquet\n"
    "  reviewlab convert corpus.parquet corpus-parts --rows-per-partition 100000\n"
    "  reviewlab convert corpus-parts corpus.jsonl.gz",
)
