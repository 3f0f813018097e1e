"""Gate 1's headline says plainly when the plugin should not be benchmarked as is.

Found by an llm-d maintainer (s02): the plugin decided like the BLIS program in 74.1% of the sampled states and
queue-scorer alone in 92.6%. The translator raised `translate.fidelity-below-reference` and the upstream patch said
"Not ready for upstream review", but the headline a person decides gate 1 on (the status comment, the review
report, the CLI's gate stop) only gave the figures. A stock reference that reproduces the program's decisions more
often than the plugin (queue-scorer alone for a scheduler, always-admit for an admitter) means the benchmark's
evolved arm cannot show what the program adds; the headline now recommends rejecting or requesting changes, with
the home's own command and the alternative the finding suggests. A figure below the floor alone does not: the
floor's finding offers to accept a gap (a02's disagreements lie in a class llm-d's traffic never sends). The bundled
example's headline (98.4%, above its floor, a router) recommends nothing: test_gate_checklists reads it.
"""

from __future__ import annotations

from types import SimpleNamespace

from bot.dictionary import load_dictionary
from bot.golang.fidelity_admit import ALWAYS_ADMIT
from bot.golang.scheduling_docs import CHECK_BELOW_REFERENCE
from bot.model import Fidelity, PolicyKind, TranslationSummary
from bot.review.brief import brief
from bot.stages.paths import PromotionPaths
from tests.golang.conftest import CORPUS, translate_path

S02 = CORPUS / "s02_sjf_starvation_guard.go"
NOT_AS_IS = "RECOMMENDED: do not benchmark the plugin as is"


def context(summary: TranslationSummary, home: str = "local", work: str | None = None, plugin: dict | None = None):
    """The little of a stage context gate 1's brief reads: the branch's translation.json and ``plugin``'s files."""
    paths = PromotionPaths("s02-x")
    files = {**(plugin or {}), paths.translation_json: summary.model_dump_json()}
    listing = lambda d: [p for p in files if p.startswith(d.rstrip("/") + "/")]  # noqa: E731
    return SimpleNamespace(paths=paths, read=files.get, list=listing, home=home, work=work)


def test_s02s_headline_recommends_not_benchmarking_it_and_names_the_commands_and_the_alternative():
    _, _, tr = translate_path(S02, load_dictionary())
    f = tr.summary.fidelity
    assert f.reference_agreement > f.agreement + 0.1, f  # queue-scorer alone decides like the program more often
    assert CHECK_BELOW_REFERENCE in {x.check for x in tr.summary.findings}
    plugin = {p: t for p, t in tr.files.items() if isinstance(t, str)}
    headline, _ = brief(1, context(tr.summary, work="/tmp/my work/s02", plugin=plugin))
    assert NOT_AS_IS in headline, headline
    assert f"({f.reference_agreement:.1%} against {f.agreement:.1%}, `{CHECK_BELOW_REFERENCE}`)" in headline
    assert """`promote reject 1 --reason "..." --work '/tmp/my work/s02'`""" in headline
    assert """`promote request-changes 1 --reason "..." --work '/tmp/my work/s02'`""" in headline
    # the finding's own alternative, in the words its fix uses
    assert "translate the ordering where the real queue is visible" in headline
    assert "re-evolve it as a routing policy" in headline
    [finding] = [x for x in tr.summary.findings if x.check == CHECK_BELOW_REFERENCE]
    assert "translate the ordering where the real queue is visible" in finding.fix

    github, _ = brief(1, context(tr.summary, home="github", plugin=plugin))
    assert NOT_AS_IS in github and "`/reject <reason>`" in github and "`/request-changes <reason>`" in github
    assert "promote " not in github and "gate-1-" not in github  # no local command, no label that does not exist
    unknown, _ = brief(1, context(tr.summary, plugin=plugin))  # a review read outside `promote run`: W, said once
    assert unknown.count("--work W`") == 2 and unknown.count("(W: your --work)") == 1, unknown


def test_an_admitter_below_always_admit_gets_the_recommendation_and_one_above_it_does_not():
    below = Fidelity(
        decision="the same admit or reject",
        states=500,
        agreement=0.8,
        floor=0.95,
        reference=ALWAYS_ADMIT,
        reference_agreement=0.9,
    )
    summary = TranslationSummary(
        kind=PolicyKind.ADMISSION, plugin_type="x-admitter", package_dir="pkg/x", signals=[], fidelity=below
    )
    headline, _ = brief(1, context(summary, home="github"))
    assert NOT_AS_IS in headline, headline
    assert f"{ALWAYS_ADMIT} decides like the BLIS original more often than the plugin (90.0% against 80.0%)" in headline
    assert "`/reject <reason>`" in headline and "`/request-changes <reason>`" in headline
    # a02's figures: far below the floor, but well above always-admit; the floor's finding speaks for the gap
    a02 = below.model_copy(update={"agreement": 0.85, "reference_agreement": 0.74})
    headline, _ = brief(1, context(summary.model_copy(update={"fidelity": a02})))
    assert "BELOW the floor" in headline and NOT_AS_IS not in headline, headline


def test_a_figure_within_half_a_point_of_its_reference_or_measured_on_other_files_recommends_nothing():
    """The tolerance is the translator's (``below_reference``), so the headline and the finding agree."""
    near = Fidelity(states=500, agreement=0.93, floor=0.95, reference="queue-scorer alone", reference_agreement=0.934)
    summary = TranslationSummary(
        kind=PolicyKind.SCHEDULING, plugin_type="x-scorer", package_dir="pkg/x", signals=[], fidelity=near
    )
    assert NOT_AS_IS not in brief(1, context(summary))[0]
    stale = near.model_copy(update={"reference_agreement": 0.99, "files": {"pkg/x/x.go": "0" * 64}})
    # the branch's plugin is not the bytes measured: no figure, so no advice on it
    ctx = context(summary.model_copy(update={"fidelity": stale}), plugin={"pkg/x/x.go": "package x\n"})
    headline = brief(1, ctx)[0]
    assert "other plugin files than the branch holds" in headline and NOT_AS_IS not in headline
