"""Token usage as the sources report it: one reader for every spelling of a usage record.

A usage record is a mapping from a model reply (OpenAI ``usage``, litellm's in OpenHands,
Inspect AI's ``output.usage``) or a span's attributes (OTel GenAI ``gen_ai.usage.*``).
:func:`token_counts` reads its input and output counts; a count it cannot read is ``None``
(unknown), never 0, so a cost over it says the round was unpriced.
"""

from __future__ import annotations

_INPUT_KEYS = ("input_tokens", "prompt_tokens", "gen_ai.usage.input_tokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens", "gen_ai.usage.output_tokens")


def token_counts(usage: object) -> tuple[int | None, int | None]:
    """``(input_tokens, output_tokens)`` of a usage record; ``None`` for a count it lacks.

    Reads the spellings the sources use: ``input_tokens``/``output_tokens`` (Inspect AI),
    ``prompt_tokens``/``completion_tokens`` (OpenAI, litellm in OpenHands) and the OTel GenAI
    attributes ``gen_ai.usage.*``. A count that is not a whole number >= 0 is unknown.
    """
    if not isinstance(usage, dict):
        return None, None
    return _count(usage, _INPUT_KEYS), _count(usage, _OUTPUT_KEYS)


def _count(usage: dict[str, object], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None
