"""Gate 2: the planned traffic exercises what the plugin decides by (split from ``bot.review.gate2``).

- a request class (``G2.priority-exercised``): a class-reading policy judged on cells that send one priority;
- the request's TTFT target, the header it arrives in (``G2.slo-header-sent``), and a target that varies
  (``G2.slo-target-constant``): one fixed header on every request leaves a deadline order nothing to order;
- the request's session, the header it arrives in (``G2.session-header-sent``): with none, every request is
  sessionless and a session-affinity program's state is never keyed;
- the request's tenant, the fairness ID (``G2.tenants-exercised``, ``bot.review.gate2_tenants``): one per cell.
"""

from __future__ import annotations

from bot.bench.layout import split_condition
from bot.bench.mix_only import MIX_ONLY
from bot.bench.priority_plan import UNEXERCISED_FIX, sheds_nothing
from bot.bench.set_aside import apply_set_aside, mix_only
from bot.directives import exclude_command
from bot.model import Finding, PolicyKind, Severity, Track, TranslationSummary
from bot.review.gate2_orders import order_inert, priority_exercised

#: What the single-priority cells leave unexercised, per kind that is not an admitter.
_CLASS_DECISION = {
    PolicyKind.SCHEDULING: (
        "scheduler",
        "class-dependent order",
        (
            "every request is of one class (so gets the same class weight or target), and the plugin places "
            "requests by queue length and its other terms only"
        ),
    ),
    PolicyKind.ROUTING: ("router", "class-dependent score", "the runs measure the plugin on that one class only"),
}


def _class_exercised(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """A policy that decides by the request's class, judged on cells that send every request at one priority.

    The plan adds llm-d-benchmark's priority mix for an admitter only (``bot.bench.priority_plan``): it is
    compared by each class's admit rate (``bot.stats.admission``). A scheduler's or router's class-dependent
    order or score shows in per-class latency, which the mix is not judged by, so such a policy gets no mix and
    its hypotheses are decided on the single-priority cells: said before the GPU time is spent, so a person
    decides whether that is worth it.
    An admitter's shedding order is judged on the mix, but only that one hypothesis (``_admitter_cells``).
    """
    from bot.bench.priority_plan import CLASS_SIGNALS, translated_signals

    read = [s for s in CLASS_SIGNALS if s in translated_signals(summary)]
    if ctx.request.kind is PolicyKind.ADMISSION:
        return _admitter_cells(ctx, hyps, read, summary)
    if ctx.request.kind is PolicyKind.SCHEDULING and (inert := order_inert(ctx, hyps, summary)):
        return inert  # shown by the translation and the plan: stage 5 sets those hypotheses aside
    claims = [h for _, h in hyps if h.track is Track.A and h.benchmarked and set(h.signals) & set(CLASS_SIGNALS)]
    if not read and not claims:
        return []
    single = "every planned cell sends all its requests at one priority (no InferenceObjective: priority 0)"
    who, decision, left = _CLASS_DECISION[ctx.request.kind]
    later = (
        "the plan has no priority mix for it: a mix is judged by per-class admit rate only, which decides nothing "
        f"for a {who}, not by the per-class latency a class-dependent order or score changes"
    )
    names = sorted({*read, *(s for h in claims for s in h.signals if s in CLASS_SIGNALS)})
    ids = ", ".join(h.id for h in claims)
    judged = f"; {ids} (whose mechanism reads the class) would be judged on that traffic" if claims else ""
    message = (
        f"{single}, so the {who}'s {decision} (it reads {', '.join(names)}) is never exercised: {left}{judged}; {later}"
    )
    drop = f", drop the class claims from the plan ({exclude_command(ctx.home, ids, ctx.work)})"
    fix = (
        f"approve only if measuring the {who} on single-priority traffic is worth the GPU time (say so as the "
        f"reason){drop if claims else ''}, or reject and benchmark per-class latency on a priority mix by hand"
    )
    return [priority_exercised(ctx, message, fix)]


def _admitter_cells(ctx, hyps, read: list[str], summary: TranslationSummary) -> list[Finding]:
    """An admitter that decides by the class, whose benchmarked claims and guards are judged on the cells.

    Every cell's requests carry priority 0, which the plugin reads as class ``standard`` (Map B ``SLOClass``):
    the cells exercise its admit rule for that one class. An admitter that keeps protected classes admitted
    (a01, a02) then never sheds there and measures like the baseline, so a Track A claim confirmed on those
    cells would be noise, and the GPU time a no-op. The priority mix decides only the shedding-order hypothesis
    (``bot.stats.shedding``), not these; judging them on the mix would need per-class latency the mix is not
    judged by. Shown by the translation (``priority_plan.sheds_nothing``), it is a fact and stage 5 reports those
    hypotheses not measurable on these cells; else what to check. The first clause is the point (the PR's Known
    issues keep only that).
    """
    if not read:
        return []
    judged = [h for _, h in hyps if h.benchmarked]  # the shedding order is not: it is planned on the mix
    if not any(h.track in (Track.A, Track.C) for h in judged):
        return []
    ids = ", ".join(h.id for h in judged)
    claims = [h.id for h in judged if h.track is Track.A]
    drop = f", drop the claims ({exclude_command(ctx.home, ', '.join(claims), ctx.work)})" if claims else ""
    established = sheds_nothing(summary)
    if established:
        message = (
            "the planned cells cannot measure this admitter (it never sheds their priority-0 traffic); "
            f"{ids} will be reported not measurable on these cells, not judged: {established} (it reads "
            f"{', '.join(read)}); the plan's priority mix decides only the shedding order (per-class admit rate)"
        )
        if mix_only(ctx.request, apply_set_aside([h for _, h in hyps], established)):
            # Every benchmarked hypothesis is set aside and the mix still runs: stage 4 plans it alone.
            fix = (
                f"{UNEXERCISED_FIX}, or reject; as planned they take no alpha, no cell and no GPU time: stage 4 "
                f"plans {MIX_ONLY} (it decides the shedding order), so approving as is spends GPU time on the mix "
                "alone, and excluding some or all of them changes neither the plan nor its GPU time, only drops "
                "them from the report; this check stays until you approve (say why as the reason) or reject"
            )
            return [priority_exercised(ctx, message, fix)]
        # Every benchmarked hypothesis is set aside and no mix runs, so stage 4 keeps their cells (a plan with
        # nothing to run is none): excluding some leaves the rest on the same cells, excluding all leaves no plan.
        fix = (
            f"{UNEXERCISED_FIX}, or reject; approving as is spends the plan's cells' GPU time on runs that decide "
            "none of them (only the priority mix decides the shedding order), and no `exclude:` shrinks that: "
            "excluding some leaves the rest on the same cells, and gate 2 refuses excluding all of them (stage 4 would "
            "have nothing to plan)"
        )
        return [priority_exercised(ctx, message, fix)]
    rows = summary.behaviour
    if rows.get("idle:0") == "reject":
        return []  # a fresh plugin sheds `standard` even on an idle pool: every cell exercises its shedding
    if summary.stateful or rows.get("overloaded:0") == "reject":
        return [priority_exercised(ctx, *_load_unknown(ctx, ids, read, summary, judged, claims))]
    message = (
        f"the planned cells may measure an admitter that sheds nothing, like the baseline; {ids} are judged on them: "
        "every planned cell sends all its requests at one priority (no InferenceObjective: priority 0), which the "
        f"admitter reads ({', '.join(read)}) as class `standard`, so if its admit rule keeps `standard` admitted "
        "(protected traffic is never shed) the cells show noise; the plan's priority mix decides only the "
        "shedding order (per-class admit rate), not these claims and guards"
    )
    fix = (
        "check the admitter's rule for class `standard` (priority 0): approve only if it can shed that class, or "
        f"measuring it on single-priority traffic is worth the GPU time (say so as the reason){drop}, or reject "
        "and benchmark the claims on a priority mix by hand"
    )
    return [priority_exercised(ctx, message, fix)]


#: The first clause of ``_load_unknown``'s message: what the PR's Known issues keep of it.
LOAD_UNKNOWN = "the bot cannot tell whether the planned cells load this admitter enough to shed them"


def _pool(name: str) -> str:
    """'32 waiting requests, 64 running and a 97%-full KV cache on every endpoint': a behaviour row's pool, as the
    generated test builds it (``probes.ADMISSION_POOLS``)."""
    from bot.golang.probes import ADMISSION_POOLS

    m = ADMISSION_POOLS[name]
    return (
        f"{m['WaitingQueueSize']} waiting requests, {m['RunningRequestsSize']} running and a "
        f"{m['KVCacheUsagePercent']:.0%}-full KV cache on every endpoint"
    )


def _load_unknown(ctx, ids: str, read: list[str], summary: TranslationSummary, judged, claims) -> tuple[str, str]:
    """(message, fix) for an admitter that can shed the cells' priority-0 traffic at some load, which the plan cannot
    say the cells reach: its fresh-plugin rows reject priority 0 on an overloaded pool, or it keeps state between
    requests (DA4 p3: a per-tenant token bucket sheds by volume, which a fresh plugin deciding one request never
    shows).

    trial4 (a hysteresis shedder): the finding said its rows "cannot show whether the cells' load drives that state
    to shed" beside a row showing a fresh plugin shedding `standard`, and asked for a check "against the cells'
    load" with neither the load the rule needs nor what the cells reach. The rows are used for what they show (the
    load it sheds `standard` at, and the load it admits it at); the plan has no estimate of the cells' per-pod
    queues or KV use (``bot.review.saturation``: nothing before a run says whether a rate saturates the stack), so
    the finding says the bot cannot tell, and what settles it: a pilot run, then approve, or `exclude:` the claims
    if the cells never shed. The cells are never called noise on the rows' account."""
    from bot.bench.order_cells import deployed_parameters
    from bot.hypotheses.saturation import cells_text, queue_cells

    rows = summary.behaviour
    history = "it keeps state between requests (the rows' fresh plugin has seen no earlier requests)"
    if rows.get("overloaded:0") == "reject":
        idle = f" and admits it on an idle one ({_pool('idle')})" if rows.get("idle:0") == "admit" else ""
        shown = (
            "its behaviour rows show a fresh plugin sheds class `standard` (priority 0) on an overloaded pool "
            f"({_pool('overloaded')}){idle}, so it sheds the cells' traffic only where their load comes near that"
            + (
                f"; {history}, so what it has seen can move where it starts and stops shedding"
                if summary.stateful
                else ""
            )
        )
    elif rows:
        shown = (
            "its behaviour rows show a fresh plugin admits class `standard` (priority 0) even on an overloaded pool "
            f"({_pool('overloaded')}), and {history}, so only what it has seen can make it shed `standard` (a "
            "tenant's volume, a learned load)"
        )
    else:
        shown = f"{history}, and no behaviour rows were recorded (the harness did not run)"
    cells = queue_cells(ctx.request, judged)
    where, highest = cells_text(cells), cells_text({w: rates[-1:] for w, rates in cells.items()})
    message = (
        f"{LOAD_UNKNOWN}; {ids} are judged on them: every planned cell sends all its requests at one priority (no "
        f"InferenceObjective: priority 0), which the admitter reads ({', '.join(read)}) as class `standard`; {shown}; "
        f"the plan holds no estimate of the cells' per-pod waiting requests or KV-cache use ({where}), so the bot "
        "cannot tell whether they get there; the plan's priority mix decides only the shedding order (per-class "
        "admit rate), not these claims and guards"
    )
    params = {
        **summary.thresholds,
        **deployed_parameters(ctx.read(ctx.paths.epp_config(summary.plugin_type)), summary.plugin_type),
    }
    rule = ", ".join(f"`{k}` = {v:g}" if isinstance(v, int | float) else f"`{k}` = {v}" for k, v in params.items())
    compare = (
        f" (the evolved code's rule; its parameters as deployed: {rule})" if rule else " (the evolved code's rule)"
    )
    drop = (
        f", or drop the claims if they never do ({exclude_command(ctx.home, ', '.join(claims), ctx.work)})"
        if claims
        else ""
    )
    tenants = ", and mind one fairness ID per cell (G2.tenants-exercised)" if summary.stateful else ""
    fix = (
        f"settle it with a pilot run before approving: one repetition of both arms at each workload's highest rate "
        f"({highest}; llm-d-benchmark, by hand): the baseline's pods' `vllm:num_requests_waiting` and KV-cache use "
        "show the load the cells bring, and the evolved arm's rejected requests (HTTP 500 from an Admitter plugin) "
        f"whether it sheds `standard` there; compare that load with the load it sheds `standard` at{compare}"
        f"{tenants}; approve if the cells reach it (say so as the reason)"
        f"{drop}, or reject and benchmark the claims by hand on traffic that does (or on a priority mix, if it never "
        "sheds `standard`)"
    )
    return message, fix


#: Signals the plugin reads from a request header the benchmark's client must send (inference-perf's
#: ``api.headers``). SessionID is not one: inference-perf sends a session header its own way
#: (``api.session_id_header_key`` with data that makes sessions), and only its presence counts
#: (``_session_header_sent``).
HEADER_SIGNALS = ("SLOTargetUs",)


def traffic_findings(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """Whether the planned traffic exercises what the plugin decides by (the class, the TTFT target, the session,
    the tenant). The tenant's check lives in ``gate2_tenants``, which reads this module's profile helpers."""
    from bot.review.gate2_tenants import tenants_exercised

    return (
        _class_exercised(ctx, hyps, summary)
        + _slo_header_sent(ctx, hyps, summary)
        + _session_header_sent(ctx, hyps, summary)
        + tenants_exercised(ctx, hyps, summary)
    )


def _planned_workloads(request, hypotheses) -> list[str]:
    """The workloads the benchmarked ``hypotheses`` are judged on (every workload when none is planned yet)."""
    planned = {split_condition(w)[0] for h in hypotheses if h.benchmarked for w in h.workloads}
    return [w.name for w in request.workloads if w.name in planned] or [w.name for w in request.workloads]


#: The pseudo-queue parameter holding the modelled waiting requests' TTFT target (``bot.golang.params``).
INCUMBENT_TARGET = "incumbentSLOTargetMs"

#: Why one target on every request orders nothing by deadline, and what would (both findings say it).
NO_ORDER = "one target on every request exercises no deadline order"
MIX = (
    "a deadline order needs requests with a mix of targets, which a workload's `api.headers` (the same on every "
    "request) cannot send: benchmark a mix by hand"
)

#: How a gate-1 parameter is set once gate 1 is approved (a gate is decided again only until it is approved).
AT_GATE_1 = "a gate-1 directive: with gate 1 approved, it takes a new promotion, set at its gate 1"


def _slo_header_sent(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """A policy that reads the request's TTFT target, benchmarked by workloads none of which sends the header the
    plugin reads it from: every request reads 0 (no target), so the runs measure the plugin without that term.
    inference-perf sends fixed headers with every request (``api.headers``), so the fix is a workload override,
    and it sends one target per workload: a scheduler's deadline order then meets only that target
    (``_constant_target``)."""
    from bot.golang.adapter import request_headers

    out = []
    workloads = _planned_workloads(ctx.request, [h for _, h in hyps])
    for signal in HEADER_SIGNALS:
        entry = ctx.dictionary.signal(signal)
        if signal not in summary.signals or signal in summary.untranslatable or entry is None or entry.llmd is None:
            continue
        names = request_headers(entry.llmd.expr)
        if not names or not workloads:
            continue
        sent = {name: v for name in workloads if (v := _header_sent(ctx.request, name, names)) is not None}
        if sent:
            out += _constant_target(ctx, names[0], sent)
            continue
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G2.slo-header-sent",
                file=ctx.paths.hypotheses_dir,
                message=(
                    f"the plugin reads {signal} from the request header `{names[0]}`, and no planned workload "
                    f"({', '.join(workloads)}) sends it: every request reads 0 (no target), so the runs measure the "
                    "plugin without its SLO term"
                ),
                fix=(
                    f'add the header to a workload\'s `overrides` in promotion.yaml, e.g. `api.headers.{names[0]}: "500"` '
                    "(the TTFT target in milliseconds that inference-perf sends with every request of it) and "
                    f"`api.slo_ttft_header: {names[0]}` (so inference-perf reports attainment of the same target)"
                    + (
                        f", with `param {INCUMBENT_TARGET}: 500` (the modelled waiting requests' target: a request "
                        "whose target is tighter than theirs scores every endpoint alike, no load signal; "
                        f"{AT_GATE_1}), knowing the plugin then places requests by queue length, as queue-scorer "
                        f"does; {NO_ORDER}: {MIX}"
                        if ctx.request.kind is PolicyKind.SCHEDULING
                        else ""
                    )
                    + "; or approve saying why the plugin without its SLO term is worth measuring"
                ),
            )
        )
    return out


def _profile(request, workload: str) -> dict:
    """The workload's inference-perf profile as the plan writes it; empty when it cannot be written (reported
    where the plan is made)."""
    from bot.bench.experiment import workload_profile
    from bot.bench.plan import PlanError

    try:
        profile = workload_profile(request, workload)
    except PlanError:
        return {}
    return profile if isinstance(profile, dict) else {}


def _section(profile: dict, key: str) -> dict:
    value = profile.get(key)
    return value if isinstance(value, dict) else {}


#: The signal a session-affinity program reads (Map B: the request header ``x-session-token``).
SESSION_SIGNAL = "SessionID"

#: inference-perf's key naming the request header it sends each request's session id in (0.6.1, the harness
#: image's: ``APIConfig.session_id_header_key``); unset, no session id is sent. Newer releases add
#: ``api.session_token_header_key``, which echoes a token the server returns: this plugin returns none.
SESSION_KEY = "session_id_header_key"

#: inference-perf 0.6.1's data types whose every request carries a session id for that header (``session_id`` or
#: ``user_session_id``); shared_prefix does only with ``enable_multi_turn_chat``, the rest (random, synthetic, ...)
#: never.
SESSION_DATA = ("conversation_replay", "otel_trace_replay", "weka_trace_replay")
MULTI_TURN = "enable_multi_turn_chat"


def _session_header_sent(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """A plugin that reads the request's session, benchmarked by workloads none of which sends the header it reads
    it from: every request is sessionless (SessionID ""), so the runs measure the plugin without its session logic
    (a session's home endpoint never kept, a session bonus never given).

    inference-perf sends a session id only in the header ``api.session_id_header_key`` names, and only for data
    that makes sessions (``_makes_sessions``). A fixed ``api.headers`` entry of that name sends one token on every
    request: all of a workload's traffic is one session (``G2.session-header-fixed``), not the many sessions the
    program was evolved on. The fix names the keys on a planned workload."""
    from bot.golang.adapter import request_headers

    if SESSION_SIGNAL not in summary.signals or SESSION_SIGNAL in summary.untranslatable:
        return []
    entry = ctx.dictionary.signal(SESSION_SIGNAL)
    if entry is None or entry.llmd is None or not (names := request_headers(entry.llmd.expr)):
        return []
    workloads = _planned_workloads(ctx.request, [h for _, h in hyps])
    profiles = {name: _profile(ctx.request, name) for name in workloads}
    if not profiles or any(_sessions_sent(p, names) for p in profiles.values()):
        return []
    header = names[0]
    claims = [h for _, h in hyps if h.benchmarked and SESSION_SIGNAL in h.signals]
    judged = (
        f"; {', '.join(h.id for h in claims)} (whose mechanism reads the session) would be judged on that traffic"
        if claims
        else ""
    )
    # the workloads the session claims are judged on first: the fix makes their traffic carry sessions
    on_claims = {split_condition(w)[0] for h in claims for w in h.workloads}
    ordered = dict(sorted(profiles.items(), key=lambda item: item[0] not in on_claims))
    fixed = {name: token for name, p in profiles.items() if (token := _fixed_token(p, names)) is not None}
    if fixed:
        tokens = "; ".join(f"{name} sends the one token `{token}`" for name, token in fixed.items())
        message = (
            f"the plugin reads {SESSION_SIGNAL} from the request header `{header}`, and the planned workloads send "
            f"it only as a fixed header ({tokens}): every request of a workload is then one session, so a session's "
            f"home endpoint takes all of its traffic and a bonus for having a session holds everywhere, unlike the "
            f"many sessions BLIS evolved the logic on{judged}"
        )
        fix = f"remove `api.headers.{header}` from {', '.join(fixed)}'s `overrides` and " + _session_fix(
            ordered, header
        )
        return [_finding(ctx, "G2.session-header-fixed", message, fix)]
    unsent = "; ".join(u for name, p in profiles.items() if (u := _why_unsent(name, p, header)))
    message = (
        f"the plugin reads {SESSION_SIGNAL} from the request header `{header}`, and no planned workload "
        f"({', '.join(workloads)}) sends it: every request has no session, so the runs measure the plugin without "
        f"its session logic{judged}" + (f"; {unsent}" if unsent else "")
    )
    return [_finding(ctx, "G2.session-header-sent", message, _session_fix(ordered, header))]


def _finding(ctx, check: str, message: str, fix: str) -> Finding:
    return Finding(severity=Severity.IMPORTANT, check=check, file=ctx.paths.hypotheses_dir, message=message, fix=fix)


def _makes_sessions(profile: dict) -> bool:
    """Whether inference-perf 0.6.1 gives the profile's requests a session id: a replay type, or shared_prefix
    with multi-turn chat (each of its users one session, ``user_session_<n>``, the same on every turn)."""
    data = _section(profile, "data")
    kind = str(data.get("type", ""))
    if kind in SESSION_DATA:
        return True
    return kind == "shared_prefix" and _true(_section(data, "shared_prefix").get(MULTI_TURN))


def _true(value) -> bool:
    """A YAML value pydantic reads as true (inference-perf's config is pydantic: ``"true"`` and 1 count)."""
    return str(value).strip().lower() in ("true", "1", "yes", "on", "t", "y")


def _session_key(profile: dict) -> str:
    return str(_section(profile, "api").get(SESSION_KEY) or "").lower()


def _sessions_sent(profile: dict, names: list[str]) -> bool:
    """Whether the profile's requests carry each session's own id in one of ``names`` (lower-cased, as the EPP
    reads them)."""
    return _session_key(profile) in names and _makes_sessions(profile)


def _fixed_token(profile: dict, names: list[str]) -> str | None:
    """The one token a fixed ``api.headers`` entry of one of ``names`` sends with every request (None: none)."""
    headers = _section(profile, "api").get("headers")
    sent = {str(k).lower(): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}
    return next((sent[n] for n in names if n in sent), None)


def _why_unsent(workload: str, profile: dict, header: str) -> str:
    """What a workload that makes sessions, or names the header, lacks to send them in ``header`` ("" for one that
    does neither: nothing of it is half set)."""
    key = _session_key(profile)
    if not _makes_sessions(profile):
        if key != header:
            return ""
        kind = _section(profile, "data").get("type", "")
        return f"{workload} names `{key}` in `api.{SESSION_KEY}` but its data ({kind}) makes no sessions to send"
    where = f"sends their ids in `{key}`" if key else f"sends their ids in no header: `api.{SESSION_KEY}` is unset"
    return f"{workload} makes sessions but {where}"


def _session_fix(profiles: dict[str, dict], header: str) -> str:
    """Which promotion.yaml overrides make a planned workload send the session: a workload that makes sessions
    needs only the header key; a shared_prefix one also multi-turn chat."""
    key = f"`api.{SESSION_KEY}: {header}`"
    making = [n for n, p in profiles.items() if _makes_sessions(p)]
    shared = [n for n, p in profiles.items() if str(_section(p, "data").get("type", "")) == "shared_prefix"]
    if making:
        how = f"add {key} to workload {making[0]}'s `overrides` in promotion.yaml"
    elif shared:
        how = (
            f"add `data.shared_prefix.{MULTI_TURN}: true` and {key} to workload {shared[0]}'s `overrides` in "
            "promotion.yaml (multi-turn chat makes each of its users a session)"
        )
    else:
        how = (
            "add a workload on profile shared_prefix_synthetic whose `overrides` in promotion.yaml set "
            f"`data.shared_prefix.{MULTI_TURN}: true` and {key}, and a claim or guard on it"
        )
    return (
        f"{how}: inference-perf (0.6.1, the harness's) then sends each session's id, the same on every turn of it, "
        f"in that header; not `api.headers.{header}`, whose one fixed token makes every request one session; "
        "or approve saying why the plugin without its session logic is worth measuring"
    )


def _header_sent(request, workload: str, names: list[str]) -> str | None:
    """The value of the first of ``names`` (lower-cased, as the EPP reads them) the workload's profile sends with
    every request; None when it sends none, or its profile cannot be written (reported where the plan is made)."""
    return _fixed_token(_profile(request, workload), names)


def _target_ms(value: str) -> float:
    """A header's TTFT target in ms as llm-d reads it: a positive finite float, else 0 (no target)."""
    try:
        ms = float(value)
    except ValueError:
        return 0.0
    return ms if 0 < ms < float("inf") else 0.0


def _constant_target(ctx, header: str, sent: dict[str, str]) -> list[Finding]:
    """A scheduler whose workloads each send one TTFT target with every request (``api.headers`` is fixed).

    The plugin places a request by where the evolved order would put it among modelled waiting requests whose
    target is ``incumbentSLOTargetMs`` (0: their class's). A request whose target is tighter than theirs goes
    first on every endpoint and scores them all alike (s03 with a 500 ms header and the default 0: flat on
    queues of 0 to 25, tests/golang/test_slo_header.py); at their target it differs from them only by arriving
    last, so it is placed by queue length, as queue-scorer does. Either way no deadline order is exercised:
    IMPORTANT while a target sent differs from the modelled one, a SUGGESTION once they match."""
    from bot.review.change_request import deployed_by_person

    if ctx.request.kind is not PolicyKind.SCHEDULING:
        return []
    modelled = float(deployed_by_person(ctx.state).get(INCUMBENT_TARGET, 0) or 0)
    by_value: dict[float, list[str]] = {}
    for name, value in sent.items():
        by_value.setdefault(_target_ms(value), []).append(name)
    said = "; ".join(f"{', '.join(names)} `{header}: {_ms(ms)}`" for ms, names in sorted(by_value.items()))
    differ = sorted(ms for ms in by_value if ms != modelled)
    inc = f"`{INCUMBENT_TARGET}` {_ms(modelled)}" + (" (none: the class's target)" if not modelled else "")
    if differ:
        return [
            Finding(
                severity=Severity.IMPORTANT,
                check="G2.slo-target-constant",
                file=ctx.paths.hypotheses_dir,
                message=(
                    f"every request of a workload carries one TTFT target ({said}) and the modelled waiting "
                    f"requests carry {inc}: a request whose target is tighter than theirs goes ahead of all of "
                    "them and scores every endpoint alike (no load signal), one looser goes last everywhere "
                    f"(queue length only); {NO_ORDER}"
                ),
                fix=(
                    f"set `param {INCUMBENT_TARGET}: {_ms(differ[0])}`, the target sent ({AT_GATE_1}), knowing "
                    "the plugin then places requests by queue length, as queue-scorer does; "
                    f"{MIX}; or approve saying why measuring the plugin so is worth the GPU time"
                ),
            )
        ]
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check="G2.slo-target-constant",
            file=ctx.paths.hypotheses_dir,
            message=(
                f"every request carries the modelled waiting requests' TTFT target ({said}, {inc}), so it differs "
                "from them only by arriving last (and its prompt length): the plugin places requests by queue length, as queue-scorer does, "
                f"and the cells measure that; {NO_ORDER}"
            ),
            fix=f"{MIX}; or approve knowing the cells measure the plugin as a second queue-length scorer",
        )
    ]


def _ms(ms: float) -> str:
    return f"{ms:g}"
