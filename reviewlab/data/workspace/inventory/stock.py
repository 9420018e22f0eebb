"""Quantities on hand and reorder points, per SKU."""

from __future__ import annotations


class OutOfStock(Exception):
    """More units were asked for than are on hand."""


class Stock:
    """Units on hand per SKU, each with the point at which it must be reordered."""

    def __init__(self) -> None:
        self._on_hand: dict[str, int] = {}
        self._reorder_at: dict[str, int] = {}

    def add(self, sku: str, units: int, reorder_at: int = 0) -> None:
        """Receive ``units`` of ``sku``; ``reorder_at`` sets its reorder point."""
        if units < 0:
            raise ValueError(f"units must not be negative, got {units}")
        self._on_hand[sku] = self._on_hand.get(sku, 0) + units
        self._reorder_at[sku] = reorder_at

    def remove(self, sku: str, units: int) -> int:
        """Take ``units`` of ``sku`` out of stock and return what is left."""
        left = self._on_hand.get(sku, 0) - units
        if left < 0:
            raise OutOfStock(f"{sku}: asked for {units}, have {self._on_hand.get(sku, 0)}")
        self._on_hand[sku] = left
        return left

    def on_hand(self, sku: str) -> int:
        """Units of ``sku`` on hand (0 for an unknown SKU)."""
        return self._on_hand.get(sku, 0)

    def needs_reorder(self, sku: str) -> bool:
        """Whether ``sku`` has reached its reorder point."""
        return self._on_hand.get(sku, 0) < self._reorder_at.get(sku, 0)

    def low_items(self) -> list[str]:
        """Every SKU that needs reordering, sorted."""
        return sorted(sku for sku in self._on_hand if self.needs_reorder(sku))
