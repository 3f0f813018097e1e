"""Stage 6's loop back to BLIS: one feedback issue per refuted Track A or B hypothesis, found again by marker."""

from __future__ import annotations

from bot.forge.local import LocalForge
from bot.model import (
    VVUQ,
    Direction,
    Family,
    Hypothesis,
    HypothesisType,
    PipelineState,
    Prediction,
    PromotionRequest,
    Track,
    Verdict,
    VerdictStatus,
)
from bot.stages.context import StageContext
from bot.stages.document import file_feedback, recommendations
from tests.conftest import REQUEST


def _h(hid: str, track: Track) -> Hypothesis:
    return Hypothesis(
        id=hid,
        track=track,
        title=f"{hid} title",
        statement="The evolved plugin lowers e2e p95 under load spikes.",
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.DOMINANCE,
        diagnostic="If this fails, it would indicate the load signal is stale in llm-d.",
        workloads=["load-spikes"],
        prediction=Prediction(metric="e2e_p95", direction=Direction.DECREASE),
        source="load-spikes-e2e-p95",
    )


def test_refuted_a_and_b_file_one_issue_each_and_reruns_update_them(tmp_path):
    request = PromotionRequest.load(REQUEST)
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch=request.branch)
    ctx = StageContext(request, forge, state)
    pairs = [
        (_h("A1", Track.A), Verdict(hypothesis_id="A1", status=VerdictStatus.REFUTED, summary="worse by 9%")),
        (_h("B2", Track.B), Verdict(hypothesis_id="B2", status=VerdictStatus.REFUTED, summary="gap bites")),
        (_h("C1", Track.C), Verdict(hypothesis_id="C1", status=VerdictStatus.REFUTED, summary="regressed")),
        (_h("A2", Track.A), Verdict(hypothesis_id="A2", status=VerdictStatus.CONFIRMED, summary="holds")),
    ]
    recs = recommendations(pairs)
    links, kept, not_filed = file_feedback(ctx, pairs, recs)
    assert links == {"A1": "feedback/A1.md", "B2": "feedback/B2.md"} and kept == {} and not_filed == ""
    text = (tmp_path / "work" / "feedback" / "A1.md").read_text()
    assert text.startswith("<!-- promotion-bot:feedback:1:A1 -->") and "worse by 9%" in text
    assert file_feedback(ctx, pairs, recs)[0] == links  # a rerun finds them again
    assert sorted(p.name for p in (tmp_path / "work" / "feedback").iterdir()) == ["A1.md", "B2.md"]
