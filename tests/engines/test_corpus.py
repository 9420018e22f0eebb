"""The corpus handle: every source kind opens to the same corpus, compiled once, loaded only on ask.

Equality is checked against independent paths: the episode objects the files were written from,
the twin's replay of those objects, the episode reader (:func:`load_episodes`), and loops over
the objects for the tuner's observations.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reviewlab import Policy, open_corpus, replay, replay_bounds
from reviewlab.core._breakdown import per_tool
from reviewlab.core._vocab import CensoringMode
from reviewlab.engines import _corpus as corpus_module
from reviewlab.engines._censoring import effective_observation, estimates_by_tool
from reviewlab.engines._corpus import COMPILED_KEPT, Corpus, CorpusSource
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording._files import EpisodeFormatError, load_episodes, save_episodes
from reviewlab.recording._schema import Episode
from reviewlab.recording.synth import synth_corpus

KINDS = ("jsonl", "jsonl.gz", "parquet", "partitions", "list", "loaded")


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    """Forty synthetic episodes (some with censored calls, some with deadlines)."""
    return synth_corpus(40, seed=7)


@pytest.fixture(scope="module")
def files(episodes: list[Episode], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same episodes written in every format."""
    folder = tmp_path_factory.mktemp("corpus")
    paths = {
        "jsonl": folder / "c.jsonl",
        "jsonl.gz": folder / "c.jsonl.gz",
        "parquet": folder / "c.parquet",
        "partitions": folder / "parts",
    }
    for kind, path in paths.items():
        save_episodes(episodes, path, rows_per_partition=15 if kind == "partitions" else None)
    return paths


def _source(kind: str, episodes: list[Episode], files: dict[str, Path]) -> CorpusSource:
    if kind == "list":
        return list(episodes)
    if kind == "loaded":
        return load_episodes(files["jsonl"])
    return files[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_every_source_kind_yields_the_episodes_it_was_written_from(
    kind: str, episodes: list[Episode], files: dict[str, Path]
) -> None:
    """Iterating a corpus opened from any source gives the episodes the files were written from."""
    corpus = open_corpus(_source(kind, episodes, files))
    assert list(corpus) == episodes
    assert len(corpus) == len(episodes)
    assert corpus.tools == sorted({c.tool for e in episodes for c in e.calls})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("censored", ["wedge", "observed", "impute"])
def test_every_source_kind_replays_to_the_twins_summary(
    kind: str, censored: CensoringMode, episodes: list[Episode], files: dict[str, Path]
) -> None:
    """A vectorized replay of any source kind has the summary of the twin replaying the objects."""
    policy = Policy.uniform(20.0)
    expected = replay(episodes, policy, engine="twin", censored=censored, seed=3).summary
    corpus = open_corpus(_source(kind, episodes, files))
    got = replay(corpus, policy, engine="vectorized", censored=censored, seed=3).summary
    assert got == pytest.approx(expected, nan_ok=True)


def test_a_path_replays_without_building_an_episode(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``replay("c.parquet", policy)`` works, and the vectorized engine builds no Episode for it."""
    expected = replay(load_episodes(files["jsonl"]), Policy.ouroboros(), engine="twin")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an Episode object was built")

    monkeypatch.setattr(Episode, "model_validate", refuse)
    monkeypatch.setattr(Episode, "model_validate_json", refuse)
    corpus = open_corpus(files["parquet"])
    result = replay(corpus, Policy.ouroboros(), engine="vectorized")
    assert result.summary == pytest.approx(expected.summary, nan_ok=True)
    assert len(result.calls) == len(expected.calls)  # frames from the columns too
    assert not corpus.loaded and corpus.loaded_because == []
    bounds = replay_bounds(str(files["jsonl.gz"]), Policy.ouroboros(), engine="vectorized")
    assert bounds.pessimistic.summary == pytest.approx(expected.summary, nan_ok=True)


def test_the_columns_are_compiled_once_per_censoring(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replays under one censoring assumption share one compile; another one compiles again."""
    from reviewlab.engines.vectorized import _columns as columns

    compiles: list[str] = []
    real = columns.compile_columns

    def counted(*args: object, **kwargs: object) -> object:
        compiles.append(str(kwargs.get("censored")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(columns, "compile_columns", counted)
    corpus = open_corpus(files["parquet"])
    assert compiles == []  # opening reads nothing
    for scale in (5.0, 20.0, 60.0):
        replay(corpus, Policy.uniform(scale), engine="vectorized")
    assert compiles == ["wedge"]
    replay(corpus, Policy.uniform(5.0), engine="vectorized", censored="observed")
    assert compiles == ["wedge", "observed"]
    assert corpus.compiled("wedge") is corpus.compiled("wedge")


def test_at_most_a_few_compiled_corpora_are_kept(files: dict[str, Path]) -> None:
    """Past COMPILED_KEPT censoring/seed pairs, the least recently used compile is dropped."""
    corpus = open_corpus(files["parquet"])
    first = corpus.compiled("impute", 0)
    for seed in range(1, COMPILED_KEPT + 1):
        corpus.compiled("impute", seed)
    assert corpus.compiled("impute", 0) is not first
    assert corpus.compiled("impute", COMPILED_KEPT) is corpus.compiled("impute", COMPILED_KEPT)


def test_episodes_are_loaded_once_and_only_when_a_replay_needs_them(
    files: dict[str, Path],
) -> None:
    """The twin and a hedging policy load the objects once, and the corpus records why."""
    corpus = open_corpus(files["jsonl"])
    replay(corpus, Policy.uniform(20.0), engine="vectorized")
    assert not corpus.loaded
    replay(corpus, Policy.uniform(20.0), engine="twin")
    assert corpus.loaded and any("twin" in why for why in corpus.loaded_because)
    loaded = corpus.episodes()
    hedged = Policy.uniform(20.0).with_hedge("read_file", after_sec=0.5, max_share=0.5)
    replay(corpus, hedged, engine="vectorized", seed=1)
    assert corpus.episodes() is loaded
    assert any("hedges" in why for why in corpus.loaded_because)


def test_an_open_corpus_is_returned_as_is(files: dict[str, Path]) -> None:
    """``open_corpus`` of a Corpus is that very corpus (its compiles and episodes shared)."""
    corpus = open_corpus(files["parquet"])
    assert open_corpus(corpus) is corpus
    assert isinstance(corpus, Corpus) and "c.parquet" in repr(corpus)


def test_a_compiled_corpus_opens_and_refuses_what_needs_episodes(episodes: list[Episode]) -> None:
    """A compiled corpus replays vectorized; the twin's need for episodes is refused by name."""
    compiled = compile_corpus(episodes)
    corpus = open_corpus(compiled)
    got = replay(corpus, Policy.uniform(20.0), engine="vectorized").summary
    assert got == pytest.approx(
        replay(episodes, Policy.uniform(20.0), engine="twin").summary, nan_ok=True
    )
    with pytest.raises(ValueError, match="twin.*compiled corpus holds no Episode"):
        replay(corpus, Policy.uniform(20.0), engine="twin")
    with pytest.raises(ValueError, match="censored='observed'"):
        corpus.compiled("observed")


def test_a_missing_path_is_named(tmp_path: Path) -> None:
    """A path that does not exist raises FileNotFoundError naming it, before anything is read."""
    with pytest.raises(FileNotFoundError) as caught:
        open_corpus(tmp_path / "nope.parquet")
    assert caught.value.filename == str(tmp_path / "nope.parquet")


def test_a_bad_line_is_named_by_file_line_and_field(
    episodes: list[Episode], tmp_path: Path
) -> None:
    """A JSONL corpus with a negative duration names the file, the line and the field."""
    rows = [json.loads(e.to_json_line()) for e in episodes[:3]]
    rows[1]["rounds"][0]["calls"][0]["duration_sec"] = -4.0
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(EpisodeFormatError) as caught:
        replay(path, Policy.ouroboros(), engine="vectorized")
    assert f"{path}:2: rounds.0.calls.0.duration_sec" in str(caught.value)


def test_a_file_that_is_not_parquet_is_named(tmp_path: Path) -> None:
    """A ``.parquet`` file holding something else is refused naming the file."""
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(EpisodeFormatError, match="fake.parquet.*not a Parquet file"):
        open_corpus(path).compiled()


def test_a_list_with_something_else_is_refused_by_index(episodes: list[Episode]) -> None:
    """An item that is not an Episode is named by its index; a number is not a corpus."""
    with pytest.raises(TypeError, match=r"corpus\[1\]: expected an Episode, got dict"):
        open_corpus([episodes[0], {"id": "x"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="expected a path"):
        open_corpus(42)  # type: ignore[arg-type]


def test_skip_mode_drops_and_records_the_bad_lines(episodes: list[Episode], tmp_path: Path) -> None:
    """``on_error="skip"`` compiles the good episodes and records each dropped line."""
    lines = [e.to_json_line() for e in episodes[:5]]
    lines.insert(2, "{not json")
    path = tmp_path / "some-bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = open_corpus(path, on_error="skip")
    assert len(corpus.compiled().episode_ids) == 5
    assert [(s.line, s.field) for s in corpus.skipped] == [(3, "<json>")]
    with pytest.raises(EpisodeFormatError, match="some-bad.jsonl:3"):
        open_corpus(path).compiled()


def test_the_observations_are_the_episodes_own(episodes: list[Episode]) -> None:
    """Per-tool estimates, longest returns and exposures from columns equal loops over objects."""
    observations = open_corpus(synth_corpus(40, seed=7)).observations()
    per_tool, pooled = estimates_by_tool(episodes)
    got_tools, got_pooled = observations.estimates_by_tool()
    assert list(got_tools) == list(per_tool)
    for tool, estimate in per_tool.items():
        np.testing.assert_array_equal(got_tools[tool].event_times, estimate.event_times)
        np.testing.assert_array_equal(got_tools[tool].survival_after, estimate.survival_after)
        assert got_tools[tool].tail_hazard == estimate.tail_hazard
    assert got_pooled.tail_hazard == pooled.tail_hazard
    longest: dict[str, float] = {}
    exposure: list[int] = []
    for episode in episodes:
        lines = [call.requested_lines for call in episode.calls]
        exposure += [sum(lines[i:]) for i in range(len(lines))]
        for call in episode.calls:
            duration, done = effective_observation(call)
            if done:
                longest[call.tool] = max(longest.get(call.tool, 0.0), duration)
    assert observations.longest_completed() == longest
    assert observations.exposure_lines().tolist() == exposure


def test_the_handle_is_exported_from_the_package() -> None:
    """``reviewlab.open_corpus`` is the handle's one public door."""
    import reviewlab

    assert reviewlab.open_corpus is corpus_module.open_corpus
    assert "open_corpus" in reviewlab.__all__


@pytest.mark.parametrize(
    "policy",
    [
        Policy.uniform(0.2),
        Policy.ouroboros(),
        Policy.unbounded(),
        Policy.uniform(5.0).with_idle(read_file=0.05),
    ],
    ids=["tight", "ouroboros", "unbounded", "idle"],
)
@pytest.mark.parametrize("censored", ["wedge", "observed"])
def test_the_per_tool_breakdown_needs_no_frame(
    policy: Policy, censored: CensoringMode, files: dict[str, Path]
) -> None:
    """A vectorized replay's per-tool table, read from its arrays, is the one of its call frame."""
    result = replay(files["parquet"], policy, engine="vectorized", censored=censored)
    from_arrays = result.per_tool()
    assert not result.frames_built  # type: ignore[attr-defined]
    pd.testing.assert_frame_equal(from_arrays, per_tool(result.calls), check_exact=True)
