"""Gate 2: the planned traffic sends the tenants a plugin that decides by the tenant tells apart
(``G2.tenants-exercised``; split from ``bot.review.gate2_traffic``).

A plugin that reads the request's tenant (Map B's TenantID) gets llm-d's fairness ID: the
``x-llm-d-inference-fairness-id`` header (the deprecated ``x-gateway-inference-fairness-id`` too), one default
ID for a request that sends neither. inference-perf (0.6.1, the harness image's) sends a fixed ``api.headers``
entry with every request of a workload, and the plan runs its cells one at a time (``bot.bench.run.procs``), so
every planned cell sends its requests under one fairness ID, whatever the workloads send: a workload per tenant
gives each run one tenant still. Then a rule that compares a tenant with the others (a share of the active
tenants' volume, trial3 p2's fair share) never acts, the lone tenant being always the mean, and one that limits
each tenant alone (a per-tenant bucket, DA4 p3) meets one tenant carrying all the traffic, unlike the several
BLIS evolved it on. The one way inference-perf 0.6.1 varies the header per request is a trace replay that maps a
span attribute to it (``data.otel_trace_replay.attribute_to_header_map``); such a workload clears the check.

The admitter's priority mix sends each traffic class's ``fairnessID`` in that header (llm-d-benchmark's
priority-mix harness), three tenants, but it is judged by per-class admit rate only, the shedding order
(``bot.bench.priority_plan``): none of the claims judged on the cells. Whether the cells could exercise the
plugin is not established by the translation (its behaviour rows and sequences show what it decides, not that a
lone tenant never moves it), so stage 5 sets nothing aside on this check: it judges the hypotheses and each verdict
judged on the cells carries the finding as a caveat (``tenant_caveat``), so gate 3, the report and the PR never show
"confirmed" bare.
"""

from __future__ import annotations

from typing import NamedTuple

from bot.directives import exclude_command
from bot.model import Finding, Hypothesis, Track, TranslationSummary
from bot.review.gate2_traffic import _finding, _fixed_token, _planned_workloads, _profile, _section

CHECK = "G2.tenants-exercised"

#: The data type whose requests inference-perf 0.6.1 gives headers of their own, and the key mapping a span's
#: attribute to a header (``OTelTraceReplayConfig.attribute_to_header_map``; an absent attribute sends "default").
REPLAY = "otel_trace_replay"
ATTRIBUTE_MAP = "attribute_to_header_map"


def fairness_headers() -> list[str]:
    """The request headers llm-d-router v0.10.0 reads the fairness ID from, the current name first."""
    from bot.golang.adapter import METADATA_HEADERS

    return list(METADATA_HEADERS["FlowFairnessIDKey"])


def tenant_signals(ctx, summary: TranslationSummary) -> list[str]:
    """The signals the plugin really reads whose llm-d value is the request's fairness ID (TenantID)."""
    return _tenant_signals(ctx.dictionary, summary)


def _tenant_signals(dictionary, summary: TranslationSummary) -> list[str]:
    from bot.bench.priority_plan import translated_signals

    out = []
    for name in translated_signals(summary):
        entry = dictionary.signal(name)
        if entry is not None and entry.llmd is not None and "req.FairnessID" in entry.llmd.expr:
            out.append(name)
    return out


class OneTenant(NamedTuple):
    """What the check found: the tenant signals read, the workloads planned, the one ID each that sets the header
    sends (the others send none: the EPP's default), and the benchmarked hypotheses judged on them."""

    read: list[str]
    workloads: list[str]
    fixed: dict[str, str]
    judged: list[Hypothesis]


def one_tenant(dictionary, request, hypotheses, summary: TranslationSummary) -> OneTenant | None:
    """The check's condition, from the request, its ``hypotheses`` and the translation alone (no gate context), so
    that stage 5 and `promote evaluate` find what gate 2 found (``tenant_caveat``)."""
    read = _tenant_signals(dictionary, summary)
    judged = [h for h in hypotheses if h.benchmarked]
    if not read or not judged:
        return None
    headers = fairness_headers()
    workloads = _planned_workloads(request, hypotheses)
    profiles = {name: _profile(request, name) for name in workloads}
    if not profiles or any(_sends_several(p, headers) for p in profiles.values()):
        return None
    fixed = {name: token for name, p in profiles.items() if (token := _fixed_token(p, headers)) is not None}
    return OneTenant(read, workloads, fixed, judged)


def tenant_caveat(dictionary, request, hypotheses, summary: TranslationSummary):
    """Gate 2's finding as stage 5 carries it to the verdicts (``bot.stats.unjudged.RuleCaveat``), None when the
    check does not hold.

    A caveat, not a set-aside: a set-aside needs a proven cause, that the plugin measures like the baseline on the
    cells (``bot.bench.set_aside.unexercised_by``: the behaviour rows of a fresh, stateless plugin). Every plugin
    this check finds decides by the tenant, and the translation cannot show what a lone tenant
    does to it over a run's history: a share of the active tenants' volume never fires on one (trial3 p2), a
    per-tenant bucket fires on it more than on the several BLIS evolved it on (DA4 p3). So the cells measure the
    plugin, on one stratum of traffic; the verdicts stand, each naming that stratum. The fix offers no ``exclude:``
    (gate 2's): by stage 5 gate 2 is approved, and an approved gate is not decided again."""
    from bot.stats.unjudged import RuleCaveat

    found = one_tenant(dictionary, request, hypotheses, summary)
    if found is None:
        return None
    header = fairness_headers()[0]
    return RuleCaveat(
        rule="per-tenant rule",
        check=CHECK,
        cause=(
            f"every planned cell sends its requests under one fairness ID, and the plugin reads {', '.join(found.read)} "
            f"(llm-d's fairness ID, from `{header}`), so it was measured on one tenant carrying all the traffic"
        ),
        fix=(
            f"benchmark on traffic of several tenants at once: a workload whose data is `{REPLAY}` with "
            f"`data.{REPLAY}.{ATTRIBUTE_MAP}` mapping a span attribute that names the tenant to `{header}` "
            "(inference-perf 0.6.1), or by hand with several clients, each sending its own fairness ID"
        ),
    )


def _sends_several(profile: dict, headers: list[str]) -> bool:
    """Whether the profile's requests carry a fairness ID of their own: a trace replay whose spans' attribute is
    mapped to one of ``headers`` (lower-cased, as the EPP reads them)."""
    data = _section(profile, "data")
    if str(data.get("type", "")) != REPLAY:
        return False
    mapped = _section(data, REPLAY).get(ATTRIBUTE_MAP)
    return isinstance(mapped, dict) and any(str(h).lower() in headers for h in mapped.values())


def tenants_exercised(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """A plugin that decides by the tenant, whose benchmarked hypotheses are judged on cells of one fairness ID."""
    found = one_tenant(ctx.dictionary, ctx.request, [h for _, h in hyps], summary)
    if found is None:
        return []
    headers = fairness_headers()
    sent = (
        ": " + "; ".join(f"{name} sends the one ID `{token}` on every request" for name, token in found.fixed.items())
        if found.fixed
        else f", which no planned workload ({', '.join(found.workloads)}) sends, so every request carries the EPP's "
        "default"
    )
    state = " (and keeps state between requests)" if summary.stateful else ""
    claims = [h.id for h in found.judged if h.track is Track.A]
    message = (
        f"every planned cell sends its requests under one fairness ID, so this plugin's per-tenant logic is judged "
        f"on one tenant; it reads {', '.join(found.read)}{state}: llm-d's fairness ID, from the request header "
        f"`{headers[0]}`{sent}; a rule that compares a tenant with the others (its share of the active tenants' volume) "
        "never acts on a lone tenant, always the mean, and one that limits each tenant alone meets one tenant "
        f"carrying all the traffic, unlike the tenants BLIS evolved it on; {', '.join(h.id for h in found.judged)} are "
        "judged on those cells" + _mix_note(ctx.request)
    )
    return [_finding(ctx, CHECK, message, _fix(ctx, headers[0], claims))]


def _mix_note(request) -> str:
    """What the admitter's priority mix sends and decides (nothing when the plan has none)."""
    from bot.bench.priority_plan import DEFAULT_CLASSES, priority_mix_reason

    if priority_mix_reason(request) is None:
        return ""
    ids = ", ".join(c.fairness_id for c in DEFAULT_CLASSES)
    shares = "/".join(f"{c.weight:.0%}" for c in DEFAULT_CLASSES)
    return (
        f"; the plan's priority mix sends three fairness IDs ({ids}: {shares} of its requests), but it is judged "
        "by per-class admit rate only (the shedding order), not these"
    )


def _fix(ctx, header: str, claims: list[str]) -> str:
    """What a person can do: what each way of sending tenants does with the harness as it is, and the options."""
    drop = f", drop the claims ({exclude_command(ctx.home, ', '.join(claims), ctx.work)})" if claims else ""
    return (
        "check the evolved code's rule against one tenant: a workload per tenant does not help (a fixed "
        f"`api.headers.{header}` in a workload's `overrides` sends one ID with all its requests, and the plan runs "
        f"its cells one at a time); a workload whose data is `{REPLAY}` with "
        f"`data.{REPLAY}.{ATTRIBUTE_MAP}` mapping a span attribute that names the tenant to `{header}` sends each "
        "request's own (inference-perf 0.6.1), over a trace of your own with that attribute where the harness pod "
        "reads it (the bot neither writes nor checks it); so approve only if the rule acts on one tenant or "
        f"measuring it so is worth the GPU time (say so as the reason){drop}, or reject and benchmark the claims by "
        "hand on traffic of several tenants at once (several clients, each sending its own fairness ID)"
    )
