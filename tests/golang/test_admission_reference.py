"""An admitter's agreement figure beside always-admit's, and a stateful admitter's sample reaching its state.

DA4 item 2: a per-tenant token bucket (g08, the finder's p3) decided like the BLIS original in 99.8% of the
sampled states, and the report said nothing else: the original rejected 1 state in 500 (the histories never
emptied a bucket), so an always-admit plugin would have scored the same. Real translations on the Go toolchain.
"""

from __future__ import annotations

from bot.golang import harness_world as world
from bot.golang.fidelity_admit import ALWAYS_ADMIT, CHECK_LIKE_ALWAYS_ADMIT, findings, rejects
from bot.model import Fidelity, Severity
from tests.golang.conftest import CORPUS, translate_path

BUCKET = CORPUS / "g08_local_token_bucket.go"


def test_a_stateful_admitters_figure_says_how_often_the_original_rejects_and_what_always_admit_scores(dictionary):
    _, _, tr = translate_path(BUCKET, dictionary)
    f = tr.summary.fidelity
    assert tr.summary.stateful and f.reference == ALWAYS_ADMIT
    # the sampled bursts empty buckets: the original rejects a fair share, so the figure tests the reject rule
    assert rejects(f) >= f.states // 10, f
    assert f.agreement > f.reference_agreement + 0.1, f
    assert f"The BLIS original rejects {rejects(f)} of the {f.states} states" in tr.report_markdown
    assert f"{ALWAYS_ADMIT} would decide like it in {f.reference_agreement:.1%}" in tr.report_markdown
    assert CHECK_LIKE_ALWAYS_ADMIT not in {x.check for x in tr.findings}


def test_a_bucket_the_sample_never_empties_gets_an_important_finding_naming_the_state(dictionary, tmp_path):
    """The same bucket sized far beyond any sampled burst: the original never rejects, always-admit meets the floor."""
    text = BUCKET.read_text(encoding="utf-8").replace("capacity := 12000.0", "capacity := 1e15")
    path = tmp_path / "huge_bucket.go"
    path.write_text(text, encoding="utf-8")
    _, _, tr = translate_path(path, dictionary)
    f = tr.summary.fidelity
    assert f.reference == ALWAYS_ADMIT and f.reference_agreement == 1.0 and rejects(f) == 0
    [found] = [x for x in tr.findings if x.check == CHECK_LIKE_ALWAYS_ADMIT]
    assert found.severity is Severity.IMPORTANT
    assert "cannot tell this admitter from one that admits everything" in found.message
    assert "`buckets`" in found.message and "did not drive that state to a reject" in found.message
    assert "a burst of 8 to 96 requests" in found.message
    assert "cannot tell this plugin from one that admits everything" in tr.report_markdown


def test_a_stateless_admitter_that_rarely_rejects_gets_a_suggestion_and_one_that_rejects_none():
    f = Fidelity(decision="the same admit or reject", states=500, agreement=0.996, floor=0.95)
    rare = f.model_copy(update={"reference": ALWAYS_ADMIT, "reference_agreement": 0.98})
    [s] = findings(rare, stateful=False)
    assert s.severity is Severity.SUGGESTION and "rejects 10 of the 500 sampled states" in s.message
    often = rare.model_copy(update={"reference_agreement": 0.8})
    assert findings(often, stateful=True, state_fields=["buckets"]) == []
    assert findings(f, stateful=True) == []  # no reference: a router's or a scheduler's figure


def test_only_a_stateful_admitters_histories_get_bursts_from_the_requests_tenant():
    reads = frozenset({"ArrivalTime", "InputTokens", "TenantID"})
    admitter = world.sample(world.Spec(kind="admission", reads=reads, stateful=True), 200)
    longest = max(len(s.history) for s in admitter)
    assert longest > 12, longest
    burst = [r for s in admitter for r, _ in s.history if "-b" in r.id]
    own = sum(1 for s in admitter for r, _ in s.history if "-b" in r.id and r.tenant == s.request.tenant)
    assert own > 0.7 * len(burst)
    for s in admitter:  # the request arrives after its history, in order
        clocks = [t for _, t in s.history]
        assert clocks == sorted(clocks) and all(t <= s.clock for t in clocks)
    router = world.sample(world.Spec(kind="routing", reads=reads, stateful=True), 200)
    assert max(len(s.history) for s in router) <= 12


def test_gate_ones_headline_sets_an_admitters_figure_beside_always_admits():
    from bot.golang.fidelity_admit import clause

    f = Fidelity(decision="the same admit or reject", states=500, agreement=0.998, floor=0.95)
    assert clause(f) == ""  # no reference: not an admitter's figure
    p3 = f.model_copy(update={"reference": ALWAYS_ADMIT, "reference_agreement": 0.998})
    assert clause(p3) == (
        "; the BLIS original rejects 1 of them, so always-admit would score 99.8% (the figure cannot tell the plugin "
        "from it)"
    )
