"""Property: every bad input to every subcommand is one clear line, and nothing on disk changes.

Hypothesis feeds the in-process :func:`reviewlab.cli.main` malformed corpora (truncated,
wrong or damaged gzip, bad UTF-8, fields of the wrong type, impossible numbers), malformed
policy files, malformed foreign logs and absurd arguments. For each, the command must:

* exit non-zero;
* write exactly one line on stderr, ``reviewlab: error: ...``, with no traceback;
* name what is wrong: the file (corpus, policy, log) or the option;
* leave a pre-existing ``-o`` file byte-identical, and leave no temporary file behind.

Extreme but valid numbers (1e308 seconds, 5e-324 seconds, 10**30 characters) may be
accepted; then every number printed must be short (no 300-digit renderings), and a refusal
must still be one line naming the corpus.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.cli import build_parser, main
from reviewlab.recording.synth import MAX_EPISODES, synth_corpus

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)
"""Fixed examples (derandomized) so a run is repeatable; about 40 per property."""

OUTPUT_BYTES = b"a previous output the command must not touch\n"
"""What every pre-existing ``-o`` file holds before a command runs."""

GOOD_LINES = [episode.to_json_line() for episode in synth_corpus(3, seed=4)]
"""Three valid episode lines to corrupt (one of them is corrupted at a time)."""


@dataclass(frozen=True)
class Outcome:
    """What one ``main([...])`` call did: its status, stderr, stdout and the output check."""

    code: int
    err: str
    out: str
    untouched: bool


@contextmanager
def workdir() -> Iterator[Path]:
    """A fresh directory per example (the pytest ``tmp_path`` fixture is per test, not example)."""
    with tempfile.TemporaryDirectory(prefix="cli-prop-") as name:
        yield Path(name)


def run(capsys: pytest.CaptureFixture[str], folder: Path, argv: list[str]) -> Outcome:
    """Run ``reviewlab argv`` in-process and check that ``folder`` holds exactly what it held."""
    before = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    after = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
    return Outcome(code, captured.err, captured.out, untouched=before == after)


def assert_one_clear_line(outcome: Outcome, needle: str) -> None:
    """The refusal contract: non-zero, one ``reviewlab: error:`` line naming ``needle``."""
    assert outcome.code != 0, outcome.out[-500:]
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("reviewlab: error: "), lines[0]
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err
    assert needle in lines[0], (needle, lines[0])
    assert outcome.untouched, "a failed command changed the files it was given"


def assert_short_numbers(text: str) -> None:
    """No printed number is longer than 25 characters (1e308 prints as 1e+308)."""
    for token in text.split():
        digits = sum(char.isdigit() for char in token)
        assert digits <= 25, token[:80]


# -- corpora ------------------------------------------------------------------------------
def _lines_bytes(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def _set(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    node: Any = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return document


_WRONG_TYPES: dict[tuple[Any, ...], list[Any]] = {
    ("id",): [5, None, [1], {"k": 1}],
    ("rounds",): ["many", 5, {"k": 1}, None],
    ("rounds", 0, "send_sec"): ["soon", None, [], {"k": 1}],
    ("rounds", 0, "calls", 0, "tool"): [5, None, [], {"k": 1}],
    ("rounds", 0, "calls", 0, "duration_sec"): ["soon", None, [1], {"k": 1}],
    ("rounds", 0, "calls", 0, "completed"): ["soon", [1], {"k": 1}, 7],
    ("rounds", 0, "calls", 0, "result_chars"): ["many", 1.5, [], None],
    ("started_at",): ["yesterday", 5, []],
    ("schema",): ["reviewlab.episode/99", 1, None],
    ("rounds", 0, "calls", 0, "status"): ["sideways", 5, None],
    ("rounds", 0, "calls", 0, "args"): ["x", 5, [1]],
    ("rounds", 0, "calls", 0, "extent"): ["x", 5, [1]],
    ("end_reason",): ["sideways", 5, None],
    ("deadline_sec",): ["soon", [], -5.0],
    ("slot",): [5, None, []],
    ("source",): ["martian", 5, None],
    ("meta",): ["x", [1], {"k": 5}],
}
"""Fields of the first call of the first round, and values of a type they cannot take."""

_IMPOSSIBLE_NUMBERS: dict[tuple[Any, ...], list[Any]] = {
    ("rounds", 0, "calls", 0, "duration_sec"): [-1.0, -1e308, -5e-324],
    ("rounds", 0, "send_sec"): [-0.5, -1e308],
    ("rounds", 0, "calls", 0, "result_chars"): [-1, -(10**30)],
}
"""Numbers no recording can hold (negative durations and sizes)."""

_EXTREME_NUMBERS: dict[tuple[Any, ...], list[Any]] = {
    ("rounds", 0, "calls", 0, "duration_sec"): [1e308, 5e-324, 1.7e308],
    ("rounds", 0, "send_sec"): [1e308, 5e-324],
    ("rounds", 0, "calls", 0, "result_chars"): [10**30, 2**63],
    ("deadline_sec",): [1e308, 5e-324],
}
"""Valid but extreme numbers: a command may take them, but must print them sensibly."""


@st.composite
def malformed_corpora(draw: st.DrawFn) -> tuple[str, bytes]:
    """A corpus file that is certainly invalid, as (kind, bytes)."""
    kind = draw(
        st.sampled_from(
            [
                "truncated",
                "truncated-gzip",
                "not-gzip",
                "bad-utf8",
                "wrong-type",
                "impossible-number",
                "unknown-field",
                "no-episodes",
            ]
        )
    )
    which = draw(st.integers(0, len(GOOD_LINES) - 1))
    lines = list(GOOD_LINES)
    if kind == "truncated":  # the file ends inside its last line, before the closing brace
        text = _lines_bytes(lines)
        last_start = len(text) - len(lines[-1].encode()) - 1
        cut = draw(st.integers(last_start + 1, len(text) - 3))
        return kind, text[:cut]
    if kind == "truncated-gzip":
        packed = gzip.compress(_lines_bytes(lines), mtime=0)
        return kind, packed[: draw(st.integers(10, len(packed) - 1))]
    if kind == "not-gzip":
        return kind, b"\x1f\x8b" + draw(st.binary(min_size=0, max_size=64))
    if kind == "bad-utf8":
        raw = lines[which].encode()
        at = draw(st.integers(1, len(raw) - 1))
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xe2\x82", b"\x80\x80", b"\xfe\xfe"]))
        encoded = [line.encode() for line in lines]
        encoded[which] = raw[:at] + bad + raw[at:]
        return kind, b"\n".join(encoded) + b"\n"
    if kind in ("wrong-type", "impossible-number"):
        table = _WRONG_TYPES if kind == "wrong-type" else _IMPOSSIBLE_NUMBERS
        path = draw(st.sampled_from(sorted(table, key=str)))
        value = draw(st.sampled_from(table[path]))
        lines[which] = json.dumps(_set(json.loads(lines[which]), path, value))
        return kind, _lines_bytes(lines)
    if kind == "unknown-field":
        name = draw(st.sampled_from(["durations", "slot_name", "x"]))
        lines[which] = json.dumps({**json.loads(lines[which]), name: 1})
        return kind, _lines_bytes(lines)
    return kind, draw(st.sampled_from([b"", b"\n\n", b"   \n\t\n"]))


CorpusArgv = Callable[[str, Path], tuple[list[str], str | None]]
"""Builds a subcommand's argv from the corpus path and the folder; returns the -o name too."""

CORPUS_COMMANDS: dict[str, CorpusArgv] = {
    "replay": lambda corpus, d: (["replay", corpus, "-o", str(d / "out.csv")], "out.csv"),
    "replay twin": lambda corpus, d: (
        ["replay", corpus, "--engine", "twin", "-o", str(d / "out.parquet")],
        "out.parquet",
    ),
    "sweep": lambda corpus, d: (
        ["sweep", corpus, "--scale", "0.5,1", "-o", str(d / "out.csv")],
        "out.csv",
    ),
    "tune": lambda corpus, d: (
        ["tune", corpus, "--max-timeout-coverage-loss", "1", "-o", str(d / "out.toml")],
        "out.toml",
    ),
    "export": lambda corpus, d: (
        ["export", "otel", corpus, "-o", str(d / "out.jsonl")],
        "out.jsonl",
    ),
    "dashboard": lambda corpus, d: (["dashboard", "--corpus", corpus, "--dry-run"], None),
    "incident": lambda corpus, d: (["incident", corpus], None),
    "convert": lambda corpus, d: (["convert", corpus, str(d / "out.jsonl")], "out.jsonl"),
}
"""Every subcommand that reads a recorded corpus."""


def _prepare(folder: Path, output: str | None) -> None:
    if output is not None:
        (folder / output).write_bytes(OUTPUT_BYTES)


@SETTINGS
@given(command=st.sampled_from(sorted(CORPUS_COMMANDS)), corpus=malformed_corpora())
def test_a_malformed_corpus_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], command: str, corpus: tuple[str, bytes]
) -> None:
    """Truncated, damaged-gzip, bad-UTF-8, wrongly typed or empty corpora: one line, file named."""
    kind, content = corpus
    if kind == "no-episodes" and command == "convert":
        command = "replay"  # converting an empty corpus into an empty one is not an error
    with workdir() as folder:
        path = folder / ("bad.jsonl.gz" if "gzip" in kind else "bad.jsonl")
        path.write_bytes(content)
        argv, output = CORPUS_COMMANDS[command](str(path), folder)
        _prepare(folder, output)
        outcome = run(capsys, folder, argv)
        assert_one_clear_line(outcome, str(path))


@SETTINGS
@given(
    command=st.sampled_from(sorted(CORPUS_COMMANDS)),
    field=st.sampled_from(sorted(_EXTREME_NUMBERS, key=str)),
    pick=st.integers(0, 2),
)
def test_extreme_numbers_are_printed_short_or_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], command: str, field: tuple[Any, ...], pick: int
) -> None:
    """1e308 s or 10**30 chars: the command prints short numbers, or refuses naming the corpus."""
    values = _EXTREME_NUMBERS[field]
    lines = list(GOOD_LINES)
    lines[0] = json.dumps(_set(json.loads(lines[0]), field, values[pick % len(values)]))
    with workdir() as folder:
        path = folder / "extreme.jsonl"
        path.write_bytes(_lines_bytes(lines))
        argv, output = CORPUS_COMMANDS[command](str(path), folder)
        _prepare(folder, output)
        outcome = run(capsys, folder, argv)
        if outcome.code == 0:
            assert outcome.err == ""
            assert_short_numbers(outcome.out)
            if output is not None:
                assert (folder / output).read_bytes() != OUTPUT_BYTES
        elif output is not None and f"{folder / output} not written" in outcome.err:
            # tune found no policy meeting its budgets on this corpus: a result, said in one line
            assert_one_clear_line(outcome, str(folder / output))
        else:
            assert_one_clear_line(outcome, str(path))


# -- policies -----------------------------------------------------------------------------
_BAD_POLICIES = [
    b"",
    b"\n# nothing but a comment\n",
    b"[policy]\n",
    b"[policy\n",
    b"[policy]\ndefault_sec = -1\n",
    b"[policy]\ndefault_sec = nan\n",
    b"[policy]\ndefault_sec = inf\n",
    b"[policy]\ndefault_sec = 'soon'\n",
    b"[policy]\ndefault_sec = 0\n",
    b"[policy]\nbogus = 1\n",
    b"bogus = 1\n",
    b"[other]\n",
    b"[policy]\ndefault_sec = 5\n[other]\n",
    b'[policy.tools_sec]\n"read file" = 5\n',
    b'[policy.tools_sec]\n"" = 5\n',
    b"[policy.tools_sec]\nread_file = -5\n",
    b"[policy.tools_sec]\nread_file = 'x'\n",
    b"[policy]\ntools_sec = 5\n",
    b"[policy]\ndefault_sec = 5\n[narrowing]\nmode = 'sideways'\n",
    b"[policy]\ndefault_sec = 5\n[narrowing]\nmode = 'fraction'\nfraction = 7\n",
    b"[policy]\ndefault_sec = 5\n[narrowing]\nmode = 'reserve'\nreserve_sec = -1\n",
    b"\xff\xfe[policy]\n",
    b"[policy]\nname = '\xff'\n",
]
"""Policy files that are certainly wrong: empty, not TOML, unknown keys, impossible values."""

PolicyArgv = Callable[[str, str, Path], tuple[list[str], str | None]]

POLICY_COMMANDS: dict[str, PolicyArgv] = {
    "replay": lambda corpus, policy, d: (
        ["replay", corpus, "--policy", policy, "-o", str(d / "out.csv")],
        "out.csv",
    ),
    "sweep": lambda corpus, policy, d: (
        ["sweep", corpus, "--base", policy, "--scale", "1,2", "-o", str(d / "out.csv")],
        "out.csv",
    ),
    "tune": lambda corpus, policy, d: (
        ["tune", corpus, "--base", policy, "-o", str(d / "out.toml")],
        "out.toml",
    ),
    "record": lambda corpus, policy, d: (
        [
            "record",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--root",
            str(d),
            "--task",
            "t",
            "--policy",
            policy,
            "-o",
            str(d / "out.jsonl"),
            "--force",
        ],
        "out.jsonl",
    ),
}
"""Every subcommand that reads a policy file."""


@SETTINGS
@given(
    command=st.sampled_from(sorted(POLICY_COMMANDS)),
    content=st.one_of(
        st.sampled_from(_BAD_POLICIES),
        st.binary(max_size=40).filter(lambda raw: b"=" not in raw),
    ),
)
def test_a_malformed_policy_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], command: str, content: bytes
) -> None:
    """Empty, non-TOML, unknown-key or impossible policies: one line naming the policy file."""
    with workdir() as folder:
        corpus = folder / "good.jsonl"
        corpus.write_bytes(_lines_bytes(GOOD_LINES))
        policy = folder / "policy.toml"
        policy.write_bytes(content)
        argv, output = POLICY_COMMANDS[command](str(corpus), str(policy), folder)
        _prepare(folder, output)
        assert_one_clear_line(run(capsys, folder, argv), str(policy))


# -- foreign logs -------------------------------------------------------------------------
def _import_formats() -> list[str]:
    """Every format ``reviewlab import`` accepts, read from its parser."""
    parser = build_parser()
    [group] = [action for action in parser._actions if action.dest == "command"]
    subparser = group.choices["import"]  # type: ignore[index]
    [formats] = [action.choices for action in subparser._actions if action.dest == "format"]
    return sorted(formats)


@SETTINGS
@given(
    fmt=st.sampled_from(_import_formats()),
    content=st.one_of(
        st.binary(max_size=200),
        st.sampled_from(
            [
                b"",
                b"{",
                b"[]",
                b"null",
                b"42",
                b'{"history": 5}',
                b'{"samples": "x"}',
                b'[{"history": [1, 2]}]',
                b'{"eval": {}, "samples": [{"messages": 3}]}',
                b"\x1f\x8b\x08\x00",
                b"PK\x03\x04garbage",
            ]
        ),
    ),
)
def test_a_malformed_log_to_import_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], fmt: str, content: bytes
) -> None:
    """``import`` of a log that is not one: one line naming the log; ``-o`` untouched."""
    with workdir() as folder:
        suffix = {"inspect": "log.eval", "swe_agent": "log.traj", "otel": "log.jsonl"}
        log = folder / suffix.get(fmt, "log.json")
        log.write_bytes(content)
        _prepare(folder, "out.jsonl")
        outcome = run(capsys, folder, ["import", fmt, str(log), "-o", str(folder / "out.jsonl")])
        assert_one_clear_line(outcome, str(log))


# -- absurd arguments ---------------------------------------------------------------------
def _absurd_cases() -> list[tuple[str, list[str], str]]:
    """(subcommand, extra arguments, option the error must name); {out} is a pre-existing -o."""
    nan, inf = "nan", "inf"
    return [
        ("replay", ["--slots", "0", "--engine", "twin"], "--slots"),
        ("replay", ["--slots", "-3", "--engine", "twin"], "--slots"),
        ("replay", ["--slots", "2"], "--slots"),
        ("replay", ["--slots", "1000000000000", "--engine", "twin"], "--slots"),
        ("replay", ["--slots", "many"], "--slots"),
        ("replay", ["--seed", "soon"], "--seed"),
        ("replay", ["--seed", "-1", "--censored", "impute"], "--seed"),
        ("replay", ["--time-scale", "0.5"], "--time-scale"),
        ("replay", ["--time-scale", nan, "--engine", "real"], "--time-scale"),
        ("replay", ["--time-scale", "-1", "--engine", "real"], "--time-scale"),
        ("replay", ["--time-scale", inf, "--engine", "real"], "--time-scale"),
        ("replay", ["--time-scale", "1e6", "--engine", "real"], "--time-scale"),
        ("replay", ["--policy", "uniform:nan"], "--policy"),
        ("replay", ["--policy", "uniform:-1"], "--policy"),
        ("replay", ["--policy", "uniform:soon"], "--policy"),
        ("replay", ["--policy", "uniform:1e400"], "--policy"),
        ("replay", ["--policy", "no-such-preset"], "--policy"),
        ("replay", ["--engine", "quantum"], "--engine"),
        ("replay", ["--censored", "sideways"], "--censored"),
        ("replay", ["--table", "chairs"], "--table"),
        ("replay", ["--on-error", "ignore"], "--on-error"),
        ("replay", ["-o", "{dir}/out.txt"], "-o"),
        ("replay", ["-o", "{dir}/no/such/dir/out.csv"], "-o"),
        ("sweep", ["--tool", "garbage"], "--tool"),
        ("sweep", ["--tool", "read_file="], "--tool"),
        ("sweep", ["--tool", "read_file=a,b"], "--tool"),
        ("sweep", ["--tool", "read_file=nan"], "--tool"),
        ("sweep", ["--tool", "read_file=-5"], "--tool"),
        ("sweep", ["--scale", "0"], "--scale"),
        ("sweep", ["--scale", "1,,2"], "--scale"),
        ("sweep", ["--scale", inf], "--scale"),
        ("sweep", ["--narrowing", "sideways"], "--narrowing"),
        ("sweep", ["--narrowing", "reserve:x"], "--narrowing"),
        ("sweep", ["--top", "0"], "--top"),
        ("sweep", ["--top", "-7"], "--top"),
        ("sweep", ["--sort", "happiness"], "--sort"),
        ("sweep", ["--connect-timeout", "-1"], "--connect-timeout"),
        ("sweep", ["--connect-timeout", nan], "--connect-timeout"),
        ("sweep", ["--engine", "real"], "--engine"),
        ("tune", ["--max-timeout-coverage-loss", "5"], "--max-timeout-coverage-loss"),
        ("tune", ["--max-timeout-coverage-loss", "-1"], "--max-timeout-coverage-loss"),
        ("tune", ["--max-timeout-coverage-loss", nan], "--max-timeout-coverage-loss"),
        ("tune", ["--max-abandoned-rate", "2"], "--max-abandoned-rate"),
        ("tune", ["--objective", "happiness"], "happiness"),
        ("tune", ["-o", "{dir}/out.yaml"], "-o"),
    ]


_ABSURD_SYNTH = [
    (["-n", "0"], "-n"),
    (["-n", "-1"], "-n"),
    (["-n", "99999999999999"], "-n"),
    (["-n", "1e3"], "-n"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "x"], "--seed"),
]
"""``synth`` arguments no corpus can be made from."""


@SETTINGS
@given(case=st.sampled_from(_absurd_cases()))
def test_absurd_arguments_to_corpus_commands_name_the_option(
    capsys: pytest.CaptureFixture[str], case: tuple[str, list[str], str]
) -> None:
    """Out-of-range, contradictory or unused options: one line naming the option; -o untouched."""
    command, extra, needle = case
    with workdir() as folder:
        corpus = folder / "good.jsonl"
        corpus.write_bytes(_lines_bytes(GOOD_LINES))
        output = {"replay": "out.csv", "sweep": "out.csv", "tune": "out.toml"}[command]
        _prepare(folder, output)
        extra = [arg.replace("{dir}", str(folder)) for arg in extra]
        has_output = "-o" in extra
        argv = [command, str(corpus), *([] if has_output else ["-o", str(folder / output)])]
        if command == "sweep" and not any(arg in extra for arg in ("--tool", "--scale")):
            argv += ["--scale", "1"]
        assert_one_clear_line(run(capsys, folder, [*argv, *extra]), needle)


@SETTINGS
@given(
    number=st.one_of(st.integers(max_value=0), st.integers(min_value=MAX_EPISODES + 1)),
    incident=st.booleans(),
)
def test_synth_refuses_impossible_sizes(
    capsys: pytest.CaptureFixture[str], number: int, incident: bool
) -> None:
    """``synth -n`` below 1 or past ``MAX_EPISODES`` is one line naming ``-n`` (no MemoryError)."""
    with workdir() as folder:
        _prepare(folder, "out.jsonl")
        argv = ["synth", "-n", str(number), "-o", str(folder / "out.jsonl")]
        if incident:  # -n does not matter for --incident, so only a bad seed can fail it
            argv = ["synth", "--incident", "--seed", str(-abs(number) - 1), "-o", argv[-1]]
        assert_one_clear_line(run(capsys, folder, argv), "--seed" if incident else "-n")


@pytest.mark.parametrize("extra, needle", _ABSURD_SYNTH)
def test_synth_refuses_absurd_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    """Malformed ``synth`` numbers are one line naming the option; ``-o`` untouched."""
    _prepare(tmp_path, "out.jsonl")
    outcome = run(capsys, tmp_path, ["synth", *extra, "-o", str(tmp_path / "out.jsonl")])
    assert_one_clear_line(outcome, needle)


@SETTINGS
@given(
    port=st.one_of(st.integers(max_value=0), st.integers(min_value=65536)),
    command=st.sampled_from(["lab", "dashboard"]),
)
def test_impossible_ports_name_the_option(
    capsys: pytest.CaptureFixture[str], port: int, command: str
) -> None:
    """A TCP port outside 1..65535 for ``lab`` or ``dashboard`` is one line naming ``--port``."""
    with workdir() as folder:
        argv = [command, "--port", str(port), "--dry-run"]
        if command == "lab":
            argv += ["--notebooks", str(folder)]
        assert_one_clear_line(run(capsys, folder, argv), "--port")


def test_record_refusals_name_the_option_and_touch_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing root, a wrong suffix, an existing recording, or --append with --force."""
    _prepare(tmp_path, "out.jsonl")
    base = ["record", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "t"]
    out = str(tmp_path / "out.jsonl")
    cases = [
        (["--root", str(tmp_path / "nope"), "-o", out], "--root"),
        (["--root", str(tmp_path), "-o", str(tmp_path / "out.csv")], "-o"),
        (["--root", str(tmp_path), "-o", out], "--force"),
        (["--root", str(tmp_path), "-o", out, "--append", "--force"], "--append"),
        (["--root", str(tmp_path), "-o", out, "--append"], out),  # not a valid recording
    ]
    for extra, needle in cases:
        assert_one_clear_line(run(capsys, tmp_path, [*base, *extra]), needle)


def test_demo_into_a_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``demo --out`` naming an existing file (not a folder) is one line naming it."""
    blocker = tmp_path / "report"
    blocker.write_bytes(OUTPUT_BYTES)
    assert_one_clear_line(run(capsys, tmp_path, ["demo", "--out", str(blocker)]), str(blocker))


def _subcommands() -> list[str]:
    parser = build_parser()
    [group] = [action for action in parser._actions if action.dest == "command"]
    return sorted(group.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_refuses_an_unknown_option_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Every subcommand, including ones added later, names an unknown option in one line."""
    outcome = run(capsys, tmp_path, [command, "--no-such-option=1"])
    assert outcome.code != 0
    [line] = outcome.err.splitlines()
    assert line.startswith("reviewlab: error: ") and "Traceback" not in line
    assert outcome.untouched


@pytest.mark.parametrize(
    "command", [c for c in _subcommands() if c not in ("demo", "lab", "dashboard")]
)
def test_every_file_reading_subcommand_names_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A file argument that does not exist is one line naming it, for every subcommand."""
    missing = str(tmp_path / "missing.jsonl")
    positional: dict[str, list[str]] = {
        "import": ["import", "openhands", missing, "-o", str(tmp_path / "o.jsonl")],
        "export": ["export", "otel", missing, "-o", str(tmp_path / "o.jsonl")],
        "synth": ["synth", "-o", str(tmp_path / "none" / "o.jsonl")],
        "convert": ["convert", missing, str(tmp_path / "o.jsonl")],
        "check": ["check", missing, "--policy", "ouroboros", "--max-silence", "60"],
        "tune guarantee": ["tune", "guarantee", missing, "--probability", "0.9"],
        "record": [
            "record",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--task",
            "t",
            "--root",
            missing,
            "-o",
            str(tmp_path / "o.jsonl"),
        ],
    }
    argv = positional.get(command, [command, missing])
    needle = str(tmp_path / "none") if command == "synth" else missing
    assert_one_clear_line(run(capsys, tmp_path, argv), needle)


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{corpus}", "-o", "{out}"],
        ["sweep", "{corpus}", "--scale", "1", "-o", "{out}"],
        ["synth", "-n", "2", "-o", "{out}"],
    ],
)
def test_an_output_that_is_a_folder_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """``-o`` naming an existing folder is one line naming it, not the temporary file."""
    corpus = tmp_path / "good.jsonl"
    corpus.write_bytes(_lines_bytes(GOOD_LINES))
    out = tmp_path / ("out.jsonl" if argv[0] == "synth" else "out.csv")
    out.mkdir()
    filled = [arg.replace("{corpus}", str(corpus)).replace("{out}", str(out)) for arg in argv]
    outcome = run(capsys, tmp_path, filled)
    assert_one_clear_line(outcome, str(out))
    assert "is a directory" in outcome.err and ".tmp" not in outcome.err
    assert list(out.iterdir()) == []
