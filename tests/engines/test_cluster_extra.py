"""dask[distributed] is the ``cluster`` extra: the base install replays, sweeps, tunes and runs
its commands without importing it, and a cluster asked for without it says in one line which
extra installs it (pyproject.toml, reviewlab/engines/cluster/_connect.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from reviewlab.recording._files import load_episodes
from reviewlab.recording.columnar import write_columnar
from reviewlab.resources import data_path

REPO = Path(__file__).resolve().parents[2]
NO_DASK = textwrap.dedent(
    """
    import importlib.abc
    import sys

    class _NoDask(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("dask", "distributed"):
                raise ImportError(f"No module named {name!r} (the base install has none)")
            return None

    sys.meta_path.insert(0, _NoDask())
    """
)
"""A prelude that makes dask and distributed unimportable, as in a base install."""


def run_without_dask(body: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``body`` in a fresh interpreter in which dask cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", NO_DASK + textwrap.dedent(body)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_the_base_install_declares_no_dask_and_the_cluster_extra_does() -> None:
    """dask and distributed are not base dependencies; the cluster extra brings
    dask[distributed] and the test extra installs it."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = " ".join(project["dependencies"]).lower()
    assert "dask" not in base and "distributed" not in base
    assert any(
        req.startswith("dask[distributed]") for req in project["optional-dependencies"]["cluster"]
    )
    assert "reviewlab[cluster]" in project["optional-dependencies"]["test"]


def test_replay_sweep_tune_and_the_cli_run_without_dask(tmp_path: Path) -> None:
    """With dask unimportable, every engine in-process, a sweep, the tuner, Policy.parse and
    `reviewlab replay` work, and nothing imported dask behind their back."""
    done = run_without_dask(
        """
        import sys
        from reviewlab import Policy, Twin, Vectorized, recommend, replay, replay_bounds, sweep
        from reviewlab import load_episodes, make_grid
        from reviewlab.cli import main
        from reviewlab.resources import data_path

        corpus = load_episodes(data_path("episodes/synthetic-1k.jsonl.gz"))[:60]
        policy = Policy.parse("uniform:30")
        assert replay(corpus, policy, engine=Twin(slots=4)).summary["episodes"] == 60
        assert replay(corpus, policy, engine=Vectorized()).summary["episodes"] == 60
        assert replay_bounds(corpus, policy, engine="vectorized").summary.shape[1] == 2
        assert len(sweep(corpus, make_grid(scales=[0.5, 1.0]))) == 2
        recommend(corpus, min_calls=5)
        assert main(["replay", "bundled:incident"]) == 0
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
        assert not loaded, loaded
        print("no dask")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no dask" in done.stdout


def test_a_cluster_without_the_extra_names_it_in_one_line(tmp_path: Path) -> None:
    """replay(parts, client=ADDRESS) and `reviewlab sweep --scheduler` without dask: one line
    naming the cluster extra, not a traceback from deep inside."""
    episodes = load_episodes(data_path("episodes/synthetic-1k.jsonl.gz"))[:20]
    write_columnar(episodes, tmp_path / "parts", rows_per_partition=10)
    done = run_without_dask(
        """
        from reviewlab import replay
        try:
            replay("parts", client="tcp://127.0.0.1:9")
        except ValueError as exc:
            print("refused:", exc)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: client: a Dask cluster needs dask.distributed" in done.stdout
    assert "pip install 'reviewlab[cluster]'" in done.stdout
    done = run_without_dask(
        """
        import sys
        from reviewlab.cli import main
        sys.exit(main(["sweep", "parts", "--scale", "1", "--scheduler", "tcp://127.0.0.1:9"]))
        """,
        tmp_path,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert "--scheduler" in lines[0] and "reviewlab[cluster]" in lines[0]
