"""The REST client against GitHub's failure modes, on the fake: no duplicate writes, limits waited out."""

from __future__ import annotations

import pytest

from bot.forge.state_file import StateError
from bot.github.client import GitHub, GitHubError
from bot.github.state import GitHubStateStore, status_body
from bot.model import PipelineState

REPO = "acme/bot-home"


@pytest.fixture
def gh(fake_github):
    fake_github.add_repo(REPO)
    fake_github.add_user("researcher")
    number = fake_github.create_issue(REPO, "[promotion] x", "body", "researcher")
    sleeps: list[float] = []
    client = GitHub(fake_github.bot_token, REPO, api_url=fake_github.api_url, throttle=False, sleep=sleeps.append)
    return fake_github, client, number, sleeps


def test_a_502_after_the_write_still_yields_exactly_one_comment(gh):
    fake, client, number, _ = gh
    fake.fail("POST", f"/repos/{REPO}/issues/{number}/comments", status=502, after_write=True)
    client.upsert_comment(number, "promotion-bot:status", "hello")
    bodies = [c.body for c in fake.comments(REPO, number)]
    assert bodies == ["<!-- promotion-bot:status -->\nhello"]


def test_a_502_before_the_write_is_retried_once_and_lands_once(gh):
    fake, client, number, sleeps = gh
    fake.fail("POST", f"/repos/{REPO}/issues/{number}/comments", status=502, after_write=False)
    client.upsert_comment(number, "promotion-bot:status", "hello")
    assert len(fake.comments(REPO, number)) == 1 and sleeps == [1.0]


def test_a_secondary_rate_limit_is_waited_out(gh):
    fake, client, number, sleeps = gh
    fake.rate_limit("secondary", retry_after=7, method="POST", path=f"/repos/{REPO}/issues/{number}/comments")
    client.upsert_comment(number, "promotion-bot:status", "hello")
    assert 7.0 in sleeps and len(fake.comments(REPO, number)) == 1


def test_a_primary_rate_limit_waits_until_the_reset(gh):
    fake, client, number, sleeps = gh
    fake.rate_limit("primary", reset_in=30, status=429, method="GET")
    assert client.issue(number).title == "[promotion] x"
    assert sleeps and 1 <= sleeps[0] <= 40


def test_a_wait_longer_than_the_cap_stops_with_a_message(gh):
    fake, client, number, _ = gh
    fake.rate_limit("secondary", retry_after=3600, method="GET")
    with pytest.raises(GitHubError, match="rate limited by GitHub for 3600s"):
        client.issue(number)


def test_a_persons_comment_with_the_bots_marker_is_not_the_bots(gh, fake_github):
    fake, client, number, _ = gh
    person = fake.pygithub("researcher")
    person.get_repo(REPO).get_issue(number).create_comment("<!-- promotion-bot:status -->\nforged")
    assert client.bot_comment(number, "promotion-bot:status") is None
    client.upsert_comment(number, "promotion-bot:status", "real")
    assert [c.body.splitlines()[-1] for c in fake.comments(REPO, number)] == ["forged", "real"]


def test_state_round_trips_through_the_status_comment_and_never_outgrows_it(gh):
    fake, client, number, _ = gh
    store = GitHubStateStore(client, number)
    assert store.load() is None
    state = PipelineState(request_id=str(number), request_fingerprint="f", branch="promotion/1-x")
    store.save(state, "## status")
    assert GitHubStateStore(GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False), number).load() == state
    # GitHub answers 200 to an over-long update and keeps the old body: the store never writes one.
    huge = "x" * 70_000
    with pytest.raises(StateError, match="does not fit in a GitHub comment"):
        status_body(state, huge)


def _flooded(number: int, findings: int, *, max_rounds: int = 3) -> PipelineState:
    """Gate 1 right after a review whose model reviewer raised ``findings`` findings of ~80 words, a third of
    them CRITICAL, a third IMPORTANT, on 40 checks and 13 files: sent back to the author (``max_rounds`` 3) or
    open for a decision (``max_rounds`` 1), after 80 audit entries."""
    import random
    import re
    from datetime import UTC, datetime

    from bot import PROJECT_ROOT
    from bot.model import AuditEntry, Finding, Severity

    words = re.findall(r"[A-Za-z][a-z]{2,}", (PROJECT_ROOT / "README.md").read_text())
    rng = random.Random(findings)

    def prose(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)) + "."

    severities = (Severity.CRITICAL, Severity.IMPORTANT, Severity.SUGGESTION)
    found = [
        Finding(
            severity=severities[i % 3],
            check=f"G1.item-{i % 40}",
            message=prose(80),
            fix=prose(30),
            file=f"docs/promotion/f{i % 13}.md",
            line=i + 1,
            by="claude-sonnet-4-6",
        )
        for i in range(findings)
    ]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    audit = [AuditEntry(at=at, actor="bot", event=f"event {i}", detail=prose(10)) for i in range(80)]
    return _after_gate_1_review(number, found, "checklist + claude", max_rounds=max_rounds, audit=audit)


def _after_gate_1_review(number: int, found, reviewer: str, *, max_rounds: int, audit=()) -> PipelineState:
    """Stages 1 and 2 done, then gate 1's first review round with ``found`` finished as the engine finishes it."""
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.model import ReviewRound, StageRecord

    at = datetime(2026, 1, 1, tzinfo=UTC)
    state = PipelineState(
        request_id=str(number),
        request_fingerprint="f",
        branch="promotion/1-x",
        next_stage=None,
        open_gate=1,
        stages={s: StageRecord(stage=s, inputs_hash=f"h{s}", finished_at=at) for s in (1, 2)},
        audit=list(audit),
    )
    review = ReviewRound(gate=1, round=1, reviewer=reviewer, findings=found)
    return pipeline.review_finished(state, review, now=at, max_rounds=max_rounds)


def _after_a_repeated_review(state: PipelineState) -> str:
    """Where the promotion stands after the author's rerun changed something and the reviewer raised the same
    findings again (``pipeline._stalled``), or, at a decision, what an approval records as open."""
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.model import Decision, StageRecord

    at = datetime(2026, 1, 2, tzinfo=UTC)
    if state.status.value == "awaiting-decision":
        return pipeline.decide(state, 1, Decision.APPROVE, actor="maria", now=at).decisions[-1].critical_note()
    step = pipeline.next_step(state)
    s = pipeline.stage_finished(
        state, StageRecord(stage=step.stage, inputs_hash="h", finished_at=at, review=step.review), changed=True, now=at
    )
    again = state.reviews[1][-1].model_copy(update={"round": 2})
    return pipeline.describe(pipeline.review_finished(s, again, now=at))


@pytest.mark.parametrize(
    ("findings", "max_rounds"),
    [(2_000, 3), (2_000, 1), (12_000, 3)],
    ids=["2000-sent-back", "2000-at-decision", "12000-last-resort"],
)
def test_thousands_of_long_findings_fit_and_the_engine_decides_the_same_from_what_is_kept(gh, findings, max_rounds):
    """With 2,000 long reviewer findings the comment overflowed even after its texts were cut: the shrinking
    stopped short of the author's copy of the findings and the findings' own words. Now it goes on to the
    state's essentials."""
    from bot import pipeline
    from bot.github.state import MAX_COMMENT_CHARS

    fake, client, number, _ = gh
    state = _flooded(number, findings, max_rounds=max_rounds)
    store = GitHubStateStore(client, number)
    store.save(state, "## status\n\n" + "checklist line\n" * 300)  # the fake refuses over 65,536 like GitHub
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) < MAX_COMMENT_CHARS
    kept = store.load()
    assert pipeline.next_step(kept) == pipeline.next_step(state) and pipeline.describe(kept) == pipeline.describe(state)
    assert {(f.severity, f.key()) for f in kept.reviews[1][-1].blocking} == {
        (f.severity, f.key()) for f in state.reviews[1][-1].blocking
    }
    if findings <= 2_000:  # short of the last resort, every finding and count stays
        assert kept.reviews[1][-1].tally() == state.reviews[1][-1].tally()
    full = _after_a_repeated_review(state)
    assert _after_a_repeated_review(kept) == full
    assert full == "waiting for a decision at gate 1 (review did not converge)" or "CRITICAL findings were open" in full


def _toolchain_flood(number: int, findings: int) -> PipelineState:
    """Gate 1 right after a review whose checklist (by=None) raised ``findings`` distinct CRITICAL findings of
    the Go toolchain: a generated plugin on which `go build` fails everywhere, each message naming its own
    evolved identifier. Built as a state directly, past the bound a review round takes (``bot.model.bounded``)."""
    import random

    from bot.model import Finding, Severity

    rng = random.Random(findings)
    found = [
        Finding(
            severity=Severity.CRITICAL,
            check=f"toolchain.build{i % 3 or ''}",
            message=f"undefined: evolved_{rng.getrandbits(64):016x} (cannot use it as float64 value in argument)",
            file=f"pkg/plugins/evolved/f{i % 7}.go",
            line=i + 1,
        )
        for i in range(findings)
    ]
    return _after_gate_1_review(number, found, "checklist", max_rounds=3)


@pytest.mark.parametrize("findings", [6_000, 60_000])
def test_thousands_of_distinct_toolchain_findings_fit_as_a_last_resort(gh, findings):
    """Essentials kept every distinct blocking finding: 6,000 distinct CRITICAL `go build` errors ended in
    StateError "this is a bug in the bot". Now the most severe are kept, as many as fit, and one finding counts
    the rest; the gate still blocks and the engine decides the same next step."""
    from bot import pipeline
    from bot.github.state import MAX_COMMENT_CHARS

    fake, client, number, _ = gh
    state = _toolchain_flood(number, findings)
    store = GitHubStateStore(client, number)
    store.save(state, "## status\n\n" + "checklist line\n" * 300)
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) < MAX_COMMENT_CHARS
    kept = store.load()
    assert pipeline.next_step(kept) == pipeline.next_step(state) and pipeline.describe(kept) == pipeline.describe(state)
    *first, count = sorted(kept.reviews[1][-1].findings, key=lambda f: f.check == "status.findings-left-out")
    full = sorted(state.reviews[1][-1].findings, key=lambda f: f.sort_key())
    assert first and [f.key() for f in first] == [f.key() for f in full[: len(first)]]  # the most severe first
    assert count.check == "status.findings-left-out" and count.severity.value == "CRITICAL"
    assert f"and {findings - len(first):,} more blocking finding(s)" in count.message


def test_errors_name_the_call_and_githubs_answer(gh):
    _fake, client, _number, _ = gh
    with pytest.raises(GitHubError, match=r"GET issue 999: GitHub answered 404"):
        client.issue(999)


def _verbose_state(number: int) -> PipelineState:
    """A promotion after three gates whose Claude reviewer was thorough: 12 findings of ~70 words from each of
    its perspectives (the state of a real run like this was 176 kB of JSON, 68 kB in the comment)."""
    import random
    import re
    from datetime import UTC, datetime

    from bot import PROJECT_ROOT
    from bot.model import AuditEntry, Decision, Finding, GateDecision, ReviewRound, Severity

    words = re.findall(r"[A-Za-z][a-z]{2,}", (PROJECT_ROOT / "README.md").read_text())
    rng = random.Random(5)

    def prose(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)) + "."

    reviews = {}
    for gate in (1, 2, 3):
        checklist = [
            Finding(severity=Severity.SUGGESTION, check=f"G{gate}.det-{i}", message=prose(20), file="a.md", line=i)
            for i in range(1, 8)
        ]
        model = [
            Finding(
                severity=Severity.IMPORTANT if (item, n) == (2, 0) and gate == 3 else Severity.SUGGESTION,
                check=f"G{gate}.{item}",
                message=prose(70),
                fix=prose(25),
                by="claude-sonnet-4-6",
            )
            for item in range(1, 7)
            for n in range(12)
        ]
        reviews[gate] = [
            ReviewRound(gate=gate, round=r, reviewer="checklist + claude", findings=checklist + model)
            for r in ((1, 2) if gate == 3 else (1,))
        ]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return PipelineState(
        request_id=str(number),
        request_fingerprint="f",
        branch="promotion/1-x",
        status="awaiting-decision",
        next_stage=None,
        open_gate=3,
        review_round=2,
        reviews=reviews,
        # past gates 1 and 2: their approvals stand (bot.model.gates; this test loads them unchecked)
        decisions=[GateDecision(gate=g, decision=Decision.APPROVE, actor="m", at=at) for g in (1, 2)],
        audit=[AuditEntry(at=at, actor="bot", event=f"event {i}", detail=prose(10)) for i in range(80)],
    )


def test_a_thorough_reviewers_findings_fit_in_the_status_comment_at_githubs_limit(gh):
    from bot.github.state import MAX_COMMENT_CHARS, encode_state

    fake, client, number, _ = gh
    state = _verbose_state(number)
    assert len(encode_state(state)) > MAX_COMMENT_CHARS  # the whole state cannot be the comment
    store = GitHubStateStore(client, number)
    store.save(state, "## status\n\n" + "checklist line\n" * 300)  # the fake refuses over 65,536 like GitHub
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) <= MAX_COMMENT_CHARS
    kept = store.load(checked=True)  # the approvals are not on the fake's record: this test sizes the comment
    # every open round, every finding and every count stay; the checklist's findings word for word
    assert {g: [r.round for r in rs] for g, rs in kept.reviews.items()} == {1: [1], 2: [1], 3: [1, 2]}
    for gate, rounds in kept.reviews.items():
        for was, now in zip(state.reviews[gate][-len(rounds) :], rounds, strict=True):
            assert now.tally() == was.tally()
            assert [f.key() for f in now.findings] == [f.key() for f in was.findings]
            assert [f for f in now.findings if f.by is None] == [f for f in was.findings if f.by is None]
            assert all(f.message for f in now.findings)
    (blocking,) = kept.reviews[3][-1].blocking
    assert blocking.fix  # the author's fix round still gets a suggested fix


def _noise(n: int, seed: int) -> str:
    import random
    import string

    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _most_person_text(number: int, *, failed: bool) -> PipelineState:
    """The flooded gate-1 state (12,000 findings), plus every person text the bounds allow, incompressible:
    at each gate change requests as long as ``CHANGE_REQUESTS_CHARS`` lets them be (in the decisions, the
    pending feedback and each rerun stage's copy), an approval remark or a rejection reason of ``REASON_CHARS``,
    and a last audit entry (adopted commits' subjects) or a failure far longer than either."""
    from datetime import UTC, datetime

    from bot.events.comments import CHANGE_REQUESTS_CHARS
    from bot.github.commands import REASON_CHARS
    from bot.model import AuditEntry, Decision, GateDecision, StageFailure, StageRecord, Status

    state = _flooded(number, 12_000, max_rounds=1)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    half = (CHANGE_REQUESTS_CHARS - 2) // 2
    decisions, feedback = [], {}
    for gate, stage in ((1, 2), (2, 3), (3, 4)):
        reasons = [_noise(half, seed=10 * gate + i) for i in range(2)]
        decisions += [
            GateDecision(gate=gate, decision=Decision.REQUEST_CHANGES, actor="m", at=at, reason=r) for r in reasons
        ]
        feedback[stage] = "\n\n".join(reasons)
        decisions.append(
            GateDecision(gate=gate, decision=Decision.APPROVE, actor="m", at=at, reason=_noise(REASON_CHARS, seed=gate))
        )
    stages = {
        **state.stages,
        **{s: StageRecord(stage=s, inputs_hash=f"h{s}", finished_at=at, feedback=f) for s, f in feedback.items()},
    }
    audit = [*state.audit, AuditEntry(at=at, actor="m", event="adopted branch commits", detail=_noise(60_000, seed=7))]
    update = {"decisions": decisions, "stages": stages, "pending_feedback": {2: feedback[2]}, "audit": audit}
    if failed:
        update |= {
            "status": Status.FAILED,
            "failure": StageFailure(stage=2, reason=_noise(60_000, seed=8), fix=_noise(30_000, seed=9), at=at),
        }
    return state.model_copy(update=update)


@pytest.mark.parametrize("failed", [False, True], ids=["at-a-gate", "failed"])
def test_the_most_person_text_the_bounds_allow_still_fits_in_the_status_comment(gh, failed):
    """Found by the red team (round 2): long reasons made the state overflow the comment ("a bug in the bot"),
    because ``essentials`` kept every reason, copy and the last audit entry whole. Reasons are now bounded where
    they come in, and what only people read is cut; the engine decides the same from what is kept."""
    from bot import pipeline
    from bot.escape import md
    from bot.github.state import MAX_COMMENT_CHARS
    from bot.model import Decision

    fake, client, number, _ = gh
    state = _most_person_text(number, failed=failed)
    shown = md("<" * 2_000)  # the checklist repeats the last reason, escaped: `<` is 4 characters shown
    GitHubStateStore(client, number).save(state, "## status\n\n" + "checklist line\n" * 300 + shown + "\n" + shown)
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) <= MAX_COMMENT_CHARS
    kept = GitHubStateStore(client, number).load()
    assert pipeline.next_step(kept).__class__ is pipeline.next_step(state).__class__
    assert pipeline.next_step(kept).__class__ is (pipeline.Halted if failed else pipeline.AwaitDecision)
    changes = [d for d in state.decisions if d.decision is Decision.REQUEST_CHANGES]
    assert [d for d in kept.decisions if d.decision is Decision.REQUEST_CHANGES] == changes
    assert all(len(d.reason) <= 500 for d in kept.decisions if d.decision is Decision.APPROVE)
    assert kept.pending_feedback == state.pending_feedback
    assert {s: r.feedback for s, r in kept.stages.items()} == {s: r.feedback for s, r in state.stages.items()}
    assert kept.audit[-1].detail.endswith("[cut; see the branch's history]") and len(kept.audit[-1].detail) <= 1_500
    if failed:
        assert kept.failure.reason.endswith("[cut; see the run's log]") and kept.failure.stage == state.failure.stage


def test_thousands_of_claude_calls_fit_and_the_budget_and_cost_read_the_same(gh):
    """Every Claude call is kept in the state for the token budget and the cost table; a long promotion (many
    rounds, re-asks and change requests) could outgrow the comment. Folded per step and prompt when it must,
    the totals, per step and in all, are the same."""
    from bot.agents.cost import cost_lines
    from bot.github.state import MAX_COMMENT_CHARS
    from bot.model import LLMCall, LLMUsage

    fake, client, number, _ = gh
    calls = [
        LLMCall(
            role=("author", "reviewer")[i % 2],
            prompt=f"{('author', 'reviewer')[i % 2]}-{i % 5}@3",
            model="claude-sonnet-4-5",
            stage=None if i % 2 else 2 + i % 3,
            gate=1 + i % 3 if i % 2 else None,
            round=1 + i % 4,
            attempt=1 + i % 2,
            input_tokens=1_000 + 37 * i,
            output_tokens=400 + 11 * i,
            cache_write_tokens=i % 700,
            cache_read_tokens=9_000 + i,
            usd=0.001 * (i % 97),
            valid=i % 11 != 0,
        )
        for i in range(4_000)
    ]
    state = PipelineState(
        request_id=str(number), request_fingerprint="f", branch="promotion/1-x", llm=LLMUsage(calls=calls)
    )
    GitHubStateStore(client, number).save(state, "## status")
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) <= MAX_COMMENT_CHARS
    kept = GitHubStateStore(client, number).load()
    assert len(kept.llm.calls) < 100
    assert kept.llm.totals().tokens == state.llm.totals().tokens and kept.llm.totals().calls == 4_000
    assert kept.llm.totals().usd == pytest.approx(state.llm.totals().usd)
    assert [(k, t.calls, t.tokens) for k, t in kept.llm.by_step().items()] == [
        (k, t.calls, t.tokens) for k, t in state.llm.by_step().items()
    ]
    assert len(cost_lines(kept.llm)) == len(cost_lines(state.llm))
    assert sum(c.count for c in kept.llm.calls if not c.valid) == sum(1 for c in calls if not c.valid)


def _toolchain_flooded(number: int, findings: int, *, max_rounds: int) -> PipelineState:
    """Gate 1 right after a review whose checklist raised ``findings`` vet findings, each quoting a different
    evolved string literal of random letters (which compress badly) as long as ``gooutput`` lets a message be."""
    import random
    import string
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.golang import gooutput
    from bot.model import Finding, ReviewRound, Severity, StageRecord

    rng = random.Random(findings)
    found = []
    for i in range(findings):
        literal = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(2_000))
        line = f'pkg/x/evolved.go:{i + 10}:9: fmt.Sprintf format %d has arg "{literal}" of wrong type string'
        found += gooutput.parse_locations(line, check=gooutput.CHECK_VET, severity=Severity.IMPORTANT)
    found.append(Finding(severity=Severity.CRITICAL, check="toolchain.build", message="x" * 400, fix="y" * 600))
    at = datetime(2026, 1, 1, tzinfo=UTC)
    state = PipelineState(
        request_id=str(number),
        request_fingerprint="f",
        branch="promotion/1-x",
        next_stage=None,
        open_gate=1,
        stages={s: StageRecord(stage=s, inputs_hash=f"h{s}", finished_at=at) for s in (1, 2)},
    )
    review = ReviewRound(gate=1, round=1, reviewer="checklist", findings=found)
    return pipeline.review_finished(state, review, now=at, max_rounds=max_rounds)


def _after_the_same_findings(state: PipelineState, again) -> str:
    """``_after_a_repeated_review`` with the re-review's findings given: the checklist raises them whole again,
    whatever the state kept of the previous round."""
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.model import Decision, StageRecord

    at = datetime(2026, 1, 2, tzinfo=UTC)
    if state.status.value == "awaiting-decision":
        return pipeline.decide(state, 1, Decision.APPROVE, actor="maria", now=at).decisions[-1].critical_note()
    step = pipeline.next_step(state)
    s = pipeline.stage_finished(
        state, StageRecord(stage=step.stage, inputs_hash="h", finished_at=at, review=step.review), changed=True, now=at
    )
    return pipeline.describe(pipeline.review_finished(s, again.model_copy(update={"round": 2}), now=at))


@pytest.mark.parametrize("max_rounds", [3, 1], ids=["sent-back", "at-decision"])
def test_long_toolchain_findings_fit_and_the_engine_decides_the_same_from_what_is_kept(gh, max_rounds):
    """A vet finding quotes the evolved program's string literal: 150 of them overflowed the status comment
    ("this is a bug in the bot"), as the shrinking never touched the checklist's texts. They are now cut to
    what they are matched by (``match_text``), so a whole re-raised finding is still the same finding."""
    from bot import pipeline
    from bot.agents.record import FindingRef
    from bot.github.state import MAX_COMMENT_CHARS
    from bot.review import convergence

    fake, client, number, _ = gh
    state = _toolchain_flooded(number, 150, max_rounds=max_rounds)
    full = state.reviews[1][-1]
    store = GitHubStateStore(client, number)
    store.save(state, "## status\n\n" + "checklist line\n" * 300)
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) < MAX_COMMENT_CHARS
    kept = store.load()
    cut = kept.reviews[1][-1]
    assert any(len(f.message) < len(g.message) for f, g in zip(cut.findings, full.findings, strict=True))
    assert cut.tally() == full.tally()  # every finding stays, short of the last resort
    assert pipeline.next_step(kept) == pipeline.next_step(state) and pipeline.describe(kept) == pipeline.describe(state)
    assert [f.key() for f in cut.findings] == [f.key() for f in full.findings]
    assert all(FindingRef.of(f).refers_to(g) for f, g in zip(full.findings, cut.findings, strict=True))
    assert convergence.mark_recurring(full.findings, cut) == convergence.mark_recurring(full.findings, full)
    outcome = _after_the_same_findings(state, full)
    assert _after_the_same_findings(kept, full) == outcome
    assert outcome == "waiting for a decision at gate 1 (review did not converge)" or "CRITICAL" in outcome


def test_match_text_is_its_own_match_and_tells_long_messages_apart():
    from bot.model import match_text
    from bot.model.findings import MATCH_CHARS

    short, long_a, long_b = "vet: x", "a" * 5_000 + "1", "a" * 5_000 + "2"
    assert match_text(short) == short
    assert len(match_text(long_a)) <= MATCH_CHARS and match_text(match_text(long_a)) == match_text(long_a)
    assert match_text(long_a) != match_text(long_b)  # they differ past the head: the digest tells them apart


def test_the_open_promotions_are_one_call_however_many_there_are(fake_github):
    """Red team of today's same-plugin check: a listed issue carries `pull_request` only when it is a pull request,
    and reading the missing key made PyGithub fetch every open promotion issue again (one call each, per run)."""
    fake_github.add_repo(REPO)
    fake_github.add_user("researcher")
    for n in range(3):
        fake_github.create_issue(REPO, f"[promotion] p{n}", "body", "researcher", labels=("promotion",))
    client = GitHub(fake_github.bot_token, REPO, api_url=fake_github.api_url, throttle=False)
    client.repo()  # the repository itself, read once per event whatever follows
    before = fake_github.count_calls()
    issues = client.open_issues("promotion")
    assert fake_github.count_calls() - before == 1
    assert len(issues) == 3 and not any(i.is_pull_request for i in issues)
