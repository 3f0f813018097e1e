"""Gate 2 on a scheduling promotion: the bot's own hypotheses converge, and a class-blind plan is said out loud.

Found by a scheduler author (scheduser findings 4 and 7): every scheduling promotion's gate 2 failed to converge on
`G2.contradiction` between the dictionary's B4 (equivalence at the lowest rate) and B8 (a gain at the highest), with
a fix no directive applies; and a plan that sends one priority never exercises a class ordering, unflagged.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from bot.dictionary import load_dictionary
from bot.hypotheses import generate_hypotheses
from bot.model import Decision, GateDecision, PipelineState, PolicyKind, Severity, TranslationSummary
from bot.review.change_request import refusal
from bot.review.gate2 import _contradictions
from bot.review.gate2_traffic import _class_exercised, _slo_header_sent
from tests.hypotheses.conftest import make_request

SIGNALS = ["ArrivalTime", "InputTokens", "SLOClass"]


def scheduling_request(rates=(20, 35), kind="scheduling", class_signals=True, guard_rate=None):
    """``guard_rate``: also guard ttft_mean on mixed-slo at that rate (an equivalence on the claims' workload)."""
    guard = [{"name": "mixed-slo", "workload": "mixed-slo", "rate": guard_rate, "guarded_metrics": ["ttft_mean"]}]
    return make_request(
        kind=kind,
        source_text="",
        claims=[
            {
                "id": "mixed-slo-ttft-p99",
                "statement": "the class-aging scheduler lowers ttft_p99_ms against FCFS (-27%)",
                "metric": "ttft_p99_ms",
                "direction": "decrease",
                "magnitude": -0.27,
                "workload": "mixed-slo",
                "rate": 300,
                "mechanism": "class weight 10 for critical vs 5 for standard puts critical requests first",
                "signals": ["SLOClass", "ArrivalTime"] if class_signals else ["ArrivalTime"],
            },
            {
                "id": "mixed-slo-e2e-mean",
                "statement": "the short-prompt boost lowers e2e_mean_ms (-8%)",
                "metric": "e2e_mean_ms",
                "direction": "decrease",
                "magnitude": -0.08,
                "workload": "mixed-slo",
                "rate": 300,
                "mechanism": "Requests with InputLen() < 256 get +1.5 on top of their class weight.",
                "signals": ["InputTokens"],
            },
        ],
        workloads=[
            {"name": "mixed-slo", "profile": "sanity_random", "rates": list(rates)},
            {"name": "sanity-random", "profile": "sanity_random", "rates": [10]},
        ],
        evolved_for="mixed-slo",
        baselines=[
            {
                "name": "sanity-random",
                "workload": "sanity-random",
                "rate": 10,
                "guarded_metrics": ["ttft_mean", "e2e_p95", "throughput"],
            },
            *(guard if guard_rate else []),
        ],
    )


def summary_for(kind: str, signals=SIGNALS) -> TranslationSummary:
    d = load_dictionary()
    return TranslationSummary(
        kind=PolicyKind(kind),
        plugin_type="evolved-class-aging-scheduler",
        package_dir="pkg/x",
        signals=signals,
        freshness_gaps=[s for s in signals if d.signal(s).freshness.gap],
        touched_gaps=d.touched_gaps(PolicyKind(kind), signals),
    )


def hypotheses(req, summary):
    return [(f"docs/{h.id}.md", h) for h in generate_hypotheses(req, summary, load_dictionary())]


def by_source(hyps, source):
    return next(h for _, h in hyps if h.source == source)


def test_the_dictionarys_own_network_latency_equivalence_never_meets_the_claims_cells():
    """The dictionary's network-latency template is an equivalence "at low load" (its lowest rate) and
    queue-ordering-authority a gain at the highest: once they clashed when a workload had one rate. A scheduler's
    time logic cannot see delay, so the first is not benchmarked at all; a stateful one keeps it off every cell a
    claim predicts a change at (the claims here cover every mixed-slo rate), so neither can contradict."""
    req = scheduling_request()
    for summary in (summary_for("scheduling"), summary_for("scheduling").model_copy(update={"stateful": True})):
        for r in (req, scheduling_request(rates=(30,))):
            hyps = hypotheses(r, summary)
            b4, b8 = by_source(hyps, "network-latency"), by_source(hyps, "queue-ordering-authority")
            assert not b4.benchmarked and b8.benchmarked
            assert _contradictions(hyps, r) == []


def test_a_conflict_on_one_cell_is_found_and_its_fix_is_a_change_request_gate_2_applies():
    req = scheduling_request(rates=(30,), guard_rate=30)  # a guard's equivalence on B8's own cell
    hyps = hypotheses(req, summary_for("scheduling"))
    eq, b8 = by_source(hyps, "mixed-slo"), by_source(hyps, "queue-ordering-authority")
    [f] = _contradictions(hyps, req)
    assert f.check == "G2.contradiction" and f.severity is Severity.IMPORTANT
    assert f"{eq.id} predicts ttft_mean equivalent on mixed-slo @ 30 req/s, but {b8.id}" in f.message
    [(gate, reason)] = re.findall(r"`promote request-changes (\d) --reason '([^']*)' --work W`", f.fix)
    assert (gate, reason) == ("2", f"exclude: {eq.id}") and f"`exclude: {b8.id}`" in f.fix
    for reason in (f"exclude: {eq.id}", f"exclude: {b8.id}"):
        assert refusal(2, reason, hypotheses=[h for _, h in hyps]) is None


def ctx_for(req, summary=None, home="local", epp_config=None):
    """A gate-2 context on ``req``; ``epp_config``: the EndpointPickerConfig on the branch (none: the defaults)."""
    paths = SimpleNamespace(hypotheses_dir="docs/promotion/x/hypotheses", epp_config=lambda t: f"deploy/{t}.yaml")
    return SimpleNamespace(request=req, home=home, work=None, paths=paths, read=lambda path: epp_config)


def test_a_class_ordering_scheduler_on_one_priority_is_flagged_before_gpu_time():
    req = scheduling_request()
    summary = summary_for("scheduling")
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert f.severity is Severity.IMPORTANT and f.check == "G2.priority-exercised"
    assert "one priority" in f.message and "never exercised" in f.message and "SLOClass" in f.message
    assert "admitter" not in f.message and "shedding" not in f.message  # a scheduler sheds nothing
    assert "no priority mix" in f.message and "admit rate only" in f.message  # nothing the mix judges is its
    a1 = by_source(hyps, "mixed-slo-ttft-p99")
    assert a1.id in f.message and f"exclude: {a1.id}" in f.fix
    assert refusal(2, f"exclude: {a1.id}", hypotheses=[h for _, h in hyps]) is None


@pytest.mark.parametrize("kind", ["routing", "scheduling"])
def test_a_policy_that_reads_no_class_is_not_flagged(kind):
    signals = ["ArrivalTime", "InputTokens"]
    req = scheduling_request(kind=kind, class_signals=False)
    summary = summary_for(kind, signals)
    assert _class_exercised(ctx_for(req), hypotheses(req, summary), summary) == []


def test_a_router_that_reads_the_class_is_flagged_in_its_own_words():
    req = scheduling_request(kind="routing")
    summary = summary_for("routing")
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert "router" in f.message and by_source(hyps, "mixed-slo-ttft-p99").id in f.message


SLO_SIGNALS = ["ArrivalTime", "InputTokens", "SLOClass", "SLOTargetUs"]


def header_ctx(request, gate_1_reason: str | None = None):
    """A gate-2 context whose state holds one gate-1 change request (the `param` lines in effect), if given."""
    state = PipelineState(request_id=request.id, request_fingerprint="f", branch="promotion/x")
    if gate_1_reason:
        state.decisions.append(
            GateDecision(
                gate=1, decision=Decision.REQUEST_CHANGES, actor="p", at=datetime.now(UTC), reason=gate_1_reason
            )
        )
    return SimpleNamespace(
        request=request, state=state, dictionary=load_dictionary(), paths=SimpleNamespace(hypotheses_dir="docs/h")
    )


def test_a_policy_reading_the_slo_target_with_no_workload_sending_its_header_is_flagged():
    """Found by a fixer (task H4): SLOTargetUs now comes from the `x-llm-d-slo-ttft-ms` header, and no planned
    inference-perf workload sends it, so every benchmarked request would read 0 (no target) unflagged. A workload
    override `api.headers.<header>` (inference-perf sends it with every request) clears the finding."""
    summary = summary_for("scheduling", SLO_SIGNALS)
    req = scheduling_request()
    hyps = hypotheses(req, summary)

    [f] = _slo_header_sent(header_ctx(req), hyps, summary)
    assert f.severity is Severity.IMPORTANT and f.check == "G2.slo-header-sent"
    assert "SLOTargetUs" in f.message and "`x-llm-d-slo-ttft-ms`" in f.message and "mixed-slo" in f.message
    assert "api.headers.x-llm-d-slo-ttft-ms" in f.fix
    sent = req.model_copy(deep=True)
    sent.workloads[0].overrides["api.headers.X-Slo-Ttft-Ms"] = "500"  # the alias, in any case, counts
    assert [f.check for f in _slo_header_sent(header_ctx(sent), hyps, summary)] == ["G2.slo-target-constant"]
    untranslatable = summary.model_copy(update={"untranslatable": ["SLOTargetUs"]})
    assert _slo_header_sent(header_ctx(req), hyps, untranslatable) == []
    without = summary_for("scheduling", SIGNALS)
    assert _slo_header_sent(header_ctx(req), hypotheses(req, without), without) == []


def test_one_slo_target_on_every_request_is_said_to_exercise_no_deadline_order():
    """Found by an llm-d flow-control reader (sched-e2e #5): following G2.slo-header-sent's fix (one constant
    `x-llm-d-slo-ttft-ms: "500"`) cleared gate 2, while s03 then scored every endpoint alike: the modelled waiting
    requests keep their class's 2 s target (incumbentSLOTargetMs 0), so a 500 ms request overtakes them all
    (tests/golang/test_slo_header.py runs the generated plugin so). At the same target it is queue-scorer. Either
    way one target exercises no deadline order: the fixes say so, and ask for a mix or the parameter."""
    summary = summary_for("scheduling", SLO_SIGNALS)
    req = scheduling_request()
    hyps = hypotheses(req, summary)
    [unsent] = _slo_header_sent(header_ctx(req), hyps, summary)
    assert "`param incumbentSLOTargetMs: 500`" in unsent.fix and "as queue-scorer does" in unsent.fix
    assert "one target on every request exercises no deadline order" in unsent.fix and "mix of targets" in unsent.fix
    sent = req.model_copy(deep=True)
    sent.workloads[0].overrides["api.headers.x-llm-d-slo-ttft-ms"] = "500"
    [f] = _slo_header_sent(header_ctx(sent), hyps, summary)
    assert f.severity is Severity.IMPORTANT and f.check == "G2.slo-target-constant"
    assert "mixed-slo `x-llm-d-slo-ttft-ms: 500`" in f.message and "`incumbentSLOTargetMs` 0" in f.message
    assert "scores every endpoint alike" in f.message and "exercises no deadline order" in f.message
    assert "`param incumbentSLOTargetMs: 500`" in f.fix and "as queue-scorer does" in f.fix
    assert "mix of targets" in f.fix
    # the parameter set at gate 1 to the target sent: queue-scorer, said as a suggestion (it blocks nothing)
    [g] = _slo_header_sent(header_ctx(sent, "param incumbentSLOTargetMs: 500"), hyps, summary)
    assert g.severity is Severity.SUGGESTION and g.check == "G2.slo-target-constant"
    assert "as queue-scorer does" in g.message and "exercises no deadline order" in g.message
    # another target than the modelled one is flagged again; a router has no modelled waiting requests
    [h] = _slo_header_sent(header_ctx(sent, "param incumbentSLOTargetMs: 2000"), hyps, summary)
    assert h.severity is Severity.IMPORTANT
    router = sent.model_copy(update={"kind": PolicyKind.ROUTING})
    rsum = summary_for("routing", SLO_SIGNALS)
    assert _slo_header_sent(header_ctx(router), hypotheses(router, rsum), rsum) == []


def test_an_admitter_that_reads_the_class_has_its_claims_on_one_priority_flagged():
    """F4 #2: a01 admits `critical` and `standard` without condition; every cell sends priority 0 (read as
    `standard`), so the claims and guards judged on the cells measure an admitter that sheds nothing. Gate 2 said
    nothing ("an admitter raises nothing": the mix decides only the shedding order)."""
    req = scheduling_request(kind="admission")
    summary = summary_for("admission", ["ArrivalTime", "InputTokens", "SLOClass"])
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert f.severity is Severity.IMPORTANT and f.check == "G2.priority-exercised"
    assert "admitter" in f.message and "class `standard`" in f.message and "SLOClass" in f.message
    assert "decides only the shedding order" in f.message
    claims = [h.id for _, h in hyps if h.track.value == "A" and h.benchmarked]
    guards = [h.id for _, h in hyps if h.track.value == "C" and h.benchmarked]
    assert claims and guards and all(i in f.message for i in claims + guards)
    reason = f"exclude: {', '.join(claims)}"
    assert f"`promote request-changes 2 --reason '{reason}' --work W`" in f.fix
    assert refusal(2, reason, hypotheses=[h for _, h in hyps]) is None
    # an admitter that never reads the class is exercised alike on every cell
    blind, plain = (
        summary_for("admission", ["ArrivalTime", "InputTokens"]),
        scheduling_request(kind="admission", class_signals=False),
    )
    assert _class_exercised(ctx_for(plain), hypotheses(plain, blind), blind) == []


def test_an_admitter_shown_to_admit_priority_0_when_overloaded_is_said_unmeasurable_first_in_one_clause():
    """maint5 3: a02's generated test shows it admits priority 0 on an overloaded pool, so the cells (all priority
    0) cannot measure it; gate 2 said only "if its admit rule keeps `standard` admitted", and the PR's Known issues
    cut that finding at 150 characters, before its point."""
    from bot.stages.pr_parts import brief

    req = scheduling_request(kind="admission")
    admits = {"idle:0": "admit", "overloaded:0": "admit", "overloaded:-1": "reject"}
    summary = summary_for("admission", ["ArrivalTime", "InputTokens", "SLOClass"]).model_copy(
        update={"behaviour": admits}
    )
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert "if its admit rule" not in f.message and "admits priority 0 even on an overloaded pool" in f.message
    judged = [h.id for _, h in hyps if h.benchmarked]
    assert all(i in f.message for i in judged) and "reported not measurable on these cells" in f.message
    assert "InferenceObjective of negative priority" in f.fix
    # the Known issues line keeps the point, whole
    assert (
        brief(f.message) == "the planned cells cannot measure this admitter (it never sheds their priority-0 traffic)"
    )
    # one that rejects priority 0 when overloaded: the row shows it sheds `standard`; whether the cells get there
    # is what is left (trial4: the next tests)
    other = summary.model_copy(update={"behaviour": admits | {"overloaded:0": "reject"}})
    [g] = _class_exercised(ctx_for(req), hyps, other)
    assert "if its admit rule keeps `standard` admitted" not in g.message and "sheds nothing" not in g.message
    assert "a fresh plugin sheds class `standard` (priority 0) on an overloaded pool" in g.message
    assert brief(g.message) == "the bot cannot tell whether the planned cells load this admitter enough to shed them"


def test_a_stateful_admitters_rows_without_history_are_not_read_as_shedding_nothing():
    """DA4 item 6: a per-tenant token bucket (p3) sheds `standard` traffic by volume; gate 2 said the cells "may
    measure an admitter that sheds nothing" and that they "show noise", on behaviour rows of a fresh plugin with no
    earlier requests, and offered `exclude: A1` for the one claim the bucket can affect on those cells."""
    from bot.stages.pr_parts import brief

    req = scheduling_request(kind="admission")
    rows = {f"{pool}:{p}": "admit" for pool in ("idle", "overloaded") for p in (-1, 0, 1)}
    summary = summary_for("admission", ["ArrivalTime", "InputTokens", "SLOClass", "TenantID"]).model_copy(
        update={"behaviour": rows, "stateful": True}
    )
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert f.check == "G2.priority-exercised"
    assert "sheds nothing" not in f.message and "noise" not in f.message
    assert "keeps state between requests" in f.message and "no earlier requests" in f.message
    # the rows say what they show: a fresh plugin admits `standard` even overloaded, so only its state can shed it
    assert "a fresh plugin admits class `standard` (priority 0) even on an overloaded pool" in f.message
    assert "only what it has seen can make it shed `standard`" in f.message
    assert all(h.id in f.message for _, h in hyps if h.benchmarked)
    assert brief(f.message) == "the bot cannot tell whether the planned cells load this admitter enough to shed them"
    # not on the rows' account: an `exclude:` only once a pilot run shows the cells never shed
    assert "pilot run" in f.fix and f.fix.index("pilot run") < f.fix.index("exclude")


def test_a_stateful_admitter_whose_fresh_rows_shed_priority_0_gives_the_load_and_says_the_bot_cannot_tell():
    """trial4 (a hysteresis shedder): gate 2 said its rows "cannot show whether the cells' load drives that state to
    shed" although its row `overloaded:0` shows a fresh plugin rejecting priority 0, and asked the person to check
    the rule "against the cells' load" without the load the rule needs nor what the cells reach."""
    from bot.golang.probes import ADMISSION_POOLS
    from bot.stages.pr_parts import brief

    req = scheduling_request(kind="admission")
    rows = {"idle:1": "admit", "idle:0": "admit", "overloaded:1": "admit", "overloaded:0": "reject"}
    summary = summary_for("admission", ["ArrivalTime", "InputTokens", "SLOClass"]).model_copy(
        update={"behaviour": rows, "stateful": True, "thresholds": {"pressureHighThreshold": 1.4}}
    )
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert "cannot show whether the cells' load" not in f.message
    over, idle = ADMISSION_POOLS["overloaded"], ADMISSION_POOLS["idle"]
    assert over["WaitingQueueSize"] == 32 and idle["WaitingQueueSize"] == 0
    # the row, used: the load it sheds `standard` at, and the load it admits it at
    assert (
        "its behaviour rows show a fresh plugin sheds class `standard` (priority 0) on an overloaded pool (32 "
        "waiting requests, 64 running and a 97%-full KV cache on every endpoint) and admits it on an idle one (0 "
        "waiting requests, 2 running and a 10%-full KV cache on every endpoint)"
    ) in f.message
    # what the cells reach: the plan has no estimate, said plainly, with the cells
    assert "the plan holds no estimate of the cells' per-pod waiting requests or KV-cache use" in f.message
    assert "`mixed-slo` @ 20 and 35 req/s" in f.message and "the bot cannot tell" in f.message
    assert brief(f.message) == "the bot cannot tell whether the planned cells load this admitter enough to shed them"
    # what to do: a pilot run, the rule's numbers to compare with, or drop the claims
    assert "pilot run" in f.fix and "`vllm:num_requests_waiting`" in f.fix and "`pressureHighThreshold` = 1.4" in f.fix
    claims = ", ".join(h.id for _, h in hyps if h.benchmarked and h.track.value == "A")
    assert f"`promote request-changes 2 --reason 'exclude: {claims}' --work W`" in f.fix
    # a fresh plugin that sheds priority 0 even on an idle pool: every cell exercises its shedding, nothing to check
    idle = summary.model_copy(update={"behaviour": rows | {"idle:0": "reject"}})
    assert _class_exercised(ctx_for(req), hyps, idle) == []


def test_on_github_every_exclude_fix_is_the_comment_not_the_local_command():
    """ghuser3 finding 7: on GitHub, G2.priority-exercised (and G2.contradiction) said to run the local
    `promote request-changes 2 --reason 'exclude: A1'`; there the fix is the comment `/request-changes exclude: A1
    (why)`, which gate 2 applies as written."""
    admitter = scheduling_request(kind="admission")
    found = []
    for req, summary in (
        (admitter, summary_for("admission", SIGNALS)),  # may shed nothing
        (
            admitter,
            summary_for("admission", SIGNALS).model_copy(
                update={"behaviour": {"idle:0": "admit", "overloaded:0": "admit", "overloaded:-1": "reject"}}
            ),
        ),
        (scheduling_request(), summary_for("scheduling")),  # a class-ordering scheduler
    ):
        hyps = hypotheses(req, summary)
        [f] = _class_exercised(ctx_for(req, home="github"), hyps, summary)
        found.append((f, hyps))
    assert "cannot measure this admitter" in found[1][0].message  # the established case too
    req = scheduling_request(rates=(30,), guard_rate=30)
    hyps = hypotheses(req, summary_for("scheduling"))
    found += [(f, hyps) for f in _contradictions(hyps, req, "github")]
    assert len(found) == 4
    # CF1: where every benchmarked hypothesis is set aside, no exclude shrinks the plan, so none is offered; DB1:
    # the plan is then the priority mix alone (it decides the shedding order), and the fix says so.
    established, _ = found.pop(1)
    assert "`/request-changes" not in established.fix
    assert "stage 4 plans 0 cells, priority mix only" in established.fix and "on the mix alone" in established.fix
    for f, hyps in found:
        assert "promote " not in f.fix, f.fix
        [reason] = re.findall(r"`/request-changes (exclude: [^`]*) \(why\)`", f.fix)
        assert refusal(2, reason + " (the cells cannot show it)", hypotheses=[h for _, h in hyps]) is None


LOAD_SPIKES = {  # s01's template workload: every prompt is 512 + 400 = 912 tokens
    "name": "mixed-slo",
    "profile": "shared_prefix_synthetic",
    "rates": [20, 35],
    "overrides": {"data.shared_prefix.system_prompt_len": 512, "data.shared_prefix.question_len": 400},
}


def order_request(signals, workload=LOAD_SPIKES):
    """The scheduling request on ``workload``, its claims declaring only the ``signals`` the plugin reads."""
    raw = scheduling_request().model_dump()
    claims = [c | {"signals": [s for s in c["signals"] or [] if s in signals] or None} for c in raw["claims"]]
    return type(scheduling_request()).model_validate(
        raw | {"claims": claims, "workloads": [workload, raw["workloads"][1]]}
    )


@pytest.mark.parametrize(
    ("signals", "check", "said"),
    [
        (["ArrivalTime", "QueueDepth", "SLOClass"], "G2.priority-exercised", "every request has priority 0"),
        (
            ["ArrivalTime", "InputTokens", "QueueDepth"],
            "G2.prompt-length-exercised",
            "every prompt (912 tokens) is longer than incumbentInputTokens = 512",
        ),
    ],
)
def test_a_scheduler_whose_order_the_cells_leave_inert_has_its_order_hypotheses_said_unmeasurable(signals, check, said):
    """CB1 1 and 6: s01 orders by class and every cell sends priority 0; s02 orders by prompt length and every
    load-spikes prompt (912 tokens) is longer than incumbentInputTokens (512). Either way the order ranks every
    request last, the plugin is a second queue-scorer, and gate 2 raised nothing for s02 (s01's finding did not say
    stage 5 would confirm its claim on that traffic). Gate 2 now says which hypotheses stage 5 sets aside and why,
    with the workloads' prompt lengths and the parameter."""
    req = order_request(signals)
    summary = summary_for("scheduling", signals)
    hyps = hypotheses(req, summary)
    order = [
        h.id for _, h in hyps if h.benchmarked and (h.track.value == "A" or h.source == "queue-ordering-authority")
    ]
    guards = [h.id for _, h in hyps if h.benchmarked and h.track.value == "C"]
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert f.check == check and f.severity is Severity.IMPORTANT
    assert f.message.startswith("the planned cells cannot measure the scheduler's evolved order")
    assert f"{', '.join(order)} will be reported not measurable on these cells" in f.message and said in f.message
    assert not any(g in f.message.split("; ")[1] for g in guards)  # the guards are judged
    if "InputTokens" in signals:
        assert "`sanity-random` 354–414 tokens" in f.message  # every workload's lengths, set aside or not
        assert "both sides of incumbentInputTokens" in f.fix
    reason = f"exclude: {', '.join(order)}"
    assert f"`promote request-changes 2 --reason '{reason}' --work W` (W: your --work)" in f.fix
    assert refusal(2, reason, hypotheses=[h for _, h in hyps]) is None
    assert "single-priority" not in f.fix  # verify2 #6: s02's problem is prompt length, not priority


def test_a_prompt_length_order_the_cells_exercise_is_not_flagged():
    """Prompts on both sides of incumbentInputTokens (as deployed: a gate-1 `param`), or within the plugin's
    estimate error of it (RequestSizeBytes / 4 may be 25% off), exercise the order: nothing is established."""
    signals = ["ArrivalTime", "InputTokens", "QueueDepth"]
    req = order_request(signals)
    summary = summary_for("scheduling", signals)
    hyps = hypotheses(req, summary)
    config = "plugins:\n- type: evolved-class-aging-scheduler\n  parameters: {incumbentInputTokens: 900}\n"
    assert _class_exercised(ctx_for(req, epp_config=config), hyps, summary) == []
    random = {"name": "mixed-slo", "profile": "sanity_random", "rates": [20, 35]}  # 354–414 tokens, near 512
    near = order_request(signals, random)
    assert _class_exercised(ctx_for(near), hypotheses(near, summary), summary) == []


def test_a_scheduler_is_told_its_cells_must_saturate_and_its_if_this_fails_texts_name_them_first():
    """sched-e2e 4: a queue-position scorer acts only where pods have waiting requests (saturation), and nothing
    said so: gate 2 raised nothing, and A1's "If this fails" blamed Map B freshness, B8's reordering within an
    instance, where the first suspect is a cell that never queued."""
    from bot.review.saturation import cells_saturate

    req = scheduling_request(class_signals=False)
    summary = summary_for("scheduling", ["ArrivalTime", "InputTokens"])  # prompts near 512 tokens: an order acts
    hyps = hypotheses(req, summary)
    [f] = cells_saturate(ctx_for(req), hyps, summary)
    assert f.check == "G2.cells-saturate" and f.severity is Severity.SUGGESTION
    changes = [h for _, h in hyps if h.benchmarked and h.prediction.direction.value in ("decrease", "increase")]
    assert {h.track.value for h in changes} == {"A", "B"}
    assert f"the cells {', '.join(h.id for h in changes)} are judged on must saturate" in f.message
    assert "`mixed-slo` @ 20 and 35 req/s" in f.message and "sanity-random" not in f.message
    assert "vllm:num_requests_waiting" in f.fix
    for h in changes:
        assert h.diagnostic.startswith("If this fails, it would indicate first that its cells (`mixed-slo` @ ")
        assert "did not saturate" in h.diagnostic.split("Only where queues formed")[0]
    a1 = by_source(hyps, "mixed-slo-ttft-p99")
    assert "are the first suspects" not in a1.diagnostic
    # guards and no-worse gaps hold where the plugin does nothing: their texts are the plain ones
    assert not any("did not saturate" in h.diagnostic for _, h in hyps if h not in changes)
    # a router is not a queue-position scorer
    router = scheduling_request(kind="routing")
    rhyps = hypotheses(router, summary_for("routing"))
    assert cells_saturate(ctx_for(router), rhyps, summary_for("routing")) == []
    assert not any("did not saturate" in h.diagnostic for _, h in rhyps)


def test_order_claims_set_aside_get_no_saturation_check_and_their_if_this_fails_blames_no_cell():
    """DH2 (verify2 #2): with a class-reading scheduler's A1 and queue-ordering-authority gap set aside at planning
    time (every cell sends priority 0), gate 2's G2.cells-saturate still told the user to check that their cells
    saturate, and their "If this fails" began "first that its cells (`load-spikes` @ 30 and 45 req/s) did not
    saturate", cells the plan no longer runs, for claims set aside for another reason. Stage 3 reads the set-aside
    stage 4 plans with (``set_aside.for_plan``); gate 2 names only the claims planned and judged."""
    from bot.review.saturation import cells_saturate

    signals = ["ArrivalTime", "QueueDepth", "SLOClass"]
    req = order_request(signals)
    summary = summary_for("scheduling", signals)
    hyps = hypotheses(req, summary)
    order = [h for _, h in hyps if h.benchmarked and (h.track.value == "A" or h.source == "queue-ordering-authority")]
    assert {h.track.value for h in order} == {"A", "B"}
    assert cells_saturate(ctx_for(req), hyps, summary) == []
    for h in order:
        assert "did not saturate" not in h.diagnostic and h.diagnostic.startswith("If this fails, it would indicate ")
    # a config that exercises the order is read too: with no set-aside the texts name the cells first
    lengths = order_request(["ArrivalTime", "InputTokens", "QueueDepth"])
    config = "plugins:\n- type: evolved-class-aging-scheduler\n  parameters: {incumbentInputTokens: 900}\n"
    summary = summary_for("scheduling", ["ArrivalTime", "InputTokens", "QueueDepth"])
    inert = {h.id: h for h in generate_hypotheses(lengths, summary, load_dictionary())}
    acting = {h.id: h for h in generate_hypotheses(lengths, summary, load_dictionary(), epp_config=config)}
    a1 = next(i for i in inert if i.startswith("A"))
    assert "did not saturate" not in inert[a1].diagnostic and "did not saturate" in acting[a1].diagnostic


TRIAL4 = ["ArrivalTime", "InputTokens", "QueueDepth", "SLOClass"]  # the class-then-slack order of trial 4
NEAR_512 = {"name": "mixed-slo", "profile": "sanity_random", "rates": [20, 35]}  # 354–414 tokens: both sides


def length_summary(signals, unmoved) -> TranslationSummary:
    """A scheduler's summary whose translation recorded (or not: None, an older summary) that its order never
    moved with the prompt length in the harness, through the ``unmoved`` length parameters."""
    raw = summary_for("scheduling", signals).model_dump(mode="json")
    return TranslationSummary.model_validate(raw | {"prompt_length_unmoved": unmoved})


def test_an_order_the_harness_never_saw_move_with_the_prompt_length_is_offered_no_prompt_lengths():
    """Trial 4: the order ranks by class, then by a slack mixing the wait and the prompt length; in the plugin the
    request has waited 0 and the modelled incumbents at least 50 ms, so a standard request never goes ahead
    whatever its length, and the translation found no input on which `inputLenCoeff` or `inputTokensOffset`
    decided. Gate 2 offered "prompts on both sides of incumbentInputTokens", which no workload can make count;
    it now says the order never moved with the prompt length, naming the parameters and the report's section,
    and counts a workload whose prompts straddle incumbentInputTokens as inert like the others."""
    from bot.bench.order_cells import inert_workloads, order_fix

    req = order_request(TRIAL4, NEAR_512)
    summary = length_summary(TRIAL4, ["inputLenCoeff", "inputTokensOffset"])
    fix = order_fix(summary)
    assert "both sides of incumbentInputTokens" not in fix and "several priorities" in fix
    assert "never moved with the prompt length in the harness" in fix
    assert "`inputLenCoeff`, `inputTokensOffset`" in fix and '"Generated tests"' in fix
    assert "`param " in fix and "reject" in fix  # what a person can do
    inert = inert_workloads(summary, req, {})
    assert set(inert) == {"mixed-slo", "sanity-random"}  # prompts near 512 no longer save a workload
    assert "every request has priority 0" in inert["mixed-slo"]
    assert "never moved with the prompt length" in inert["mixed-slo"] and "354" not in inert["mixed-slo"]
    hyps = hypotheses(req, summary)
    [f] = _class_exercised(ctx_for(req), hyps, summary)
    assert f.check == "G2.priority-exercised" and "never moved with the prompt length" in f.fix
    assert "against incumbentInputTokens" not in f.message  # the lengths decide nothing: not listed as if they did
    # an order that reads nothing else of the request: no workload can exercise it, and the fix says so
    only = ["ArrivalTime", "InputTokens", "QueueDepth"]
    alone = order_fix(length_summary(only, ["inputLenCoeff"]))
    assert alone.startswith("no workload can exercise it") and "traffic whose requests differ" not in alone
    near = order_request(only, NEAR_512)
    summary = length_summary(only, ["inputLenCoeff"])
    [f] = _class_exercised(ctx_for(near), hypotheses(near, summary), summary)
    assert f.check == "G2.prompt-length-exercised" and "`inputLenCoeff`" in f.fix


def test_an_order_the_harness_saw_move_with_the_prompt_length_keeps_todays_text():
    """The same order whose translation did not record it unmoved (it moved, or an older summary without the
    field): prompt lengths on both sides of incumbentInputTokens are still the fix, and prompts near it still
    exercise the order."""
    from bot.bench.order_cells import inert_workloads, order_fix

    req = order_request(TRIAL4, NEAR_512)
    older = summary_for("scheduling", TRIAL4).model_dump(mode="json")
    older.pop("prompt_length_unmoved", None)
    for summary in (length_summary(TRIAL4, None), TranslationSummary.model_validate(older)):
        fix = order_fix(summary)
        assert "both sides of incumbentInputTokens" in fix and "never moved" not in fix
        assert inert_workloads(summary, req, {}) == {}  # 354–414 tokens, within the estimate's error of 512
