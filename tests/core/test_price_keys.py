"""Model names with several slashes in price tables (reviewlab/core/_prices.py): a name is priced
by its longest listed tail after a ``/``, listed names may hold slashes, and a listed name with
an empty part is an error naming the key."""

from __future__ import annotations

import pytest

from reviewlab.core._prices import ModelPrice, PriceTable, PriceTableError, load_prices

TABLE = """
[models.gpt-4o-mini]
input_per_mtok = 0.15
output_per_mtok = 0.6

[models.gpt-4o]
input_per_mtok = 2.5
output_per_mtok = 10.0

[models."azure/gpt-4o"]
input_per_mtok = 2.75
output_per_mtok = 11.0

[models."a/b/c"]
input_per_mtok = 1.0
output_per_mtok = 1.0
"""


@pytest.fixture
def table() -> PriceTable:
    return PriceTable.from_toml(TABLE)


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),  # exact
        ("openai/gpt-4o-mini", "gpt-4o-mini"),  # after the provider
        ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),  # after every prefix
        ("azure/gpt-4o", "azure/gpt-4o"),  # a listed name with a slash, exact
        ("router/azure/gpt-4o", "azure/gpt-4o"),  # the longest listed tail wins over gpt-4o
        ("openai/gpt-4o", "gpt-4o"),
        ("a/b/c", "a/b/c"),
        ("x/a/b/c", "a/b/c"),
        ("b/c", None),  # a tail of a listed name is not that name
        ("a/b", None),
        ("gpt-4o-mini/extra", None),  # the name must end the model, not start it
    ],
)
def test_a_model_is_priced_by_its_longest_listed_tail(table, model, priced_as):
    """Exact name first, then what follows each '/', longest first; no default: unpriced."""
    name, price = table.price_of(model)
    assert name == priced_as
    assert price == (None if priced_as is None else table.models[priced_as])


def test_names_with_slashes_survive_a_round_trip(table):
    """A listed name with several slashes is written and read back unchanged."""
    again = PriceTable.from_toml(table.to_toml())
    assert again == table
    assert set(again.models) == {"gpt-4o-mini", "gpt-4o", "azure/gpt-4o", "a/b/c"}


@pytest.mark.parametrize("name", ["a//b", "/b", "b/", "a/b//c", "/"])
def test_a_listed_name_with_an_empty_part_names_the_file_and_the_key(tmp_path, name):
    """A model name with an empty part between slashes is refused, naming file and key."""
    path = tmp_path / "prices.toml"
    path.write_text(TABLE + f'\n[models."{name}"]\ninput_per_mtok = 1\noutput_per_mtok = 1\n')
    with pytest.raises(PriceTableError) as caught:
        load_prices(path)
    assert caught.value.where == str(path)
    assert caught.value.key == f"models.{name}"
    assert f"{path}: models.{name}: " in str(caught.value) and "empty" in str(caught.value)


def test_a_table_built_in_python_checks_the_names_too():
    """The same rule holds for a table built in code."""
    price = ModelPrice(input_per_mtok=1.0, output_per_mtok=1.0)
    with pytest.raises(PriceTableError, match=r"models\.openai//gpt"):
        PriceTable(models={"openai//gpt": price})
    with pytest.raises(PriceTableError, match=r"models\.: expected a non-empty model name"):
        PriceTable(models={"": price})
    assert PriceTable(models={"p/q/r": price}).price_of("o/p/q/r")[0] == "p/q/r"
