"""Testing reviewlab and code built on it: doubles, builders and the engine-conformance suite.

- :class:`ManualClock`, :func:`manual_clock`, :class:`WedgedRegistry`, :func:`wedged_factory`
  (:mod:`reviewlab.live._doubles`), :class:`ScriptedModel` and :func:`tool_call`: live doubles.
- :mod:`reviewlab.testing._conformance`: every engine and entry point agrees with the twin call
  for call under every policy part, censoring mode and reaction, or refuses the part by name;
  :mod:`reviewlab.testing._summaries` holds an engine without frames (``Cluster``) to the twin's
  summary and any engine object to its own declaration; :mod:`reviewlab.testing._overlap` runs
  real-clock replays side by side with the heap frozen.

The package sits at the top of the layers: it drives every engine and the CLI, and nothing in
``reviewlab`` imports it.
"""

from reviewlab.core._deadline import clock_scope
from reviewlab.live._doubles import (
    ManualClock,
    RegistryFactory,
    WedgedRegistry,
    manual_clock,
    wedged_factory,
)
from reviewlab.live._episode import ScriptedModel, tool_call

__all__ = [
    "ManualClock",
    "RegistryFactory",
    "ScriptedModel",
    "WedgedRegistry",
    "clock_scope",
    "manual_clock",
    "tool_call",
    "wedged_factory",
]
