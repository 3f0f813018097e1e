"""A scheduler's numbers named for their role, and a number the order cannot feel offered as no knob (found by a
researcher's trial 4: a queue order by SLO class rank, then a deadline-like slack).

- ``250.0 + 0.04*len - 1.3*waitedMs``: the 250 is added to every request's slack, and the order only compares one
  request's slack with another's, so it cancels in every comparison (in BLIS too). It was the parameter
  ``inputTokensOffset``, documented as "the offset in `inputLenCoeff*float64(r.InputLen())`", and a finding asked
  for a test case for it by hand. It is now the constant ``baseSlack`` of evolved.go, with why beside it.
- ``clock - r.ArrivalTime > 1_500_000`` is how long the request has waited: ``waitThreshold`` (µs), not
  ``arrivalTimeThreshold``, named from one operand.
- ``rank := 2; case "critical": rank = 0; case "standard": rank = 1``: ordinal labels, compared only with another
  request's rank (and stepped by one when a request has aged). They were ``criticalRank``/``standardRank``, documented
  as "the threshold on `0`", with Validate() checking only >= 0, so ``criticalRank: 3`` silently put critical behind
  batch. They stay as evolved, each with a comment: a rank is no magnitude to tune, only an order of the classes.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from bot.golang import dead_branches
from bot.golang.generate import generate
from bot.golang.param_coverage import coverage
from bot.golang.params import param_specs
from bot.review.change_request import inert_parameters
from tests.golang.conftest import CORPUS, FIXTURES, passes_with_test, translate_path

TRIAL = (FIXTURES / "scheduling_class_deadline.go").read_text(encoding="utf-8")


def _params(an) -> dict[str, float]:
    return {th.param: th.value for th in an.thresholds if th.param}


def test_the_trials_order_offers_only_the_numbers_that_can_change_it(analyze_text):
    an = analyze_text(TRIAL)
    assert _params(an) == {"waitThreshold": 1_500_000, "inputLenCoeff": 0.04, "waitedMsCoeff": 1.3}
    base = next(th for th in an.thresholds if th.value == 250)
    assert base.constant == "baseSlack" and base.param is None
    assert "added to every request's `slack`" in base.reason and "never changes the order" in base.reason
    ranks = {th.case: th for th in an.thresholds if th.case}
    assert set(ranks) == {"critical", "standard"}
    for th in ranks.values():
        assert th.param is None and th.constant is None, th  # carried as evolved: the literal stays
        assert "ordinal" in th.reason and "only by comparing it with another request's" in th.reason, th.reason


@pytest.mark.parametrize(
    "slack",
    [
        "slack := -250.0 + 0.04*float64(r.InputLen()) - 1.3*waitedMs",  # negated
        "slack := 0.04*float64(r.InputLen()) - (1.3*waitedMs - 250.0)",  # subtracted, in parentheses
    ],
)
def test_a_constant_term_cancels_whatever_its_sign_or_place_in_the_sum(analyze_text, slack):
    text = TRIAL.replace("slack := 250.0 + 0.04*float64(r.InputLen()) - 1.3*waitedMs", slack)
    an = analyze_text(text)
    base = next(th for th in an.thresholds if abs(th.value) == 250)
    assert base.constant == "baseSlack" and base.param is None, base
    assert _params(an) == {"waitThreshold": 1_500_000, "inputLenCoeff": 0.04, "waitedMsCoeff": 1.3}


def test_the_wait_threshold_says_what_it_measures_and_its_unit(analyze_text):
    an = analyze_text(TRIAL)
    spec = next(s for s in param_specs(an, None, True) if s.name == "waitThreshold")
    assert "how long the request has waited" in spec.doc and "µs" in spec.doc, spec.doc
    assert not any(s.name.endswith("Rank") for s in param_specs(an, None, True))


def test_evolved_go_keeps_the_ranks_and_the_base_slack_with_why_beside_them(analyze_text, dictionary):
    an = analyze_text(TRIAL)
    gen = generate(an.src, an, dictionary, "t-class-deadline")
    evolved = next(t for p, t in gen.files.items() if p.endswith("/evolved.go"))
    assert "\tbaseSlack float64 = 250.0\n" in evolved or "\tbaseSlack float64 = 250\n" in evolved, evolved
    assert "slack := baseSlack + p.params.InputLenCoeff*" in evolved, evolved
    comment = re.search(r"// (baseSlack [^\n]*)\n", evolved)
    assert comment and "every request" in comment.group(1) and "never changes the order" in comment.group(1)
    for line in ("rank := 2 //", "rank = 0 //", "rank = 1 //"):
        assert line in evolved, evolved
    assert re.search(r"rank = 0 // [^\n]*critical[^\n]*ordinal", evolved), evolved
    assert "clock-r.ArrivalTime > p.params.WaitThreshold" in evolved
    assert "CriticalRank" not in "\n".join(gen.files.values())
    config = next(t for p, t in gen.files.items() if "DefaultParameters() Parameters" in t)
    assert "WaitThreshold:" in config and "InputTokensOffset" not in config


def test_the_base_slack_is_named_with_why_no_test_can_exercise_it(analyze_text):
    an = analyze_text(TRIAL)
    untested = coverage(an, [], [], None, [], {}).untested
    said = next(u for u in untested if u.startswith("`baseSlack`"))
    assert "added to every request's `slack`" in said and "no test can exercise it" in said, said
    # stage 3 sets aside a claim whose mechanism rests on it: it changes no outcome, in llm-d or in BLIS
    assert any(d.code == "baseSlack" and "every request" in d.why for d in dead_branches.dead_logic(an))


def test_a_param_line_naming_the_base_slack_is_answered_that_it_has_no_effect(dictionary):
    request = SimpleNamespace(source_text=TRIAL, source="best_program.go", kind=None)
    answers = inert_parameters(request, dictionary)
    assert "baseSlack" in answers and "never changes the order" in answers["baseSlack"], answers


# --- what must not change: the same shapes where the number can decide ---


@pytest.mark.parametrize(
    "change",
    [
        # the urgency is also compared with a number: the 250 moves that cut
        ("\t\tif ui != uj {", "\t\tif ui > 100 {\n\t\t\treturn true\n\t\t}\n\t\tif ui != uj {"),
        # a second return without the term: it no longer shifts every request alike
        ("\t\treturn -slack\n", '\t\tif r.SLOClass == "batch" {\n\t\t\treturn 0\n\t\t}\n\t\treturn -slack\n'),
        # the slack is scaled by something that differs per request before it is compared
        ("\t\treturn -slack\n", "\t\treturn -slack * float64(r.InputLen())\n"),
    ],
)
def test_a_term_that_can_change_the_order_stays_a_parameter(analyze_text, change):
    an = analyze_text(TRIAL.replace(*change))
    base = next(th for th in an.thresholds if th.value == 250)
    assert base.param and base.constant is None, base


@pytest.mark.parametrize(
    "change",
    [
        # a rank compared with a signal is a limit, however small its values
        ("rank > 0 {", "rank > 0 && r.InputLen() > int64(rank) {"),
        # weighed in arithmetic, a rank's size matters
        (
            "\t\treturn rank\n\t}",
            "\t\treturn rank\n\t}\n\t_ = func(r *Request) float64 { return float64(classRank(r)) * 2.5 }",
        ),
    ],
)
def test_a_per_class_number_whose_size_matters_stays_a_parameter(analyze_text, change):
    an = analyze_text(TRIAL.replace(*change))
    assert {"criticalRank", "standardRank"} <= set(_params(an)), _params(an)


def test_the_corpus_schedulers_keep_their_parameters(analyze_text):
    """s01's class weights are summed with the aging term (their size matters), s03's targets are compared with
    0 through the slack (a sheddable request past its deadline goes last): both stay parameters."""
    s01 = analyze_text((CORPUS / "s01_slo_aging_scheduler.go").read_text(encoding="utf-8"))
    assert set(_params(s01)) == {
        "criticalClassWeight",
        "standardClassWeight",
        "sheddableClassWeight",
        "otherClassWeight",
        "waitedMsCoeff",
    }
    s03 = analyze_text((CORPUS / "s03_function_deadline_slack.go").read_text(encoding="utf-8"))
    assert set(_params(s03)) == {"criticalTarget", "standardTarget", "otherTarget", "inputTokensCoeff"}


@pytest.mark.slow
def test_the_trials_plugin_builds_and_passes_its_generated_tests(dictionary):
    _, an, tr = translate_path(FIXTURES / "scheduling_class_deadline.go", dictionary)
    assert set(_params(an)) == {"waitThreshold", "inputLenCoeff", "waitedMsCoeff"}
    untested = [f for f in tr.findings if f.check == "translate.untested-parameter"]
    assert not any("inputTokensOffset" in f.message for f in untested)
    base = [f for f in untested if "baseSlack" in f.message]
    assert base and "never changes the order" in base[0].message and "by hand" not in base[0].fix, base
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")
