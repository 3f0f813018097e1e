"""A value set at gate 1 back to the evolved one (`param X: 4`, then `param X: 1.5`): the EndpointPickerConfig's
comment says it was set back, never "re-calibrated at gate 1 to 1.5 (BLIS: 1.5)", the default presented as a
re-calibration (found by a researcher rehearsing their own program)."""

from __future__ import annotations

from bot.golang.analyze import analyze
from bot.golang.generate import generate
from bot.golang.source import load_evolved_source

from .conftest import EXAMPLE

TYPE = "evolved-adaptive-scorer"


def _comment_of(config: str, name: str) -> str:
    """The comment lines above NAME's line in the plugin's parameters, joined."""
    lines = config.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith(f"{name}: ") and not ln.strip().startswith("#"))
    above = []
    for ln in reversed(lines[:at]):
        if not ln.strip().startswith("#"):
            break
        above.insert(0, ln.strip().lstrip("# "))
    return " ".join(above)


def test_a_value_set_back_to_the_evolved_one_is_not_called_a_recalibration(dictionary):
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    back = generate(src, an, dictionary, TYPE, options={"deployed": {"deltaThreshold": 0.2}}).epp_config
    assert _comment_of(back, "deltaThreshold") == "deltaThreshold: set back at gate 1 to the evolved value, 0.2."
    moved = generate(src, an, dictionary, TYPE, options={"deployed": {"deltaThreshold": 0.3}}).epp_config
    assert "re-calibrated at gate 1 to 0.3 for this deployment (BLIS: 0.2)" in _comment_of(moved, "deltaThreshold")


def test_a_simulator_scale_value_set_back_keeps_its_warning(dictionary):
    """Set back to BLIS's 7, the threshold is at simulator scale again: the comment still says so."""
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    config = generate(src, an, dictionary, TYPE, options={"deployed": {"loadHighThreshold": 7}}).epp_config
    note = _comment_of(config, "loadHighThreshold")
    assert note.startswith("loadHighThreshold: simulator scale") and "re-calibrate to this deployment's" in note
    assert note.endswith("; set back at gate 1 to the evolved value.") and "re-calibrated at gate 1" not in note
