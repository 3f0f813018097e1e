"""The request's fingerprint and parts stay the same across bot upgrades, so promotions in flight do not restart.

A promotion compares the request's fingerprint (and its parts) with the ones its stages ran on: a field added to
the request model that shows in the dump (``"signals": null``) changes the fingerprint of every request written
before it, and an upgraded bot then restarts every such promotion from the stage that reads the field, dropping
the gate decisions after it. This pins the bundled example's hashes, as the first bot that promoted it computed them.
"""

from __future__ import annotations

from bot import pipeline
from bot.model import PromotionRequest, Stage, request_parts
from bot.model.base import sha256_text
from bot.stages.restart_notice import lead
from tests.conftest import EXAMPLE

#: The example's hashes as bot 3b6f26d computed them (the first release with claims), before `signals` and any
#: later optional field.
EXAMPLE_FINGERPRINT = "fde2bed2d2a3221df7503abb7616bc927a66110f19b05289f998f8627cac1a98"
EXAMPLE_DUMP = "a17d4adaf4b4f3a17c0e16d075b53ff339e6b16d6a15c2a1b1cdce8b45838e90"
EXAMPLE_CLAIMS = "5eb6edd686424dcd30a3da251255d2a7dba7da983040f830e8f84f004f86cc19"
#: Overrides added to the example since, deliberately (workload, key): without them it is the request those bots
#: hashed. The multiturn workload sends each session's id in the header the plugin reads (G2.session-header-sent).
ADDED_SINCE = [("multiturn", "api.session_id_header_key")]
#: The example's fingerprint with them.
EXAMPLE_FINGERPRINT_NOW = "722054eb2eef73dd81217fe2f128840db4aae8c7bc4c847ba25e106cff690e2f"

WHY = (
    "the example request now hashes differently. If a field was added to the request model (bot/model/request.py), "
    "every request written before it changes its fingerprint, and after an upgrade every promotion in flight "
    "restarts and loses its gate decisions: give the field `exclude_if=lambda v: v is None` (as fidelity_floor and "
    "BlisClaim.signals) so it stays out of the hashes while unset. Only for a deliberate change of "
    "examples/weighted-adaptive/promotion.yaml (an override: list it in ADDED_SINCE, pin EXAMPLE_FINGERPRINT_NOW) "
    "or best_program.py update these pins."
)


def test_the_example_requests_fingerprint_is_the_one_earlier_bots_computed():
    request = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    assert request.fingerprint() == EXAMPLE_FINGERPRINT_NOW, WHY
    for workload, key in ADDED_SINCE:
        del request.workload(workload).overrides[key]
    assert sha256_text(request.model_dump_json()) == EXAMPLE_DUMP, f"{WHY}\ndump: {request.model_dump_json()}"
    assert request.parts()["claims"] == EXAMPLE_CLAIMS, WHY
    assert request.fingerprint() == EXAMPLE_FINGERPRINT, WHY


def test_an_unset_claim_signals_stays_out_of_the_hashes_and_a_set_one_counts():
    request = PromotionRequest.load(EXAMPLE / "promotion.yaml")
    assert '"signals"' not in request.model_dump_json()
    claims = [c.model_dump() | {"signals": ["EffectiveLoad"]} for c in request.claims]
    named = PromotionRequest.model_validate(request.model_dump() | {"claims": claims}).model_copy(
        update={"source_text": request.source_text}
    )
    assert named.fingerprint() != request.fingerprint()
    change = request_parts.request_change(
        pipeline.new_state("1", "fp", "b", actor="a", now=_now(), parts=request.parts()), named.parts()
    )
    assert change.changed == ("claims",) and change.stage is Stage.HYPOTHESIZE


def test_a_state_without_parts_says_so_once_not_nested():
    """The restart notice and the audit trail read plainly when the saved state does not record the parts."""
    change = request_parts.RequestChange((), Stage.ANALYZE, True)
    assert "the request (" not in lead(change) and lead(change).count("(") <= 1
    assert "does not record" in lead(change)
    assert change.detail("the request changed") == (
        "the request changed; the saved state does not record the request's parts, so all of it counts as changed"
    )
    named = request_parts.RequestChange(("claims",), Stage.HYPOTHESIZE, True)
    assert lead(named) == "The request changed (the BLIS claims)"
    assert named.detail("edited") == "edited: the BLIS claims changed"


def _now():
    from datetime import UTC, datetime

    return datetime(2026, 11, 27, tzinfo=UTC)
