"""What the fidelity findings tell a person to do, for the cause that is really there.

Found in a researcher's trial of three programs:

- p1 keyed a per-(tenant, class) budget by ``req.TenantID + "/" + req.SLOClass`` and compared the class with
  critical and standard only, yet the below-the-floor fix said "make the program compare only the classes the
  plugin receives": the disagreements came from the key (in llm-d BLIS's sheddable, batch and background share
  one bucket, and the empty class shares standard's), which the finding did not say.
- p2's largest cause was CacheHitRate, which has no llm-d source, and the fix offered "map the signal as BLIS
  defines it, carry the term into the plugin, or justify the gap in the report": the first two are impossible for
  it and the third names nothing a person can do.
- p3's 97.5% was measured with the default three scorers while the translator itself flagged
  ``translate.scorer-config-contradiction`` (its ``1 - prefixW`` is right only for two): both sides ran the same
  wrong setup, and neither the finding nor the report said the figure was taken there.
"""

from __future__ import annotations

import pytest

from bot.golang.plugin_docs import CHECK_SCORER_CONFIG
from bot.golang.translate import CHECK_BELOW_FLOOR, CHECK_DIFFERENCES

from .conftest import FIXTURES, translate_path

pytestmark = pytest.mark.slow


def _one(tr, check):
    (found,) = [f for f in tr.findings if f.check == check]
    return found


def test_a_class_used_as_a_key_is_named_with_the_classes_that_share_an_entry_in_llm_d(dictionary):
    _, an, tr = translate_path(FIXTURES / "admission_class_key.go", dictionary)
    assert an.slo_names == {"critical"}  # it compares the class with critical only
    below = _one(tr, CHECK_BELOW_FLOOR)
    assert "the largest cause is slo-class-mapping" in below.message
    assert "the program uses the SLO class as a key, not only in comparisons (`a.used[key]`, lines 16, 19)" in (
        below.message
    )
    assert (
        "in llm-d BLIS `sheddable`, `batch` and `background` requests share one entry (the class `sheddable`) and "
        "the empty class shares `standard`'s, where BLIS keeps one for each class"
    ) in below.fix
    assert "compare only the classes the plugin receives" not in below.fix
    assert "key by the class llm-d delivers" in below.fix and "evolve it again" in below.fix
    assert "Approve to record the gap knowingly" in below.fix and "`fidelity_floor`" in below.fix


def test_an_untranslatable_largest_cause_gets_the_fixes_that_exist_for_it(dictionary):
    _, _, tr = translate_path(FIXTURES / "routing_cache_hit_rate.go", dictionary)
    f = tr.summary.fidelity
    top = f.causes[0]
    assert top.mapping == "untranslatable:CacheHitRate" and top.agreement_without >= f.floor
    below = _one(tr, CHECK_BELOW_FLOOR)
    assert "map the signal as BLIS defines it" not in below.fix and "justify the gap" not in below.fix
    assert below.fix.startswith("CacheHitRate has no llm-d source, so no mapping or plugin term can carry it")
    assert f"with it switched off agreement would be {top.agreement_without:.1%}, at or above the floor" in below.fix
    assert "approve with the reason on record (`/approve REMARK` on the issue, `promote approve 1 --reason" in (
        below.fix
    )
    assert "set `fidelity_floor` in the repository's configuration" in below.fix
    assert f" to {int(f.agreement * 100) / 100:.2f} or lower if the gap does not matter here" in below.fix  # it meets
    assert "re-evolve without CacheHitRate" in below.fix


def test_a_figure_measured_on_a_setup_the_translator_flags_says_so(dictionary):
    _, _, tr = translate_path(FIXTURES / "routing_two_scorer_default.go", dictionary)
    assert _one(tr, CHECK_SCORER_CONFIG)
    differences = _one(tr, CHECK_DIFFERENCES)
    said = (
        "measured with the default `scorers` (precise-prefix-cache:2, queue-depth:1, kv-utilization:1) on both "
        f"sides, the setup `{CHECK_SCORER_CONFIG}` flags"
    )
    assert said in differences.message
    assert f"set `scorers` as `{CHECK_SCORER_CONFIG}` says" in differences.fix
    section = tr.report_markdown.split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    assert said in section


_COUNTS = """type ClassCounts struct {
	counts map[string]int
	last   string
}

func (a *ClassCounts) Admit(req *Request, state *RouterState) (bool, string) {
	a.counts[req.SLOClass]++
	%s
	return true, ""
}
"""


def test_a_class_key_counts_only_where_a_decision_reads_it(analyze_text):
    """a01 counts requests per class (``a.classCounts[sloClass]++``) and never reads the counts: that key decides
    nothing, so its disagreements are not put on it. A count looked up, or the class kept in a string field, is."""
    from bot.golang.fidelity_classes import class_uses

    assert class_uses(analyze_text(_COUNTS % "")) == []
    read = analyze_text(_COUNTS % 'if a.counts[req.SLOClass] > 3 {\n\t\treturn false, "busy class"\n\t}')
    assert class_uses(read) == ["`a.counts[req.SLOClass]`, lines 7, 8"]
    assert class_uses(analyze_text(_COUNTS % "a.last = req.SLOClass")) == ["the receiver field `last`"]
