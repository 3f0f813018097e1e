"""Values a person sets at gate 1 that alone take agreement below the floor: their decision, not a blocking gap.

Found by a researcher following gate 1's own advice (`param qThreshold: 24`, pod scale): the hazard cleared, and an
IMPORTANT `translate.fidelity-below-floor` whose largest cause was `deployed-values` took its place, so the review
could never converge whichever way they went. When agreement with the evolved values is at or above the floor, the
finding records the choice (SUGGESTION, naming the values and both figures); when other causes alone keep agreement
below the floor, it still blocks, and says that changing the values would not be enough.
"""

from __future__ import annotations

import pytest

from bot.golang.translate import CHECK_BELOW_FLOOR, CHECK_CHOSEN_VALUES, translate
from bot.model import Severity

from .conftest import EXAMPLE, translate_path

pytestmark = pytest.mark.slow

FEEDBACK = "param deltaThreshold: 50"


def _fidelity_findings(tr):
    return [f for f in tr.findings if f.check in (CHECK_BELOW_FLOOR, CHECK_CHOSEN_VALUES)]


def test_values_that_alone_miss_the_floor_are_recorded_as_the_decision_made_at_gate_1(dictionary):
    src, an, _ = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    tr = translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback=FEEDBACK)
    f = tr.summary.fidelity
    chosen = f.floor_missed_by_choice
    assert f.below_floor and chosen is not None and chosen.agreement_without >= f.floor
    [found] = _fidelity_findings(tr)
    assert (found.check, found.severity) == (CHECK_CHOSEN_VALUES, Severity.SUGGESTION)  # not blocking: converges
    assert f"in {f.agreement:.1%} of {f.states} sampled states, below the {f.floor_pct} floor" in found.message
    assert "deltaThreshold = 50 where the program was validated with 0.2" in found.message
    assert f"with the evolved values it is {chosen.agreement_without:.1%}, at or above the floor" in found.message
    assert "decision made at gate 1" in found.message and "param NAME: VALUE" in found.fix


def test_values_set_at_gate_1_still_block_when_other_causes_alone_miss_the_floor(dictionary):
    """The same values under a floor the evolved values miss too: the other causes are the gap, and it blocks."""
    src, an, _ = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    tr = translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback=FEEDBACK, floor=1.0)
    f = tr.summary.fidelity
    assert f.causes[0].mapping == "deployed-values" and f.causes[0].agreement_without < f.floor
    assert f.floor_missed_by_choice is None
    [found] = _fidelity_findings(tr)
    assert (found.check, found.severity) == (CHECK_BELOW_FLOOR, Severity.IMPORTANT)
    assert "the largest cause is deployed-values" in found.message
    assert f"with the evolved values agreement is still {f.causes[0].agreement_without:.1%}, below" in found.fix
    assert f.causes[1].mapping in found.fix
