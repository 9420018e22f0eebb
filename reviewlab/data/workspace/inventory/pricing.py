"""Pricing of order lines, with a bulk discount."""

from __future__ import annotations

BULK_THRESHOLD = 50
"""Lines of at least this many units get the bulk discount."""
BULK_DISCOUNT = 0.10
"""Fraction taken off the price of a bulk line."""


def price_line(unit_price: float, quantity: int) -> float:
    """Price of ``quantity`` units at ``unit_price``, rounded to cents."""
    if quantity < 0:
        raise ValueError(f"quantity must not be negative, got {quantity}")
    total = unit_price * quantity
    if quantity > BULK_THRESHOLD:
        total -= total * BULK_DISCOUNT
    return round(total, 2)


def price_order(lines: list[tuple[float, int]]) -> float:
    """Total price of an order given as ``(unit_price, quantity)`` lines."""
    return round(sum(price_line(price, quantity) for price, quantity in lines), 2)
