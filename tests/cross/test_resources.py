"""Shipped files have names every entry point takes, and the real logs ship with their licences."""

from __future__ import annotations

import hashlib
import re

import pytest

from reviewlab import resources


def test_bundled_names_resolve_to_shipped_files():
    """Each short name resolves, with or without the prefix, to a file or folder that exists."""
    for name in resources.BUNDLED_NAMES:
        assert resources.bundled(name).exists(), name
        assert resources.bundled(f"bundled:{name}") == resources.bundled(name)
    assert resources.bundled("bundled:corpus") == resources.corpus_path()
    assert resources.bundled("bundled:incident") == resources.incident_path()
    log = resources.bundled("bundled:real-logs/openhands/basic.json")
    assert log.is_file() and log.parent.parent == resources.real_logs_dir()


def test_unknown_bundled_names_are_refused_with_the_known_ones():
    """A typo'd name lists the names there are; a missing log lists the shipped logs."""
    with pytest.raises(ValueError, match="no such shipped file; known: bundled:corpus"):
        resources.bundled("bundled:corpse")
    with pytest.raises(ValueError, match="openhands/basic.json"):
        resources.bundled("bundled:real-logs/openhands/nope.json")
    with pytest.raises(ValueError, match="no such shipped file"):
        resources.bundled("bundled:corpus/x")


def test_resolve_leaves_other_paths_alone(tmp_path):
    """resolve() maps only bundled: names; a plain path comes back as given."""
    assert resources.resolve(tmp_path / "c.jsonl") == tmp_path / "c.jsonl"
    assert resources.resolve("bundled:incident") == resources.incident_path()


def test_every_shipped_log_is_byte_exact_and_licensed():
    """Each shipped real log matches the sha256 its provenance table gives, and the licence file
    names every folder."""
    logs = resources.real_logs_dir()
    table = (logs / "README.md").read_text(encoding="utf-8")
    sums = dict(re.findall(r"\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|", table))
    shipped = sorted(
        p.relative_to(logs).as_posix() for p in logs.rglob("*") if p.is_file() and p.suffix != ".md"
    )
    assert sorted(sums) == shipped
    for name, digest in sums.items():
        assert hashlib.sha256((logs / name).read_bytes()).hexdigest() == digest, name
    licences = (logs / "LICENSES.md").read_text(encoding="utf-8")
    for folder in {name.split("/")[0] for name in shipped}:
        assert f"`{folder}/" in licences, folder
    assert "MIT" in licences


def test_open_corpus_takes_bundled_names():
    """open_corpus('bundled:incident') opens the shipped incident day, like its path does."""
    from reviewlab import open_corpus

    by_name = open_corpus("bundled:incident")
    by_path = open_corpus(resources.incident_path())
    assert len(by_name) == len(by_path) > 0
    assert [e.id for e in by_name.episodes()][:5] == [e.id for e in by_path.episodes()][:5]
    with pytest.raises(ValueError, match="no such shipped file"):
        open_corpus("bundled:incidnet")
