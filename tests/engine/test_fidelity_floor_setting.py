"""Gate 1's agreement floor as a promotion setting: promotion.yaml locally, the repository's configuration on GitHub."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.github.config import BotConfig
from bot.github.issue_form import parse_sections, request_from_form
from bot.model import PromotionRequest, Stage, request_parts
from tests.conftest import EXAMPLE
from tests.github.forms import example_body, template


def _request(**extra) -> PromotionRequest:
    base = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    return PromotionRequest.model_validate(base.model_dump() | extra)


def test_an_unset_floor_leaves_the_requests_hashes_as_they_were():
    """Requests written before the setting keep their fingerprints, so no promotion in flight restarts."""
    plain = _request()
    assert "fidelity_floor" not in plain.model_dump_json() and "fidelity_floor" not in plain.parts()
    floored = _request(fidelity_floor=0.9)
    assert floored.fingerprint() != plain.fingerprint() and floored.parts()["fidelity_floor"]


def test_a_changed_floor_redoes_the_translation_and_keeps_the_analysis():
    assert request_parts.FIRST_READ_BY["fidelity_floor"] is Stage.TRANSLATE
    assert "agreement floor" in request_parts.PART_NAMES["fidelity_floor"]


@pytest.mark.parametrize("bad", [0.2, 1.5])
def test_a_floor_outside_half_to_one_is_refused(bad):
    with pytest.raises(ValidationError, match="fidelity_floor"):
        _request(fidelity_floor=bad)
    with pytest.raises(ValidationError, match="fidelity_floor"):
        BotConfig.model_validate({"fidelity_floor": bad})


def test_on_github_the_floor_is_the_repositorys_not_the_issues():
    fields = parse_sections(example_body(), template())
    request = request_from_form(fields, number=5, title="Evolved router", repository="o/r", fidelity_floor=0.9)
    assert request.fidelity_floor == 0.9
    assert request_from_form(fields, number=5, title="Evolved router", repository="o/r").fidelity_floor is None
