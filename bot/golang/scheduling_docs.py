"""What a scheduling plugin's README says that only a queue-position scorer needs.

The score of a queue-position scorer is driven by each endpoint's scraped waiting count, which the evolved
code never reads, so the Signals table names it with its freshness. Its caveats are about this code: the
order it models is not the one vLLM applies, a request the evolved order puts first scores flat, and traffic
at one priority makes it a second queue-scorer. The dictionary's Map C concerns come first (``plugin_docs.gap_concern``,
which the translation report reads too): a scheduler touches LoRA residency only when it reads an adapter, and its
concurrency concern is worded for the queue lengths it reads. A scheduling plugin that places requests less like
the evolved order than queue-scorer alone does gets ``translate.fidelity-below-reference``.
"""

from __future__ import annotations

from bot.golang.adapter import plain
from bot.golang.params import reads_class, reads_prompt, reads_slo_target
from bot.golang.plugin_summary import below_reference
from bot.model import Fidelity, Finding, Severity

FCFS = (
    "vLLM serves its waiting queue first come, first served by default (`--scheduling-policy fcfs`; its "
    "`priority` policy orders by the request's own priority field, with no aging and no shortest-first), and "
    "the EPP does not pass the request's priority to vLLM: the order modelled here is the evolved one, not the "
    "one vLLM applies. On a real pod the request waits behind every request already queued there; the plugin "
    "only sends it where the evolved order would have served it earlier."
)

#: llm-d-router v0.10.0's in-tree ordering policy for the TTFT SLO header (flow control, registered Beta in
#: cmd/epp/runner/runner.go; pkg/epp/framework/plugins/flowcontrol/ordering/slodeadline): deadline =
#: ReceivedTimestamp + x-llm-d-slo-ttft-ms, earliest first, FCFS ties, a request without the header last.
SLO_DEADLINE_POLICY = "slo-deadline-ordering-policy"


def orders_by_deadline(request_fields) -> bool:
    """The evolved order reads a request's SLO target and its arrival: a deadline, what upstream's policy orders by."""
    fields = set(request_fields)
    return reads_slo_target(fields) and "ArrivalTime" in fields


def queue_visible_alternative(request_fields) -> str:
    """Where to port an ordering by hand so that it sees the real queue: for a deadline order, the in-tree policy
    that already orders by the same header (a reviewer's first question is why not that one)."""
    if not orders_by_deadline(request_fields):
        return "an llm-d flow-control ordering policy, by hand"
    return (
        f"llm-d-router v0.10.0 already ships one for this deadline, the flow-control {SLO_DEADLINE_POLICY}, "
        "which orders by received time + x-llm-d-slo-ttft-ms, earliest first: benchmark it as the comparison arm, "
        "and extend it by hand with what the evolved order adds to a plain deadline"
    )


def deadline_policy_note(request_fields) -> str:
    """The report's sentence naming the in-tree policy beside the scorer ('' when the order reads no deadline)."""
    if not orders_by_deadline(request_fields):
        return ""
    return (
        f" This program orders by a deadline built from the request's arrival and SLOTargetUs (the "
        f"x-llm-d-slo-ttft-ms header), and v0.10.0 already has that ordering in tree: {SLO_DEADLINE_POLICY} (flow "
        "control, Beta; pkg/epp/framework/plugins/flowcontrol/ordering/slodeadline) dispatches the earliest "
        "ReceivedTimestamp + x-llm-d-slo-ttft-ms first, FCFS on ties, requests without the header last, where the "
        "real queue is visible. It is the natural comparison arm for this plugin and the base to extend with what "
        "the evolved order adds (such as a prefill-cost term, class targets for requests without the header, or "
        "a rule for requests that can no longer make their deadline)."
    )


def waiting_signal(d) -> dict:
    """The Signals-table row of the waiting count a queue-position scorer reads for every endpoint."""
    e = d.signal("QueueDepth", "snapshot")
    gap = plain(e.freshness.gap) if e is not None and e.freshness.gap else ""
    return {
        "name": "QueueDepth",
        "source": "`int(m.WaitingQueueSize)`: endpoint metrics WaitingQueueSize (vllm:num_requests_waiting), the "
        "length of the queue the plugin models for each endpoint",
        "fidelity": e.fidelity if e is not None else "high",
        "gap": (
            "a scraped gauge, up to a scrape old: requests placed on the endpoint since the last scrape are not "
            "counted, so a burst sees the same lengths everywhere. " + gap
        ).strip(),
    }


SLO_TARGET_FLAT = (
    "A request whose TTFT target (the x-llm-d-slo-ttft-ms header) is tighter than the modelled waiting "
    "requests' goes ahead of all of them and scores flat on every endpoint. Their target is "
    "incumbentSLOTargetMs, by default 0 (none: each falls back to its class's target), so with clients "
    "sending the header, as gate 2's benchmark does, set incumbentSLOTargetMs to the target they send, or "
    "the plugin gives those requests no load signal. With that one target on every request, each differs from "
    "the waiting requests only by arriving last (and its prompt length), so the plugin places it by queue "
    "length, as queue-scorer does: a deadline order is exercised only by requests with a mix of targets."
)


def flat_caveat(request_fields) -> str:
    """The README caveat on Score's one exception: a request the evolved order puts ahead of every modelled waiting
    request scores 1 on every short enough queue. The plugin's Score and type doc comments carry it too, so the Go
    a reviewer reads does not promise queue-scorer-like spreading the README takes back."""
    fields = set(request_fields)
    if reads_class(fields):
        return (
            "A request of a class the evolved order ranks above incumbentSLOClass (the class assumed for every "
            "waiting request, by default standard), such as critical, goes ahead of the modelled waiting requests "
            "on every short enough queue: it scores flat (1 on each such endpoint), so the plugin gives it no load "
            "signal there and only queue-scorer in the profile spreads it."
        )
    if reads_prompt(fields):
        return (
            "A request the evolved order puts ahead of the modelled waiting requests (for a shortest-first order, "
            "a prompt shorter than incumbentInputTokens) scores flat on every short enough queue (1 on each such "
            "endpoint): the plugin gives it no load signal there and only queue-scorer in the profile spreads it."
        )
    return (
        "A request the evolved order puts ahead of the modelled waiting requests scores flat on every short "
        "enough queue (1 on each such endpoint): the plugin gives it no load signal there and only queue-scorer "
        "in the profile spreads it."
    )


def caveats(an) -> list[str]:
    """The caveats only a queue-position scorer has, for the fields the evolved order reads."""
    fields = set(an.request_fields)
    out = [FCFS]
    flat = flat_caveat(fields)
    if reads_class(fields):
        tail = " and by its prompt length" if reads_prompt(fields) else ""
        one = (
            "With traffic at one priority (llm-d's default: a request no InferenceObjective marks has priority 0, "
            f"standard) and incumbentSLOClass that class, the request differs from the modelled waiting requests "
            f"only by arriving last{tail}: unless the evolved order favours late arrivals it takes the last place, "
            "the plugin acts like queue-scorer (a shorter queue scores higher), and the profile weighs queue length "
            "twice."
        )
    else:
        one = (
            "The request's priority changes nothing here (the evolved order reads no class): with prompts near "
            "incumbentInputTokens the request differs from the modelled waiting requests only by arriving last, "
            "and the plugin acts like queue-scorer (a shorter queue scores higher)."
            if reads_prompt(fields)
            else "The evolved order reads neither a class nor a prompt length, so the request differs from the "
            "modelled waiting requests only by arriving last: the plugin acts like queue-scorer unless the order "
            "favours late arrivals."
        )
    out += [flat, one]
    if reads_slo_target(fields):
        out.append(SLO_TARGET_FLAT)
    return out


def score_caveats(request_fields) -> list[str]:
    """The README caveats that qualify Score's rule (earlier position, higher score), for its doc comment."""
    return [flat_caveat(request_fields), *([SLO_TARGET_FLAT] if reads_slo_target(set(request_fields)) else [])]


#: Why no planned arm separates a scheduler's evolved order from queue-scorer (sched-e2e #2).
UNPLANNED_CONTROL = (
    "stage 4 plans two arms only, the baseline profile and the evolved one, which is that profile plus this scorer, "
    "so the evolved arm contains queue-scorer and cannot lose to it"
)


def queue_control() -> str:
    """The control that tells a scheduler's evolved order from weighing queue length more: the baseline profile with
    queue-scorer carrying this scorer's weight too. On single-priority traffic the plugin's own parameters cannot
    make it (the plugin already weighs every request alike there), and stage 4 does not plan it, so it is run by
    hand; the weights are the generated profile's (``plugin_docs.profile_weights``)."""
    from bot.golang.plugin_docs import profile_weights
    from bot.model import PolicyKind

    w = profile_weights(PolicyKind.SCHEDULING, False, None)
    queue, evolved = w["queue-scorer"], w["evolved"]
    return (
        f"the baseline profile with queue-scorer at weight {queue + evolved:g} (its {queue:g} plus this scorer's "
        f"{evolved:g}) and no evolved scorer, run by hand with llm-d-benchmark on the same cells and compared with "
        "the evolved arm outside the bot"
    )


CHECK_BELOW_REFERENCE = "translate.fidelity-below-reference"


def reference_alternative(request_fields) -> str:
    """What ``translate.fidelity-below-reference`` suggests instead of the plugin: the ordering ported where the
    real queue is visible, or the program re-evolved for placement (gate 1's recommendation says it too)."""
    return (
        f"translate the ordering where the real queue is visible ({queue_visible_alternative(request_fields)}) or "
        "re-evolve it as a routing policy"
    )


def below_reference_findings(f: Fidelity | None, request_fields: dict) -> list[Finding]:
    """IMPORTANT when a plain scorer (queue-scorer alone) decides like the BLIS original more often than a
    scheduling plugin does (an admitter's reference, always-admit, is ``fidelity_admit``'s)."""
    if f is None or not below_reference(f):
        return []
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check=CHECK_BELOW_REFERENCE,
            message=(
                f"{f.reference} decides like the BLIS original in {f.reference_agreement:.1%} of the sampled states, "
                f"the plugin in {f.agreement:.1%}: the evolved ordering, run on a pseudo-queue of identical "
                "incumbents, places requests less like the program than the queue lengths alone do"
            ),
            fix=(
                f"the evolved arm may do no better than queue-scorer given more weight, and {UNPLANNED_CONTROL}: the "
                f"control that shows it is {queue_control()}; or {reference_alternative(request_fields)}"
            ),
        )
    ]
