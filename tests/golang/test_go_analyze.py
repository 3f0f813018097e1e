"""One test per analysis rule: kind classification, signal extraction through every access path, thresholds."""

from __future__ import annotations

import re

import pytest

from bot.golang.source import SourceError
from bot.model import PolicyKind

ROUTE = 'func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {{\n{body}\n\treturn NewRoutingDecision("x", "y")\n}}\n'
ADMIT = 'func (a *Gate) Admit(req *Request, state *RouterState) (bool, string) {{\n{body}\n\treturn true, ""\n}}\n'
ORDER = "func (s *Sched) OrderQueue(requests []*Request, clock int64) {{\n{body}\n}}\n"


def names(an) -> set[str]:
    return {u.name for u in an.signals}


def use_lines(an, name) -> set[int]:
    return {u.line for u in an.signals if u.name == name}


# ---- kind classification -------------------------------------------------------------


@pytest.mark.parametrize(
    "template, kind", [(ROUTE, PolicyKind.ROUTING), (ADMIT, PolicyKind.ADMISSION), (ORDER, PolicyKind.SCHEDULING)]
)
def test_kind_from_host_signature(analyze_text, template, kind):
    an = analyze_text(template.format(body="\t_ = 1"))
    assert an.kind == kind


def test_legacy_admit_signature_still_classifies(analyze_text):
    an = analyze_text(
        'func (a *Gate) Admit(state *RouterState, req *Request) bool {\n\treturn req.SLOClass != "batch"\n}\n'
    )
    assert an.kind == PolicyKind.ADMISSION
    assert any(f.check == "source.legacy-signature" for f in an.findings)


def test_kind_override_that_contradicts_the_host_is_an_error(analyze_text):
    with pytest.raises(SourceError) as exc:
        analyze_text(ROUTE.format(body="\t_ = 1"), kind=PolicyKind.ADMISSION)
    assert "Route" not in str(exc.value) or "expected" in str(exc.value)


def test_no_policy_function_names_the_expected_signatures(analyze_text):
    with pytest.raises(SourceError) as exc:
        analyze_text("func helper(x int) int {\n\treturn x\n}\n")
    assert exc.value.check == "source.no-policy-function"
    assert "OrderQueue(requests []*Request, clock int64)" in str(exc.value)


def test_removed_priority_policy_gets_a_clear_message(analyze_text):
    with pytest.raises(SourceError) as exc:
        analyze_text("func (p *SLO) Compute(req *Request, clock int64) float64 {\n\treturn 1\n}\n")
    assert "ce85515e" in str(exc.value)


def test_builtins_are_skipped_when_several_hosts(analyze_text):
    text = (
        "package sim\n\n"
        + ROUTE.replace("WeightedScoring", "RoundRobin").format(body="\t_ = 1")
        + ROUTE.replace("WeightedScoring", "Evolved").format(body="\t_ = state.Snapshots[0].QueueDepth")
    )
    an = analyze_text(text)
    assert an.host == "Evolved.Route"


# ---- signals ----------------------------------------------------------------------------


def test_range_variable_and_alias_of_state_snapshots(analyze_text):
    an = analyze_text(
        ROUTE.format(body="\tsnaps := state.Snapshots\n\tfor _, s := range snaps {\n\t\t_ = s.KVUtilization\n\t}")
    )
    assert "KVUtilization" in names(an)
    assert use_lines(an, "KVUtilization") == {4}


def test_index_expression_and_indexed_alias(analyze_text):
    body = "\tfor i := range state.Snapshots {\n\t\t_ = state.Snapshots[i].QueueDepth\n\t\ts := state.Snapshots[i]\n\t\t_ = s.BatchSize\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    assert {"QueueDepth", "BatchSize"} <= names(an)


def test_effective_load_expands_to_its_parts(analyze_text):
    an = analyze_text(ROUTE.format(body="\tload := state.Snapshots[0].EffectiveLoad()\n\t_ = load"))
    assert {"EffectiveLoad", "QueueDepth", "BatchSize", "InFlightRequests"} <= names(an)


def test_pending_requests_is_understood_as_in_flight_requests(analyze_text):
    an = analyze_text(ROUTE.format(body="\t_ = state.Snapshots[0].PendingRequests"))
    use = next(u for u in an.signals if u.written == "PendingRequests")
    assert use.name == "InFlightRequests"


def test_request_field_alias_keeps_its_signal(analyze_text):
    an = analyze_text(
        ADMIT.format(body='\tsloClass := req.SLOClass\n\tif sloClass == "batch" {\n\t\treturn false, "shed"\n\t}')
    )
    assert "SLOClass" in names(an)


def test_len_of_input_tokens_and_input_len(analyze_text):
    an = analyze_text(ADMIT.format(body="\t_ = len(req.InputTokens)\n\t_ = req.InputLen()"))
    written = {u.written for u in an.signals if u.name == "InputTokens"}
    assert written == {"InputTokens", "InputLen"}


def test_state_clock_and_scheduler_clock(analyze_text):
    assert "Clock" in names(analyze_text(ADMIT.format(body="\t_ = state.Clock")))
    an = analyze_text(ORDER.format(body="\tfor _, r := range requests {\n\t\t_ = clock - r.ArrivalTime\n\t}"))
    assert "ArrivalTime" in names(an)


def test_signals_read_in_helper_methods_are_followed(analyze_text):
    text = (
        "package sim\n\nfunc (a *Gate) sat(snaps []RoutingSnapshot) float64 {\n\tt := 0.0\n\tfor _, s := range snaps {\n"
        "\t\tt += s.KVUtilization\n\t}\n\treturn t\n}\n\n"
        + ADMIT.format(body='\tif a.sat(state.Snapshots) > 0.9 {\n\t\treturn false, "x"\n\t}')
    )
    an = analyze_text(text)
    assert "KVUtilization" in names(an)
    assert [h.label for h in an.helpers] == ["Gate.sat"]
    assert any(t.value == 0.9 and t.signals == ["KVUtilization"] for t in an.thresholds)


def test_identifiers_are_not_signals(analyze_text):
    an = analyze_text(ROUTE.format(body="\t_ = state.Snapshots[0].ID"))
    assert "ID" not in names(an)


# ---- thresholds -----------------------------------------------------------------------


def test_comparison_threshold_relates_to_the_aliased_signal(analyze_text):
    an = analyze_text(
        ROUTE.format(
            body="\tfor _, s := range state.Snapshots {\n\t\tload := s.EffectiveLoad()\n\t\tif load > 7 {\n\t\t\t_ = 1\n\t\t}\n\t}"
        )
    )
    th = next(t for t in an.thresholds if t.value == 7)
    assert th.role == "threshold" and "EffectiveLoad" in th.signals
    assert th.go_type == "int" and th.param == "loadThreshold" and th.lines == [4]


def test_same_number_on_same_subject_is_one_parameter(analyze_text):
    body = "\tfor _, s := range state.Snapshots {\n\t\tkv := s.KVUtilization\n\t\tif kv > 0.82 {\n\t\t\t_ = 1 - 2*(kv-0.82)\n\t\t}\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    th = [t for t in an.thresholds if t.value == 0.82]
    assert len(th) == 1 and th[0].lines == [4, 5]
    assert any(t.value == 2 and t.role == "coefficient" for t in an.thresholds)


def test_numbers_unrelated_to_signals_are_not_thresholds(analyze_text):
    an = analyze_text(ROUTE.format(body="\tn := 3\n\tif n > 2 {\n\t\t_ = n * 4\n\t}"))
    assert an.thresholds == []


def test_control_dependent_factor_is_a_parameter(analyze_text):
    body = "\tfor _, s := range state.Snapshots {\n\t\tadj := 1.0\n\t\tif s.QueueDepth > 5 {\n\t\t\tadj *= 0.4\n\t\t}\n\t\t_ = adj\n\t}"
    an = analyze_text(ROUTE.format(body=body))
    th = next(t for t in an.thresholds if t.value == 0.4)
    assert th.role == "factor" and th.signals == ["QueueDepth"]


def test_unit_conversions_are_not_parameters(analyze_text):
    an = analyze_text(
        ORDER.format(body="\tfor _, r := range requests {\n\t\t_ = float64(clock-r.ArrivalTime) / 1000.0\n\t}")
    )
    assert not any(t.value == 1000 for t in an.thresholds)


# ---- receiver fields set outside the evolved code --------------------------------------

GUARDED = (
    "package sim\n\ntype Guard struct {{\n\tMaxWaitUs int64\n\tBonus float64\n}}\n\n"
    "func (g Guard) OrderQueue(requests []*Request, clock int64) {{\n{body}\n}}\n"
)


def test_a_field_with_an_explicit_zero_fallback_becomes_a_parameter_defaulting_to_the_fallback(analyze_text):
    """`x := g.F; if x <= 0 { x = LIT }`: the program runs with LIT when nothing sets the field, so the logic
    is live in the plugin and LIT is the number to tune (s02's 2 s starvation threshold)."""
    body = (
        "\tmaxWait := g.MaxWaitUs\n\tif maxWait <= 0 {\n\t\tmaxWait = 2_000_000\n\t}\n"
        "\tfor _, r := range requests {\n\t\t_ = clock-r.ArrivalTime >= maxWait\n\t}"
    )
    an = analyze_text(GUARDED.format(body=body))
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "SUGGESTION" and f.source_line == 9
    assert "2_000_000" in f.message and "line 11" in f.message
    th = next(t for t in an.thresholds if t.role == "field")
    assert (th.param, th.value, th.go_type, th.receiver_field) == ("maxWaitUs", 2_000_000, "int64", "MaxWaitUs")


def test_a_field_nothing_sets_and_nothing_replaces_stays_important(analyze_text):
    body = "\tfor _, r := range requests {\n\t\t_ = float64(clock-r.ArrivalTime) * g.Bonus\n\t}"
    an = analyze_text(GUARDED.format(body=body))
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "IMPORTANT" and "Bonus" in f.message
    assert not any(t.role == "field" for t in an.thresholds)


def test_a_scheduling_parameters_doc_says_what_the_plugin_reads_for_the_request_and_the_waiting_ones(analyze_text):
    """The queue holds the request (the adapter's values) and modelled incumbents (the incumbent* parameters):
    its SLO class is read back from the llm-d priority, its prompt length is RequestSizeBytes / 4, its wait is 0."""
    from bot.golang.params import param_specs

    body = (
        "\tw := func(r *Request) float64 {\n\t\tv := float64(clock-r.ArrivalTime) / 1000.0 * 0.002\n"
        '\t\tif r.SLOClass == "critical" {\n\t\t\tv += 4\n\t\t}\n\t\tif r.InputLen() < 256 {\n\t\t\tv += 1.5\n\t\t}\n'
        "\t\treturn v\n\t}\n\t_ = w"
    )
    docs = " ".join(s.doc for s in param_specs(analyze_text(ORDER.format(body=body)), None, True))
    assert "read back from its llm-d priority" in docs and "incumbentSLOClass" in docs
    assert "RequestSizeBytes / 4" in docs and "incumbentInputTokens" in docs
    assert "its own wait is 0" in docs and "incumbentSpacingUs apart" in docs
    assert "request priority" not in docs and "prompt tokens" not in docs and "each endpoint's wall clock" not in docs


def test_a01s_local_limits_are_parameters_and_their_factors_say_what_they_multiply(dictionary):
    """Found by an llm-d maintainer: a01 sheds on `loadRatio > shedLimit` with `shedLimit := 0.75`, a local set from a
    literal, which became no parameter, though the Parameters comment promises every compared number; then it got
    an unlisted-literal finding, but a person at gate 1 still could not tune it. Such a local limit is a parameter
    named after the local, with BLIS's value as its default. The factors beside it were "TenantIDLowFactor ... the
    factor applied" and the steps "the step in `maxKVUtil`": they multiply batchLimit and shedLimit and add to
    loadRatio."""
    from bot.golang.analyze import analyze
    from bot.golang.params import param_specs
    from bot.golang.source import load_evolved_source

    from .conftest import CORPUS

    an = analyze(load_evolved_source(CORPUS / "a01_pattern_c_adaptive_admission.go"), dictionary)
    kept = [f.message for f in an.findings if f.check == "translate.unlisted-literal"]
    assert not [m for m in kept if "batchLimit" in m or "shedLimit" in m], kept
    specs = {s.name: s for s in param_specs(an, None, False)}
    for name, value, line in [("shedLimit", 0.75, 151)]:
        spec = specs[name]
        assert (spec.go_type, spec.default, spec.json_default) == ("float64", str(value), value)
        assert spec.threshold.lines == [line] and spec.threshold.subject == "loadRatio"
        assert spec.doc.startswith(f"{spec.field} is the threshold `loadRatio` is compared with")
        assert f"(default {value}, the evolved value)" in spec.doc
        assert {"cond": f"p.{spec.field} < 0", "message": f"{name} must be >= 0, got %v", "bad": -0.5} in spec.checks
    docs = {s.name: s.doc for s in param_specs(an, None, False)}
    assert "tenantIDLowFactor" not in docs and "tenantIDHighFactor" not in docs
    # batchLimit and its factor act only in `case "batch"`, which llm-d never sends: constants, not parameters.
    assert "batchLimit" not in docs and "batchLimitFactor" not in docs
    assert {th.constant for th in an.thresholds if th.constant} == {"batchLimitEvolved", "batchLimitFactor"}
    assert docs["shedLimitFactor"].startswith("ShedLimitFactor is the factor `shedLimit` is multiplied by")
    assert docs["maxKVUtilStep"].startswith("MaxKVUtilStep is the step added to `loadRatio`")
    assert docs["inputLenStep"].startswith("InputLenStep is the step added to `loadRatio`")


def test_a_parameters_doc_names_the_step_and_the_signals_where_the_value_decides(analyze_text):
    """Found reviewing a01 upstream: ShedLimit's doc said `loadRatio` is compared with it "in the step 'Tenants far
    above ... are shed earlier'", the step that only scales the local; the comparison is in a later switch. And
    MaxKVUtilStep's said "`maxKVUtil` is computed from each endpoint's free KV-cache blocks": those are the
    condition's other operand's. A lifted local's step is its comparison's; a step's signals are its condition's."""
    from bot.golang.params import param_specs

    body = (
        "func (p *X) Admit(req *Request, state *RouterState) (bool, string) {\n"
        "\tsnap := state.Snapshots[0]\n"
        "\t// Busy tenants are shed earlier.\n"
        "\tshedLimit := 0.75\n"
        '\tif req.TenantID == "big" {\n\t\tshedLimit *= 0.9\n\t}\n'
        "\tratio := float64(snap.QueueDepth) / 10.0\n"
        "\tif snap.KVUtilization > 0.95 || snap.FreeKVBlocks < 128 {\n\t\tratio += 0.25\n\t}\n"
        "\n"
        "\t// Shed above the limit.\n"
        '\tif ratio > shedLimit {\n\t\treturn false, "shed"\n\t}\n'
        '\treturn true, "ok"\n}\n'
    )
    docs = {s.name: s.doc for s in param_specs(analyze_text(body), None, False)}
    limit = next(d for n, d in docs.items() if n.startswith("shedLimit") and "Factor" not in n)
    assert 'in the step "Shed above the limit"' in limit and "Busy tenants" not in limit, limit
    step = next(d for n, d in docs.items() if n.endswith("Step"))
    assert "The condition reads" in step and "free KV-cache blocks" in step, step
    assert "is computed from each endpoint's free KV-cache blocks" not in step, step


LOAD = "\tload := float64(state.Snapshots[0].QueueDepth)\n"
SHED = '{\n\t\treturn false, "shed"\n\t}'
TWO = "\tt, maxWaiting := 0.5, 8\n" + LOAD + "\tif t < load && int(load) >= maxWaiting " + SHED
LIFTED = [
    ("\tlimit := 0.5\n" + LOAD + "\tif load > limit " + SHED, "limit", "0.5", "float64"),
    (TWO, "maxWaiting", "8", "int"),
    # set again only to a number that is a parameter of its own (the batch class's limit, a constant in llm-d): the
    # lifted value is what `limit` holds for every other class (found by trialm's rolling-window admitter)
    (
        "\tlimit := 0.5\n" + LOAD + '\tif req.SLOClass == "batch" {\n\t\tlimit = 0.3\n\t}\n\tif load > limit ' + SHED,
        "limit",
        "0.5",
        "float64",
    ),
    (TWO, "loadThreshold", "0.5", "float64"),  # `t < load`: named by what `t` is compared with (was tThreshold)
    (
        "\tvar floor int64 = -3\n\tq := int64(state.Snapshots[0].QueueDepth)\n\tif q < floor " + SHED,
        "floor",
        "-3",
        "int64",
    ),
]
KEPT = [
    (
        # set again to a number no parameter holds (under no signal): lifting the first would stand for one value
        "\tlimit := 0.5\n" + LOAD + "\tif state == nil {\n\t\tlimit = 0.3\n\t}\n\tif load > limit " + SHED,
        "`limit` is set again (`limit = 0.3`, line 5)",
    ),
    (
        "\tlimit := 0.5\n" + LOAD + "\tp := &limit\n\t_ = p\n\tif load > limit " + SHED,
        "its address is taken (`&limit`, line 4)",
    ),
    (
        "\tvar limit float32 = 0.5\n" + LOAD + "\tif float32(load) > limit " + SHED,
        "`limit` is of type float32, which no parameter carries",
    ),
    (
        "\tlimit := 0.5\n\tn := float64(len(state.Snapshots))\n\t_ = state.Snapshots[0].QueueDepth\n\tif n > limit "
        + SHED,
        "`n`, which it is compared with, derives from no signal",
    ),
]


@pytest.mark.parametrize("body, param, default, go_type", LIFTED)
def test_a_local_limit_compared_with_a_signal_is_a_parameter_named_for_its_role(
    analyze_text, body, param, default, go_type
):
    """A local set once from a literal and compared with a signal later is a threshold like one written in the
    comparison: a parameter with the evolved value as default, named after the local (it says the role), and the
    carried code reads it from the parameters where the local is set."""
    from bot.golang.params import param_specs

    an = analyze_text(ADMIT.format(body=body))
    spec = next(s for s in param_specs(an, None, False) if s.name == param)
    assert (spec.default, spec.go_type) == (default, go_type)
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings


@pytest.mark.parametrize("body, why", KEPT)
def test_a_local_limit_that_cannot_be_lifted_keeps_its_finding_and_says_why(analyze_text, body, why):
    """Lifting the first value of a local set again, or one a parameter cannot hold, would change what the plugin
    does or fail to build: the number stays in the code and its unlisted-literal finding says why."""
    an = analyze_text(ADMIT.format(body=body))
    [f] = [f for f in an.findings if f.check == "translate.unlisted-literal" and "`limit" in f.message]
    assert "keeps it a literal because " + why in f.message, f.message
    assert not [th for th in an.thresholds if th.local]


def test_a_local_limit_in_a_function_without_a_receiver_keeps_its_finding(analyze_text):
    text = ADMIT.format(body='\tif over(float64(state.Snapshots[0].QueueDepth)) {\n\t\treturn false, "shed"\n\t}')
    text += "\nfunc over(load float64) bool {\n\tlimit := 0.5\n\treturn load > limit\n}\n"
    an = analyze_text(text)
    [f] = [f for f in an.findings if f.check == "translate.unlisted-literal"]
    assert "it is set in `over`, a function without a receiver" in f.message, f.message


def test_a_lifted_limit_on_the_left_of_its_comparison_watches_the_other_side(analyze_text):
    """The generated tests find a threshold's boundary by watching the value compared with it: for `t < load` with
    `t` lifted from `t := 0.5`, that is `load` (the literal is at the declaration, not in the comparison)."""
    from bot.golang.carry import watch_edits

    an = analyze_text(ADMIT.format(body=TWO))
    opened = [e for e in watch_edits(an.src, an, an.host_info.node) if e.text.startswith("promotionWatch")]
    watched = {e.text.split('"')[1].split("@")[0]: an.src.go_bytes[e.start : e.start + 8] for e in opened}
    assert watched == {"loadThreshold": b"load && ", "maxWaiting": b"int(load"}, watched


BUCKET = (
    "type Bucket struct {{\n\ttokens float64\n\tcapacity float64\n\trate float64\n\tcount int\n}}\n\n"
    "func (b *Bucket) Admit(req *Request, state *RouterState) (bool, string) {{\n"
    "\tif b.capacity == 0 {{\n{init}\t}}\n"
    "\tb.tokens += b.rate\n\tif b.tokens > b.capacity {{\n\t\tb.tokens = b.capacity\n\t}}\n"
    "\tcost := float64(len(req.InputTokens))\n{extra}"
    '\tif b.tokens < cost {{\n\t\treturn false, "empty"\n\t}}\n\tb.tokens -= cost\n\tb.count++\n\treturn true, ""\n}}\n'
)


def test_a_bucket_size_the_host_sets_is_a_parameter_with_the_simulator_scale_finding(analyze_text):
    """Found by a researcher promoting a token-bucket admitter: the host set `b.capacity = 20000; b.refillRate =
    4000` before the evolved block, which read both; the plugin hard-coded them with no parameter and no finding,
    and `param capacity: ...` at gate 1 was refused. A numeric field the carried code sets once from a literal and
    reads is a parameter named after the field, with BLIS's value as default; a budget prompt tokens are charged
    against is at simulator scale."""
    from bot.golang.params import param_specs

    init = "\t\tb.capacity = 20000\n\t\tb.rate = 4000\n\t\tb.tokens = b.capacity\n\t\tb.count = 0\n"
    an = analyze_text(BUCKET.format(init=init, extra=""))
    specs = {s.name: s for s in param_specs(an, None, False)}
    assert set(specs) == {"capacity", "rate"}, specs  # b.count = 0 is a reset, b.tokens = b.capacity no literal
    for name, line in [("capacity", 10), ("rate", 11)]:
        spec = specs[name]
        assert (spec.go_type, spec.default, spec.json_default) == (
            "float64",
            f"{spec.json_default:g}",
            spec.json_default,
        )
        assert spec.threshold.assigned and spec.threshold.subject == "b.tokens" and spec.threshold.lines == [line]
        assert f"the evolved code sets on line {line}" in spec.doc and "prompt length" in spec.doc
        [f] = [f for f in an.findings if f.check == "hazard.sim-scale-threshold" and f.param == name]
        assert f.severity.value == "IMPORTANT" and f.source_line == line
        assert "prompt tokens are charged against (`b.tokens`)" in f.message and "prompt-token throughput" in f.fix


@pytest.mark.parametrize(
    "init, extra",
    [
        ("\t\tb.capacity = 20000\n\t\tb.rate = 4000\n", "\tif b.tokens < 0 {\n\t\tb.rate = b.capacity / 10\n\t}\n"),
        ("\t\tb.capacity = 20000\n\t\tb.rate = 4000\n", "\tp := &b.rate\n\t_ = p\n"),
    ],
    ids=["set-again", "address-taken"],
)
def test_a_host_set_field_that_stands_for_more_than_one_value_keeps_its_literal(analyze_text, init, extra):
    """A field set again, or whose address is taken, would not be what one parameter says: only `capacity` lifts."""
    from bot.golang.params import param_specs

    an = analyze_text(BUCKET.format(init=init, extra=extra))
    assert {s.name for s in param_specs(an, None, False)} == {"capacity"}


LOCAL_BUCKET = (
    "type Bucket struct {{\n\ttokens float64\n}}\n\n"
    "func (b *Bucket) Admit(req *Request, state *RouterState) (bool, string) {{\n"
    "\tcapacity := 20000.0\n\trate := 4000.0\n{extra}"
    "\tb.tokens = math.Min(capacity, b.tokens+rate)\n\tcost := float64(len(req.InputTokens))\n"
    '\tif b.tokens < cost {{\n\t\treturn false, "empty"\n\t}}\n\tb.tokens -= cost\n\treturn true, ""\n}}\n'
)


def test_a_bucket_sized_by_locals_is_a_parameter_with_the_simulator_scale_finding(analyze_text):
    """Found by a researcher (newprog2 1): the same bucket as the host-set one, sized by `capacity := 12000.0` and
    `refillPerSec := 3000.0` in the evolved block, went through silently: the locals are never compared
    themselves (they clamp and refill `b.tokens`, which is compared with the prompt's cost), so no rule lifted
    them, no finding named them and `param capacity` was refused at gate 1. A local set once from a literal whose
    value meets signals is a parameter named after the local, read at its declaration, and a budget prompt tokens
    are charged against is at simulator scale, as for the receiver field."""
    from bot.golang.params import param_specs

    an = analyze_text(LOCAL_BUCKET.format(extra=""))
    specs = {s.name: s for s in param_specs(an, None, False)}
    assert set(specs) == {"capacity", "rate"}, specs
    for name, line in [("capacity", 6), ("rate", 7)]:
        spec = specs[name]
        assert (spec.go_type, spec.json_default) == ("float64", 20000.0 if name == "capacity" else 4000.0)
        assert spec.threshold.local == name and spec.threshold.subject == "b.tokens"
        assert "InputTokens" in spec.threshold.signals and spec.threshold.lines == [line]
        assert spec.doc.startswith(f"{spec.field} is the evolved local `{name}` (default ")
        [f] = [f for f in an.findings if f.check == "hazard.sim-scale-threshold" and f.param == name]
        assert f.severity.value == "IMPORTANT" and f.source_line == line
        assert f.message.startswith(f"{name} = ") and "prompt-token throughput" in f.fix
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings


def test_a_bucket_local_set_again_keeps_its_literal_and_its_finding_says_why(analyze_text):
    """A local set again would not be what one parameter says: it stays a literal, listed with the reason."""
    from bot.golang.params import param_specs

    an = analyze_text(LOCAL_BUCKET.format(extra="\tif b.tokens < 0 {\n\t\tcapacity = b.tokens\n\t}\n"))
    assert "capacity" not in {s.name for s in param_specs(an, None, False)}
    [f] = [f for f in an.findings if f.check == "translate.unlisted-literal"]
    assert f.source_line == 6 and "InputTokens" in f.message, f.message
    assert "keeps it a literal because `capacity` is set again (`capacity = b.tokens`, line 9)" in f.message


TABLE = """\tweights := map[string]float64{{"critical": 0.9, "standard": 0.5, "sheddable": {low}}}
\tw := weights[req.SLOClass]
\tscores := make(map[string]float64)
\tfor _, snap := range state.Snapshots {{
\t\tscores[snap.ID] -= w * float64(snap.InFlightRequests)
\t}}
\t_ = scores"""


def test_the_values_of_a_per_class_table_that_meet_signals_are_listed_as_kept_literals(analyze_text):
    """Found by a researcher (newprog2 5): `classLoadWeight := map[string]float64{...}` decides every request's
    load penalty, yet its values got neither parameters nor a finding while the `default:` beside them became a
    parameter. A composite literal's values stay in the code (only the constructor's receiver literal becomes
    parameters), so each value whose table meets a signal (here through `w`, read by class and multiplying
    in-flight requests) is listed as a kept literal at its line, 1 too: a table is data, and a reviewer shown only
    its other entries could not tell the classes' weights apart."""
    an = analyze_text(ROUTE.format(body=TABLE.format(low="1")))
    found = [f for f in an.findings if f.check == "translate.unlisted-literal"]
    assert [(f.source_line, f.message.split(":")[0]) for f in found] == [
        (2, '`weights["critical"]` = 0.9'),
        (2, '`weights["standard"]` = 0.5'),
        (2, '`weights["sheddable"]` = 1'),
    ], found
    assert "combined with InFlightRequests" in found[0].message and "needs a rebuild" in found[0].message
    assert not an.thresholds, an.thresholds
    # A table whose entries meet no signal (a constant entry, times a constant) says nothing about outcomes.
    constant = TABLE.format(low="0.1").replace("[req.SLOClass]", '["critical"]')
    unused = analyze_text(ROUTE.format(body=constant.replace("float64(snap.InFlightRequests)", "2")))
    assert not [f for f in unused.findings if f.check == "translate.unlisted-literal" and "weights[" in f.message]


FIELD_READ = """\tscores := make(map[string]float64)
\tfor _, snap := range state.Snapshots {
\t\tscores[snap.ID] -= ws.classWeight[req.SLOClass] * float64(snap.InFlightRequests)
\t}
\t_ = scores"""


def field_table(ctor: str, read: str = FIELD_READ) -> str:
    """A receiver whose per-class table the constructor sets (line 6 or 7), read in Route."""
    return (
        "type WeightedScoring struct {\n\tclassWeight map[string]float64\n}\n\n"
        f"func NewWeightedScoring() *WeightedScoring {{\n{ctor}\n}}\n\n" + ROUTE.format(body=read)
    )


@pytest.mark.parametrize(
    "ctor, line",
    [
        (
            '\treturn &WeightedScoring{classWeight: map[string]float64{"critical": 2.5, "standard": 1.5, "batch": 0.5}}',
            6,
        ),
        (
            (
                '\tp := &WeightedScoring{}\n\tp.classWeight = map[string]float64{"critical": 2.5, "standard": 1.5, '
                '"batch": 0.5}\n\treturn p'
            ),
            7,
        ),
    ],
    ids=["struct-literal", "assigned"],
)
def test_the_values_of_a_per_class_table_held_in_a_receiver_field_are_listed_as_kept_literals(analyze_text, ctor, line):
    """Issue 11 item 6: the same table as a local one, held in a receiver field the constructor sets (`return
    &policy{classWeight: map[string]float64{...}}`) and read in the evolved method (`ws.classWeight[req.SLOClass]`
    times in-flight requests), decides every request's load penalty, yet its values got neither parameters nor a
    finding: only locals' tables were followed. Each value is listed as a kept literal at its line, like a local
    table's; a table whose reads meet no signal says nothing (below). Set outright in the constructor (`p.classWeight
    = map...`), the field was also reported as set nowhere, hence zero in the plugin, which runs that constructor."""
    an = analyze_text(field_table(ctor))
    found = [f for f in an.findings if f.check == "translate.unlisted-literal"]
    assert [(f.source_line, f.message.split(":")[0]) for f in found] == [
        (line, '`WeightedScoring.classWeight["critical"]` = 2.5'),
        (line, '`WeightedScoring.classWeight["standard"]` = 1.5'),
        (line, '`WeightedScoring.classWeight["batch"]` = 0.5'),
    ], found
    assert "combined with InFlightRequests" in found[0].message and "needs a rebuild" in found[0].message
    assert not an.thresholds, an.thresholds
    # The plugin runs the carried constructor, so the field is set there: not "dead in the plugin".
    assert not [f for f in an.findings if f.check == "translate.field-set-outside"], an.findings
    constant = FIELD_READ.replace("float64(snap.InFlightRequests)", "2").replace("[req.SLOClass]", '["critical"]')
    unused = analyze_text(field_table(ctor, constant))
    assert not [f for f in unused.findings if f.check == "translate.unlisted-literal"], unused.findings


PENALTY_READ = "\tfor _, snap := range state.Snapshots {\n\t\t_ = ws.loadPenalty * float64(snap.InFlightRequests)\n\t}"
PENALTY_CTORS = {
    "struct-literal": ("\treturn &WeightedScoring{loadPenalty: 0.05}", 6),
    "assigned": ("\tp := &WeightedScoring{}\n\tp.loadPenalty = 0.05\n\treturn p", 7),
}


def penalty_field(ctor: str) -> str:
    """A receiver whose numeric field the constructor sets, read with a signal in Route."""
    return (
        "type WeightedScoring struct {\n\tloadPenalty float64\n}\n\n"
        f"func NewWeightedScoring() *WeightedScoring {{\n{ctor}\n}}\n\n" + ROUTE.format(body=PENALTY_READ)
    )


@pytest.mark.parametrize("form", list(PENALTY_CTORS))
def test_a_number_the_constructor_assigns_to_a_receiver_field_is_a_parameter_like_one_in_its_struct_literal(
    analyze_text, form
):
    """`return &policy{loadPenalty: 0.05}` made loadPenalty a parameter; the same number set the other common Go way
    (`p := &policy{}; p.loadPenalty = 0.05; return p`) got none, and an IMPORTANT finding that nothing sets the
    field (dead in the plugin), although the plugin runs that constructor. Both forms give the same parameter:
    name, default, doc, and the line of the number."""
    from bot.golang.params import param_specs

    ctor, line = PENALTY_CTORS[form]
    an = analyze_text(penalty_field(ctor))
    [th] = [t for t in an.thresholds if t.role == "field"]
    assert (th.param, th.value, th.literal, th.go_type, th.line) == ("loadPenalty", 0.05, "0.05", "float64", line)
    assert th.receiver_field == "loadPenalty" and not th.assigned
    [spec] = [s for s in param_specs(an, None, False) if s.name == "loadPenalty"]
    assert spec.doc == "LoadPenalty is the evolved WeightedScoring.loadPenalty = 0.05, set by the constructor."
    assert an.constructed_fields == [("loadPenalty", "LoadPenalty")]
    assert not [f for f in an.findings if f.check == "translate.field-set-outside"], an.findings


def test_a_field_the_constructor_sets_in_its_literal_and_again_keeps_its_numbers(analyze_text):
    """`p := &policy{loadPenalty: 0.1}` then `p.loadPenalty = 0.2`: BLIS ran 0.2, but a parameter from the literal
    defaulted to 0.1, and newPolicy, which sets the field after the constructor, deployed 0.1. One parameter
    cannot stand for two numbers: the field keeps them, as a field assigned twice does."""
    for again in ("p.loadPenalty = 0.2", "p.loadPenalty *= 2", "p.loadPenalty++"):
        an = analyze_text(penalty_field(f"\tp := &WeightedScoring{{loadPenalty: 0.1}}\n\t{again}\n\treturn p"))
        assert not [t for t in an.thresholds if t.role == "field"], (again, an.thresholds)
        assert an.constructed_fields == []
        assert not [f for f in an.findings if f.check == "translate.field-set-outside"], an.findings


def uncarried(ctor: str) -> str:
    """A receiver field set only by a constructor with arguments (not carried into the plugin), read in Route."""
    return (
        "type WeightedScoring struct {\n\tstickiness float64\n}\n\n"
        f"func NewRoutingPolicy(bonus float64) *WeightedScoring {{\n{ctor}\n}}\n\n"
        + ROUTE.format(
            body="\tfor _, snap := range state.Snapshots {\n\t\t_ = ws.stickiness * float64(snap.InFlightRequests)\n\t}"
        )
    )


@pytest.mark.parametrize(
    "ctor, where, read",
    [
        ("\tws := &WeightedScoring{}\n\tws.stickiness = bonus\n\treturn ws", "line 7: `ws.stickiness = bonus`", 13),
        ("\treturn &WeightedScoring{stickiness: bonus}", "line 6: `stickiness: bonus`", 11),
    ],
    ids=["assigned-from-argument", "keyed-from-argument"],
)
def test_a_field_set_only_in_code_the_plugin_does_not_carry_says_where_it_is_set(analyze_text, ctor, where, read):
    """A field BLIS's own NewRoutingPolicy(...) sets (outside the evolved block; a constructor with arguments is not
    carried) was reported as one "nothing in the evolved file sets to a number", which a reviewer reading that very
    file could see was wrong. The finding says where the file sets it and that the plugin does not carry that
    code: the plugin's receiver still holds the zero value."""
    an = analyze_text(uncarried(ctor))
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "IMPORTANT" and f.source_line == read, f
    assert "nothing in the evolved file" not in f.message, f.message
    assert f"sets only in NewRoutingPolicy ({where}), code the plugin does not carry:" in f.message, f.message
    assert "holds the zero value" in f.message and "dead in the plugin" in f.message
    assert not any(t.role == "field" for t in an.thresholds)


UNCARRIED_NUMBER = {
    "keyed": ("\treturn &WeightedScoring{stickiness: 0.3}", 6),
    "assigned": ("\tws := &WeightedScoring{}\n\tws.stickiness = 0.3\n\treturn ws", 7),
}


@pytest.mark.parametrize("form", list(UNCARRIED_NUMBER))
def test_a_number_code_the_plugin_does_not_carry_assigns_once_is_a_parameter_like_one_in_its_literal(
    analyze_text, form
):
    """p1 (a researcher's session-home router): BLIS's NewRoutingPolicy(...) sets `p.loadKnee = 6.0` on the value
    it builds. The same number in that constructor's literal (`&WeightedScoring{loadKnee: 6.0}`) is a parameter
    with BLIS's value; assigned, it got none and an IMPORTANT "holds the zero value", and the plugin divided by a
    zero knee. Both forms give the same parameter, finding and newPolicy line."""
    from bot.golang.params import param_specs

    ctor, line = UNCARRIED_NUMBER[form]
    an = analyze_text(uncarried(ctor))
    [th] = [t for t in an.thresholds if t.role == "field"]
    assert (th.param, th.value, th.literal, th.go_type, th.line) == ("stickiness", 0.3, "0.3", "float64", line)
    assert an.constructed_fields == [("stickiness", "Stickiness")]
    [spec] = [s for s in param_specs(an, None, False) if s.name == "stickiness"]
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "SUGGESTION", f
    assert f.message == (
        f"reads ws.stickiness, which BLIS sets outside the evolved code (line {line}: 0.3); the plugin exposes it as "
        "a parameter with that default"
    ), f.message
    assert spec.doc.startswith("Stickiness is the evolved WeightedScoring.stickiness = 0.3"), spec.doc


@pytest.mark.parametrize(
    "ctor",
    [
        "\tws := &WeightedScoring{}\n\tws.stickiness = 0.3\n\tws.stickiness = 0.4\n\treturn ws",
        "\tws := &WeightedScoring{}\n\tws.stickiness = 0.3\n\tws.stickiness *= bonus\n\treturn ws",
        "\tws := &WeightedScoring{}\n\tif bonus > 0 {\n\t\tws.stickiness = 0.3\n\t}\n\treturn ws",
        "\tws := &WeightedScoring{stickiness: 0.2}\n\tws.stickiness = 0.3\n\treturn ws",
    ],
    ids=["assigned-twice", "assigned-then-scaled", "under-a-condition", "keyed-and-assigned"],
)
def test_a_number_code_the_plugin_does_not_carry_sets_more_than_once_stays_a_finding(analyze_text, ctor):
    """One parameter cannot stand for two numbers, nor for one BLIS set only sometimes: as in the carried
    constructor, such a field is not lifted and stays an IMPORTANT finding."""
    an = analyze_text(uncarried(ctor))
    assert not any(t.role == "field" for t in an.thresholds), an.thresholds
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "IMPORTANT", f


def test_another_values_field_of_the_same_name_sets_nothing_of_the_receiver(analyze_text):
    """`cfg.loadPenalty = 0.05` on a Config the constructor also builds is no receiver field: lifting it made a
    parameter with a number BLIS never gave the policy. Only the variables holding the receiver (`ws := &T{}`,
    `T{...}`, `new(T)`, `var ws T`) count, in the carried constructor and in BLIS's alike."""
    other = "\tcfg := &Config{}\n\tcfg.FIELD = 0.05\n\t_ = cfg\n\tBUILD\n\treturn ws"
    for build in ("ws := &WeightedScoring{}", "ws := new(WeightedScoring)", "var ws WeightedScoring"):
        ret = "&ws" if build.startswith("var") else "ws"
        carried = analyze_text(
            penalty_field(
                other.replace("FIELD", "loadPenalty").replace("BUILD", build).replace("return ws", f"return {ret}")
            )
        )
        assert not any(t.role == "field" for t in carried.thresholds), (build, carried.thresholds)
        outside = analyze_text(
            uncarried(
                other.replace("FIELD", "stickiness").replace("BUILD", build).replace("return ws", f"return {ret}")
            )
        )
        assert not any(t.role == "field" for t in outside.thresholds), (build, outside.thresholds)
    own = analyze_text(uncarried("\tvar ws WeightedScoring\n\tws.stickiness = 0.3\n\treturn &ws"))
    assert [t.param for t in own.thresholds if t.role == "field"] == ["stickiness"]


SESSION_WRITE = (
    "\thome := ws.sessionHome[req.SessionID]\n\t_ = home\n\tws.sessionHome[req.SessionID] = state.Snapshots[0].ID"
)


def session_home(ctor: str, typ: str = "map[string]string") -> str:
    """p1's shape: a receiver map only BLIS's NewRoutingPolicy(...) makes, read and written in Route."""
    return (
        f"type WeightedScoring struct {{\n\tsessionHome {typ}\n}}\n\n"
        f"func NewRoutingPolicy(homes {typ}) *WeightedScoring {{\n{ctor}\n}}\n\n" + ROUTE.format(body=SESSION_WRITE)
    )


@pytest.mark.parametrize(
    "ctor, made",
    [
        ("\tp := &WeightedScoring{}\n\tp.sessionHome = make(map[string]string)\n\treturn p", "make(map[string]string)"),
        (
            "\tp := &WeightedScoring{}\n\tp.sessionHome = make(map[string]string, 64)\n\treturn p",
            "make(map[string]string, 64)",
        ),
        ("\tp := &WeightedScoring{}\n\tp.sessionHome = map[string]string{}\n\treturn p", "map[string]string{}"),
        ("\treturn &WeightedScoring{sessionHome: make(map[string]string)}", "make(map[string]string)"),
    ],
    ids=["make", "make-with-size", "empty-literal", "keyed"],
)
def test_a_map_code_the_plugin_does_not_carry_makes_is_made_by_the_plugin_too(analyze_text, ctor, made):
    """p1: NewRoutingPolicy(...) does `p.sessionHome = make(map[string]string)`; the plugin does not carry it, so
    its receiver held a nil map and `ws.sessionHome[req.SessionID] = ...` panicked on every request with a session
    (recovered: every endpoint scored 0), while the finding said only that the logic was dead. The plugin's
    newPolicy makes the map as BLIS's constructor did; the finding says so, as a SUGGESTION."""
    from bot.golang.gotree import text_of

    an = analyze_text(session_home(ctor))
    assert {f: text_of(an.src, v) for f, v in an.made_fields.items()} == {"sessionHome": made}
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "SUGGESTION", f
    assert f"the plugin's newPolicy makes it the same way (`{made}`)" in f.message, f.message


@pytest.mark.parametrize(
    "ctor",
    [
        "\treturn &WeightedScoring{sessionHome: homes}",
        "\tp := &WeightedScoring{}\n\tif homes == nil {\n\t\tp.sessionHome = make(map[string]string)\n\t}\n\treturn p",
        "\treturn &WeightedScoring{}",
    ],
    ids=["from-argument", "under-a-condition", "never"],
)
def test_a_map_that_stays_nil_in_the_plugin_and_is_written_says_the_plugin_panics(analyze_text, ctor):
    """A receiver map the plugin leaves nil is not only dead logic: the evolved code's
    `ws.sessionHome[req.SessionID] = ...` panics on every request that reaches it, and the plugin recovers and
    stays neutral (every endpoint scores 0), so the finding says that, at the write's line."""
    text = session_home(ctor)
    an = analyze_text(text)
    assert not an.made_fields
    [f] = [f for f in an.findings if f.check == "translate.field-set-outside"]
    assert f.severity.value == "IMPORTANT", f
    write = text.splitlines().index("\tws.sessionHome[req.SessionID] = state.Snapshots[0].ID") + 1
    assert f"holds a nil map, so the write at line {write} (`ws.sessionHome[req.SessionID] = ...`) panics" in f.message
    assert "every endpoint scores 0" in f.message, f.message
    assert "dead in the plugin" not in f.message, f.message


AFFINITY = "type WeightedScoring struct {{\n\tsessionHome map[string]string\n}}\n\n" + ROUTE
BONUSES = """\tscores := make(map[string]float64)
\thome := ws.sessionHome[req.SessionID]
\tfor _, snap := range state.Snapshots {
\t\t// Session affinity: stay on the session's home unless it is overloaded.
\t\tif snap.ID == home && snap.QueueDepth < 6 {
\t\t\tscores[snap.ID] += 0.4
\t\t}
\t\tif snap.BatchSize > 12 {
\t\t\tscores[snap.ID] -= 0.3
\t\t}
\t\tif len(req.InputTokens) > 2048 && snap.FreeKVBlocks < 500 {
\t\t\tscores[snap.ID] -= 0.5
\t\t}
\t}
\t_ = scores"""


def test_a_literal_added_to_a_score_is_a_bonus_or_penalty_not_a_step_of_its_conditions_signal(analyze_text, dictionary):
    """Found by a researcher: p1's +0.4 session-home bonus became `queueDepthStep` and the config said it "acts on
    the same value and must move with" queueDepthThreshold, advice to rescale an affinity bonus with a queue
    threshold; p2's -0.5 long-prompt penalty became `inputTokensStep`. A literal added to a score is named for its
    role (for a session's home: sessionBonus), says what it does, and moves with no threshold."""
    from bot.golang.params import param_specs
    from bot.golang.plugin_docs import config_notes, same_step

    an = analyze_text(AFFINITY.format(body=BONUSES))
    docs = {s.name: s.doc for s in param_specs(an, None, False)}
    assert {"sessionBonus", "batchSizePenalty", "inputTokensPenalty", "queueDepthThreshold"} <= set(docs), docs
    assert not [n for n in docs if n.endswith("Step")], docs
    assert docs["sessionBonus"].startswith("SessionBonus is the bonus added to the score when its condition holds")
    assert "The condition reads each endpoint's waiting requests; the request's session header." in docs["sessionBonus"]
    assert docs["batchSizePenalty"].startswith("BatchSizePenalty is the penalty subtracted from the score")
    assert same_step(an, ["queueDepthThreshold"]) == [] and same_step(an, ["sessionBonus"]) == []
    note = config_notes(an, dictionary, {}, {})["queueDepthThreshold"]
    assert "simulator scale" in note and "must move with" not in note, note


@pytest.mark.parametrize(
    "body, says",
    [
        (BONUSES, "The evolved code uses its value (a key or a comparison), not only its presence."),
        (
            '\tif req.SessionID != "" {\n\t\treturn NewRoutingDecision("pod-0", "session")\n\t}',
            'only its presence (!= "")',
        ),
    ],
    ids=["map-key", "presence"],
)
def test_the_session_header_comment_says_how_the_program_uses_it(analyze_text, dictionary, body, says):
    """Found by a researcher: p1 keys ws.sessionHome by req.SessionID, yet the adapter comment and the report said
    "only its presence (!= "") is meaningful", telling a reviewer session affinity cannot work. The dictionary says
    the value is passed through; the adapter line says whether the program reads the value or only its presence."""
    from bot.golang.adapter import adapter_lines

    an = analyze_text(AFFINITY.format(body=body))
    [line] = [a for a in adapter_lines(an, dictionary)[1] if a.signal == "SessionID"]
    assert says in line.comment and "its value passed through" in line.comment, line.comment
    assert "is meaningful" not in dictionary.signal("SessionID").llmd.source


# ---- imports the translator adds by itself ----------------------------------------------


def test_auto_imports_are_the_packages_safety_allows(analyze_text):
    """A pasted function's unimported packages are imported by analyze (plugin) and the BLIS mirror alike, and
    only ones the safety check allows: `sync` (refused: goroutines only) is never imported by itself."""
    from bot.golang.blis_mirror import _program_text
    from bot.golang.safety import ALLOWED_IMPORTS, IMPLICIT_IMPORTS, check_evolved_text
    from bot.golang.source import parse_evolved_source

    uses = "\n".join(f"\t_ = {name}.X" for name in sorted(IMPLICIT_IMPORTS))
    an = analyze_text(ROUTE.format(body=uses + "\n\tvar mu sync.Mutex\n\t_ = mu"))
    assert an.imports == IMPLICIT_IMPORTS
    assert set(an.imports.values()) == set(ALLOWED_IMPORTS)
    mirrored = _program_text(parse_evolved_source(ROUTE.format(body=uses + "\n\tvar mu sync.Mutex"), "p.go"))
    assert mirrored.split("import (", 1)[1].split(")", 1)[0].split() == [f'"{p}"' for p in sorted(ALLOWED_IMPORTS)]
    refused = check_evolved_text(ROUTE.format(body="\tvar mu sync.Mutex\n\t_ = mu"), "p.go")
    assert [f.check for f in refused] == ["safety.unimported-package"]


CLASS_SWITCH = """\tvar k int
\tvar kvCap float64
\tswitch req.SLOClass {
\tcase "critical":
\t\tk, kvCap = 1, 0.7
\tcase "standard":
\t\tk, kvCap = 2, 0.85
\tdefault:
\t\tk, kvCap = 0, 0.9
\t}
\tscores := make(map[string]float64)
\tfor i, snap := range state.Snapshots {
\t\tif i < k && snap.KVUtilization > kvCap {
\t\t\tscores[snap.ID] -= 0.5
\t\t}
\t}
\t_ = scores"""

CONDITION_SWITCH = """\tfor _, r := range requests {
\t\tvar w float64
\t\tswitch {
\t\tcase r.SLOClass == "critical":
\t\t\tw = 3
\t\tcase r.Priority < 0:
\t\t\tw = 0.5
\t\tdefault:
\t\t\tw = 1
\t\t}
\t\tr.Priority += int(w)
\t}"""


@pytest.mark.parametrize(
    "program, expected",
    [
        (ROUTE.format(body=CLASS_SWITCH), {"criticalKValue": 1, "standardKValue": 2, "otherKValue": 0}),
        (
            ORDER.format(body=CONDITION_SWITCH),
            {"priorityHigh": 3, "priorityLow": 0.5, "otherPriority": 1},
        ),
    ],
    ids=["switch-on-class", "switch-on-conditions"],
)
def test_every_value_a_switch_assigns_per_case_is_a_parameter_trivial_ones_too(analyze_text, program, expected):
    """Found by a researcher (p3 `case "critical": k, kvCap = 1, 0.7`, p4 `default: w = 1`): a value a switch assigns
    per case is a parameter (standardKValue), yet 1 and 0 were dropped as trivial, so they were neither parameters nor
    listed as kept literals, though the Parameters comment promises every kept number is. As a per-class table's
    entries are all listed (a table is data), every case's value is a parameter, so a reviewer sees each class's.
    The default of a switch on conditions runs when none holds, so it depends on what they compare, as its cases do."""
    an = analyze_text(program)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {p: params.get(p) for p in expected} == expected, params
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings


WEIGHED = """\tscores := make(map[string]float64)
\tfor _, snap := range state.Snapshots {
\t\tscores[snap.ID] = w * float64(snap.QueueDepth)
\t}
\t_ = scores"""
SWITCH_RETURN = """\tswitch c {
\tcase "critical":
\t\treturn 0.9
\tcase "standard":
\t\treturn 0.5
\tdefault:
\t\treturn 0.2
\t}"""
IF_RETURN = """\tif c == "critical" {
\t\treturn 0.9
\t} else if c == "standard" {
\t\treturn 0.5
\t}
\treturn 0.2"""
IF_ASSIGN = """\tvar w float64
\tif req.SLOClass == "critical" {
\t\tw = 0.9
\t} else if req.SLOClass == "standard" {
\t\tw = 0
\t} else {
\t\tw = 1
\t}
"""


def _weight_for(body: str, receiver: str = "") -> str:
    return f"func {receiver}weightFor(c string) float64 {{\n{body}\n}}\n\n"


def _closure(body: str) -> str:
    return "\tweight := func(c string) float64 {\n" + body.replace("\n", "\n\t").replace("\t", "\t", 1) + "\n\t}\n"


PER_CLASS_WEIGHT = {"criticalWeight": 0.9, "standardWeight": 0.5, "otherWeight": 0.2}


@pytest.mark.parametrize(
    "program, expected",
    [
        (
            _weight_for(SWITCH_RETURN) + ROUTE.format(body="\tw := weightFor(req.SLOClass)\n" + WEIGHED),
            PER_CLASS_WEIGHT,
        ),
        (
            _weight_for(SWITCH_RETURN, "(ws *WeightedScoring) ")
            + ROUTE.format(body="\tw := ws.weightFor(req.SLOClass)\n" + WEIGHED),
            PER_CLASS_WEIGHT,
        ),
        (ROUTE.format(body=_closure(SWITCH_RETURN) + "\tw := weight(req.SLOClass)\n" + WEIGHED), PER_CLASS_WEIGHT),
        (_weight_for(IF_RETURN) + ROUTE.format(body="\tw := weightFor(req.SLOClass)\n" + WEIGHED), PER_CLASS_WEIGHT),
        (ROUTE.format(body=_closure(IF_RETURN) + "\tw := weight(req.SLOClass)\n" + WEIGHED), PER_CLASS_WEIGHT),
        # `w` set per class is named by its use, `w * QueueDepth` (short_locals.used_for)
        (
            ROUTE.format(body=IF_ASSIGN + WEIGHED),
            {"criticalQueueDepthWeight": 0.9, "standardQueueDepthWeight": 0, "otherQueueDepthWeight": 1},
        ),
    ],
    ids=[
        "switch-return-helper",
        "switch-return-method",
        "switch-return-closure",
        "if-return-helper",
        "if-return-closure",
        "if-assign",
    ],
)
def test_a_value_returned_per_class_or_chosen_by_an_if_chain_is_a_parameter_like_a_switch_case_s(
    analyze_text, program, expected
):
    """Found at gate 1 (a researcher's weightFor): the numbers a switch on the class assigns per case are
    parameters named for the class (criticalWValue), but the same table written as a function returning one number
    per class (`case "critical": return 0.9`), or as an if/else chain on the class, stayed live literals: nobody
    could tune them at gate 1 and the generated tests did not cover them. Each is now that class's parameter,
    0 and 1 too, and the fallback (a default, a last else, the return after the chain) is `other`."""
    an = analyze_text(program)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {p: params.get(p) for p in expected} == expected, params
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings


@pytest.mark.parametrize(
    "program",
    [
        ROUTE.format(
            body=_closure(SWITCH_RETURN).replace("(c string)", "(ws string)").replace("switch c", "switch ws")
            + "\tw := weight(req.SLOClass)\n"
            + WEIGHED
        ),
        _weight_for(SWITCH_RETURN)
        + ROUTE.format(
            body="\tpick := func(ws string) float64 { return weightFor(ws) }\n\tw := pick(req.SLOClass)\n" + WEIGHED
        ),
    ],
    ids=["closure-parameter-hides-the-receiver", "helper-called-where-the-receiver-is-hidden"],
)
def test_a_per_class_value_keeps_its_literal_where_a_closure_parameter_hides_the_receiver(analyze_text, program):
    """`ws.params.X` inside `func(ws string)` would read the string: the number stays, and the reason says why."""
    an = analyze_text(program)
    kept = {th.value: th.reason for th in an.thresholds if th.role == "value"}
    assert set(kept) == {0.9, 0.5, 0.2} and all(kept.values()), kept
    assert not [th.param for th in an.thresholds if th.role == "value" and th.param]


TUPLE_RETURN = """\tif c == "critical" {
\t\treturn 0.2, 0.6
\t} else if c == "sheddable" || c == "batch" {
\t\treturn 0.5, 0.1
\t}
\treturn 0.3, 0.4"""
TUPLE_WEIGHED = """\tscores := make(map[string]float64)
\tfor _, snap := range state.Snapshots {
\t\tscores[snap.ID] = kvW*(1-snap.KVUtilization) + queueW*float64(snap.QueueDepth)
\t}
\t_ = scores"""
PER_CLASS_TUPLE = {
    "criticalKVWeight": 0.2,
    "criticalQueueWeight": 0.6,
    "sheddableKVWeight": 0.5,
    "sheddableQueueWeight": 0.1,
    "otherKVWeight": 0.3,
    "otherQueueWeight": 0.4,
}


@pytest.mark.parametrize(
    "program",
    [
        "func classSignalWeights(c string) (kvW, queueW float64) {\n"
        + TUPLE_RETURN
        + "\n}\n\n"
        + ROUTE.format(body="\tkvW, queueW := classSignalWeights(req.SLOClass)\n" + TUPLE_WEIGHED),
        "func classSignalWeights(c string) (float64, float64) {\n"
        + TUPLE_RETURN
        + "\n}\n\n"
        + ROUTE.format(body="\tkvW, queueW := classSignalWeights(req.SLOClass)\n" + TUPLE_WEIGHED),
        ROUTE.format(
            body="\tweights := func(c string) (float64, float64) {\n"
            + TUPLE_RETURN.replace("\n", "\n\t").replace("\t", "\t\t", 1)
            + "\n\t}\n\tkvW, queueW := weights(req.SLOClass)\n"
            + TUPLE_WEIGHED
        ),
    ],
    ids=["helper-named-results", "helper-named-by-the-call", "closure-named-by-the-call"],
)
def test_each_value_of_a_tuple_returned_per_class_is_the_class_s_parameter_named_by_its_result(analyze_text, program):
    """Trial p2: `func classSignalWeights(class string) (kvW, queueW, cacheW float64)` returned three weights per
    class (`return 0.2, 0.6, 0.2`); lead7 lifted one number returned per class only, so its 12 numbers stayed
    literals with no finding at all. Each position is now the class's parameter, named by the result's name (or,
    unnamed, by the variable the call assigns it to), whose trailing letter `W` says its role by its use
    (`kvW*(...)`: a weight), with Go's initialisms: criticalKVWeight."""
    an = analyze_text(program)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {p: params.get(p) for p in PER_CLASS_TUPLE} == PER_CLASS_TUPLE, params
    assert not [f for f in an.findings if f.check == "translate.unlisted-literal"], an.findings
    dead = [f for f in an.findings if f.check == "hazard.unreachable-slo-branch"]
    assert dead and "batch" in dead[0].message, an.findings  # the dead alternative is still flagged


def test_a_tuple_returned_per_class_that_cannot_be_lifted_is_listed_as_an_unlisted_literal(analyze_text):
    """Returned through another function (`return classWeights(r.SLOClass)`), no variable names the positions,
    so they stay literals; each is then listed (`translate.unlisted-literal`), 0 and 1 too, as a table's entries:
    a live literal is a parameter or listed. lead7 listed no number a function returns."""
    program = (
        "func classWeights(c string) (float64, float64) {\n"
        + TUPLE_RETURN.replace("0.6", "1").replace("0.3, ", "0, ")
        + "\n}\n\n"
        + "func weightsOf(r *Request) (float64, float64) {\n\treturn classWeights(r.SLOClass)\n}\n\n"
        + ROUTE.format(body="\tkvW, queueW := weightsOf(req)\n" + TUPLE_WEIGHED)
    )
    an = analyze_text(program)
    lifted = [th for th in an.thresholds if th.role == "value"]
    unlisted = [f for f in an.findings if f.check == "translate.unlisted-literal"]
    listed = sorted(float(m) for f in unlisted for m in re.findall(r"the number (\S+) ", f.message))
    assert not lifted and listed == [0, 0.1, 0.2, 0.4, 0.5, 1], (lifted, unlisted)
    assert all("classWeights" in f.message for f in unlisted), unlisted


def test_a_per_class_weight_returned_for_a_signal_llm_d_cannot_provide_is_a_constant_not_a_parameter(analyze_text):
    """Trial p2's third weight, `cacheW`, multiplies only `snap.CacheHitRate`, which the plugin holds at 0: whatever
    the class chose, it changes no decision, so (as for any number acting only on such a signal, dead_branches)
    each class's entry is an evolved.go constant, not a knob documented as doing nothing. The class that picks an
    entry is not what it acts on; the KV and queue weights act on live signals and stay parameters."""
    program = (
        "func classSignalWeights(c string) (kvW, queueW, cacheW float64) {\n"
        + TUPLE_RETURN.replace("0.2, 0.6", "0.2, 0.6, 0.2").replace("0.5, 0.1", "0.5, 0.1, 0.4")
        + ", 0.3\n}\n\n"
        + ROUTE.format(
            body="\tkvW, queueW, cacheW := classSignalWeights(req.SLOClass)\n"
            + TUPLE_WEIGHED.replace("float64(snap.QueueDepth)", "float64(snap.QueueDepth) + cacheW*snap.CacheHitRate")
        )
    )
    an = analyze_text(program)
    params = {th.param: th.value for th in an.thresholds if th.param}
    assert {p: params.get(p) for p in PER_CLASS_TUPLE} == PER_CLASS_TUPLE, params
    constants = {th.constant: (th.value, th.inert) for th in an.thresholds if th.constant}
    inert = ("CacheHitRate",)
    assert constants == {
        "criticalCacheWeight": (0.2, inert),
        "sheddableCacheWeight": (0.4, inert),
        "otherCacheWeight": (0.3, inert),
    }, constants
    kv = next(th for th in an.thresholds if th.param == "criticalKVWeight")
    assert kv.signals == ["KVUtilization", "SLOClass"] and kv.chosen_by == ("SLOClass",), kv
    assert [f for f in an.findings if f.check == "hazard.unreachable-slo-branch" and "batch" in f.message]
