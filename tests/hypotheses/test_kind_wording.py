"""Texts a scheduler's promotion reads are a scheduler's: found by a scheduler author (scheduser finding 11).

B7 said a queue-position scorer "should shed only sheddable requests", B8 told them to "promote it as a flow-control
ordering policy instead" without saying how, and FINDINGS' devil's advocate proposed disabling "the evolved plugin's
penalties" (a scheduler has none).
"""

from __future__ import annotations

import pytest

from bot.golang.scheduling_docs import UNPLANNED_CONTROL, queue_control
from bot.hypotheses import generate_hypotheses
from bot.model import Effect, PolicyKind, TranslationSummary, Verdict, VerdictStatus
from bot.render import render
from bot.stages.document import STATUS_WORD, devils_advocate, resolution
from bot.stages.paths import PromotionPaths
from tests.hypotheses.conftest import make_request

SIGNALS = ["ArrivalTime", "InputTokens", "SLOClass"]


def _hypotheses(kind: str, dictionary):
    req = make_request(kind=kind, source_text="")
    summary = TranslationSummary(
        kind=PolicyKind(kind),
        plugin_type="evolved-x",
        package_dir="pkg/x",
        signals=SIGNALS,
        touched_gaps=dictionary.touched_gaps(PolicyKind(kind), SIGNALS),
    )
    return req, generate_hypotheses(req, summary, dictionary)


@pytest.mark.parametrize("kind", ["scheduling", "routing"])
def test_priority_semantics_does_not_ask_a_scheduler_or_router_to_shed(kind, dictionary):
    _, hs = _hypotheses(kind, dictionary)
    b = next(h for h in hs if h.source == "priority-semantics")
    assert "shed only sheddable" not in b.statement and "sheds none" in b.statement
    assert "protected-request TTFT" in b.statement and b.diagnostic.startswith("If this fails, it would indicate")
    _, adm = _hypotheses("admission", dictionary)
    assert "shed only sheddable" in next(h for h in adm if h.source == "priority-semantics").statement


def test_queue_ordering_authority_says_how_to_keep_the_order(dictionary):
    _, hs = _hypotheses("scheduling", dictionary)
    b8 = next(h for h in hs if h.source == "queue-ordering-authority")
    assert "promote it as a flow-control ordering policy instead" not in b8.diagnostic
    assert "by hand" in b8.diagnostic and "fcfs-ordering-policy" in b8.diagnostic
    assert "only as placement scorers" in b8.diagnostic


def _findings(kind: str, dictionary, track_a: bool = True) -> str:
    req, hs = _hypotheses(kind, dictionary)
    h = next(h for h in hs if h.track.value == ("A" if track_a else "C"))
    effect = Effect(
        workload=h.workloads[0],
        rate=4.0,
        metric="ttft_mean",
        baseline_mean=100.0,
        evolved_mean=80.0,
        rel_change=-0.2,
        ci_low=-0.25,
        ci_high=-0.15,
        cv_baseline=0.03,
        t_eff=0.06,
        n_baseline=6,
        n_evolved=6,
    )
    v = Verdict(hypothesis_id=h.id, status=VerdictStatus.CONFIRMED, summary="s", effects=[effect])
    text = render(
        "findings.md.j2",
        h=h,
        v=v,
        status=STATUS_WORD[v.status],
        resolution=resolution(h, v, req.kind),
        root_cause=[],
        action="none",
        request=req,
        paths=PromotionPaths("x"),
        experiments=[f"{PromotionPaths('x').benchmarks}/experiment.yaml"],
        narrative=None,
        narrative_prompt="",
        queue_control=queue_control(),
        unplanned_control=UNPLANNED_CONTROL,
        sample=False,
        devil=devils_advocate(h, v),
    )
    return text.split("## Devil's advocate", 1)[1].split("##", 1)[0]


def test_a_confirmed_schedulers_devils_advocate_is_about_placement(dictionary):
    said = _findings("scheduling", dictionary)
    assert "penalties" not in said
    assert "never reorders a queue" in said and "queue-scorer" in said
    assert "cannot tell the two apart" in said  # the mechanism check ran (evolved_for, Track A) but cannot separate
    # sched-e2e #2: the control it names is one the plan lacks, not the evolved arm again ("every request weighted
    # alike" is what the plugin already does on single-priority cells)
    assert "weighted alike" not in said
    assert "queue-scorer at weight 4 (its 2 plus this scorer's 2) and no evolved scorer, run by hand" in said
    assert "It is not in the plan: stage 4 plans two arms only" in said


@pytest.mark.parametrize("kind", ["routing", "admission"])
def test_a_confirmed_devils_advocate_names_the_mechanism_check_only_where_it_ran(kind, dictionary):
    a = _findings(kind, dictionary)
    assert "penalties" not in a and "The mechanism check across workloads" in a
    c = _findings(kind, dictionary, track_a=False)  # the check runs on Track A metrics only
    assert "mechanism check" not in c and "The per-workload effects above are the evidence" not in c
    # CF2 (consistency3 5): a confirmed guard claims no improvement, so none is argued away
    assert c.strip().startswith("A confirmed equivalent claim says the evolved plugin stayed within the margin")
    assert ("admitting every request" in a) == (kind == "admission")


QUEUE_MECHANISM = "Class weight 10 for critical puts critical requests at the head of the wait queue"


def test_a_schedulers_track_a_says_what_llm_d_tests_and_keeps_blis_as_the_origin(dictionary):
    """scheduser 3: A1 said the plugin "puts critical requests at the head of the wait queue"; in llm-d it places."""
    req = make_request(kind="scheduling", source_text="")
    claims = [req.claims[0].model_copy(update={"mechanism": QUEUE_MECHANISM})]
    req = req.model_copy(update={"claims": claims})
    summary = TranslationSummary(
        kind=PolicyKind.SCHEDULING, plugin_type="evolved-x", package_dir="pkg/x", signals=SIGNALS
    )
    a1 = generate_hypotheses(req, summary, dictionary)[0]
    assert "because it prefers endpoints where the evolved queue order would serve the request earlier" in a1.statement
    assert "this is how llm-d carries BLIS's mechanism (class weight 10" in a1.statement
    assert "because class weight" not in a1.statement
    assert (
        a1.mechanism.startswith("In llm-d the plugin prefers endpoints") and "first come, first served" in a1.mechanism
    )
    assert a1.mechanism.endswith(f"(the origin, not what runs in llm-d): {QUEUE_MECHANISM}")
    _, routed = _hypotheses("routing", dictionary)  # a router acts in llm-d as in BLIS: its mechanism stays
    assert routed[0].mechanism == "prefix affinity keeps shared prefixes on warm instances"
    assert routed[0].statement.endswith("because prefix affinity keeps shared prefixes on warm instances.")


@pytest.mark.parametrize("kind", ["scheduling", "routing", "admission"])
def test_a_confirmed_schedulers_resolution_confirms_the_placement_not_the_queue_order(kind, dictionary):
    req, hs = _hypotheses(kind, dictionary)
    v = Verdict(hypothesis_id="A1", status=VerdictStatus.CONFIRMED, summary="s")
    a1 = next(h for h in hs if h.track.value == "A")
    c1 = next(h for h in hs if h.track.value == "C")
    said = resolution(a1, v, req.kind)
    if kind == "scheduling":
        assert said.startswith("Confirmation of the placement translation") and "not of BLIS's queue ordering" in said
    else:
        assert said == "Clean confirmation"
    assert resolution(c1, v, req.kind) == "Clean confirmation"  # a regression guard claims no queue order
    table = render(
        "findings.md.j2",
        h=a1,
        v=v,
        status=STATUS_WORD[v.status],
        resolution=said,
        root_cause=[],
        action="none",
        request=req,
        paths=PromotionPaths("x"),
        experiments=[f"{PromotionPaths('x').benchmarks}/experiment.yaml"],
        narrative=None,
        narrative_prompt="",
        queue_control=queue_control(),
        unplanned_control=UNPLANNED_CONTROL,
        sample=False,
        devil=devils_advocate(a1, v),
    )
    assert ("| **Resolution** | Clean confirmation |" in table) == (kind != "scheduling")


@pytest.mark.parametrize("kind", ["admission", "scheduling", "routing"])
def test_the_hypotheses_name_the_kind_and_type_of_their_plugin(kind, dictionary):
    """Red team 8 item 2: `promote evaluate --translation` refuses another plugin's translation by the plugin the
    hypotheses name (``named_plugins``), so every kind's hypotheses must say theirs, and say only theirs."""
    from bot.hypotheses.wording import named_plugins

    _, hs = _hypotheses(kind, dictionary)
    assert named_plugins(h.statement for h in hs) == {(PolicyKind(kind), "evolved-x")}
