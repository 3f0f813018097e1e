"""Which planned cells leave a scheduler's evolved order inert: the scheduler's ``sheds_nothing``.

A scheduling plugin is a queue-position scorer (``bot.golang.scheduling_docs``): it puts the request into a
pseudo-queue of identical waiting requests (its ``incumbent*`` parameters) and scores each endpoint by where the
evolved order would serve it. The order can only rank the request apart from the incumbents by what it reads of
the request: its class (from the llm-d priority), its TTFT target (a header), its prompt length (RequestSizeBytes
/ 4). When every request of a cell reads alike there, the order decides the same way for each of them: always
last (the plugin is a second queue-scorer, and the profile weighs queue length twice) or always first (it scores
flat). The cell then measures a re-weighting of queue length, not the order, so a claim that the order transfers
(Track A) or that placement carries it (Track B ``queue-ordering-authority``) cannot be shown or refuted there.

Stage 4's cells give a scheduler no priority mix (``bot.bench.priority_plan``) and declare no InferenceObjective,
so every request has priority 0; inference-perf sends one fixed value of each header (``api.headers``). Prompt
lengths come from the workload's profile; only a prompt-reading order whose every prompt falls on one side of
``incumbentInputTokens`` (with the estimate's error) is inert by length. Unless the translation measured otherwise:
an order that never moved with the prompt length on the compiled plugin (``TranslationSummary.prompt_length_unmoved``:
trial 4's class-then-slack order, whose request has waited 0 and its modelled incumbents at least 50 ms, so a
standard request never went ahead whatever its length) is inert by length on every workload, and prompt lengths
are no fix for it.
"""

from __future__ import annotations

from typing import NamedTuple

from bot.bench.experiment import workload_profile
from bot.bench.layout import split_condition
from bot.bench.plan import PlanError
from bot.bench.priority_plan import CLASS_SIGNALS, translated_signals
from bot.model import PolicyKind, Track
from bot.stats.unjudged import ORDER_CAUSE
from bot.yaml_safe import load_yaml

#: The gap whose Track B hypothesis says placement carries the evolved order (its mechanism is the order).
ORDER_GAP = "queue-ordering-authority"
#: The request signals a queue-position scorer reads of the request itself (the rest are endpoint or clock).
_PER_REQUEST = {*CLASS_SIGNALS, "SLOTargetUs", "InputTokens"}
#: Request signals the pseudo-queue has no single-valued reading for: an order that reads one is not established.
_UNMODELLED = {"TenantID", "SessionID"}
#: The plugin estimates a prompt's tokens as RequestSizeBytes / 4; real prompts run 3 to 5 bytes per token
#: (the translation's prompt-length-estimate cause), so its estimate may be 25% off either way.
ESTIMATE_ERROR = 0.25
DEFAULT_INCUMBENT_TOKENS = 512


def is_order_hypothesis(h) -> bool:
    """A benchmarked hypothesis whose mechanism is the evolved order: a scheduler's claim (its llm-d mechanism is
    "prefers endpoints where the evolved queue order would serve the request earlier") or the
    ``queue-ordering-authority`` gap. Guards and other gaps measure the plugin as deployed, order or not."""
    return h.benchmarked and (h.track is Track.A or h.source == ORDER_GAP)


def deployed_parameters(epp_config: str | None, plugin_type: str) -> dict:
    """The plugin's parameters as the EndpointPickerConfig sets them (a person may change them at gate 1)."""
    try:
        cfg = load_yaml(epp_config or "") or {}
    except Exception:  # an unreadable config is reported where it is written; nothing is established here
        return {}
    for plugin in cfg.get("plugins") or [] if isinstance(cfg, dict) else []:
        if isinstance(plugin, dict) and plugin.get("type") == plugin_type:
            return plugin.get("parameters") or {}
    return {}


def prompt_tokens(request, name: str) -> tuple[int, int] | None:
    """(shortest, longest) prompt of a workload in tokens, from its inference-perf profile: shared-prefix data is
    the system prompt plus the question; random data is its input distribution (mean ± 3 standard deviations
    within min and max). None: a profile whose prompt lengths this does not know."""
    try:
        data = workload_profile(request, name).get("data") or {}
    except PlanError:
        return None
    try:
        if data.get("type") == "shared_prefix":
            sp = data.get("shared_prefix") or {}
            n = int(sp["system_prompt_len"]) + int(sp["question_len"])
            return n, n
        if data.get("type") == "random":
            d = data.get("input_distribution") or {}
            lo, hi = int(d["min"]), int(d["max"])
            if "mean" in d and "std_dev" in d:
                mean, sd = float(d["mean"]), float(d["std_dev"])
                lo, hi = max(lo, int(mean - 3 * sd)), min(hi, int(mean + 3 * sd + 0.999))
            return lo, hi
    except (KeyError, TypeError, ValueError):
        return None
    return None


def order_reads(summary) -> list[str]:
    """The request signals a scheduler's evolved order reads (none for another kind or a stateful plugin), or []
    when it reads one the single-valued reading does not cover."""
    if summary.kind is not PolicyKind.SCHEDULING or summary.stateful:
        return []
    read = set(translated_signals(summary))
    if read & _UNMODELLED:
        return []
    return sorted(read & _PER_REQUEST)


def _length_side(tokens: tuple[int, int], incumbent: int) -> str | None:
    """'longer' or 'shorter' when every prompt's estimate falls on that side of the incumbents' length."""
    lo, hi = tokens
    if lo * (1 - ESTIMATE_ERROR) >= incumbent:  # a tie goes to the earlier arrival: the incumbent
        return "longer"
    if hi * (1 + ESTIMATE_ERROR) < incumbent:
        return "shorter"
    return None


def _tokens_text(tokens: tuple[int, int]) -> str:
    lo, hi = tokens
    return f"{lo} tokens" if lo == hi else f"{lo}–{hi} tokens"


def length_unmoved(summary) -> str | None:
    """Why no prompt length exercises the order, when the translation measured that it never moved with one (None:
    it moved, or the summary does not say, an older one): the parameters it reads the length through and where the
    translation report shows it."""
    params = getattr(summary, "prompt_length_unmoved", None)
    if params is None:
        return None
    if not params:
        how = 'its TestQueueBehaviour scored every prompt length alike: the translation report\'s "Generated tests"'
    else:
        how = (
            f"no input the probes tried made {', '.join(f'`{p}`' for p in params)} decide an outcome: the "
            'translation report\'s "Generated tests", under "Not exercised by a generated test"'
        )
    return f"the translated order never moved with the prompt length in the harness ({how})"


#: What a person can do about an order no prompt length moves: values under which it moves, set at gate 1, or reject.
LENGTH_REMEDY = (
    "to change that, request changes at gate 1 with values under which the order moves with the prompt length "
    "(`param NAME: VALUE`: the parameters it reads the length through, or the modelled waiting requests' "
    "`incumbentSpacingUs` and `incumbentInputTokens`) and check that the report's Generated tests then name a test "
    "for them (once gate 1 is approved, by starting the promotion again: on GitHub, by editing the request issue); "
    "or, if the order was meant to rank by prompt length in llm-d, reject"
)


def inert_workloads(summary, request, parameters: dict) -> dict[str, str]:
    """Workload -> why the scheduler's evolved order ranks every request of it alike, for the workloads where the
    translation and the plan show it (empty: none, or not a scheduler). ``parameters``: the plugin's as deployed
    (``deployed_parameters``)."""
    reads = order_reads(summary)
    if not reads:
        return {}
    incumbent = int(parameters.get("incumbentInputTokens", DEFAULT_INCUMBENT_TOKENS))
    unmoved = length_unmoved(summary)
    out = {}
    for w in request.workloads:
        parts = []
        if any(s in CLASS_SIGNALS for s in reads):
            read = "/".join(r for r in reads if r in CLASS_SIGNALS)
            parts.append(f"every request has priority 0 (no InferenceObjective), so the order reads one {read} for all")
        if "SLOTargetUs" in reads:
            parts.append("every request carries the same TTFT target (inference-perf sends one fixed header, or none)")
        if "InputTokens" in reads and unmoved is not None:
            parts.append(f"{unmoved}, so every prompt ranks alike")
        elif "InputTokens" in reads:
            tokens = prompt_tokens(request, w.name)
            side = _length_side(tokens, incumbent) if tokens else None
            if side is None:
                continue
            parts.append(
                f"every prompt ({_tokens_text(tokens)}) is {side} than incumbentInputTokens = {incumbent}, "
                f"even with the plugin's estimate (RequestSizeBytes / 4) {ESTIMATE_ERROR:.0%} off"
            )
        if parts:
            out[w.name] = "; ".join(parts)
    return out


def on_workloads(names, inert: dict[str, str]) -> str:
    """'on `a`, `b`: why; on `c`: why' for these inert workloads, one clause per distinct reason."""
    by_why: dict[str, list[str]] = {}
    for n in dict.fromkeys(names):
        by_why.setdefault(inert[n], []).append(f"`{n}`")
    return "; ".join(f"on {', '.join(ws)}: {why}" for why, ws in by_why.items())


def order_fix(summary) -> str:
    """What to change so the cells exercise a scheduler's evolved order: traffic that differs in what it reads, less
    prompt lengths where the translation saw the order never move with one (``length_unmoved``)."""
    reads = order_reads(summary)
    unmoved = length_unmoved(summary) if "InputTokens" in reads else None
    ways = []
    if set(reads) & set(CLASS_SIGNALS):
        ways.append(
            "several priorities (inference-perf `api.headers` x-llm-d-inference-objective naming objectives of "
            "several priorities declared in the scenario's router.inferenceObjectives)"
        )
    if "SLOTargetUs" in reads:
        ways.append("several TTFT targets (a workload per x-llm-d-slo-ttft-ms value)")
    if "InputTokens" in reads and unmoved is None:
        ways.append(
            "prompts on both sides of incumbentInputTokens (a workload's data lengths, or a gate-1 "
            "`param incumbentInputTokens` between them)"
        )
    if unmoved is None:
        return "benchmark it on traffic whose requests differ in what the order reads: " + ", or ".join(ways)
    if not ways:
        return f"no workload can exercise it: {unmoved}; {LENGTH_REMEDY}"
    return (
        f"benchmark it on traffic whose requests differ in what else the order reads: {', or '.join(ways)}; no "
        f"workload's prompt lengths can: {unmoved}; {LENGTH_REMEDY}"
    )


def order_set_aside(hypotheses, inert: dict[str, str]) -> dict[str, str]:
    """Hypothesis id -> why, for each hypothesis whose mechanism is the order and whose every workload is inert."""
    out = {}
    for h in hypotheses:
        bases = list(dict.fromkeys(split_condition(w)[0] for w in h.workloads))
        if is_order_hypothesis(h) and bases and all(b in inert for b in bases):
            out[h.id] = f"{ORDER_CAUSE}: {on_workloads(bases, inert)}"
    return out


#: Gate 2's check for a prompt-length order whose cells leave it inert (a class or target order's is
#: ``G2.priority-exercised``, as for every class-reading policy).
LENGTH_CHECK = "G2.prompt-length-exercised"


def order_check(summary) -> str:
    """The gate-2 check that says a scheduler's cells leave its order inert."""
    reads = order_reads(summary)
    return "G2.priority-exercised" if set(reads) - {"InputTokens"} else LENGTH_CHECK


class OrderSetAside(NamedTuple):
    """What stage 5 sets aside for a scheduler: hypothesis id -> why (``order_set_aside``) and gate 2's check."""

    why: dict[str, str]
    check: str
    fix: str


def scheduler_set_aside(summary, request, parameters: dict, hypotheses) -> OrderSetAside | None:
    """Stage 5's reading of ``inert_workloads`` for these hypotheses: None when none is set aside."""
    why = order_set_aside(hypotheses, inert_workloads(summary, request, parameters))
    return OrderSetAside(why, order_check(summary), order_fix(summary)) if why else None
