"""Gate 2: a plugin that reads the request's session is benchmarked by a workload that sends one.

Found by a fixer (task hdr): the plugin reads SessionID from the request header `x-session-token` (Map B), and
gate 2 checked only the SLO header. inference-perf (0.6.1, the harness image's) sends a session id only when
``api.session_id_header_key`` names a header and the data makes sessions (shared_prefix with
``enable_multi_turn_chat``, or a conversation or trace replay): p1's multiturn workload runs multi-turn chat but
names no header, so every request had no session and the runs measured the plugin without its session logic.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from bot.dictionary import load_dictionary
from bot.hypotheses import generate_hypotheses
from bot.model import PipelineState, PolicyKind, PromotionRequest, Severity, TranslationSummary
from bot.review.gate2_traffic import traffic_findings

P1 = Path(__file__).parent / "fixtures" / "session_home" / "promotion.yaml"
P1_SIGNALS = ["QueueDepth", "BatchSize", "KVUtilization", "SessionID"]


def summary_for(signals=P1_SIGNALS, **update) -> TranslationSummary:
    d = load_dictionary()
    return TranslationSummary(
        kind=PolicyKind.ROUTING,
        plugin_type="session-home-scorer",
        package_dir="pkg/x",
        signals=signals,
        freshness_gaps=[s for s in signals if d.signal(s).freshness.gap],
        touched_gaps=d.touched_gaps(PolicyKind.ROUTING, signals),
        stateful=True,
    ).model_copy(update=update)


def session_findings(request: PromotionRequest, summary: TranslationSummary, check="G2.session-header-sent"):
    """Gate 2's traffic findings of one session check, on ``request``'s own hypotheses."""
    hyps = [(f"docs/{h.id}.md", h) for h in generate_hypotheses(request, summary, load_dictionary())]
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch="promotion/x")
    ctx = SimpleNamespace(
        request=request, state=state, dictionary=load_dictionary(), paths=SimpleNamespace(hypotheses_dir="docs/h")
    )
    return [f for f in traffic_findings(ctx, hyps, summary) if f.check == check]


def with_overrides(request: PromotionRequest, workload: str, overrides: dict) -> PromotionRequest:
    changed = request.model_copy(deep=True)
    next(w for w in changed.workloads if w.name == workload).overrides.update(overrides)
    return changed


def test_a_session_reading_plugin_whose_workloads_send_no_session_header_is_flagged():
    req = PromotionRequest.load(P1)
    [f] = session_findings(req, summary_for())
    assert f.severity is Severity.IMPORTANT
    assert "SessionID" in f.message and "`x-session-token`" in f.message and "without its session logic" in f.message
    # the multi-turn workload makes sessions but names no header: said, and the fix is the one key it lacks
    assert "multiturn makes sessions but sends their ids in no header" in f.message
    assert "A1 (whose mechanism reads the session) would be judged on that traffic" in f.message  # the claim
    assert "`api.session_id_header_key: x-session-token` to workload multiturn" in f.fix
    assert "enable_multi_turn_chat" not in f.fix.split(" to workload multiturn")[0]  # it already has it
    # following the fix clears the finding
    fixed = with_overrides(req, "multiturn", {"api.session_id_header_key": "x-session-token"})
    assert session_findings(fixed, summary_for()) == []


def test_a_workload_without_sessions_is_told_to_make_them_as_well_as_send_them():
    req = PromotionRequest.load(P1)
    single = with_overrides(req, "multiturn", {"data.shared_prefix.enable_multi_turn_chat": False})
    [f] = session_findings(single, summary_for())
    # on the workload the session claim is judged on (multiturn), not the first shared_prefix one (load-spikes)
    assert (
        "add `data.shared_prefix.enable_multi_turn_chat: true` and `api.session_id_header_key: x-session-token` "
        "to workload multiturn's `overrides`"
    ) in f.fix
    # a header key alone, on data that makes no sessions, sends nothing (inference-perf has no id to send)
    keyed = with_overrides(single, "multiturn", {"api.session_id_header_key": "x-session-token"})
    [g] = session_findings(keyed, summary_for())
    assert "multiturn names `x-session-token` in `api.session_id_header_key` but its data (shared_prefix)" in g.message
    # both keys, as the fix says: sent
    both = with_overrides(keyed, "multiturn", {"data.shared_prefix.enable_multi_turn_chat": True})
    assert session_findings(both, summary_for()) == []


def test_a_workload_that_sends_the_header_clears_it():
    req = PromotionRequest.load(P1)
    # the EPP reads header names lower-cased
    sent = with_overrides(req, "multiturn", {"api.session_id_header_key": "X-Session-Token"})
    assert session_findings(sent, summary_for()) == []
    assert session_findings(sent, summary_for(), "G2.session-header-fixed") == []


def test_one_fixed_token_on_every_request_is_one_session_and_is_flagged():
    """`api.headers.x-session-token: s-1` sends the header, but the same token on every request: all traffic is
    one session, so a session-home router keeps one endpoint for all of it and a session bonus holds everywhere,
    nothing like the many sessions BLIS evolved the logic on."""
    req = PromotionRequest.load(P1)
    fixed = with_overrides(req, "multiturn", {"api.headers.x-session-token": "s-1"})
    assert session_findings(fixed, summary_for()) == []
    [f] = session_findings(fixed, summary_for(), "G2.session-header-fixed")
    assert f.severity is Severity.IMPORTANT
    assert "multiturn sends the one token `s-1`" in f.message and "one session" in f.message
    assert "A1 (whose mechanism reads the session) would be judged on that traffic" in f.message
    assert "`api.session_id_header_key: x-session-token` to workload multiturn" in f.fix
    assert "remove `api.headers.x-session-token`" in f.fix
    # a workload that sends each session's own id beside it clears both
    both = with_overrides(fixed, "multiturn", {"api.session_id_header_key": "x-session-token"})
    assert session_findings(both, summary_for(), "G2.session-header-fixed") == []


def test_another_header_name_is_not_the_one_the_plugin_reads():
    req = with_overrides(PromotionRequest.load(P1), "multiturn", {"api.session_id_header_key": "x-session-id"})
    [f] = session_findings(req, summary_for())
    assert "`x-session-id`" in f.message


def test_a_plugin_that_reads_no_session_or_cannot_is_not_flagged():
    req = PromotionRequest.load(P1)
    assert session_findings(req, summary_for(["QueueDepth", "BatchSize", "KVUtilization"])) == []
    assert session_findings(req, summary_for(untranslatable=["SessionID"])) == []


def test_with_no_shared_prefix_workload_the_fix_is_a_workload_that_makes_sessions():
    req = PromotionRequest.load(P1)
    random_only = req.model_copy(deep=True)
    for w in random_only.workloads:
        w.profile, w.overrides = "sanity_random", {}
    [f] = session_findings(random_only, summary_for())
    assert "add a workload on profile shared_prefix_synthetic" in f.fix
    assert "`data.shared_prefix.enable_multi_turn_chat: true` and `api.session_id_header_key: x-session-token`" in f.fix


def test_the_bundled_example_reads_the_session_and_its_multiturn_workload_sends_it():
    """The example's evolved block gives a session bonus (req.SessionID != ""): its multiturn workload names the
    header, so gate 2 has nothing to say; without that override it would."""
    from tests.conftest import REQUEST

    req = PromotionRequest.load(REQUEST)
    multiturn = next(w for w in req.workloads if w.name == "multiturn")
    assert multiturn.overrides["api.session_id_header_key"] == "x-session-token"
    signals = ["QueueDepth", "KVUtilization", "CacheHitRate", "SessionID"]
    assert session_findings(req, summary_for(signals)) == []
    del multiturn.overrides["api.session_id_header_key"]
    assert len(session_findings(req, summary_for(signals))) == 1
