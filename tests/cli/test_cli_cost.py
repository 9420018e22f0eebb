"""The CLI prices replays: ``sweep --prices`` adds cost columns, ``tune --objective cost
--prices`` recommends a policy and states its cost per episode against ouroboros's, and bad
price files are one line naming the file and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURES

from reviewlab.analysis._cost import replay_cost
from reviewlab.cli import main
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._prices import load_prices
from reviewlab.engines._replay import replay
from reviewlab.recording._files import load_episodes

FIXTURE = FIXTURES / "openhands/multi_swe_bench_examples_output.jsonl"
PRICES = """
currency = "USD"

[slot]
per_sec = 0.001

[zombie]
per_sec = 0.0005

[models."meta-llama/llama-4-maverick"]
input_per_mtok = 0.17
output_per_mtok = 0.6
"""


@pytest.fixture()
def real(tmp_path):
    """The three Multi-SWE-bench runs, imported by the CLI, and a price table for their model."""
    corpus = tmp_path / "real.jsonl"
    assert main(["import", "auto", str(FIXTURE), "-o", str(corpus)]) == 0
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES, encoding="utf-8")
    return corpus, prices


def test_tune_objective_cost_states_both_costs_per_episode(real, tmp_path, capsys):
    """tune --objective cost writes a policy and prints its cost per episode and the base's,
    each what a replay of that policy, priced independently, gives."""
    corpus, prices = real
    out = tmp_path / "tuned.toml"
    capsys.readouterr()
    code = main(
        ["tune", str(corpus), "--objective", "cost", "--prices", str(prices), "-o", str(out)]
    )
    text = capsys.readouterr().out
    assert code == 0
    found = dict(
        re.findall(r"cost per episode: (recommended|base \(ouroboros\)) ([0-9.e-]+) USD", text)
    )
    assert set(found) == {"recommended", "base (ouroboros)"}
    assert "0 of 105 rounds unpriced" in text
    episodes = load_episodes(corpus)
    table = load_prices(prices)
    tuned = replay_cost(replay(episodes, Policy.load(out), engine="twin"), episodes, table)
    base = replay_cost(replay(episodes, TimeoutPolicy.ouroboros(), engine="twin"), episodes, table)
    assert float(found["recommended"]) == pytest.approx(tuned.summary["cost_per_episode"], 1e-5)
    assert float(found["base (ouroboros)"]) == pytest.approx(base.summary["cost_per_episode"], 1e-5)
    assert float(found["recommended"]) <= float(found["base (ouroboros)"])


def test_sweep_prices_adds_cost_columns_equal_to_an_independent_replay(real, tmp_path, capsys):
    """sweep --prices writes cost columns per point; each equals the twin's replay, priced."""
    corpus, prices = real
    out = tmp_path / "sweep.csv"
    capsys.readouterr()
    assert (
        main(["sweep", str(corpus), "--scale", "0.01,1", "--prices", str(prices), "-o", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "cost_per_episode" in text and "unpriced_rounds" in text
    frame = pd.read_csv(out)
    episodes = load_episodes(corpus)
    table = load_prices(prices)
    for scale, cost in zip(frame["scale"], frame["cost_per_episode"], strict=True):
        policy = TimeoutPolicy.ouroboros().scaled(scale)
        expected = replay_cost(replay(episodes, policy, engine="twin"), episodes, table)
        assert cost == pytest.approx(expected.summary["cost_per_episode"], rel=1e-9)
    assert (frame["unpriced_rounds"] == 0).all()
    assert frame["token_cost"].nunique() == 1  # as recorded, every point sends the same rounds


def test_the_sample_table_prices_the_bundled_corpus_and_says_what_it_could_not(capsys):
    """--prices sample works on the bundled corpus, whose rounds carry no usage: all unpriced."""
    from reviewlab.resources import corpus_path

    code = main(["tune", str(corpus_path()), "--objective", "cost", "--prices", "sample"])
    text = capsys.readouterr().out
    assert code == 0
    assert re.search(r"base \(ouroboros\) [0-9.e-]+ USD \((\d+) of \1 rounds unpriced", text)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[slot]\nper_sec = -2\n", "slot.per_sec: must not be negative"),
        ("[models.m]\ninput_per_mtok = 1\n", "models.m.output_per_mtok: missing"),
        ("[slot\n", "<toml>: not valid TOML"),
    ],
)
def test_a_bad_price_file_is_one_line_naming_file_and_key(real, tmp_path, capsys, content, words):
    """A bad --prices file exits 2 with one error line naming the file and the key."""
    corpus, _ = real
    bad = tmp_path / "bad.toml"
    bad.write_text(content, encoding="utf-8")
    capsys.readouterr()
    assert main(["sweep", str(corpus), "--prices", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and words in err[0]


def test_objective_cost_without_prices_is_refused_before_any_replay(real, capsys):
    """--objective cost needs --prices: exit 2, saying so."""
    corpus, _ = real
    assert main(["tune", str(corpus), "--objective", "cost"]) == 2
    assert "--prices: the objective 'cost' needs a price table" in capsys.readouterr().err


def test_sweep_over_hedge_delays_and_breakers_matches_each_points_replay(tmp_path, capsys):
    """--hedge and --breaker cross into 4 points; each row is replay() of that policy."""
    from reviewlab.core._breaker import BreakerRule
    from reviewlab.resources import corpus_path

    episodes = load_episodes(corpus_path())[:200]
    corpus = tmp_path / "c.jsonl"
    from reviewlab.recording._files import save_episodes

    save_episodes(episodes, corpus)
    out = tmp_path / "s.csv"
    argv = ["sweep", str(corpus), "--base", "uniform:1", "--hedge", "read_file=0.2,1"]
    argv += ["--breaker", "0,2", "--breaker-scope", "slot", "-o", str(out)]
    capsys.readouterr()
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "hedge.read_file.after_sec" in text and "breaker.consecutive" in text
    frame = pd.read_csv(out)
    assert len(frame) == 4
    for row in frame.to_dict("records"):
        policy = Policy.uniform(1.0).with_hedge(
            "read_file", after_sec=row["hedge.read_file.after_sec"], max_share=0.05
        )
        if row["breaker.consecutive"]:
            policy = policy.with_breaker(2, cooldown_rounds=2, scope="slot")
            assert row["breaker.scope"] == "slot"
        expected = replay(episodes, policy, engine="twin").summary
        assert row["hedges"] == expected["hedges"]
        assert row["wall_p99_sec"] == pytest.approx(expected["wall_p99_sec"])
        assert row["abandoned_call_rate"] == pytest.approx(expected["abandoned_call_rate"])
    assert BreakerRule(2, scope="slot").scope == "slot"


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--breaker", "1.5"], "--breaker: expected whole numbers"),
        (["--hedge", "read_file=0.5", "--hedge-share", "0"], "--hedge-share"),
        (["--hedge", "read_file"], "--hedge: expected TOOL=SEC"),
    ],
)
def test_bad_hedge_and_breaker_options_are_one_line(real, capsys, extra, words):
    """A bad hedge or breaker option exits 2 naming the option."""
    corpus, _ = real
    capsys.readouterr()
    assert main(["sweep", str(corpus), *extra]) == 2
    assert words in capsys.readouterr().err


def test_import_says_how_many_rounds_report_token_usage(tmp_path, capsys):
    """reviewlab import counts the rounds with usage: all but one in basic_gui_mode.json."""
    out = tmp_path / "gui.jsonl"
    capsys.readouterr()
    source = Path(__file__).resolve().parents[1] / "fixtures/openhands/basic_gui_mode.json"
    assert main(["import", "auto", str(source), "-o", str(out)]) == 0
    assert "token usage: 4 of 5 round(s) report it" in capsys.readouterr().out


def test_a_parquet_corpus_is_priced_from_its_usage_columns(real, tmp_path, capsys):
    """convert to Parquet, sweep --prices: the same cost columns as from the JSONL corpus."""
    corpus, prices = real
    parquet = tmp_path / "real.parquet"
    assert main(["convert", str(corpus), str(parquet)]) == 0
    frames = []
    for source in (corpus, parquet):
        out = tmp_path / f"{source.suffix[1:]}.csv"
        assert (
            main(
                ["sweep", str(source), "--scale", "0.01,1", "--prices", str(prices), "-o", str(out)]
            )
            == 0
        )
        frames.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert (frames[1]["priced_rounds"] > 0).all()


def test_sweep_with_two_price_tables_names_each_row(real, tmp_path, capsys):
    """--prices twice: each point appears once per table, named by the file's stem."""
    corpus, prices = real
    dear = tmp_path / "dear.toml"
    dear.write_text(PRICES.replace("per_sec = 0.001", "per_sec = 0.1"), encoding="utf-8")
    out = tmp_path / "s.csv"
    capsys.readouterr()
    argv = [
        "sweep",
        str(corpus),
        "--scale",
        "0.01,1",
        "--prices",
        str(prices),
        "--prices",
        str(dear),
    ]
    assert main([*argv, "-o", str(out)]) == 0
    assert "prices" in capsys.readouterr().out
    frame = pd.read_csv(out)
    assert frame["prices"].tolist() == ["prices", "dear"] * 2
    assert (frame["slot_cost"][1::2].to_numpy() > frame["slot_cost"][0::2].to_numpy()).all()
