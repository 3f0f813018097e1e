"""The change-request directives: one registry the parsers, the texts and the README agree with."""

from __future__ import annotations

import re

import pytest

from bot import PROJECT_ROOT, directives
from bot.dictionary import load_dictionary
from bot.model import PromotionRequest
from bot.review.change_request import parameter_checks, refusal
from tests.conftest import REQUEST

PARAMETERS = ["kvUtilizationFloor", "kvUtilizationThreshold", "loadHighThreshold", "loadLowThreshold"]


@pytest.fixture(scope="module")
def request_hypotheses():
    """The hypotheses of the hypotheses tests' request (A1..A3, B1.., C1..): what gate 2's ids may name."""
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses
    from bot.model import PolicyKind, TranslationSummary
    from tests.hypotheses.conftest import make_request

    dictionary = load_dictionary()
    signals = ["QueueDepth", "KVUtilization", "InFlightRequests", "CacheHitRate"]
    summary = TranslationSummary(
        kind=PolicyKind.ROUTING,
        plugin_type="evolved-adaptive-scorer",
        package_dir="pkg/epp/framework/plugins/scheduling/scorer/evolvedadaptive",
        signals=signals,
        freshness_gaps=[s for s in signals if dictionary.signal(s).freshness.gap],
        touched_gaps=dictionary.touched_gaps(PolicyKind.ROUTING, signals),
        thresholds={"kvThreshold": 0.9},
    )
    return generate_hypotheses(make_request(), summary, dictionary)


@pytest.mark.parametrize("d", [d for g in (1, 2, 3) for d in directives.for_gate(g)], ids=lambda d: d.name)
def test_every_listed_directive_is_applied_by_its_gates_parser(d):
    """The example people are shown applies as written; prose around it is still prose."""
    assert directives.found(d.gate, f"some words first\n{d.example}\n") == [d]
    assert refusal(d.gate, f"some words first\n{d.example}", parameters=PARAMETERS) is None
    if d.gate == 1:
        from bot.golang.translate import feedback_options

        assert feedback_options(d.example)[1], "gate 1's translator applies it"
    elif d.gate == 2:
        from bot.hypotheses import parse_feedback

        fb = parse_feedback(f"a remark\n{d.example}")
        assert fb.notes == ["a remark"] and not fb.unapplied
        assert fb.exclude or fb.guards or fb.margins or fb.margin is not None


def test_the_readme_lists_every_directive_and_no_other():
    readme = (PROJECT_ROOT / "README.md").read_text()
    table = [ln for ln in readme.splitlines() if re.match(r"\| [123] \| `", ln)]
    listed = {(int(ln[2]), re.search(r"`([^`]+)`", ln).group(1)) for ln in table}
    assert listed == {(d.gate, d.example) for g in (1, 2, 3) for d in directives.for_gate(g)}


def test_prose_alone_is_answered_with_the_gates_directives_and_the_directive_it_probably_means():
    why = refusal(1, "set loadThreshold to 40 for real pods", parameters=PARAMETERS)
    assert why is not None and "names no directive gate 1 applies" in why and "nothing was recorded" in why
    assert "`param loadHighThreshold: 40`" in why and "`param loadLowThreshold: 40`" in why
    assert all(f"`{d.syntax}`" in why for d in directives.for_gate(1))
    assert "exclude" not in why  # only this gate's
    why3 = refusal(3, "the runs look noisy", parameters=None)
    assert why3 is not None and "`rejudge: WHY`" in why3


def test_the_claude_author_reads_prose_at_gates_1_and_2_only():
    assert refusal(1, "tighten the comments", author=True) is None
    assert refusal(2, "word A1 more carefully", author=True) is None
    assert refusal(3, "the runs look noisy", author=True) is not None  # stages 4-5 have no author step


@pytest.mark.parametrize(
    ("gate", "reason", "needle"),
    [
        (1, "param loadThreshold: 40", "`param loadThreshold` is not a parameter of the plugin"),
        (1, "scorers: fast-lane:1", "unknown scorer(s) fast-lane"),
        (2, "margin: 7", "margin must be a fraction"),
        (2, "guard: <b>vibes</b>", "&lt;b>vibes"),  # the person's line is quoted escaped
    ],
)
def test_a_directive_that_cannot_apply_is_answered_before_anything_runs(gate, reason, needle):
    why = refusal(gate, reason, parameters=PARAMETERS)
    assert why is not None and needle in why and "nothing was recorded" in why
    assert all(f"`{d.syntax}`" in why for d in directives.for_gate(gate))


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (
            "scorers: prefix-affinity:1, prefix-affinity:2",
            "`scorers: prefix-affinity:1, prefix-affinity:2`: prefix-affinity is listed twice; each scorer may appear once",
        ),
        (
            "scorers: prefix-affinity:1, queue-depth:0",
            "`scorers: prefix-affinity:1, queue-depth:0`: the weight of queue-depth is 0; every weight must be > 0",
        ),
        ("scorers: queue-depth:0.0, queue-depth:1", "queue-depth is listed twice"),
    ],
)
def test_scorers_blis_would_refuse_are_refused_by_the_parser_before_anything_is_recorded(line, needle):
    """Found by a new user: a duplicate scorer or a weight of 0 was recorded, and the plugin generated from it
    failed its own Validate() on every state (3 CRITICAL, 0.0% agreement). BLIS's ParseScorerConfigs refuses
    both; so does the parser every home asks first, naming the line and the rule."""
    problems = directives.scorers_problems(f"a remark\n{line}\n")
    assert any(needle in p for p in problems), problems
    assert "ParseScorerConfigs" in " ".join(problems)
    why = refusal(1, f"a remark\n{line}", parameters=PARAMETERS, scorers=True)
    assert why is not None and needle in why and "nothing was recorded" in why
    assert directives.scorers_problems("scorers: prefix-affinity:3, queue-depth:2, kv-utilization:2") == []


@pytest.mark.parametrize(
    ("reason", "needle"),
    [
        (
            "param loadHighThreshold: -5",
            "`param loadHighThreshold: -5` is out of range: loadHighThreshold must be >= 0",
        ),
        ("param kvUtilizationThreshold: 1.5", "kvUtilizationThreshold is a 0-1 fraction, got 1.5"),
    ],
)
def test_a_param_value_the_plugins_validate_refuses_is_answered_with_its_range(reason, needle):
    """The checks are the plugin's own (``ParamSpec.checks`` of the bundled program), not a copy of them."""
    checks = parameter_checks(PromotionRequest.load(REQUEST), load_dictionary())
    why = refusal(1, reason, parameters=PARAMETERS, checks=checks)
    assert why is not None and needle in why and "Validate()" in why and "nothing was recorded" in why
    assert (
        refusal(1, "param loadLowThreshold: 5\nparam kvUtilizationThreshold: 1", parameters=PARAMETERS, checks=checks)
        is None
    )


def test_param_values_that_together_invert_the_policy_are_refused_with_the_values_in_effect():
    """Found by a Go reviewer: the README's own `param loadHighThreshold: 70` was accepted, and with loadCoeff and
    loadLowThreshold as evolved the taper before the cut turns negative: the plugin scores the busier endpoint
    higher. The checks across parameters Validate() has see the evolved defaults, earlier lines, then these."""
    checks = parameter_checks(PromotionRequest.load(REQUEST), load_dictionary())
    why = refusal(1, "param loadHighThreshold: 70", parameters=PARAMETERS, checks=checks)
    assert why is not None and "nothing was recorded" in why and "Validate() refuses" in why, why
    assert "`param loadHighThreshold: 70` cannot apply with the values in effect: loadCoeff*(loadHigh" in why
    assert "got 0.12*(70-4.5) > 1-0.4" in why
    why = refusal(1, "param loadLowThreshold: 8", parameters=PARAMETERS, checks=checks)
    assert why is not None and "loadLowThreshold must be <= loadHighThreshold" in why and "got 8 > 7" in why
    together = "param loadHighThreshold: 56\nparam loadLowThreshold: 36\nparam loadCoeff: 0.015"
    assert refusal(1, together, parameters=[*PARAMETERS, "loadCoeff"], checks=checks) is None
    # A person's earlier lines are in effect: moving the cut alone after them is judged with them.
    earlier = {"loadLowThreshold": 36.0, "loadCoeff": 0.015}
    assert refusal(1, "param loadHighThreshold: 56", parameters=PARAMETERS, checks=checks, current=earlier) is None
    assert refusal(1, "param loadHighThreshold: 56", parameters=PARAMETERS, checks=checks) is not None


def test_gate2_refuses_ids_it_does_not_have_and_margins_on_directional_predictions(request_hypotheses):
    """Found by a new user: `exclude: B9 (nope)` was recorded and reran stage 3, which reopened the gate unchanged."""
    hs = request_hypotheses
    why = refusal(2, "exclude: B9 (nope)", hypotheses=hs)
    assert why is not None and "B9 is not a hypothesis of this promotion (its hypotheses: A1," in why
    assert "nothing was recorded" in why and "`exclude: ID, ID (why)`" in why
    why = refusal(2, "exclude: B2\nmargin C40: 3%", hypotheses=hs)  # one that applies does not carry a typo
    assert why is not None and "C40 is not a hypothesis" in why
    why = refusal(2, "margin A1: 3%", hypotheses=hs)
    assert why is not None and "`margin A1` names a directional prediction" in why and "C1" in why
    assert refusal(2, "exclude: B2, C3 (not here)\nmargin C1: 3%", hypotheses=hs) is None
    assert refusal(2, "exclude: B9", hypotheses=None) is None  # unknown ids: nothing refused on a guess


def test_the_parameter_hint_needs_a_near_name_and_a_value():
    """Found by a new user: "these thresholds are already llm-d scale" got "Did you mean `param deltaThreshold:
    VALUE`?", a parameter the reason does not name."""
    parameters = [*PARAMETERS, "deltaThreshold"]
    for prose in ("these thresholds are already llm-d scale", "the thresholds 40 and 20 are already llm-d scale"):
        why = refusal(1, prose, parameters=parameters)
        assert why is not None and "Did you mean" not in why, why
    why = refusal(1, "set loadThreshold to 40", parameters=parameters)
    assert why is not None and "Did you mean `param loadLowThreshold: 40`" in why


SCORERS_LINE = "scorers: prefix-affinity:1, load-balance:1"


def test_scorers_is_refused_for_a_plugin_without_a_scorers_parameter():
    # found by a new user: on an admitter `scorers:` was recorded and reported "Applied: baseline scorers set to
    # ..." while the plugin, its config and the baseline stayed as they were.
    why = refusal(1, SCORERS_LINE, parameters=["clockThreshold"], scorers=False)
    assert why is not None and "would change nothing" in why and "nothing was recorded" in why
    assert refusal(1, SCORERS_LINE, parameters=PARAMETERS, scorers=True) is None
    assert refusal(1, SCORERS_LINE, parameters=PARAMETERS) is None  # unknown: nothing refused on a guess


def test_only_a_routing_program_that_reads_the_blis_scorers_has_a_scorers_parameter():
    from bot.model import PolicyKind
    from bot.review.change_request import has_scorers

    routing = PromotionRequest.load(REQUEST)
    assert has_scorers(routing, load_dictionary())
    assert not has_scorers(routing.model_copy(update={"kind": PolicyKind.ADMISSION}), load_dictionary())


def test_gate_1_offers_a_promotion_its_own_parameter_and_no_scorers_it_lacks():
    # found by a new user: an admitter's gate 1 offered `scorers:` and `param loadHighThreshold: 70`, a parameter
    # of another plugin.
    params = {"clockThreshold": 1e7, "shedFraction": 0.25}
    examples = directives.promotion_examples(1, parameters=params, scorers=False)
    forms = directives.for_gate(1, examples)
    # another value than its default: an example that sets the value the parameter has would change nothing
    assert [d.name for d in forms] == ["param"] and forms[0].example == "param clockThreshold: 20000000"
    assert refusal(1, forms[0].example, parameters=sorted(params), scorers=False, examples=examples) is None
    assert "loadHighThreshold" not in directives.listing(1, examples)
    assert "scorers:" not in refusal(1, "prose", parameters=sorted(params), scorers=False, examples=examples)
    assert directives.promotion_examples(1, parameters=None, scorers=None) == {
        d.name: d.example for d in directives.for_gate(1)
    }


def _scheduling_request():
    from bot import PROJECT_ROOT as root
    from bot.model import PolicyKind

    path = root / "examples/corpus/s01_slo_aging_scheduler.go"
    routing = PromotionRequest.load(REQUEST)
    return routing.model_copy(
        update={"kind": PolicyKind.SCHEDULING, "source_text": path.read_text(), "source": path.name}
    )


@pytest.mark.parametrize(
    ("reason", "needle"),
    [
        (None, None),
        (
            "param waitedMsCoeff: 4s",
            "`param waitedMsCoeff: 4s`: waitedMsCoeff takes a number in plain digits (e.g. 4000",
        ),
        ("param waitedMsCoeff: four", "`param waitedMsCoeff: four`: waitedMsCoeff takes a number"),
        ("param incumbentSLOClass: 2", "`param incumbentSLOClass: 2`: incumbentSLOClass takes one word (e.g. batch)"),
        ("param incumbentSpacingUs: 20.5", "incumbentSpacingUs takes a whole number"),
        ("param incumbentSLOClass: crtical", 'incumbentSLOClass "crtical" is not a BLIS SLO class (critical, standard'),
        ("param incumbentInputTokens: 200", "`param incumbentInputTokens` is not a parameter of the plugin"),
        ("param incumbentSLOClass: the batch class", "`param incumbentSLOClass: the batch class`: incumbentSLOClass"),
        ("param incumbentSLOClass: realtime", 'incumbentSLOClass "realtime" is a BLIS v1 name; use critical or'),
        ("param maxPseudoQueue: 0", "`param maxPseudoQueue: 0` is out of range: maxPseudoQueue must be >= 1, got 0"),
    ],
)
def test_param_sets_a_scheduling_plugins_own_parameters_and_answers_a_bad_value(reason, needle):
    """Found by a scheduler author: `param incumbentInputTokens: 200` was "not a parameter of the plugin", and
    `param incumbentSLOClass: batch` or `param waitedMsThreshold: 4s` "named no directive". Found by an llm-d
    maintainer: this order (s01) reads no prompt length, so incumbentInputTokens does nothing and is no parameter,
    and a misspelt class, which would weigh 0, is refused."""
    from bot.review.change_request import parameter_specs

    specs = parameter_specs(_scheduling_request(), load_dictionary())
    assert {"maxPseudoQueue", "incumbentSLOClass", "incumbentSpacingUs"} <= set(specs)
    assert "incumbentInputTokens" not in specs
    kw = {
        "parameters": sorted(specs),
        "checks": {n: s.checks for n, s in specs.items()},
        "types": {n: s.go_type for n, s in specs.items()},
    }
    if reason is None:
        good = "param maxPseudoQueue: 64\nparam incumbentSLOClass: batch\nparam incumbentSpacingUs: 20000"
        assert refusal(1, good, **kw) is None
        assert refusal(1, 'param incumbentSLOClass: ""', **kw) is None  # BLIS's empty class, quoted
        return
    why = refusal(1, reason, **kw)
    assert why is not None and needle in why and "nothing was recorded" in why, why
    assert "names no directive" not in why


def test_a_later_scorers_line_replaces_an_earlier_one():
    """A rerun reads every change request at gate 1 (``pipeline.change_requests``): the last `scorers:` wins."""
    from bot.golang.translate import feedback_options

    opts, applied = feedback_options("scorers: prefix-affinity:1, load-balance:1\n\nscorers: load-balance:2")
    assert opts["scorers"] == [("load-balance", 2.0)] and applied == ["baseline scorers set to load-balance:2"]


def test_the_values_a_person_deployed_accumulate_over_gate_1s_change_requests():
    """Two change requests, one parameter each: both are in force (the reruns read every request), so an example
    or a refusal must not judge the second as if the first were gone."""
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.model import Decision, GateDecision
    from bot.review.change_request import deployed_by_person

    state = pipeline.new_state("1", "f", "promotion/1-x", actor="researcher", now=datetime(2026, 11, 27, tzinfo=UTC))
    at = datetime(2026, 11, 27, 1, tzinfo=UTC)
    state.decisions = [
        GateDecision(
            gate=1, decision=Decision.REQUEST_CHANGES, actor="maria", at=at, reason="param loadHighThreshold: 56"
        ),
        GateDecision(
            gate=1, decision=Decision.REQUEST_CHANGES, actor="maria", at=at, reason="param loadLowThreshold: 36"
        ),
    ]
    assert deployed_by_person(state) == {"loadHighThreshold": 56.0, "loadLowThreshold": 36.0}


def test_rejudge_is_worded_for_the_home_it_is_shown_in():
    """Found on GitHub (ghuser2 #8): gate 3's "Request changes with" table and the refusal reply said the reports
    "in --results" are judged again, a local flag that does not exist there."""
    from bot.render import render

    for github in (True, False):
        why = refusal(3, "the runs look noisy", github=github)
        table = render("_directives.md.j2", gate=3, github=github)
        for text in (why, table):
            assert ("--results" in text) is not github, text
            assert "on the branch" in text
    assert "replace them with a commit to the branch first" in render("_directives.md.j2", gate=3, github=True)


@pytest.mark.parametrize(
    ("reason", "needle"),
    [
        ("margin: 0.6", "`0.6` reads as 60%, and within it a plugin 60% worse than the default would pass"),
        ("margin C1: 60%", "`60%` reads as 60%"),
        ("exclude: B2 (no LoRA)\nmargin: 0.6", "for 0.6% write `0.6%`"),  # beside another directive too
    ],
)
def test_a_margin_above_half_is_refused_saying_how_it_was_read(reason, needle):
    """Found by a new user: `margin: 0.6` (60%) was accepted silently and every Track B and C guard read
    "within 60%"; whoever meant 0.6% had no way to see it."""
    why = refusal(2, reason)
    assert why is not None and needle in why and "at most 0.5" in why and "nothing was recorded" in why, why
    assert refusal(2, "margin: 0.5") is None and refusal(2, "margin: 0.6%") is None


def test_gate2_says_what_a_margin_above_a_quarter_makes_vacuous():
    """Accepted up to 50%, but above 25% gate 2 raises an IMPORTANT finding naming the margin and the guards."""
    from bot.hypotheses import generate_hypotheses
    from bot.model import PolicyKind, Severity, TranslationSummary
    from bot.review.gate2 import _vacuous_margins
    from tests.hypotheses.conftest import make_request

    dictionary = load_dictionary()
    ts = TranslationSummary(
        kind=PolicyKind.ROUTING, plugin_type="evolved-x", package_dir="pkg/x", signals=["QueueDepth"]
    )
    hyps = generate_hypotheses(make_request(), ts, dictionary, feedback="margin: 0.4")
    (f,) = _vacuous_margins([(f"{h.id}.md", h) for h in hyps])
    assert f.severity is Severity.IMPORTANT and f.check == "G2.margin-vacuous"
    assert f.message.startswith("margin 40% on C1") and "vacuous for any regression up to 40%" in f.message
    assert "`margin: 0.4%`" in f.fix
    default = generate_hypotheses(make_request(), ts, dictionary, feedback="margin: 0.25")
    assert _vacuous_margins([(f"{h.id}.md", h) for h in default]) == []


def test_an_exclude_naming_no_id_says_the_word_is_not_an_id_of_this_promotion(request_hypotheses):
    """Found by a new user: `exclude: Z9` was answered "(no hypothesis id such as C3)", read as C3 missing."""
    why = refusal(2, "exclude: Z9", hypotheses=request_hypotheses)
    assert why is not None and "Z9 is not a hypothesis id of this promotion (ids: A1, A2, A3, A4, B1," in why, why
    assert "such as C3" not in why and "nothing was recorded" in why
    bare = refusal(2, "exclude: Z9")  # the ids unknown: the form, not a guess at them
    assert bare is not None and "Z9 is not a hypothesis id; ids are a track letter and a number, e.g. A1" in bare


def _finding(check: str, severity: str = "CRITICAL"):
    from bot.model import Finding, Severity

    return Finding(severity=Severity(severity), check=check, message="m")


def test_the_checks_no_directive_clears_are_spelled_as_their_modules_spell_them():
    from bot.golang.gooutput import CHECK_BUILD, CHECK_TEST
    from bot.golang.package_vars import PACKAGE_STATE

    assert {CHECK_TEST, CHECK_BUILD, PACKAGE_STATE} <= directives.NO_DIRECTIVE_CLEARS
    assert 'check="G1.compiles"' in (PROJECT_ROOT / "bot" / "review" / "gate1.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("github", [True, False])
def test_gate_1_says_when_no_change_request_can_clear_its_critical_findings(github):
    """Found in a researcher's trial: gate 1 offered `param NAME: VALUE` beside CRITICAL findings (a failing
    generated test) that no deployed value changes, so a change request would rerun stage 2 into the same gate."""
    from bot.render import render

    stuck = [_finding("toolchain.test"), _finding("hazard.package-state"), _finding("hazard.x", "IMPORTANT")]
    said = directives.none_clears(1, stuck)
    assert "`hazard.package-state`, `toolchain.test`" in said and "re-filed program" in said, said
    assert "reject" in said, said
    table = render("_directives.md.j2", gate=1, github=github, findings=stuck)
    assert said in table, table
    for findings in ([*stuck, _finding("hazard.sim-scale-threshold")], [_finding("hazard.x", "IMPORTANT")], []):
        assert directives.none_clears(1, findings) == "", findings  # one a directive may clear, or none at all
        assert "re-filed" not in render("_directives.md.j2", gate=1, github=github, findings=findings)
    assert directives.none_clears(2, stuck) == ""
    assert "re-filed" not in render("_directives.md.j2", gate=1, github=github)  # a review not at hand


def test_the_cli_gate_stop_says_it_too():
    from types import SimpleNamespace

    from bot.cli.pipeline import _gate_brief
    from bot.model import ReviewRound

    review = ReviewRound(gate=1, round=1, findings=[_finding("toolchain.test")])
    state = SimpleNamespace(reviews={1: [review]}, unconverged=set())
    text = "\n".join(_gate_brief(state, 1, fork=None, base="main"))
    assert directives.none_clears(1, review.findings) in text, text
    review = ReviewRound(gate=1, round=1, findings=[_finding("toolchain.test"), _finding("hazard.recalibration")])
    assert "re-filed" not in "\n".join(
        _gate_brief(SimpleNamespace(reviews={1: [review]}, unconverged=set()), 1, fork=None, base="main")
    )
