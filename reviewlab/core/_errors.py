"""The error a refused value raises: it names the parameter it concerns as an attribute.

:class:`ParameterError` carries ``parameter`` (the library's name for what was refused: a
keyword such as ``time_scale``, a field path such as ``narrowing.fraction``, or the place a
value was read from) and ``reason``; its text is ``"{parameter}: {reason}"``. A caller that
names things otherwise (the command line names options) reads the attribute, never the text.
It is a ``ValueError``, so code that catches ``ValueError`` keeps catching it.
"""

from __future__ import annotations


class ParameterError(ValueError):
    """A value given for ``parameter`` is refused, for ``reason`` (one line)."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}")
        self.parameter = parameter
        self.reason = reason

    def __reduce__(self) -> tuple[type[ParameterError], tuple[str, str]]:
        # Rebuilt from its two parts (a Dask worker's error crosses a pickle).
        return type(self), (self.parameter, self.reason)

    def within(self, outer: str) -> ParameterError:
        """The same refusal named inside ``outer`` (``breaker`` + ``cooldown_sec`` →
        ``breaker.cooldown_sec``), of the same type."""
        return type(self)(f"{outer}.{self.parameter}", self.reason)
