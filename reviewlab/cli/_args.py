"""The argument syntax the subcommands share: numbers, lists, files, outputs, policies, prices.

Only syntax lives here (a number is a number, an output has a known suffix, a preset or a TOML
file names a policy); what a value means is the library's to check, and its errors name the
option (:func:`reviewlab.cli._errors.option_for`). Heavy imports happen inside the helper
that needs them, so ``reviewlab --help`` answers at once.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewlab.cli._errors import UserError, one_line
from reviewlab.core._vocab import (
    CENSORING_MODES,
    DEFAULT_CENSORING,
    DEFAULT_REACTION,
    ON_ERROR_MODES,
    REACTIONS,
)

if TYPE_CHECKING:
    from reviewlab.core._policy import Policy


EXAMPLE_CORPUS = "bundled:corpus"
"""The corpus the examples in the help texts read: the shipped one, by the name that works from
a wheel install as from a checkout (tests/cross/test_wheel.py runs every example)."""
CORPUS_HELP = "recorded episodes: .jsonl, .jsonl.gz, .parquet or a directory of Parquet partitions"
POLICY_HELP = (
    "policy: a TOML file with [policy] and optional [narrowing], [idle], [hedges.TOOL] and "
    "[breaker] tables, or a preset: ouroboros (default), unbounded (the pre-fix behaviour), "
    "uniform:SEC, or another framework's defaults by name (reviewlab presets lists them)"
)
PRICES_HELP = (
    "a price table in TOML (per-model token prices, slot and zombie seconds); 'sample' is "
    "the sourced table shipped as reviewlab/data/prices.toml"
)
TABLE_SUFFIXES = (".csv", ".parquet")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def echo(text: str) -> None:
    """Print ``text`` to stdout with exactly one trailing newline."""
    sys.stdout.write(text.rstrip("\n") + "\n")


def existing_file(text: str) -> Path:
    """A path that exists and is not a directory."""
    path = Path(text)
    if not path.exists():
        raise UserError(f"{text}: no such file")
    if path.is_dir():
        raise UserError(f"{text}: is a directory, expected a file")
    return path


def on_error_option(parser: Any) -> None:
    """Add ``--on-error raise|skip`` (a malformed corpus line stops the command, or is skipped
    and reported)."""
    parser.add_argument(
        "--on-error",
        choices=ON_ERROR_MODES,
        default="raise",
        help="a malformed corpus line: stop with its error (default), or skip it and report it",
    )


_CENSORED_MEANS = {
    "wedge": "never returns",
    "observed": "returns when last seen",
    "impute": "a seeded Kaplan-Meier draw",
    "bounds": "observed and wedge side by side",
}


def censored_option(parser: Any, choices: Sequence[str] = CENSORING_MODES) -> None:
    """Add ``--censored``: what a call the recording never saw return does in the replays; its
    default is the library's (:data:`~reviewlab.core._vocab.DEFAULT_CENSORING`)."""
    means = ", ".join(f"{choice} ({_CENSORED_MEANS[choice]})" for choice in choices)
    parser.add_argument(
        "--censored",
        choices=choices,
        default=DEFAULT_CENSORING,
        help=f"what a call that never returned in the recording does: {means}; "
        "default: %(default)s",
    )


def reaction_option(parser: Any) -> None:
    """Add ``--reaction``: what the model does after an abandonment; its default is the
    library's (:data:`~reviewlab.core._vocab.DEFAULT_REACTION`)."""
    parser.add_argument(
        "--reaction",
        choices=REACTIONS,
        default=DEFAULT_REACTION,
        help="what the model does after an abandonment: as_recorded (later rounds unchanged), "
        "reissue (asks again once), skip_target (gives up on the abandoned path); "
        "default: %(default)s",
    )


def seed(value: int | None, flag: str = "--seed") -> int | None:
    """A seed: a non-negative integer (``None`` passes)."""
    if value is not None and value < 0:
        raise UserError(f"{flag}: expected a non-negative integer, got {value}")
    return value


def rate(value: float | None, flag: str) -> float | None:
    """A rate option: a finite number in [0, 1] (``None`` passes: no limit)."""
    if value is not None and not 0.0 <= value <= 1.0:  # also refuses nan
        raise UserError(f"{flag}: expected a rate between 0 and 1, got {value}")
    return value


def port(value: int | None) -> int | None:
    """A TCP port 1-65535 (``None`` passes: the default)."""
    if value is not None and not 1 <= value <= 65535:
        raise UserError(f"--port: expected a TCP port 1-65535, got {value}")
    return value


def positive_seconds(value: float, flag: str) -> float:
    """A positive finite number of seconds."""
    if not 0.0 < value < float("inf"):  # also refuses nan
        raise UserError(f"{flag}: expected a positive finite number, got {value}")
    return value


def number(what: str, text: str) -> float:
    """A finite number written as text."""
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{what}: expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UserError(f"{what}: expected a finite number, got {text!r}")
    return value


def numbers(what: str, text: str) -> list[float]:
    """Comma-separated finite numbers."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UserError(f"{what}: expected comma-separated numbers, got {text!r}")
    return [number(what, item) for item in items]


def tool_grid(specs: Sequence[str], option: str = "--tool") -> dict[str, list[float]]:
    """``--tool read_file=5,30,120`` (repeatable) → ``{"read_file": [5, 30, 120]}``."""
    grid: dict[str, list[float]] = {}
    for spec in specs:
        tool, sep, values = spec.partition("=")
        if not sep or not tool.strip() or not values.strip():
            raise UserError(f"{option}: expected TOOL=SEC[,SEC...], got {spec!r}")
        grid[tool.strip()] = numbers(f"{option} {tool.strip()}", values)
    return grid


def narrowing_grid(text: str) -> list[Any]:
    """``--narrowing inherit,reserve:30,fraction:0.5,none,unbounded`` → :class:`Narrowing` s."""
    from reviewlab.core._policy import Narrowing

    modes: list[Any] = []
    for item in (part.strip() for part in text.split(",")):
        mode, _, value = item.partition(":")
        if mode in ("inherit", "none", "unbounded") and not value:
            modes.append(Narrowing(mode=mode))  # type: ignore[arg-type]
        elif mode == "reserve" and value:
            modes.append(
                Narrowing(mode="reserve", reserve_sec=number("--narrowing reserve", value))
            )
        elif mode == "fraction" and value:
            modes.append(Narrowing(mode="fraction", fraction=number("--narrowing fraction", value)))
        else:
            raise UserError(
                f"--narrowing: bad mode {item!r}; expected inherit, none, unbounded, reserve:SEC "
                "or fraction:F"
            )
    return modes


def output_path(text: str, suffixes: Sequence[str], flag: str = "-o") -> Path:
    """An output file with one of ``suffixes``, in a directory that exists."""
    path = Path(text)
    if not any(path.name.endswith(suffix) for suffix in suffixes):
        raise UserError(f"{flag} {text}: expected a file ending in {' or '.join(suffixes)}")
    if path.parent != Path("") and not path.parent.is_dir():
        raise UserError(f"{flag} {text}: directory {path.parent} does not exist")
    if path.is_dir():
        raise UserError(f"{flag} {text}: is a directory, expected a file")
    return path


def policy_arg(spec: str | None, flag: str = "--policy") -> Policy:
    """``--policy``: anything :meth:`Policy.parse` reads (a preset or a TOML file); ``None``
    is ouroboros. What it refuses is one line naming ``flag``."""
    from reviewlab.core._policy import Policy

    if spec is None:
        return Policy.ouroboros()
    try:
        return Policy.parse(spec)
    except ValueError as exc:
        raise UserError(f"{flag}: {one_line(exc)}") from None


def prices_arg(spec: str | None) -> Any:
    """The price table ``--prices`` names (``sample``: the shipped one), or ``None``."""
    if spec is None:
        return None
    from reviewlab.core._prices import PriceTableError, load_prices

    if spec == "sample":
        from reviewlab.resources import data_path

        return load_prices(data_path("prices.toml"))
    try:
        return load_prices(spec)
    except PriceTableError as exc:
        raise UserError(f"--prices: {one_line(exc)}") from None


def prices_args(specs: Sequence[str]) -> Any:
    """One ``--prices`` table, several by name (the file's stem), or ``None``."""
    if not specs:
        return None
    if len(specs) == 1:
        return prices_arg(specs[0])
    tables = {}
    for spec in specs:
        name = "sample" if spec == "sample" else Path(spec).stem
        if name in tables:
            raise UserError(f"--prices: two tables named {name!r}; give the files other names")
        tables[name] = prices_arg(spec)
    return tables


def cost_line(summary: Mapping[str, Any], currency: str) -> str:
    """Cost per episode, and how many rounds and zombies it could not price."""
    text = f"{summary['cost_per_episode']:.6g} {currency}"
    unpriced = [
        f"{summary['unpriced_rounds']} of {summary['priced_rounds'] + summary['unpriced_rounds']}"
        " rounds unpriced"
    ]
    if summary["unpriced_zombies"]:
        unpriced.append(f"{summary['unpriced_zombies']} never-returning zombies unpriced")
    return f"{text} ({'; '.join(unpriced)})"


def scheduler_options(parser: Any, what: str) -> None:
    """``--scheduler`` and ``--connect-timeout``: run ``what`` on an existing Dask cluster."""
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT", help=what)
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=None,
        metavar="SEC",
        help="how long to try reaching --scheduler (default 10; only with --scheduler)",
    )
