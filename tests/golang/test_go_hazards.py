"""One test per hazard check id (bot.golang.hazards), each on a small snippet."""

from __future__ import annotations

from bot.golang import hazards
from bot.model import Severity

ROUTE = 'func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {{\n{body}\n\treturn NewRoutingDecision("x", "y")\n}}\n'
ADMIT = 'func (a *Gate) Admit(req *Request, state *RouterState) (bool, string) {{\n{body}\n\treturn true, ""\n}}\n'
ORDER = "func (s *Sched) OrderQueue(requests []*Request, clock int64) {{\n{body}\n}}\n"


def findings(an, check):
    return [f for f in an.findings if f.check == check]


def test_check_ids_are_documented_in_the_module_docstring():
    for check in hazards.ALL_CHECKS:
        assert f"``{check}``" in hazards.__doc__


def test_inv9_output_tokens_is_critical(analyze_text):
    an = analyze_text(ADMIT.format(body='\tif len(req.OutputTokens) > 100 {\n\t\treturn false, "long"\n\t}'))
    [f] = findings(an, hazards.INV9)
    assert f.severity == Severity.CRITICAL and f.source_line == 2


def test_positional_scorer_index(analyze_text):
    body = "\tp := ws.scorers[0](req, state.Snapshots)\n\tw := ws.weights[1]\n\t_, _ = p, w\n\tfor i := range ws.scorers {\n\t\t_ = ws.weights[i]\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    assert sorted(f.source_line for f in findings(an, hazards.POSITIONAL)) == [2, 3]


def test_positional_index_through_a_per_scorer_slice_but_not_snapshots(analyze_text):
    body = (
        "\tper := make([]map[string]float64, len(ws.scorers))\n\tfor i, sc := range ws.scorers {\n\t\tper[i] = sc(req, state.Snapshots)\n\t}\n"
        "\tfirst := per[0]\n\t_ = first\n\t_ = state.Snapshots[0].QueueDepth"
    )
    an = analyze_text(ROUTE.format(body=body))
    assert [f.source_line for f in findings(an, hazards.POSITIONAL)] == [6]


def test_two_scorer_renormalization(analyze_text):
    an = analyze_text(ROUTE.format(body="\tw0 := ws.weights[0] / 2\n\tw1 := 1.0 - w0\n\t_ = w1"))
    [f] = findings(an, hazards.RENORM)
    assert f.source_line == 3 and f.severity == Severity.IMPORTANT


def test_removed_identifiers(analyze_text):
    text = "package sim\n\nfunc short(tokens []int) bool {\n\treturn len(tokens) < 8\n}\n\n" + ROUTE.format(
        body='\t_ = state.Snapshots[0].PendingRequests\n\td := NewRoutingDecision("x", "y")\n'
        "\tif short(req.InputTokens) {\n\t\td.Priority = 1\n\t}\n\t_ = ws.cacheWeight"
    )
    an = analyze_text(text)
    got = {(f.source_line, f.severity) for f in findings(an, hazards.REMOVED)}
    assert (8, Severity.SUGGESTION) in got  # PendingRequests, translated automatically
    assert (10, Severity.SUGGESTION) in got  # []int tokens passed to short()
    assert (11, Severity.IMPORTANT) in got  # RoutingDecision.Priority dropped
    assert (13, Severity.IMPORTANT) in got  # ws.cacheWeight has no evolved value


def test_dead_slo_branch_through_an_alias(analyze_text):
    an = analyze_text(
        ADMIT.format(
            body='\tc := req.SLOClass\n\tif c == "realtime" {\n\t\treturn true, ""\n\t}\n\tswitch c {\n\tcase "interactive":\n\t\treturn true, ""\n\t}'
        )
    )
    assert sorted(f.source_line for f in findings(an, hazards.DEAD_SLO)) == [3, 7]
    assert "interactive" not in {f.message for f in findings(an, hazards.DEAD_SLO) if f.source_line == 3}


def test_an_unreachable_slo_class_alone_makes_its_branch_constant(analyze_text):
    an = analyze_text(ADMIT.format(body='\tif req.SLOClass == "batch" {\n\t\treturn false, "shed"\n\t}'))
    [f] = findings(an, hazards.UNREACHABLE_SLO)
    assert f.severity == Severity.IMPORTANT and f.source_line == 2


def test_an_unreachable_slo_class_beside_a_reachable_one_leaves_the_branch_live(analyze_text):
    """`case "standard", "":` runs for every standard request: only the "" alternative is dead, which changes
    nothing (BLIS's empty class reads back as standard). So is `c == "standard" || c == ""`."""
    body = (
        '\tswitch req.SLOClass {\n\tcase "standard", "":\n\t\treturn true, ""\n\tcase "batch":\n\t\treturn false, "b"\n\t}\n'
        '\tc := req.SLOClass\n\tif c == "sheddable" || (c == "background") {\n\t\treturn false, "s"\n\t}\n'
        '\tif c != "critical" && c != "" {\n\t\treturn false, "n"\n\t}'
    )
    an = analyze_text(ADMIT.format(body=body))
    got = {f.source_line: f for f in findings(an, hazards.UNREACHABLE_SLO)}
    assert {line: f.severity for line, f in got.items()} == {
        3: Severity.SUGGESTION,
        5: Severity.IMPORTANT,
        9: Severity.SUGGESTION,
        12: Severity.SUGGESTION,
    }
    assert "the empty class" in got[3].message and '"standard"' in got[3].message and "still runs" in got[3].message
    assert "background" in got[9].message and '"sheddable"' in got[9].message


def test_a_class_switch_default_only_unnamed_classes_reach_is_unreachable(analyze_text, dictionary):
    """newprog2 4: `switch req.SLOClass` with cases for critical, standard, batch and sheddable and `default: w =
    0.4`: in BLIS the default runs for the empty class, in llm-d never (every class the adapter yields has its own
    case). Its value is a parameter that cannot act, said as for a `case "batch"` one, and gate 1 answers a `param`
    line for it that it has no effect. A default beside a missing class, or one a case falls into, stays live."""
    from types import SimpleNamespace

    from bot.golang import dead_branches
    from bot.model import PolicyKind
    from bot.review.change_request import inert_parameters, refusal

    cases = '\tcase "critical":\n\t\tw = 0.9\n\tcase "standard":\n\t\tw = 0.5\n\tcase "sheddable":\n\t\tw = 0.1\n'
    body = (
        "\tw := 0.0\n\tswitch req.SLOClass {\n"
        + cases
        + '\tdefault:\n\t\tw = 0.4\n\t}\n\tif w > 0.3 {\n\t\treturn false, "x"\n\t}'
    )
    text = ADMIT.format(body=body)
    an = analyze_text(text)
    [f] = findings(an, hazards.UNREACHABLE_SLO)
    assert (f.source_line, f.severity) == (10, Severity.IMPORTANT), f
    assert "`default:` of `switch req.SLOClass`" in f.message and "the empty class" in f.message
    # a constant of evolved.go, no parameter (dead_branches.demote): a `param` line naming it is told why
    assert {th.constant: th.dead_branch for th in an.thresholds if th.constant} == {"otherWValue": (10, "default:")}
    assert not any(th.param == "otherWValue" for th in an.thresholds)
    # what stage 3 reads of it (TranslationSummary.dead_logic): the default serves only the classes no case names
    [dead] = dead_branches.dead_logic(an)
    assert (dead.line, dead.code, dead.classes, dead.names) == (
        10,
        "default:",
        ["batch", "background", ""],
        ["otherWValue"],
    )
    request = SimpleNamespace(source_text=text, source="snippet.go", kind=PolicyKind.ADMISSION)
    why = refusal(1, "param otherWValue: 0.7", parameters=[], inert=inert_parameters(request, dictionary))
    assert why and "`param otherWValue` has no effect in llm-d: it acts only in the branch on `default:`" in why, why
    assert "nothing was recorded" in why
    for live in (cases.replace('"standard"', '"batch"'), cases.replace("w = 0.1\n", "w = 0.1\n\t\tfallthrough\n")):
        an = analyze_text(ADMIT.format(body=body.replace(cases, live)))
        assert not [f for f in findings(an, hazards.UNREACHABLE_SLO) if "default" in f.message]
        assert "otherWValue" not in {th.constant for th in an.thresholds} | set(dead_branches.unreachable_params(an))


#: An if/else chain on the class naming every class llm-d sends; its last `else` (line 10) serves the rest.
CLASS_CHAIN = (
    '\tw := 0.0\n\tc := req.SLOClass\n\tif c == "critical" {\n\t\tw = 0.9\n\t} else if c == "standard" {\n\t\tw = 0.5\n'
    '\t} else if c == "sheddable" {\n\t\tw = 0.1\n\t} else {\n\t\tw = 0.4\n\t}\n\tif w > 0.3 {\n\t\treturn false, "x"\n\t}'
)
#: Trial p2's helper: every branch of the chain returns, so the `return` after it (line 9) serves the rest.
CHAIN_HELPER = """func classSignalWeights(class string) (kvW, queueW float64) {
\tif class == "critical" {
\t\treturn 0.2, 0.6
\t} else if class == "standard" {
\t\treturn 0.3, 0.3
\t} else if class == "sheddable" || class == "batch" {
\t\treturn 0.5, 0.1
\t}
\treturn 0.34, 0.33
}

""" + ROUTE.format(
    body="\tkvW, queueW := classSignalWeights(req.SLOClass)\n\tscores := make(map[string]float64)\n"
    "\tfor _, snap := range state.Snapshots {\n"
    "\t\tscores[snap.ID] = kvW*(1-snap.KVUtilization) + queueW*float64(snap.QueueDepth)\n\t}\n\t_ = scores"
)


def test_the_fallback_of_an_if_chain_naming_every_class_llm_d_sends_is_unreachable(analyze_text):
    """Trial p2: `if class == "critical" {...} else if class == "standard" {...} else if class == "sheddable" ||
    class == "batch" {...}; return 0.34, 0.33`. What follows the chain runs only for background and the empty
    class, which llm-d never sends, as a switch's `default:` beside cases for all three does; yet its numbers stayed
    live parameters (otherKVWeight) with an untested-parameter finding each. They are now constants of evolved.go
    with the reason, and the fallback is dead logic stage 3 reads, whether a last `else` or the code after a chain
    whose every branch returns."""
    from bot.golang import dead_branches

    for program, line, constants, classes in (
        (ADMIT.format(body=CLASS_CHAIN), 10, {"otherWValue": 0.4}, ["batch", "background", ""]),
        (CHAIN_HELPER, 9, {"otherKVWeight": 0.34, "otherQueueWeight": 0.33}, ["background", ""]),
    ):
        an = analyze_text(program)
        dead = [f for f in findings(an, hazards.UNREACHABLE_SLO) if f.severity == Severity.IMPORTANT]
        assert [f.source_line for f in dead] == [line], an.findings
        assert "if/else chain on `c`" in dead[0].message or "if/else chain on `class`" in dead[0].message, dead
        assert {th.constant: th.value for th in an.thresholds if th.constant} == constants, an.thresholds
        assert {th.constant: th.dead_branch for th in an.thresholds if th.constant} == dict.fromkeys(
            constants, (line, "else")
        )
        assert not set(constants) & {th.param for th in an.thresholds}
        reason = dead_branches.reason(next(iter(constants)), line, "else")
        assert f"the branch on `else` (line {line})" in reason, reason
        comment = dead_branches.constant_comment(next(th for th in an.thresholds if th.constant))
        assert "if/else chain" in comment and "never sends" in comment, comment
        [logic] = dead_branches.dead_logic(an)
        assert (logic.line, logic.code, logic.classes, logic.names) == (line, "else", classes, list(constants))
    # the other classes' values act in llm-d and stay parameters
    assert {"criticalKVWeight", "standardKVWeight", "sheddableKVWeight"} <= {th.param for th in an.thresholds}


def test_the_fallback_of_an_if_chain_that_leaves_a_class_llm_d_sends_to_it_stays_live(analyze_text):
    """A chain that does not name critical, standard and sheddable (here: no sheddable, which then takes the last
    `else` or the `return` after), or one comparing something beside the class, or one whose branches do not all
    return (the code after runs after them too), leaves its fallback live: a parameter. So does a scheduler's, whose
    modelled waiting requests may carry any class (dead_branches)."""
    from bot.golang import dead_branches
    from bot.model import PolicyKind

    live = (
        ADMIT.format(body=CLASS_CHAIN.replace('"sheddable"', '"premium"')),
        ADMIT.format(body=CLASS_CHAIN.replace('c == "standard"', 'c == "standard" && len(req.InputTokens) > 9')),
        ADMIT.format(body=CLASS_CHAIN.replace('if c == "standard"', 'if req.TenantID == "standard"')),
        CHAIN_HELPER.replace('"sheddable" || class == "batch"', '"batch"'),
        CHAIN_HELPER.replace("\t\treturn 0.3, 0.3\n", "\t\tkvW, queueW = 0.3, 0.3\n"),
    )
    for program in live:
        an = analyze_text(program)
        assert not [f for f in findings(an, hazards.UNREACHABLE_SLO) if "chain" in f.message], an.findings
        assert not [th.constant for th in an.thresholds if th.dead_branch and th.dead_branch[1] == "else"]
        assert all(th.param for th in an.thresholds if th.value in (0.4, 0.34)), an.thresholds  # the fallback's
        assert not [d for d in dead_branches.dead_logic(an) if d.code == "else"]
    body = CLASS_CHAIN.replace("req.SLOClass", "requests[0].SLOClass").replace(
        'return false, "x"', "requests[0].Priority++"
    )
    an = analyze_text(ORDER.format(body=body), kind=PolicyKind.SCHEDULING)
    assert not [th.constant for th in an.thresholds if th.constant], an.thresholds
    assert "otherWValue" in {th.param for th in an.thresholds}, an.thresholds


def test_sim_scale_load_threshold_is_important_kv_is_a_suggestion(analyze_text):
    body = "\tfor _, s := range state.Snapshots {\n\t\tif s.QueueDepth > 4 {\n\t\t\t_ = 1\n\t\t}\n\t\tif s.KVUtilization > 0.8 {\n\t\t\t_ = 2\n\t\t}\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    got = {f.source_line: f for f in findings(an, hazards.SIM_SCALE)}
    assert got[3].severity == Severity.IMPORTANT
    assert got[6].severity == Severity.SUGGESTION and "also a 0–1 fraction" in got[6].message


def test_load_threshold_at_pod_scale_is_only_a_suggestion(analyze_text):
    """A threshold already in the range real pods run (40 requests) is not called simulator-scale."""
    body = "\tfor _, s := range state.Snapshots {\n\t\tif s.QueueDepth > 40 {\n\t\t\t_ = 1\n\t\t}\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    [f] = findings(an, hazards.SIM_SCALE)
    assert f.severity == Severity.SUGGESTION and "already in the range real vLLM pods run" in f.message
    assert "simulated instances" not in f.message


def test_unmapped_signal_without_entry_is_critical(analyze_text):
    an = analyze_text(ROUTE.format(body="\t_ = state.Snapshots[0].GPUMemoryBandwidth"))
    [f] = findings(an, hazards.UNMAPPED)
    assert f.severity == Severity.CRITICAL and f.source_line == 2


def test_untranslatable_signal_with_fallback_is_important(analyze_text, dictionary):
    an = analyze_text(ROUTE.format(body="\t_ = state.Snapshots[0].CacheHitRate"))
    [f] = findings(an, hazards.UNMAPPED)
    assert f.severity == Severity.IMPORTANT
    assert dictionary.signal("CacheHitRate").fallback in f.message


GATE = "type Gate struct {{\n\tseen map[string]int\n\tcls  map[string]int\n}}\n\n" + ADMIT


def test_a_receiver_map_keyed_by_the_fairness_id_grows_without_bound(analyze_text):
    """a01 keeps a count per client fairness ID for the life of the EPP: any client can grow it."""
    from tests.golang.conftest import CORPUS

    path = CORPUS / "a01_pattern_c_adaptive_admission.go"
    an = analyze_text(path.read_text(), path.name)
    [f] = findings(an, hazards.UNBOUNDED_STATE)
    assert f.source_line == 119 and f.severity == Severity.IMPORTANT  # a.tenantCounts[tenantID]++
    assert "tenantCounts" in f.message and "FairnessID" in f.message and "without limit" in f.message
    assert "evict" in f.fix and "bounded" in f.fix


def test_client_keyed_state_by_session_header_but_not_by_slo_class(analyze_text):
    body = "\ta.seen[req.SessionID] += 1\n\ta.cls[req.SLOClass]++"
    an = analyze_text(GATE.format(body=body))
    assert [f.source_line for f in findings(an, hazards.UNBOUNDED_STATE)] == [7]  # not the SLO class: 3 values


def test_a_bounded_or_evicted_map_or_a_program_without_one_is_not_flagged(analyze_text):
    evicted = "\ta.seen[req.TenantID]++\n\tif a.seen[req.TenantID] > 9 {\n\t\tdelete(a.seen, req.TenantID)\n\t}"
    capped = "\tif len(a.seen) < 1000 {\n\t\ta.seen[req.TenantID]++\n\t}"
    reset = "\ta.seen[req.TenantID]++\n\tif a.seen[req.TenantID] > 9 {\n\t\ta.seen = map[string]int{}\n\t}"
    read_only = '\tif a.seen[req.TenantID] > 3 {\n\t\treturn false, "busy"\n\t}'
    for body in (evicted, capped, reset, read_only):
        assert not findings(analyze_text(GATE.format(body=body)), hazards.UNBOUNDED_STATE), body
    an = analyze_text(ADMIT.format(body='\tif len(req.InputTokens) > 9 {\n\t\treturn false, "long"\n\t}'))
    assert not findings(an, hazards.UNBOUNDED_STATE)


def test_a_lazy_make_is_not_a_reset_and_the_finding_names_every_write(analyze_text):
    body = "\tif a.seen == nil {\n\t\ta.seen = make(map[string]int)\n\t}\n\ta.seen[req.TenantID]++\n\ta.seen[req.TenantID] += 2"
    [f] = findings(analyze_text(GATE.format(body=body)), hazards.UNBOUNDED_STATE)
    assert f.source_line == 10 and "also written on line 11" in f.message


def test_an_untranslatable_signal_read_on_more_lines_names_them_in_agreement(analyze_text):
    """Found by an llm-d reader: 'CacheHitRate has no llm-d source (untranslatable) (also lines 195)'."""
    once = "\t_ = state.Snapshots[0].CacheHitRate\n\t_ = state.Snapshots[1].CacheHitRate"
    [f] = findings(analyze_text(ROUTE.format(body=once)), hazards.UNMAPPED)
    assert "(also line 3)." in f.message, f.message
    twice = once + "\n\t_ = state.Snapshots[2].CacheHitRate"
    [f] = findings(analyze_text(ROUTE.format(body=twice)), hazards.UNMAPPED)
    assert "(also lines 3, 4)." in f.message, f.message


HASHED = (
    'package sim\n\nimport (\n\t"hash/crc32"\n\t"hash/fnv"\n)\n\n'
    "type Gate struct{{}}\n\n"
    "func unit(s string) float64 {{\n\th := fnv.New64a()\n\th.Write([]byte(s))\n\treturn float64(h.Sum64()>>11) / (1 << 53)\n}}\n\n"
    "func draw(s string) float64 {{\n\treturn unit(s)\n}}\n\n"
    "func plain(s string) float64 {{\n\treturn float64(len(s))\n}}\n\n" + ADMIT
)


def test_a02_draws_its_shedding_decision_from_the_client_request_id(analyze_text):
    """maint5 #5: llm-d's RequestID is the client's x-request-id, so a client that reuses one ID is never shed."""
    from tests.golang.conftest import CORPUS

    path = CORPUS / "a02_gaie_saturation_shedder.go"
    an = analyze_text(path.read_text(), path.name)
    [f] = findings(an, hazards.CLIENT_DRAW)
    assert f.source_line == 64 and f.severity == Severity.IMPORTANT  # uniformFromID(req.ID) < p
    assert "uniformFromID" in f.message and "x-request-id" in f.message and "reuse" in f.message
    assert "math/rand" in f.fix and "inject" in f.fix


def test_a_hash_of_a_client_value_is_flagged_directly_and_through_helpers_but_not_of_the_endpoint(analyze_text):
    body = (
        "\t_ = draw(req.SessionID)\n"  # line 25: draw -> unit -> fnv
        "\t_ = crc32.ChecksumIEEE([]byte(req.TenantID))\n"  # line 26: a hash package directly
        "\tid := req.ID\n\t_ = unit(id)\n"  # line 28: through a local
        "\t_ = unit(state.Snapshots[0].ID)\n"  # the endpoint name: not the client's
        "\t_ = plain(req.ID)\n"  # no hash
        "\t_ = unit(req.SLOClass)"  # not client-controlled: three values from the priority
    )
    an = analyze_text(HASHED.format(body=body))
    assert sorted(f.source_line for f in findings(an, hazards.CLIENT_DRAW)) == [25, 26, 28]
    an = analyze_text(HASHED.format(body="\t_ = unit(state.Snapshots[0].ID)\n\t_ = plain(req.ID)"))
    assert not findings(an, hazards.CLIENT_DRAW)


def _batch_incumbents_test(package: str, constructor: str) -> str:
    """Go: a priority-0 request (standard) on queues of 0, 5 and 20 waiting, the waiting ones modelled batch or standard."""
    return (
        f"package {package}\n\n"
        'import (\n\t"context"\n\t"testing"\n\n'
        '\tfwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"\n'
        '\t"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"\n)\n\n'
        "func scoresWithIncumbents(class string) ([]float64, error) {\n"
        "\tparams := DefaultParameters()\n\tparams.IncumbentSLOClass = class\n"
        "\tif err := params.Validate(); err != nil {\n\t\treturn nil, err\n\t}\n"
        f"\tp := {constructor}(params)\n"
        "\teps := []scheduling.Endpoint{\n"
        '\t\ttestEndpoint("q0", &fwkdl.Metrics{WaitingQueueSize: 0}),\n'
        '\t\ttestEndpoint("q5", &fwkdl.Metrics{WaitingQueueSize: 5}),\n'
        '\t\ttestEndpoint("q20", &fwkdl.Metrics{WaitingQueueSize: 20}),\n\t}\n'
        "\ts := p.Score(context.Background(), &scheduling.InferenceRequest{RequestSizeBytes: 2000}, eps)\n"
        "\treturn []float64{s[eps[0]], s[eps[1]], s[eps[2]]}, nil\n}\n\n"
        "func TestBatchIncumbents(t *testing.T) {\n"
        '\tstandard, err := scoresWithIncumbents("standard")\n'
        "\tif err != nil || !(standard[0] > standard[1] && standard[1] > standard[2]) {\n"
        '\t\tt.Fatalf("standard incumbents: want queue order, got %v (%v)", standard, err)\n\t}\n'
        '\tbatch, err := scoresWithIncumbents("batch")\n'
        "\tif err != nil {\n"
        '\t\tt.Fatalf("Validate refuses incumbentSLOClass batch: %v", err)\n\t}\n'
        "\tif batch[0] != batch[1] || batch[1] == standard[1] {\n"
        '\t\tt.Errorf("batch incumbents (class weight 1 < standard 3): a standard request goes ahead of 5 of them, '
        'want q0 and q5 alike and q5 unlike standard incumbents %v, got %v", standard, batch)\n\t}\n}\n'
    )


def test_a_scheduler_s_unreachable_class_says_the_modelled_waiting_requests_can_have_it_through_go(dictionary):
    """sched-e2e #8: s01's `case "batch":` was said to never run in llm-d ("batch never arrives"), IMPORTANT; but
    its pseudo-queue models the waiting requests with incumbentSLOClass, which Validate accepts as batch, and then
    the branch runs on every one of them (the generated plugin places a standard request ahead of five batch
    ones, where five standard ones keep it behind). The finding now says which half cannot reach the class: the request being placed."""
    import re

    from .conftest import passes_with_test, translate_path
    from .test_scheduling_plugin import S01

    _, _, tr = translate_path(S01, dictionary)
    [f] = [f for f in tr.findings if f.check == hazards.UNREACHABLE_SLO and f.severity == Severity.IMPORTANT]
    assert "the request being placed is never batch" in f.message and "never arrives" not in f.message
    assert "`param incumbentSLOClass: batch`" in f.message and "never the request being placed" in f.fix
    main_path, main = next((p, t) for p, t in tr.files.items() if "IncumbentSpacingUs" in t and "_test" not in p)
    constructor = re.search(r"^func (New\w+)\(params Parameters\)", main, re.M).group(1)
    passes_with_test(tr, main_path, "batch_incumbents_test.go", lambda pkg: _batch_incumbents_test(pkg, constructor))


def test_a_router_s_unreachable_class_still_never_arrives(analyze_text):
    an = analyze_text(ADMIT.format(body='\tif req.SLOClass == "batch" {\n\t\treturn false, "shed"\n\t}'))
    [f] = findings(an, hazards.UNREACHABLE_SLO)
    assert "batch never arrives" in f.message and "incumbentSLOClass" not in f.message + f.fix
