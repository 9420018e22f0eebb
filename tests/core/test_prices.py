"""The price table: TOML in and out, lookups by model name, and errors that name file and key."""

from __future__ import annotations

import math

import pytest

from reviewlab.core._prices import (
    ModelPrice,
    PriceTable,
    PriceTableError,
    load_prices,
    save_prices,
)
from reviewlab.resources import data_path

GOOD = """
currency = "EUR"
default_model = "small"

[slot]
per_sec = 0.5

[zombie]
per_sec = 0.25
wedged_sec = 60.0

[models.small]
input_per_mtok = 1.0
output_per_mtok = 4.0

[models."big-2025"]
input_per_mtok = 10
output_per_mtok = 40
"""


def test_a_table_reads_every_key():
    """Every key of the file lands in the table, integers read as floats."""
    table = PriceTable.from_toml(GOOD)
    assert table.currency == "EUR"
    assert table.default_model == "small"
    assert (table.slot_per_sec, table.zombie_per_sec, table.wedged_zombie_sec) == (0.5, 0.25, 60.0)
    assert table.models["big-2025"] == ModelPrice(input_per_mtok=10.0, output_per_mtok=40.0)


def test_round_trip_through_toml_and_a_file(tmp_path):
    """to_toml → from_toml and save_prices → load_prices give an equal table."""
    table = PriceTable.from_toml(GOOD)
    assert PriceTable.from_toml(table.to_toml()) == table
    save_prices(table, tmp_path / "p.toml")
    assert load_prices(tmp_path / "p.toml") == table
    bare = PriceTable()
    assert PriceTable.from_toml(bare.to_toml()) == bare


def test_model_price_is_per_million_tokens():
    """1 M input tokens cost input_per_mtok; 1 M output tokens cost output_per_mtok."""
    price = ModelPrice(input_per_mtok=2.0, output_per_mtok=8.0)
    assert price.of(1_000_000, 0) == 2.0
    assert price.of(500_000, 250_000) == pytest.approx(1.0 + 2.0)


def test_lookup_by_exact_name_then_by_name_after_the_provider_then_default():
    """A listed name wins; 'openai/small' is priced as 'small'; an unlisted one as the default."""
    table = PriceTable.from_toml(GOOD)
    assert table.price_of("big-2025")[0] == "big-2025"
    assert table.price_of("openai/big-2025")[0] == "big-2025"
    assert table.price_of("someone/else") == ("small", table.models["small"])
    assert table.price_of(None)[0] == "small"


def test_without_a_default_an_unlisted_model_is_unpriced():
    """No default model: an unknown or unlisted model has no price (None), not a zero price."""
    table = PriceTable.from_toml(GOOD.replace('default_model = "small"', ""))
    assert table.price_of("other") == (None, None)
    assert table.price_of(None) == (None, None)


@pytest.mark.parametrize(
    ("edit", "key", "words"),
    [
        (("per_sec = 0.5", "per_sec = -1"), "slot.per_sec", "negative"),
        (("per_sec = 0.5", "per_sec = nan"), "slot.per_sec", "finite"),
        (("per_sec = 0.25", 'per_sec = "cheap"'), "zombie.per_sec", "number"),
        (("wedged_sec = 60.0", "wedged_sec = inf"), "zombie.wedged_sec", "finite"),
        (("output_per_mtok = 4.0", "output_per_mtok = true"), "models.small.output_per_mtok", ""),
        (
            ("output_per_mtok = 4.0", "outptu_per_mtok = 4.0"),
            "models.small.outptu_per_mtok",
            "unknown",
        ),
        (("input_per_mtok = 10\n", ""), "models.big-2025.input_per_mtok", "missing"),
        (('default_model = "small"', 'default_model = "huge"'), "default_model", "huge"),
        (('currency = "EUR"', 'currency = "EUR"\nvat = 0.2'), "vat", "unknown key"),
        (("[slot]\nper_sec = 0.5", "slot = 3"), "slot", "expected a table"),
    ],
)
def test_bad_files_name_the_file_and_the_key(tmp_path, edit, key, words):
    """Each defect is one PriceTableError naming the file and the dotted key."""
    path = tmp_path / "prices.toml"
    path.write_text(GOOD.replace(*edit), encoding="utf-8")
    with pytest.raises(PriceTableError) as caught:
        load_prices(path)
    assert caught.value.where == str(path)
    assert caught.value.key == key
    assert str(path) in str(caught.value) and key in str(caught.value)
    assert words in str(caught.value)


def test_toml_syntax_errors_and_missing_files_name_the_file(tmp_path):
    """A TOML syntax error names the file and the line; a missing file says so."""
    path = tmp_path / "broken.toml"
    path.write_text("[slot\nper_sec = 1\n", encoding="utf-8")
    with pytest.raises(PriceTableError, match=r"broken\.toml: <toml>: not valid TOML.*line 1"):
        load_prices(path)
    with pytest.raises(PriceTableError, match=r"nowhere\.toml: <file>: no such file"):
        load_prices(tmp_path / "nowhere.toml")


def test_a_table_built_in_python_is_checked_too():
    """Negative prices and a default model that is not listed are refused in code as in files."""
    with pytest.raises(PriceTableError, match="slot.per_sec"):
        PriceTable(slot_per_sec=-0.1)
    with pytest.raises(PriceTableError, match="default_model"):
        PriceTable(default_model="ghost")
    with pytest.raises(PriceTableError, match="models.m.input_per_mtok"):
        PriceTable(models={"m": ModelPrice(input_per_mtok=math.inf, output_per_mtok=1.0)})


def test_the_shipped_sample_table_loads_and_names_its_sources():
    """reviewlab/data/prices.toml loads, lists its models and says where their prices come from."""
    path = data_path("prices.toml")
    table = load_prices(path)
    assert set(table.models) == {
        "gpt-4o-mini",
        "claude-3-5-sonnet-20241022",
        "claude-3-5-sonnet-latest",
    }
    assert table.models["gpt-4o-mini"] == ModelPrice(0.15, 0.6)
    assert table.models["claude-3-5-sonnet-20241022"] == ModelPrice(3.0, 15.0)
    text = path.read_text(encoding="utf-8")
    assert "https://openai.com/api/pricing/" in text
    assert "https://docs.anthropic.com/en/docs/about-claude/pricing" in text
    assert "2026-12-01" in text
