"""The generated package: shape, determinism, annotations, parameters, config, line map, plugin quality."""

from __future__ import annotations

import re

import pytest
import yaml

from bot.golang.analyze import analyze
from bot.golang.generate import file_stem, generate, package_name, struct_name
from bot.golang.source import parse_evolved_source
from bot.golang.translate import TranslationError, translate
from bot.model import PolicyKind

from .conftest import CORPUS, EXAMPLE, FIXTURES, translate_path


@pytest.fixture(scope="module")
def example(dictionary):
    return translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")


def test_names():
    assert package_name("evolved-adaptive-scorer") == "evolvedadaptivescorer"
    assert struct_name("evolved-adaptive-scorer") == "EvolvedAdaptiveScorer"
    assert file_stem("evolved-test") == "evolved_test_plugin"  # never a *_test.go file


def test_translation_is_deterministic(dictionary, example):
    src, an, first = example
    second = translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer")
    assert first.files == second.files
    assert first.report_markdown == second.report_markdown
    assert first.to_json() == second.to_json()


def test_plugin_plumbing(example):
    _, _, tr = example
    pdir = tr.summary.package_dir
    assert pdir == "pkg/epp/framework/plugins/scheduling/scorer/evolvedadaptivescorer"
    main = tr.files[f"{pdir}/evolved_adaptive_scorer.go"]
    # Named like the neighbouring plugins (QueueScorerType, QueueScorerFactory, NewQueueScorer).
    assert 'const EvolvedAdaptiveScorerType = "evolved-adaptive-scorer"' in main
    assert "_ scheduling.Scorer     = &EvolvedAdaptiveScorer{}" in main
    assert (
        "func EvolvedAdaptiveScorerFactory(name string, rawParameters *json.Decoder, _ plugin.Handle) "
        "(plugin.Plugin, error)" in main
    )
    assert "func NewEvolvedAdaptiveScorer(params Parameters) *EvolvedAdaptiveScorer" in main
    assert "func (s *EvolvedAdaptiveScorer) WithName(name string) *EvolvedAdaptiveScorer" in main
    assert '"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"' in main
    assert tr.registration_line == (
        "fwkplugin.Register(evolvedadaptivescorer.EvolvedAdaptiveScorerType, fwkplugin.StabilityAlpha, "
        "evolvedadaptivescorer.EvolvedAdaptiveScorerFactory)"
    )
    assert tr.registration_import == f'evolvedadaptivescorer "github.com/llm-d/llm-d-router/{pdir}"'
    assert f"{pdir}/README.md" in tr.files


def test_thresholds_become_parameters_with_evolved_defaults(example):
    _, _an, tr = example
    assert tr.summary.thresholds["loadHighThreshold"] == 7
    assert tr.summary.thresholds["loadLowThreshold"] == 4.5  # names say the role, not loadThreshold2
    assert tr.summary.thresholds["kvUtilizationThreshold"] == 0.82
    main = next(t for p, t in tr.files.items() if p.endswith("evolved_adaptive_scorer.go"))
    assert re.search(r"LoadHighThreshold:\s+7,", main)
    assert 'KVUtilizationThreshold float64 `json:"kvUtilizationThreshold"`' in main  # Go initialisms
    evolved = next(t for p, t in tr.files.items() if p.endswith("evolved.go"))
    assert "load > ws.params.LoadHighThreshold" in evolved
    assert "> 0.82" not in evolved  # every evolved number on a signal is a parameter


def test_adapter_has_one_annotated_line_per_signal(example, dictionary):
    _, _, tr = example
    adapter = next(t for p, t in tr.files.items() if p.endswith("adapter.go"))
    lines = adapter.splitlines()
    for sig in ("QueueDepth", "KVUtilization", "BatchSize", "InFlightRequests"):
        [i] = [k for k, ln in enumerate(lines) if ln.strip().startswith(f"s.{sig} = ")]
        expr = dictionary.signal(sig).llmd.expr
        assert expr in lines[i] or f"{sig[0].lower()}{sig[1:]}Signal(" in lines[i]
        above = []
        k = i - 1
        while lines[k].strip().startswith("//"):  # the annotation sits above the line
            above.insert(0, lines[k].strip().removeprefix("//").strip())
            k -= 1
        # Where the value comes from and how fresh it is, in words a maintainer can check in the repository.
        assert " ".join(above).startswith(f"{sig}: ") and "Freshness:" in " ".join(above)
    # Shipped comments cite nothing outside the repository: no BLIS commits or invariants, no maps or tracks.
    assert not re.search(r"Map [ABC]|Track [ABC]|INV-\d|\bf90a1e3a\b|sim2real|translation report", adapter)
    # A signal llm-d cannot provide keeps its zero value: a comment, no assignment of a constant.
    assert "s.CacheHitRate = " not in adapter
    assert "CacheHitRate has no llm-d source" in adapter


def test_line_map_points_at_the_evolved_lines(example):
    src, an, tr = example
    original = src.original_text.splitlines()
    constants = {th.constant: th.literal for th in an.thresholds if th.constant}  # numbers that cannot act in llm-d
    assert constants
    path = next(p for p in tr.files if p.endswith("evolved.go"))
    generated = tr.files[path].splitlines()
    checked = 0
    statements: dict[int, list[int]] = {}  # a statement broken over lines to fit 120 columns maps line for line
    for gline, sline in tr.line_map[path].items():
        statements.setdefault(sline, []).append(gline)
    for sline, glines in statements.items():
        g, s = " ".join(generated[i - 1].strip() for i in sorted(glines)), original[sline - 1].strip()
        if len(glines) > 1:
            assert sorted(glines) == list(range(min(glines), max(glines) + 1)), glines
            g = re.sub(r"\(\s+", "(", re.sub(r",\s*\)", ")", g))
        if "params." in g or not g:
            continue
        if "EVOLVE-BLOCK" in s or re.match(r"//\s*(HYPOTHESIS|MECHANISM|EXPECT)-\d", s):
            continue  # hypothesis-mode comments stay in the report, not in shipped code
        for new, old in (
            ("weightedScoring", "WeightedScoring"),
            ("routerState", "RouterState"),
            ("routingDecision", "RoutingDecision"),
            ("blisRequest", "Request"),
            ("newRoutingDecision", "NewRoutingDecision"),
        ):
            g = g.replace(new, old)
        for name, literal in constants.items():
            g = re.sub(rf"\b{name}\b", literal, g)
        assert g == s, (glines, g, s)
        checked += 1
    assert checked > 40


def test_epp_config(example):
    _, _, tr = example
    cfg = yaml.safe_load(tr.epp_config)
    assert cfg["apiVersion"] == "llm-d.ai/v1alpha1" and cfg["kind"] == "EndpointPickerConfig"
    plugins = {p["type"]: p for p in cfg["plugins"]}
    assert plugins["evolved-adaptive-scorer"]["parameters"]["loadHighThreshold"] == 7
    # The prefix term is carried, so no scorer holds a delegated share of the BLIS weights.
    weights = {p["pluginRef"]: p.get("weight") for p in cfg["schedulingProfiles"][0]["plugins"]}
    assert weights == {"evolved-adaptive-scorer": 1, "max-score-picker": None}
    assert {"approx-prefix-cache-producer", "inflight-load-producer"} <= set(plugins)
    assert "--allow-experimental-plugins" in tr.epp_config
    # A simulator-scale threshold is live only with a note at its config line (and a finding anchored there).
    lines = tr.epp_config.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("loadHighThreshold:"))
    note = []
    k = at - 1
    while lines[k].strip().startswith("#"):
        note.insert(0, lines[k].strip("# "))
        k -= 1
    note = " ".join(note)
    assert "simulator scale" in note
    # The parameters on the same load move with it (raising one alone can turn a taper negative).
    assert "loadLowThreshold, loadCoeff act on the same value" in note and "translation report" not in note
    sim = [f for f in tr.findings if f.check == "hazard.sim-scale-threshold" and f.source_line == 204]
    assert sim and sim[0].file == "deploy/config/evolved-adaptive-scorer-epp-config.yaml"
    assert sim[0].line == at + 1


def test_report_lists_every_signal_with_source_fidelity_and_freshness(example, dictionary):
    _, _an, tr = example
    for sig in tr.summary.signals:
        row = next(ln for ln in tr.report_markdown.splitlines() if ln.startswith(f"| `{sig}`"))
        e = dictionary.signal(sig)
        assert e.fidelity in row
        assert (e.llmd.expr if e.llmd else "untranslatable") in row
    for gap in tr.summary.touched_gaps:
        assert f"**`{gap}`**" in tr.report_markdown
    assert "## Mapping decisions" in tr.report_markdown and "Admitter" not in tr.report_markdown


def test_summary(example):
    _, _, tr = example
    s = tr.summary
    assert s.kind == PolicyKind.ROUTING and s.plugin_type == "evolved-adaptive-scorer"
    assert {"EffectiveLoad", "CacheHitRate", "KVUtilization", "SessionID"} <= set(s.signals)
    assert "CacheHitRate" in s.untranslatable
    assert "metric-staleness" in s.touched_gaps and "KVUtilization" in s.freshness_gaps
    assert not [f for f in s.findings if f.severity.value == "CRITICAL"]


def test_admission_becomes_an_admitter(dictionary):
    _, _, tr = translate_path(FIXTURES / "admission_gate.go", dictionary, "evolved-load-gate")
    main = next(t for p, t in tr.files.items() if p.endswith("evolved_load_gate.go"))
    assert "_ requestcontrol.Admitter = &EvolvedLoadGate{}" in main
    assert "errcommon.ResourceExhausted" in main
    assert tr.summary.package_dir.startswith("pkg/epp/framework/plugins/requestcontrol/admitter/")
    assert "cannot reject a request" in tr.report_markdown  # the Map A change from the seed's Filter


def test_scheduling_becomes_a_queue_position_scorer(dictionary):
    _, _, tr = translate_path(FIXTURES / "scheduling_priority.py", dictionary, "evolved-aging")
    main = next(t for p, t in tr.files.items() if p.endswith("evolved_aging.go"))
    assert "func (s *EvolvedAging) queuePosition(" in main and "s.policy.OrderQueue(queue, clock)" in main
    # rank's `if r.SLOClass == "critical" { return 1 }; return 2` are ordinal labels, compared only between requests:
    # kept as evolved, no parameter (order_keys.py); `clock-r.ArrivalTime > 3_000_000` is how long it has waited
    assert tr.summary.thresholds == {"waitThreshold": 3_000_000}
    assert any(f.check == "translate.queue-order-as-score" for f in tr.findings)
    # The age threshold decides on a long enough queue: both of its sides get a unit test, found by the harness
    # (each incumbent's age is compared once, so the moves go to distinct ages: 1.6 s is nearer 3 s than 0.35 s).
    assert sorted(t.split(":")[1].split(",")[0] for t in tr.tests if t.startswith("waitThreshold=")) == [
        " pod-a's compared value 1600000 is at or below it",  # the words follow the comparison's `>`
        " pod-a's compared value 3200000 is above it",
    ]
    assert "return 1 // critical requests' rank: an ordinal label, kept as evolved" in next(
        t for p, t in tr.files.items() if p.endswith("/evolved.go")
    )
    assert not [f for f in tr.findings if f.check == "translate.untested-parameter"]
    # Never scraped: 0, outside the others' min-max (the generated TestScoreContract asserts it on the plugin).
    assert "if m == nil || m.UpdateTime.IsZero() {" in main
    test = next(t for p, t in tr.files.items() if p.endswith("evolved_aging_test.go"))
    assert 'got["pod-d"] != 0 || got["pod-e"] != 0' in test


def test_a_scheduling_profile_keeps_queue_scorer_beside_the_evolved_scorer(dictionary):
    """A class the evolved order always serves first gets position 0 everywhere and scores 1 on every endpoint:
    without the baseline's queue-scorer in the profile it would lose every load signal."""
    _, _, tr = translate_path(FIXTURES / "scheduling_priority.py", dictionary, "evolved-aging")
    cfg = yaml.safe_load(tr.epp_config)
    weights = {p["pluginRef"]: p.get("weight") for p in cfg["schedulingProfiles"][0]["plugins"]}
    assert weights["evolved-aging"] == 2 and weights["queue-scorer"] == 2
    assert "keeps the baseline's queue-scorer beside this scorer" in tr.epp_config
    readme = next(t for p, t in tr.files.items() if p.endswith("/README.md"))
    assert "keeps the baseline's queue-scorer beside this scorer" in readme.split("## Caveats")[1]


def test_a_scheduling_plugin_is_measured_against_the_evolved_ordering_on_the_real_queues(dictionary):
    """BLIS orders the requests really waiting; the plugin sees queue lengths and models the rest. With every
    mapping switched off (the queues hold what the plugin assumes, metrics fresh, the class as BLIS's) both
    serve the request earliest on the same endpoints, so every difference has a named cause."""
    _, _, tr = translate_path(FIXTURES / "scheduling_priority.py", dictionary, "evolved-aging")
    f = tr.summary.fidelity
    assert f is not None and f.measured and f.states == 500 and f.errors == 0
    assert f.decision.startswith("the same endpoint: where the evolved ordering serves the request earliest")
    assert f.agreement_all_off == 1.0 and f.unattributed == 0
    assert f.agreement < 1.0 and "queue-contents" in {c.mapping for c in f.causes}
    assert f.reference.startswith("queue-scorer alone") and f.reference_agreement is not None
    section = tr.report_markdown.split("## Fidelity")[1].split("## Findings")[0]
    assert "BLIS queue" in section and "serves it at position" in section


def test_feedback_is_recorded_and_scorers_directive_applied(dictionary):
    src, an, _ = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    tr = translate(
        src,
        an,
        dictionary,
        plugin_type="evolved-adaptive-scorer",
        feedback="please use scorers: prefix-affinity:1, load-balance:1",
    )
    assert "## Reviewer feedback addressed" in tr.report_markdown
    assert "baseline scorers set to prefix-affinity:1, load-balance:1" in tr.report_markdown
    assert "- name: load-balance" in tr.epp_config
    with pytest.raises(TranslationError):
        translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback="scorers: warp-drive:2")


def test_bad_plugin_type_is_rejected(example, dictionary):
    src, an, _ = example
    with pytest.raises(TranslationError):
        translate(src, an, dictionary, plugin_type="Not Kebab")


def test_the_recalibration_the_config_asks_for_is_checked_on_the_compiled_plugin(example, dictionary):
    """Found by an llm-d maintainer (twice): raising loadHighThreshold to pod scale, as the config says to, made a
    pod with a full prefix hit score below a worse one, because the taper of the same step went negative. The
    harness runs the plugin with the thresholds raised (every other parameter as evolved) and says so."""
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source
    from bot.golang.translate import translate

    _, _, tr = example
    [f] = [f for f in tr.findings if f.check == "hazard.recalibration-inverts"]
    assert f.severity.value == "IMPORTANT" and f.file.startswith("deploy/config/") and f.line
    assert "loadHighThreshold=56" in f.message and "would score a busier endpoint higher" in f.message
    # Found by a Go reviewer: Validate() now refuses the values that invert the taper, so the harness cannot build
    # the plugin with them; the finding says Validate() refuses them and why, and still offers values that work.
    assert "its Validate() refuses the values" in f.message and "got 0.12*(56-36) > 1-0.4" in f.message
    assert "`param loadCoeff: 0.015`" in f.fix
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    # A person's own values are checked: raising the cut alone, or the thresholds without the taper, is refused
    # before anything runs (gate 1 refuses the same lines); moving its step with it is not, and does not invert.
    for alone in ("param loadHighThreshold: 64", "param loadHighThreshold: 56\nparam loadLowThreshold: 36"):
        with pytest.raises(TranslationError, match=re.escape("the plugin's Validate() refuses the values in effect")):
            translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback=alone)
    offered = translate(
        src,
        an,
        dictionary,
        plugin_type="evolved-adaptive-scorer",
        feedback="param loadHighThreshold: 56\nparam loadLowThreshold: 36\nparam loadCoeff: 0.015",
    )
    assert not [f for f in offered.findings if f.check == "hazard.recalibration-inverts"]
    together = translate(
        src,
        an,
        dictionary,
        plugin_type="evolved-adaptive-scorer",
        feedback="param loadHighThreshold: 64\nparam loadLowThreshold: 36\nparam loadCoeff: 0.02",
    )
    assert not [f for f in together.findings if f.check == "hazard.recalibration-inverts"]


def test_values_offered_after_one_threshold_moved_keep_a_busier_pod_lower_on_both_sides_of_the_cut(dictionary):
    """Found by an llm-d maintainer: after `param loadHighThreshold: 56` alone the bot offered loadCoeff 0.12 / 8,
    as if the span had grown 8 times; with loadLowThreshold still at 4.5 the taper ends at 0.23 below a 0.4 cut,
    so a pod running 29 requests outscored one running 27. Validate() now refuses that set (the taper must end at
    or above the cut's factor), and the offered values follow from the thresholds in use (loadLowThreshold scaled
    too); the check puts pods either side of every cut beside an idle one."""
    from bot.golang.analyze import analyze
    from bot.golang.probes import straddling_pairs
    from bot.golang.source import load_evolved_source

    assert (27, 29) in straddling_pairs([56.0])  # the maintainer's probe: EffectiveLoad 54 and 58
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    with pytest.raises(TranslationError, match=re.escape("got 0.015*(56-4.5) > 1-0.4")):
        translate(
            src,
            an,
            dictionary,
            plugin_type="evolved-adaptive-scorer",
            feedback="param loadHighThreshold: 56\nparam loadCoeff: 0.015",
        )
    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    [f] = [f for f in tr.findings if f.check == "hazard.recalibration-inverts"]
    assert f.fix.startswith(
        "set `param loadHighThreshold: 56`, `param loadLowThreshold: 36`, `param loadCoeff: 0.015` at gate 1"
    ), f.fix
    assert "on both sides of every cut" in f.fix


def test_parameters_sharing_an_evolved_line_keep_their_own_findings(dictionary):
    """Found by an llm-d maintainer: a01 has three parameters on one evolved line and two on another, and
    everything was keyed by line. The KV findings pointed at minFreeKVThreshold's config line, the prompt-length
    threshold beside `queuePerInstance > 8` was "re-calibrated" as pod load (to 32768 tokens), and setting it at
    gate 1 silenced the queue threshold's IMPORTANT finding. Findings are keyed by parameter."""
    from bot.golang.plugin_docs import config_line
    from bot.golang.recalibration import pod_scale, recalibrated_findings

    _, an, tr = translate_path(CORPUS / "a01_pattern_c_adaptive_admission.go", dictionary)
    sim = [f for f in tr.findings if f.check == "hazard.sim-scale-threshold"]
    for name, needle in [("maxKVUtilThreshold", "0.95 on `maxKVUtil`"), ("avgKVUtilThreshold", "0.85 on `avgKVUtil`")]:
        [f] = [f for f in sim if needle in f.message]
        assert f.file.startswith("deploy/config/") and f.line == config_line(tr.epp_config, name), (name, f.line)
    assert pod_scale(an) == {"queuePerInstanceThreshold": 64.0}
    assert "inputLenThreshold: simulator scale" not in tr.epp_config
    assert "queuePerInstanceThreshold: simulator scale" in tr.epp_config

    def queue_finding(deployed):
        return next(f for f in recalibrated_findings(an, deployed) if "on `queuePerInstance`" in f.message)

    assert queue_finding({"inputLenThreshold": 8192}).severity.value == "IMPORTANT"
    recalibrated = queue_finding({"queuePerInstanceThreshold": 64})
    assert recalibrated.severity.value == "SUGGESTION" and "`queuePerInstanceThreshold` = 64" in recalibrated.message


def test_a01s_local_limits_are_tunable_at_gate_1_and_its_agreement_is_unchanged(dictionary):
    """a01 keeps its shed limits in locals (`batchLimit := 0.5`, `shedLimit := 0.75`): the plugin hard-coded them
    and a person at gate 1 could not tune them. They are parameters with BLIS's values as defaults, in the config
    the plugin ships; `param shedLimit: VALUE` changes that config and what the harness measures; with the
    defaults the plugin decides every sampled state as before (lead2 measured 91.0% of 500 before the lift; 90.2%
    since a stateful admitter's sample holds bursts, harness_world.BURST)."""
    src, an, tr = translate_path(CORPUS / "a01_pattern_c_adaptive_admission.go", dictionary)
    pdir = tr.summary.package_dir
    evolved = tr.files[f"{pdir}/evolved.go"]
    assert "shedLimit := a.params.ShedLimit\n" in evolved
    # batchLimit acts only in `case "batch"`, a class llm-d never sends: a constant with the reason, no parameter.
    assert "batchLimit := batchLimitEvolved\n" in evolved and "batchLimitEvolved float64 = 0.5\n" in evolved
    assert 'case "batch": // never taken: llm-d yields critical, standard or sheddable\n' in evolved
    assert 'case "sheddable":\n' in evolved

    def deployed(t):
        cfg = yaml.safe_load(t.epp_config)
        return next(p for p in cfg["plugins"] if p["type"] == t.summary.plugin_type)["parameters"]

    assert deployed(tr)["shedLimit"] == 0.75 and "batchLimit" not in deployed(tr)
    readme = tr.files[f"{pdir}/README.md"]
    assert "    shedLimit: 0.75\n" in readme and "| `shedLimit` | `0.75` | The threshold" in readme
    assert tr.summary.thresholds["shedLimit"] == 0.75
    fid = tr.summary.fidelity
    assert (fid.states, fid.agreement, fid.deployed_values_changed) == (500, 0.902, None)
    # The harness samples the states it did before: 0.5 in-flight requests on an endpoint says nothing about a
    # limit on loadRatio, so a lifted limit puts no boundary states on the signals loadRatio derives from.
    from bot.golang.generate import generate
    from bot.golang.harness_build import spec_for

    spec = spec_for(an, generate(src, an, dictionary, tr.summary.plugin_type))
    assert {t.value for t in spec.thresholds} == {1e7, 0.95, 0.85, 128, 4096, 8}
    assert "shedLimit=0.75: the compared value" in tr.files[gen_test_path(tr)]

    moved = translate(src, an, dictionary, plugin_type=tr.summary.plugin_type, feedback="param shedLimit: 0.3")
    assert deployed(moved)["shedLimit"] == 0.3
    assert "re-calibrated at gate 1 to 0.3 for this deployment (BLIS: 0.75)" in moved.epp_config
    assert moved.summary.fidelity.deployed_values_changed > 0
    assert moved.summary.fidelity.agreement < fid.agreement


def test_a_token_bucket_sized_by_the_host_is_tunable_at_gate_1_and_flagged_at_its_config_lines(dictionary):
    """g07 (a researcher's token-bucket admitter) sets `b.capacity = 20000; b.refillRate = 4000` in the host before
    the evolved block: the plugin hard-coded both, the config promised "every one can be tuned here", nothing said
    they were simulator-scale and `param capacity: 200000` was refused. Both are parameters read where the host
    sets them (the lazy initialisation runs as evolved), each flagged at its config line as a budget to move with
    the other, and gate 1 can set them; the defaults decide as before (99.2% of 500 states; 94.6% since a stateful
    admitter's sample holds bursts that empty the bucket, harness_world.BURST)."""
    src, an, tr = translate_path(CORPUS / "g07_host_set_token_bucket.go", dictionary)
    evolved = tr.files[f"{tr.summary.package_dir}/evolved.go"]
    assert "\t\tb.capacity = b.params.Capacity\n\t\tb.refillRate = b.params.RefillRate\n" in evolved

    def deployed(t):
        cfg = yaml.safe_load(t.epp_config)
        return next(p for p in cfg["plugins"] if p["type"] == t.summary.plugin_type)["parameters"]

    assert (deployed(tr)["capacity"], deployed(tr)["refillRate"]) == (20000, 4000)
    assert (
        "re-calibrate to this\n    # deployment's prompt-token throughput before relying on it; refillRate acts"
        in tr.epp_config
    )
    for name in ("capacity", "refillRate"):
        [f] = [f for f in tr.findings if f.check == "hazard.sim-scale-threshold" and f.param == name]
        assert f.severity.value == "IMPORTANT" and f.file.endswith("epp-config.yaml")
        assert tr.epp_config.splitlines()[f.line - 1].strip().startswith(f"{name}:")
    assert (tr.summary.fidelity.states, tr.summary.fidelity.agreement) == (500, 0.946)

    moved = translate(src, an, dictionary, plugin_type=tr.summary.plugin_type, feedback="param capacity: 200000")
    assert deployed(moved)["capacity"] == 200000
    assert "re-calibrated at gate 1 to 200000 for this deployment (BLIS: 20000)" in moved.epp_config


def test_a_token_bucket_sized_by_locals_is_tunable_at_gate_1_and_flagged_at_its_config_lines(dictionary):
    """newprog2 1: g08 holds its per-tenant bucket's scale in locals (`capacity := 12000.0`, `refillPerSec :=
    3000.0`) inside the evolved block: the plugin hard-coded both with no finding, and `param capacity: 50000` was
    refused at gate 1 ("not a parameter of the plugin"). Both are parameters read at the declaration, flagged at
    their config lines like g07's receiver fields, and gate 1 can set them; the defaults decide as before (99.8%;
    97.0% since a stateful admitter's sample holds bursts that empty the bucket, harness_world.BURST)."""
    src, an, tr = translate_path(CORPUS / "g08_local_token_bucket.go", dictionary)
    evolved = tr.files[f"{tr.summary.package_dir}/evolved.go"]
    assert "\tcapacity := t.params.Capacity\n\trefillPerSec := t.params.RefillPerSec\n" in evolved

    def deployed(t):
        cfg = yaml.safe_load(t.epp_config)
        return next(p for p in cfg["plugins"] if p["type"] == t.summary.plugin_type)["parameters"]

    assert (deployed(tr)["capacity"], deployed(tr)["refillPerSec"]) == (12000, 3000)
    for name in ("capacity", "refillPerSec"):
        [f] = [f for f in tr.findings if f.check == "hazard.sim-scale-threshold" and f.param == name]
        assert f.severity.value == "IMPORTANT" and f.file.endswith("epp-config.yaml")
        assert tr.epp_config.splitlines()[f.line - 1].strip().startswith(f"{name}:")
    assert (tr.summary.fidelity.states, tr.summary.fidelity.agreement) == (500, 0.97)

    moved = translate(src, an, dictionary, plugin_type=tr.summary.plugin_type, feedback="param capacity: 50000")
    assert deployed(moved)["capacity"] == 50000
    assert "re-calibrated at gate 1 to 50000 for this deployment (BLIS: 12000" in moved.epp_config


def test_a_class_table_the_constructor_puts_on_the_receiver_is_listed_at_its_plugin_line_and_compared_as_set(
    dictionary,
):
    """Issue 11 item 6: g10's per-class load weights live in a receiver field its own constructor sets
    (`NewWeightedScoring` returns `&WeightedScoring{classWeight: map[string]float64{...}}`) and Route reads
    `ws.classWeight[req.SLOClass]`. Each value is a kept literal, anchored at the constructor's line in the
    generated evolved.go and in the program. The fidelity harness built BLIS's receiver as `&WeightedScoring{}`
    whenever the program uses the baseline scorers, so BLIS ran with no table while the plugin (which runs the
    constructor) had it: 73.9% agreement blamed on the score composition. Built by the constructor on both sides,
    the table's classes decide in BLIS too, and the disagreements the class mapping causes (BLIS's batch and
    background read back as sheddable) are attributed to it."""
    _, _, tr = translate_path(CORPUS / "g10_field_class_weight_table.go", dictionary)
    evolved = tr.files[f"{tr.summary.package_dir}/evolved.go"].splitlines()
    kept = [f for f in tr.findings if f.check == "translate.unlisted-literal"]
    assert sorted(f.message.split(":")[0] for f in kept) == [
        '`WeightedScoring.classWeight["critical"]` = 0.9',
        '`WeightedScoring.classWeight["sheddable"]` = 0.15',
        '`WeightedScoring.classWeight["standard"]` = 0.5',
    ], kept
    for f in kept:
        assert f.source_line == 46 and f.file.endswith("/evolved.go"), f
        assert "classWeight: map[string]float64{" in evolved[f.line - 1], evolved[f.line - 1]
        assert f.message.split(" = ")[1].split(":")[0] in evolved[f.line - 1]
    assert not [f for f in tr.findings if f.check == "translate.field-set-outside"]
    assert "slo-class-mapping" in [c.mapping for c in tr.summary.fidelity.causes], tr.summary.fidelity


def test_a_number_the_constructor_assigns_reaches_the_plugins_parameters_like_one_in_its_struct_literal(dictionary):
    """`p := &policy{}; p.loadPenalty = 0.05; return p` is the same tuning knob as `return &policy{loadPenalty:
    0.05}`, which the plugin exposes: it got no parameter, so the plugin ran BLIS's 0.05 with no way to tune it and
    the report called the field dead. Both forms are built the same way: the carried constructor runs as evolved,
    then newPolicy hands the field its parameter, whose default is the evolved number."""
    from .test_go_analyze import PENALTY_CTORS, penalty_field

    built = {}
    for form, (ctor, _) in PENALTY_CTORS.items():
        src = parse_evolved_source(penalty_field(ctor), "penalty.go")
        an = analyze(src, dictionary)
        gen = generate(src, an, dictionary, "ctor-penalty")
        main = gen.files[f"{gen.package_dir}/ctor_penalty.go"]
        assert '\tLoadPenalty float64 `json:"loadPenalty"`' in main, form
        assert re.search(r"\n\t\tLoadPenalty:\s+0\.05,\n", main), form
        newpolicy = main[main.index("func newPolicy(") :]
        assert "\tp.loadPenalty = params.LoadPenalty\n" in newpolicy[: newpolicy.index("\n}\n")], form
        [spec] = [s for s in gen.params if s.name == "loadPenalty"]
        evolved = gen.files[f"{gen.package_dir}/evolved.go"]
        assert "ws.loadPenalty * float64(snap.InFlightRequests)" in evolved, form
        built[form] = (main, spec.doc, spec.json_default, spec.checks)
    assert built["assigned"] == built["struct-literal"]


def test_what_blis_uncarried_constructor_sets_reaches_the_plugins_new_policy(dictionary):
    """p1 (a researcher's session-home router): BLIS's NewRoutingPolicy(...), which the plugin does not carry, does
    `p.sessionHome = make(map[string]string)` and `p.stickiness = 0.3`. The plugin's receiver held a nil map, so
    the evolved `ws.sessionHome[req.SessionID] = ...` panicked on every request with a session, and a zero
    stickiness. newPolicy now makes the map as BLIS did and sets the number from its parameter (default 0.3); the
    harness's BLIS receiver, built as `&WeightedScoring{}` too, gets the map and BLIS's number (p1's zero knee made
    BLIS's score 0/0, and the harness died on the NaN)."""
    from bot.golang.blis_mirror import compose
    from bot.golang.harness_build import _blis_file

    from .test_go_analyze import session_home

    ctor = "\tp := &WeightedScoring{}\n\tp.sessionHome = make(map[string]string)\n\tp.stickiness = 0.3\n\treturn p"
    text = session_home(ctor).replace("\tsessionHome map", "\tstickiness  float64\n\tsessionHome map")
    text = text.replace(
        "\t_ = home\n", "\t_ = home\n\t_ = ws.stickiness * float64(state.Snapshots[0].InFlightRequests)\n"
    )
    src = parse_evolved_source(text, "home.go")
    an = analyze(src, dictionary)
    gen = generate(src, an, dictionary, "session-home")
    main = gen.files[f"{gen.package_dir}/session_home.go"]
    newpolicy = main[main.index("func newPolicy(") :]
    newpolicy = newpolicy[: newpolicy.index("\n}\n")]
    assert "\tp.sessionHome = make(map[string]string)\n" in newpolicy, newpolicy
    assert "\tp.stickiness = params.Stickiness\n" in newpolicy, newpolicy
    assert re.search(r"\n\t\tStickiness:\s+0\.3,\n", main), main
    blis = _blis_file(src, an, gen, compose(src, an))
    assert "\tp.sessionHome = make(map[string]string)\n" in blis, blis
    assert "\tp.stickiness = 0.3\n" in blis, blis  # BLIS ran with its constructor's number, not a zero knee


def gen_test_path(tr) -> str:
    return next(p for p in tr.files if p.endswith("_test.go"))


def test_the_fidelity_section_says_what_the_values_set_at_gate_1_changed(example, dictionary):
    """Found by an llm-d maintainer: after `param` lines the Fidelity section was byte-identical to the evolved
    values' (98.4%, the same causes), so a reviewer could not tell the values were measured. It says how many
    decisions they changed, 0 included."""
    from bot.golang.analyze import analyze
    from bot.golang.source import load_evolved_source

    _, _, evolved = example
    assert evolved.summary.fidelity.deployed_values_changed is None
    assert "The values set at gate 1" not in evolved.report_markdown
    src = load_evolved_source(EXAMPLE)
    an = analyze(src, dictionary)
    for feedback in (
        "param loadHighThreshold: 56\nparam loadLowThreshold: 36\nparam loadCoeff: 0.015",
        "param deltaThreshold: 50",
    ):
        tr = translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback=feedback)
        f = tr.summary.fidelity
        assert isinstance(f.deployed_values_changed, int), feedback
        assert f"changed {f.deployed_values_changed} of the {f.states} decisions the evolved values make" in (
            tr.report_markdown
        )
    assert f.deployed_values_changed > 0  # a relative-overload cut of 50 no longer separates loads: it shows


def test_a_scheduling_plugins_own_parameters_reach_the_deployed_config(dictionary):
    """Found by a scheduler author: gate 1 refused `param incumbentInputTokens: 200` ("not a parameter") and
    `param incumbentSLOClass: batch` ("names no directive"), the knobs the report tells people to tune. Every
    parameter the plugin has may be set, a string one with a word; the later line for a name wins. A parameter
    the evolved order cannot feel is not one: this order reads no prompt length (found by an llm-d maintainer)."""
    src, an, _ = translate_path(FIXTURES / "scheduling_priority.py", dictionary, "evolved-aging")
    feedback = "param incumbentSpacingUs: 30000\n\nparam incumbentSLOClass: batch\nparam incumbentSpacingUs: 20000"
    tr = translate(src, an, dictionary, plugin_type="evolved-aging", feedback=feedback)
    config = yaml.safe_load(tr.epp_config)
    params = next(p for p in config["plugins"] if p["type"] == "evolved-aging")["parameters"]
    assert params["incumbentSLOClass"] == "batch" and params["incumbentSpacingUs"] == 20000
    assert params["waitThreshold"] == 3_000_000  # the rest as evolved
    assert "incumbentSLOClass: set at gate 1 to batch for this deployment (default: standard)" in tr.epp_config
    assert "deployed with incumbentSpacingUs = 20000, incumbentSLOClass = batch" in tr.report_markdown
    for bad, needle in [
        ("param waitThreshold: 4s", "`param waitThreshold: 4s`: the value must be a number in plain"),
        ("param waitThreshold: soon", "waitThreshold takes a number in plain digits (e.g. 4000"),
        ("param incumbentSLOClass: 3", "incumbentSLOClass takes one word"),
        ("param incumbentSpacingUs: 20.5", "incumbentSpacingUs takes a whole number"),
        ("param incumbentInputTokens: 200", "`param incumbentInputTokens` is not a parameter of the plugin"),
    ]:
        with pytest.raises(TranslationError, match=re.escape(needle)):
            translate(src, an, dictionary, plugin_type="evolved-aging", feedback=bad)


def test_the_agreement_floor_can_be_set_for_a_promotion(dictionary):
    """A scheduling plugin cannot see which requests wait: below the bot's 95% floor gate 1 blocks; a repository
    (or a rehearsal) that accepts less sets `fidelity_floor`, and the report says whose floor it is."""
    src, an, tr = translate_path(FIXTURES / "scheduling_priority.py", dictionary, "evolved-aging")
    f = tr.summary.fidelity
    assert f.floor == 0.95 and f.floor_default is None and f.agreement < 0.95
    assert any(x.check == "translate.fidelity-below-floor" for x in tr.findings)
    lower = translate(src, an, dictionary, plugin_type="evolved-aging", floor=0.5)
    assert lower.summary.fidelity.floor == 0.5 and lower.summary.fidelity.floor_default == 0.95
    assert lower.summary.fidelity.agreement == f.agreement  # the same measurement, judged against another floor
    assert not [x for x in lower.findings if x.check == "translate.fidelity-below-floor"]
    assert "(floor 50%, set for this promotion (`fidelity_floor`); the bot's default is 95%" in lower.report_markdown


def test_values_set_at_gate_1_are_named_as_the_cause_of_the_disagreements_they_make(dictionary):
    """Found by a new user: after `param loadThreshold: 60` agreement fell 12 points and the report blamed
    "score composition". A run with the evolved values names the re-calibration, and all-off is 100% again."""
    src, an, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    moved = translate(src, an, dictionary, plugin_type="evolved-adaptive-scorer", feedback="param deltaThreshold: 50")
    f = moved.summary.fidelity
    top = f.causes[0]
    assert (
        top.mapping == "deployed-values" and "deltaThreshold = 50 where the program was validated with 0.2" in top.why
    )
    assert top.agreement_without == tr.summary.fidelity.agreement  # without it: the evolved figure
    assert f.agreement_all_off == 1.0 and f.unattributed == 0
    assert "deployed-values" not in {c.mapping for c in tr.summary.fidelity.causes}


def test_the_config_note_agrees_in_number_with_the_parameters_that_move_together(analyze_text):
    """One companion parameter "acts" on the same value; several "act"."""
    from bot.golang.plugin_docs import _moves_with, sim_scale_thresholds

    text = (CORPUS / "r01_pattern_a_penalties.go").read_text()
    two_cuts = (
        "\t\tif load > 7 {\n\t\t\tscores[snap.ID] *= 0.4\n\t\t} else if load > 4.5 {\n"
        "\t\t\tscores[snap.ID] *= 1.0 - 0.12*(load-4.5)\n\t\t}\n"
    )
    assert two_cuts in text
    one_cut = text.replace(two_cuts, "\t\tif load > 10 {\n\t\t\tscores[snap.ID] *= 0.3\n\t\t}\n")
    several = {th.param: _moves_with(th, an) for an in [analyze_text(text)] for th in sim_scale_thresholds(an)}
    single = {th.param: _moves_with(th, an) for an in [analyze_text(one_cut)] for th in sim_scale_thresholds(an)}
    assert "loadFactor, loadLowThreshold, loadCoeff act on the same value" in several["loadHighThreshold"]
    assert single["loadThreshold"] == "; loadFactor acts on the same value and must move with it"


def test_a_router_that_sorts_the_snapshots_in_place_is_scored_by_snapshot_id(dictionary):
    """Found by a new user: the plugin mapped the evolved scores back to endpoints by position in
    state.Snapshots after the evolved code ran, so a critical fast path that sorted the snapshots in place
    (`ordered := snapshots; sort.Slice(ordered, ...)`) sent every critical request to the first endpoint, and
    the report blamed score composition. BLIS maps the target by ID: sorting in place or sorting a copy must
    decide alike, on both sides."""
    path = FIXTURES / "routing_critical_fast_path.go"
    copied = path.read_text()
    in_place = copied.replace(
        "ordered := make([]RoutingSnapshot, len(snapshots))\n\t\tcopy(ordered, snapshots)\n", "ordered := snapshots\n"
    )
    assert in_place != copied
    figures = []
    for name, text in (("copy", copied), ("in-place", in_place)):
        src = parse_evolved_source(text, f"critical_fast_path_{name}.go")
        tr = translate(src, analyze(src, dictionary), dictionary, plugin_type=f"fast-path-{name}", states=400)
        f = tr.summary.fidelity
        assert f is not None and f.measured and f.errors == 0, f
        assert f.agreement_all_off == 1.0 and f.unattributed == 0, (name, f)
        figures.append(f.agreement)
    assert figures[0] == figures[1] and figures[0] > 0.9, figures


def test_plugin_readme_takes_keyword_arguments_only():
    """Sixteen values, several of one type: passed by position, two swapped ones would render a wrong README."""
    import inspect

    from bot.golang.plugin_docs import readme

    kinds = {p.name: p.kind for p in inspect.signature(readme).parameters.values()}
    assert {n for n, k in kinds.items() if k != inspect.Parameter.KEYWORD_ONLY} == set()
