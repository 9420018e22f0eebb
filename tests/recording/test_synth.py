"""Synthetic corpora and the incident day: seeded, sane, and what the data README says they are."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from reviewlab.recording import episodes_frame, load_episodes
from reviewlab.recording.synth import (
    INCIDENT_EPISODE_ID,
    INCIDENT_SLOT,
    TOOLS,
    WEDGE_SEC,
    SynthSpec,
    make_incident,
    synth_corpus,
    write_incident,
    write_synthetic,
)

DATA = Path(__file__).resolve().parents[2] / "data"


def test_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    """Two runs with one seed write identical files; another seed writes a different one."""
    write_synthetic(tmp_path / "a.jsonl.gz", 300, seed=5)
    write_synthetic(tmp_path / "b.jsonl.gz", 300, seed=5)
    write_synthetic(tmp_path / "c.jsonl.gz", 300, seed=6)
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert (tmp_path / "a.jsonl.gz").read_bytes() != (tmp_path / "c.jsonl.gz").read_bytes()


def test_every_size_gives_valid_episodes_with_unique_ids() -> None:
    """Corpora of any size are valid and have n unique ids."""
    for n in (0, 1, 57):
        corpus = synth_corpus(n, seed=1)
        assert len({ep.id for ep in corpus}) == n
        assert all(ep.source == "synthetic" for ep in corpus)


def test_distributions_are_sane() -> None:
    """Per-tool medians follow the profiles, tails are heavy, wedges
    rare and censored, sends positive."""
    corpus = synth_corpus(3000, seed=0)
    frame = episodes_frame(corpus)
    done = frame[frame.completed]
    for tool, profile in TOOLS.items():
        durations = done[done.tool == tool].duration_sec
        assert durations.median() == pytest.approx(profile.median_sec, rel=0.3), tool
        assert durations.quantile(0.99) > 8 * durations.median(), tool  # heavy tail
    shares = frame.tool.value_counts(normalize=True)
    assert shares["read_file"] == pytest.approx(0.5, abs=0.03)
    censored = frame[~frame.completed]
    assert 0 < len(censored) < 0.01 * len(frame)
    assert (censored.duration_sec >= 1800).all() and (censored.duration_sec <= 21600).all()
    wedged = {ep.id for ep in corpus if ep.end_reason == "wedged"}
    assert wedged == set(censored.episode_id)
    for ep in corpus:
        if ep.end_reason == "wedged":
            assert not ep.calls[-1].completed and ep.rounds[-1].calls  # the wedge is the last thing
        else:
            assert ep.rounds[-1].calls == [] and all(c.completed for c in ep.calls)
    sends = np.array([r.send_sec for ep in corpus for r in ep.rounds])
    assert (sends > 0).all() and np.median(sends) == pytest.approx(2.0, rel=0.1)
    has_deadline = np.mean([ep.deadline_sec is not None for ep in corpus])
    assert has_deadline == pytest.approx(0.3, abs=0.04)
    assert {ep.deadline_sec for ep in corpus} <= {None, 300.0, 600.0, 900.0, 1800.0}
    assert {ep.slot for ep in corpus} == {f"slot-{i}" for i in range(1, 9)}
    starts = [ep.started_at for ep in corpus]
    assert starts == sorted(starts)
    gaps = np.diff([s.timestamp() for s in starts])
    assert gaps.mean() == pytest.approx(45.0, rel=0.1)


def test_read_extents_stay_inside_their_files() -> None:
    """Every read asks for lines of one synthetic file, matching its
    args, within the file's length."""
    corpus = synth_corpus(500, seed=3)
    reads = [c for ep in corpus for c in ep.calls if c.tool == "read_file"]
    assert reads
    for call in reads:
        assert call.extent is not None
        assert (call.args["path"], call.args["start_line"], call.args["end_line"]) == (
            call.extent.path,
            call.extent.start_line,
            call.extent.end_line,
        )
        assert 1 <= call.extent.start_line <= call.extent.end_line
    assert all(c.extent is None for ep in corpus for c in ep.calls if c.tool != "read_file")


def test_spec_overrides_and_validation() -> None:
    """Overrides replace spec fields; nonsense parameters are refused naming the parameter."""
    calm = synth_corpus(200, seed=0, deadline_share=1.0, slots=2)
    assert all(ep.deadline_sec is not None for ep in calm)
    assert {ep.slot for ep in calm} == {"slot-1", "slot-2"}
    with pytest.raises(ValueError, match="mean_gap_sec"):
        SynthSpec(mean_gap_sec=-1.0)
    with pytest.raises(ValueError, match="deadline_share"):
        synth_corpus(1, deadline_share=1.5)
    with pytest.raises(ValueError, match="n must not be negative"):
        synth_corpus(-1)


def test_the_incident_has_its_26160_second_censored_query_code() -> None:
    """One query_code on reviewer-3 never returns (26,160 s) and that slot is silent meanwhile."""
    day = make_incident(seed=0)
    censored = [(ep, c) for ep in day for c in ep.calls if not c.completed]
    assert len(censored) == 1
    wedged, call = censored[0]
    assert (wedged.id, wedged.slot, wedged.end_reason) == (
        INCIDENT_EPISODE_ID,
        INCIDENT_SLOT,
        "wedged",
    )
    assert (call.tool, call.duration_sec, WEDGE_SEC) == ("query_code", 26160.0, 26160.0)
    assert wedged.calls[-1] is call
    silent_until = wedged.started_at + timedelta(
        seconds=sum(r.send_sec + sum(c.duration_sec for c in r.calls) for r in wedged.rounds)
    )
    same_slot = [ep for ep in day if ep.slot == INCIDENT_SLOT and ep.id != wedged.id]
    assert not [ep for ep in same_slot if wedged.started_at <= ep.started_at < silent_until]
    assert [ep for ep in same_slot if ep.started_at >= silent_until]  # the slot resumes afterwards
    others = {ep.slot for ep in day if ep.slot != INCIDENT_SLOT}
    assert len(others) == 5
    assert all(ep.started_at.date() == wedged.started_at.date() for ep in day)
    assert len({ep.id for ep in day}) == len(day)


def test_incident_same_seed_same_bytes(tmp_path: Path) -> None:
    """The incident file is a function of its seed."""
    write_incident(tmp_path / "a.jsonl", seed=2)
    write_incident(tmp_path / "b.jsonl", seed=2)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_bundled_files_are_what_their_commands_make(tmp_path: Path) -> None:
    """data/ holds exactly the bytes the commands in data/README.md produce."""
    write_synthetic(tmp_path / "synthetic-1k.jsonl.gz", 1000, seed=0)
    write_incident(tmp_path / "wedged-query-code.jsonl", seed=0)
    for made, bundled in (
        (tmp_path / "synthetic-1k.jsonl.gz", DATA / "episodes" / "synthetic-1k.jsonl.gz"),
        (tmp_path / "wedged-query-code.jsonl", DATA / "incidents" / "wedged-query-code.jsonl"),
    ):
        assert (
            hashlib.sha256(made.read_bytes()).hexdigest()
            == hashlib.sha256(bundled.read_bytes()).hexdigest()
        )
        assert hashlib.sha256(bundled.read_bytes()).hexdigest() in (DATA / "README.md").read_text()
    assert len(load_episodes(DATA / "episodes" / "synthetic-1k.jsonl.gz")) == 1000
