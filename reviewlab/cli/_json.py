"""The one JSON writer of the command line: ``--json`` and ``-o FILE.json`` (docs/json-output.md).

A document is one object of schema :data:`SCHEMA` (the JSON Schema ships as
``reviewlab/data/output.schema.json``): ``schema``, ``command``, ``assumptions`` (what the answer
rests on, as the text output states it), ``units`` (the unit of every quantity the document
holds), ``summary`` (name → figure), ``tables`` (name → rows), and optionally ``policy`` (the
policy replayed or recommended) and ``notes``. Figures are plain numbers, never formatted text.
JSON has no infinity: +∞ is the string ``"inf"`` (−∞ ``"-inf"``), and a figure that is not
defined (NaN, a missing value) is ``null``.

Units are read off the names by :func:`reviewlab.ui._numbers.column_kind`, the rule every text
table writes its numbers by, so a name has one unit in the text and in the JSON.

Invariants: with ``--json`` the document is the only thing on stdout; a file is written whole
or not at all (a temporary file renamed into place).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewlab.ui._numbers import plain_value

SCHEMA = "reviewlab.output/1"
"""The version of the document's layout; it changes when a key changes meaning or goes."""
SCHEMA_FILE = "output.schema.json"
"""The JSON Schema of a document, relative to :func:`reviewlab.resources.data_path`."""
JSON_SUFFIX = ".json"
_INFINITY = "inf"
"""How +∞ is written (``-inf`` for −∞): a wedged call's wait, an unbounded budget."""
_UNITS = {"seconds": "seconds", "rate": "fraction", "count": "count", "number": "number"}
"""The unit a document states for each kind of number :func:`column_kind` reads off a name:
seconds (float), fraction (a share in [0, 1], printed as a percentage by the text output),
count (a whole number), number (anything else, e.g. a cost in the price table's currency)."""


def json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: the document on stdout instead of the text."""
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary and tables as one JSON document on stdout instead of text "
        f"(schema {SCHEMA}: docs/json-output.md)",
    )


def is_json(out: Path | None) -> bool:
    """Whether ``-o`` names a JSON document (rather than a frame or a policy file)."""
    return out is not None and out.name.endswith(JSON_SUFFIX)


def _is_quantity(value: Any) -> bool:
    value = plain_value(value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _figure(value: Any) -> Any:
    """``value`` as JSON: numbers stay numbers (∞ as ``"inf"``, NaN and missing as ``null``),
    times as ISO text, mappings and sequences element-wise, anything else as its text."""
    value = plain_value(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return _INFINITY if value > 0 else "-" + _INFINITY
        return value
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): _figure(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_figure(item) for item in value]
    try:
        import pandas as pd

        if value is pd.NaT or value is pd.NA:
            return None
    except ImportError:  # pragma: no cover - pandas is a requirement
        pass
    return str(value)


def _cell(value: Any) -> Any:
    """A table cell: a figure, or a cell holding a list or a mapping as its JSON text (a row
    stays flat, one value per column)."""
    value = _figure(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def _rows(frame: Any) -> list[dict[str, Any]]:
    """A DataFrame's rows as objects (its index becomes a column unless it is a plain range)."""
    import pandas as pd

    frame = pd.DataFrame(frame)
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    frame.columns = [str(c) for c in frame.columns]
    return [{key: _cell(value) for key, value in row.items()} for row in frame.to_dict("records")]


def _units(
    summary: Mapping[str, Any], tables: Mapping[str, Any], given: Mapping[str, str]
) -> dict[str, str]:
    """The unit of every quantity of the summary and the tables' columns, by name."""
    import pandas as pd

    from reviewlab.ui._numbers import column_kind

    names: dict[str, None] = {}
    for key, value in summary.items():
        if _is_quantity(value) or isinstance(value, Mapping):
            names[key] = None
    for frame in tables.values():
        frame = pd.DataFrame(frame)
        if not isinstance(frame.index, pd.RangeIndex):
            frame = frame.reset_index()
        for column in frame.columns:
            if any(_is_quantity(v) for v in frame[column]):
                names[str(column)] = None
    units = {name: _UNITS.get(column_kind(name), "number") for name in names}
    units.update({name: unit for name, unit in given.items() if name in units})
    return dict(sorted(units.items()))


def document(
    command: str,
    *,
    assumptions: Mapping[str, Any] | str,
    summary: Mapping[str, Any],
    tables: Mapping[str, Any] | None = None,
    units: Mapping[str, str] | None = None,
    policy: Any = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The document of one command's answer: ``tables`` are DataFrames (or lists of rows),
    ``units`` overrides the unit read off a name, ``policy`` is a :class:`Policy` (written as
    its dict) and ``assumptions`` a mapping, or one sentence for an answer that replays
    nothing (written as ``{"statement": ...}``)."""
    tables = dict(tables or {})
    stated = {"statement": assumptions} if isinstance(assumptions, str) else dict(assumptions)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "command": command,
        "assumptions": _figure(stated),
        "units": _units(summary, tables, units or {}),
        "summary": _figure(dict(summary)),
        "tables": {name: _rows(frame) for name, frame in tables.items()},
    }
    if policy is not None:
        doc["policy"] = _figure(policy.to_dict())
    if notes:
        doc["notes"] = list(notes)
    return doc


def _text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def emit(doc: Mapping[str, Any], *, stdout: bool, out: Path | None = None) -> None:
    """Print ``doc`` on stdout (``--json``) and write it to ``out`` when ``-o`` names a JSON
    file (the file appears whole or not at all; without ``--json``, a line says so)."""
    text = _text(doc)
    if is_json(out):
        assert out is not None
        directory = out.parent if str(out.parent) else Path(".")
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, out)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    if stdout:
        sys.stdout.write(text)
    elif is_json(out):
        sys.stdout.write(f"wrote the {SCHEMA} document to {out}\n")
