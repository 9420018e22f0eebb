"""A tiny stock-keeping library (the reviewlab demo workspace)."""

from inventory.pricing import BULK_DISCOUNT, BULK_THRESHOLD, price_line
from inventory.stock import OutOfStock, Stock

__all__ = ["BULK_DISCOUNT", "BULK_THRESHOLD", "OutOfStock", "Stock", "price_line"]
