"""Agreement between the BLIS original and the plugin, and the cause of every disagreement.

The harness runs both on the same sampled states once as deployed and once per *mapping switched
off* (``bot.golang.harness_world``). A disagreement is attributed to a mapping when switching that
mapping off raises the state's agreement (a state two mappings each explain counts for both: ``overlapping``;
a mapping switched off can also break states that agreed: ``breaks``, which is why its "agreement without"
can be lower than as deployed) (the documented differences between the views first, then,
for what they leave unexplained, each adapter line bypassed in turn); one no single mapping explains but switching all of them
off does is "several mappings together"; one that survives all of them is "score composition" (how
the plugin's scores are rescaled and combined with the other scorers, and picker ties), or for a router whose
random draws decide (``redraws``: the BLIS original run again with another seed chooses otherwise) the two sides'
different random numbers; ``fidelity_unexplained`` words it for each kind of policy. Pure.

Agreement of one routing or scheduling state is how alike the two choices are when each side picks
uniformly among its own best (BLIS: among equal top scores when its rng breaks ties among them, else its target;
llm-d: max-score-picker shuffles equal totals): the probability mass the two choices share,
1 - total variation distance. It is 1 when both have the same best endpoints, however many tie (three
empty queues on both sides decide alike, though a coin picks among them), 0 when no endpoint is best on
both, and 1/2 when BLIS ties two endpoints and llm-d picks one of them. Of one admission state: 1 when
both admit or both reject.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from bot.golang import fidelity_values
from bot.golang.fidelity_admit import ALWAYS_ADMIT  # an admitter's reference: agrees wherever the original admits
from bot.model import Fidelity, FidelityCause, FidelityClass, FidelityFailure
from bot.model.evidence import DEPLOYED_VALUES  # the run with the evolved values where a person set others

AS_DEPLOYED = "as-deployed"
ALL_OFF = "all-off"
COMPOSITION = "score-composition"
SEVERAL = "several-mappings"
SIGNAL = "signal:"
EXAMPLES = 3
#: What "deciding alike" means per policy kind. A scheduling program orders an instance's queue and chooses
#: no endpoint: its plugin scores endpoints by where the request would sit in each queue, so the decision
#: compared is the endpoint where the evolved ordering serves the request earliest (BLIS, on the requests
#: really waiting) against the plugin's own best (on the queue lengths the EPP sees).
DECISIONS = {
    "admission": "the same admit or reject",
    "routing": "the same endpoint",
    "scheduling": "the same endpoint: where the evolved ordering serves the request earliest",
}


def state_agreement(kind: str, result: dict) -> float | None:
    """Agreement of one state's pair of decisions; None when the BLIS original failed (nothing to compare with),
    0 when only the plugin failed: in the EPP that request gets no decision of the evolved logic's."""
    blis, llmd = result.get("blis", {}), result.get("llmd", {})
    if blis.get("error"):
        return None
    if llmd.get("error"):
        return 0.0
    if kind == "admission":
        return 1.0 if bool(blis.get("admit")) == bool(llmd.get("admit")) else 0.0
    return _shared(blis_best(blis), set(llmd.get("best") or []))


def blis_best(blis: dict) -> set[str]:
    """The endpoints the BLIS original picks among: all its equal top scores when its rng breaks ties and its
    target is one of them, else its target (a target below the top score was drawn, not a tie broken)."""
    target = blis.get("target")
    scores = blis.get("scores") or {}
    if blis.get("randomTies") and scores and target in scores:
        top = max(scores.values())
        tied = {k for k, v in scores.items() if abs(v - top) <= 1e-12}
        if target in tied:
            return tied
    return {target} if target else set()


def _shared(best: set[str], picked: set[str]) -> float:
    """The probability mass two uniform picks among ``best`` and among ``picked`` share."""
    if not best or not picked:
        return 0.0
    return len(best & picked) / max(len(best), len(picked))


def redraws(results: list[dict], valid: list[int]) -> tuple[int, float | None]:
    """(states whose choice the BLIS original changes when run again with another seed, how often it decides like
    itself so): a router's random draw decides there, not only a tie, whose tied set the seed leaves as it was.
    The harness redraws only a router that draws from an rng or math/rand; (0, None) when it did not."""
    pairs = [
        (results[i]["blis"], again)
        for i in valid
        if isinstance(again := results[i].get("redraw"), dict) and not again.get("error")
    ]
    if not pairs:
        return 0, None
    alike = [_shared(blis_best(first), blis_best(again)) for first, again in pairs]
    return sum(1 for a in alike if a < 1.0 - 1e-9), round(_mean(alike), 4)


def _non_finite_notes(results: list[dict]) -> list[str]:
    """What says that a side scored an endpoint NaN or infinite (evolved code dividing by zero): llm-d's scheduler
    sums and compares the scores, and a NaN compares false with everything, so which endpoint it picks is an
    accident of the order it compares them in."""
    notes = []
    for side, who in (("llmd", "the plugin"), ("blis", "the BLIS original")):
        n = sum(
            1 for r in results if any(not math.isfinite(v) for v in ((r.get(side) or {}).get("scores") or {}).values())
        )
        if n:
            notes.append(
                f"{who} scored an endpoint NaN or infinite in {n} of {len(results)} sampled states (a division by "
                "zero in the evolved code?); a NaN score compares false with every other, so the endpoint picked "
                "there depends on the order the scores are compared in"
            )
    return notes


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


#: The scorer a scheduling plugin must beat: queue-scorer alone prefers the shortest scraped queue, which is what
#: any ordering does with requests that all look alike. A plugin that decides like the evolved order less often
#: than that has not carried the order's preference into placement.
QUEUE_SCORER = "queue-scorer alone (the shortest scraped queue)"


def shortest_queue(state: dict) -> list[str]:
    """The endpoints queue-scorer alone picks among in ``state``'s llm-d view (never-scraped ones score 0)."""
    waiting = {
        e["name"]: (e.get("metrics") or {}).get("WaitingQueueSize")
        for e in state["llmd"]["endpoints"]
        if (e.get("metrics") or {}).get("WaitingQueueSize") is not None
    }
    if not waiting:
        return []
    low = min(waiting.values())
    return sorted(name for name, q in waiting.items() if q == low)


def _reference(kind: str, states: list[dict], results: list[dict]) -> tuple[str, float | None]:
    if kind == "admission":
        admits = [bool(r["blis"].get("admit")) for r in results if not r.get("blis", {}).get("error")]
        return (ALWAYS_ADMIT, round(_mean([1.0 if a else 0.0 for a in admits]), 4)) if admits else ("", None)
    if kind != "scheduling" or not states:
        return "", None
    agree = [
        state_agreement(kind, {"blis": r["blis"], "llmd": {"best": shortest_queue(st)}})
        for st, r in zip(states, results, strict=False)
    ]
    values = [a for a in agree if a is not None]
    return QUEUE_SCORER, round(_mean(values), 4) if values else None


def summarize(inp: dict, out: dict, *, floor: float, all_high: bool, seed: int, mappings: dict[str, dict]) -> Fidelity:
    """Fidelity from the harness input (runs with their states) and its output (decisions per run)."""
    kind = inp["kind"]
    runs = {r["name"]: r for r in out.get("runs", [])}
    states = {r["name"]: r["states"] for r in inp.get("runs", []) if r.get("states")}
    base = runs.get(AS_DEPLOYED)
    if base is None:
        return Fidelity(measured=False, reason="the harness returned no as-deployed run")
    base_agree = [state_agreement(kind, r) for r in base["results"]]
    valid = [i for i, a in enumerate(base_agree) if a is not None]
    errors = len(base_agree) - len(valid)
    agreement = _mean([base_agree[i] for i in valid])
    per_run: dict[str, list[float | None]] = {
        name: [state_agreement(kind, r) for r in run["results"]] for name, run in runs.items()
    }
    results = base["results"]
    # A state the plugin failed on is explained by that failure (``failures``), not by a mapping.
    disagreeing = [i for i in valid if base_agree[i] < 1.0 - 1e-9 and not results[i].get("llmd", {}).get("error")]
    explained: dict[str, list[int]] = {}
    several, composition = [], []
    single = [m for m in per_run if m not in (AS_DEPLOYED, ALL_OFF)]
    world = [m for m in single if not m.startswith(SIGNAL)]
    signals = [m for m in single if m.startswith(SIGNAL)]
    for i in disagreeing:
        causes = [m for m in world if (per_run[m][i] or 0.0) > base_agree[i] + 1e-9]
        if not causes:  # an adapter line, when no documented difference between the views explains it
            causes = [m for m in signals if (per_run[m][i] or 0.0) > base_agree[i] + 1e-9]
        for m in causes:
            explained.setdefault(m, []).append(i)
        if not causes:
            all_off = per_run.get(ALL_OFF, [None] * len(base_agree))[i]
            (several if all_off is not None and all_off > base_agree[i] + 1e-9 else composition).append(i)
    causes_out = []
    missing = fidelity_values.no_source(mappings)
    shown: set[int] = set()  # a state is an example of one cause only, the one that explains most
    for m, idx in sorted(explained.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        info = mappings.get(m, {})
        picked = [i for i in idx if i not in shown][:EXAMPLES]
        shown.update(picked)
        causes_out.append(
            FidelityCause(
                mapping=m,
                title=info.get("title", m),
                why=info.get("why", ""),
                states=len(idx),
                agreement_without=round(_mean([a for a in per_run[m] if a is not None]), 4),
                breaks=sum(
                    1 for i in valid if base_agree[i] >= 1.0 - 1e-9 and (per_run[m][i] or 0.0) < base_agree[i] - 1e-9
                ),
                examples=[
                    describe(
                        kind,
                        states[AS_DEPLOYED][i],
                        base["results"][i],
                        fidelity_values.example_signals(m, info, mappings),
                        missing,
                    )
                    for i in picked
                ],
            )
        )
    if several:
        causes_out.append(
            FidelityCause(
                mapping=SEVERAL,
                title="several mappings together",
                why="no single mapping switched off restores agreement, all of them together do",
                states=len(several),
                agreement_without=round(_mean([a for a in per_run.get(ALL_OFF, []) if a is not None]), 4),
                examples=[
                    describe(
                        kind,
                        states[AS_DEPLOYED][i],
                        base["results"][i],
                        fidelity_values.read_signals(mappings),
                        missing,
                    )
                    for i in several[:EXAMPLES]
                ],
            )
        )
    causes_out.sort(key=lambda c: (-c.states, c.mapping))
    notes = [f"scorer {t} in the profile is not in the harness's mirror; left out" for t in out.get("unsupported", [])]
    notes += _non_finite_notes(base["results"])
    reference, reference_agreement = _reference(kind, states.get(AS_DEPLOYED, []), base["results"])
    redrawn, redraw_agreement = redraws(results, valid) if kind == "routing" else (0, None)
    return Fidelity(
        reference=reference,
        reference_agreement=reference_agreement,
        decision=DECISIONS.get(kind, "the same endpoint"),
        states=len(valid),
        seed=seed,
        agreement=round(agreement, 4),
        agreement_all_off=round(_mean([a for a in per_run.get(ALL_OFF, []) if a is not None]), 4),
        floor=floor,
        all_high_fidelity=all_high,
        causes=causes_out,
        unattributed=len(composition),
        overlapping=sum(1 for i in disagreeing if sum(i in idx for idx in explained.values()) > 1),
        tied=sum(1 for i in disagreeing if base_agree[i] > 1e-9),
        redrawn=redrawn,
        redraw_agreement=redraw_agreement,
        errors=errors,
        failures=failures(states.get(AS_DEPLOYED, []), results, kind),
        classes=by_class(states.get(AS_DEPLOYED, []), results, base_agree) if kind == "admission" else [],
        deployed_values_changed=_changed(kind, results, runs.get(DEPLOYED_VALUES), valid),
        notes=notes,
    )


#: Example states shown per SLO class that disagrees (one of each direction first).
CLASS_EXAMPLES = 2


def by_class(states: list[dict], results: list[dict], agree: list[float | None]) -> list[FidelityClass]:
    """An admitter's compared states per BLIS SLO class of the request, with the disagreements each way and a few
    examples of every class that disagrees: one agreement figure cannot say whether the classes that differ are
    the ones the traffic will carry (``fidelity_classes`` adds that). [] when the states carry no class."""
    rows: dict[str, dict[str, list[int]]] = {}
    for i, a in enumerate(agree):
        if a is None or i >= len(states):
            continue
        cls = (states[i].get("blis", {}).get("request") or {}).get("SLOClass")
        if not isinstance(cls, str):
            return []
        row = rows.setdefault(cls, {"all": [], "blis": [], "llmd": [], "failed": []})
        row["all"].append(i)
        if a >= 1.0 - 1e-9:
            continue
        r = results[i]
        side = "failed" if r.get("llmd", {}).get("error") else "blis" if r.get("blis", {}).get("admit") else "llmd"
        row[side].append(i)
    out = []
    for cls, row in rows.items():
        firsts = [row[side][0] for side in ("blis", "llmd", "failed") if row[side]]
        rest = sorted(i for side in ("blis", "llmd", "failed") for i in row[side] if i not in firsts)
        picked = sorted((firsts + rest)[:CLASS_EXAMPLES])
        out.append(
            FidelityClass(
                name=cls,
                states=len(row["all"]),
                disagreements=len(row["blis"]) + len(row["llmd"]) + len(row["failed"]),
                blis_admits=len(row["blis"]),
                llmd_admits=len(row["llmd"]),
                plugin_failed=len(row["failed"]),
                examples=[
                    describe("admission", states[i], results[i])
                    if not results[i].get("llmd", {}).get("error")
                    else inputs("admission", states[i]) + " -> the plugin failed"
                    for i in picked
                ],
            )
        )
    return sorted(out, key=lambda c: (CLASS_ORDER.index(c.name) if c.name in CLASS_ORDER else len(CLASS_ORDER), c.name))


#: BLIS's SLO classes, most protected first (the empty class last: BLIS treats it as standard).
CLASS_ORDER = ("critical", "standard", "sheddable", "batch", "background", "")


def _changed(kind: str, results: list[dict], evolved: dict | None, valid: list[int]) -> int | None:
    """Of the compared states, how many the plugin decided differently with the values set at gate 1 than with
    the evolved ones (None: no values were set). 0 says the values were measured and decide nothing here,
    which an unchanged agreement figure alone cannot say."""
    if evolved is None:
        return None
    other = evolved.get("results", [])
    return sum(1 for i in valid if i < len(other) and _decision(kind, results[i]) != _decision(kind, other[i]))


def _decision(kind: str, result: dict):
    llmd = result.get("llmd", {})
    if llmd.get("error"):
        return "error"
    return bool(llmd.get("admit")) if kind == "admission" else frozenset(llmd.get("best") or [])


def failures(states: list[dict], results: list[dict], kind: str = "routing") -> list[FidelityFailure]:
    """The states each side failed on: plugin-only failures (counted as disagreements) first, then the ones where
    the BLIS original itself failed (left out), each with its first message, where it was raised, and an example
    state with the inputs a failure hangs on (each endpoint's queue, batch and KV, not only their number)."""
    plugin = [i for i, r in enumerate(results) if r.get("llmd", {}).get("error") and not r.get("blis", {}).get("error")]
    blis = [i for i, r in enumerate(results) if r.get("blis", {}).get("error")]
    out = []
    for side, idx in (("plugin", plugin), ("blis", blis)):
        if not idx:
            continue
        first = results[idx[0]][{"plugin": "llmd", "blis": "blis"}[side]]["error"]
        shapes = Counter(len(states[i]["llmd"]["endpoints"]) for i in idx if i < len(states))
        out.append(
            FidelityFailure(
                side=side,
                states=len(idx),
                plugin_too=sum(1 for i in idx if results[i].get("llmd", {}).get("error")) if side == "blis" else 0,
                message=first_line(without_site(str(first))),
                at=panic_site(str(first)),
                example=inputs(kind, states[idx[0]]) if idx[0] < len(states) else "",
                shapes=", ".join(f"{_endpoints(n)} ({k})" for n, k in sorted(shapes.items())),
            )
        )
    return out


#: How much of a failure's first line is quoted: the evolved code's panic text can be megabytes.
MESSAGE_CHARS = 300


def first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "(no message)")
    return line if len(line) <= MESSAGE_CHARS else f"{line[:MESSAGE_CHARS]}... ({len(line):,} characters)"


#: Where the plugin's own recover says a panic was raised (``evolvedPanicSite``, plugin_common.go.j2).
_PLUGIN_SITE = re.compile(r" panicked at (evolved\.go:\d+): ")


def panic_site(error: str) -> str:
    """FILE:LINE where a recovered panic was raised, or "": the harness appends ``\n\tat FILE:LINE`` to a panic of
    the BLIS original; the plugin's error says ``panicked at evolved.go:LINE:`` (a line of the harness's copy of
    evolved.go, which ``bot.golang.translate`` maps to the shipped one)."""
    m = re.search(r"\n\tat (\S+:\d+)\s*$", error) or _PLUGIN_SITE.search(error)
    return m.group(1) if m else ""


def without_site(error: str) -> str:
    """The plugin's error without its ``at evolved.go:LINE``: that line is of the harness's instrumented copy."""
    return _PLUGIN_SITE.sub(" panicked: ", error, count=1)


def inputs(kind: str, state: dict) -> str:
    """A failing state as the Fidelity section prints one: the request and each endpoint as BLIS and llm-d see
    it (a scheduling state: its shape), without the decisions a failure did not make."""
    if kind == "scheduling" or not state["blis"].get("snapshots"):
        return shape(state)
    return describe(kind, state, {})


def _endpoints(n: int) -> str:
    return f"{n} endpoint{'' if n == 1 else 's'}"


def shape(state: dict) -> str:
    """A state in a few words: its request and how many endpoints it offers (what a failure often hangs on)."""
    req = state["blis"]["request"]
    return (
        f"request {req.get('ID')} ({req.get('InputTokens', 0)} tokens), {_endpoints(len(state['llmd']['endpoints']))}"
    )


def describe(
    kind: str,
    state: dict,
    result: dict,
    signals: Sequence[str] = (),
    missing: frozenset[str] = frozenset(),
) -> str:
    """One line a person can check: the request, each endpoint as BLIS and llm-d see it, both decisions, and the
    values of ``signals`` (the ones its cause names; ``missing``: those llm-d has no source for) on both sides."""
    blis, llmd = state["blis"], state["llmd"]
    req = blis["request"]
    who = f"request {req.get('ID')} ({req.get('InputTokens', 0)} tokens"
    if req.get("SLOClass") is not None and kind == "admission":
        who += f", class {req.get('SLOClass') or 'none'}"
    elif kind == "scheduling":
        who += f", class {_class(req)}"
    if req.get("SessionID"):
        who += ", session"
    class_shown = kind == "scheduling" or (req.get("SLOClass") is not None and kind == "admission")
    who += fidelity_values.request_values(signals, req, llmd.get("request") or {}, missing, class_shown)
    who += fidelity_values.no_source_note(signals, missing, (blis.get("snapshots") or [{}])[0]) + ")"
    if kind == "scheduling":
        return _describe_queues(state, result, who, signals, missing)
    parts = []
    for snap, ep in zip(blis["snapshots"], llmd["endpoints"], strict=False):
        m = ep.get("metrics") or {}
        prefix = ep.get("prefix") or {}
        # An admitter never reads per-pod prefix matches: listing them would point a reviewer at a signal it ignores.
        matches = "" if kind == "admission" else f"; prefix {prefix.get('match', 0)}/{prefix.get('total', 0)}"
        on_blis, on_llmd = fidelity_values.endpoint_values(signals, snap, ep, missing)
        parts.append(
            f"{snap['ID']}: BLIS q={snap['QueueDepth']} b={snap['BatchSize']} inflight={snap['InFlightRequests']} "
            f"kv={snap['KVUtilization']:.2f}{on_blis}; llm-d q={m.get('WaitingQueueSize')} "
            f"r={m.get('RunningRequestsSize')} kv={m.get('KVCacheUsagePercent', 0):.2f}{on_llmd}{matches}"
        )
    if not result:
        return f"{who}; {'; '.join(parts)}"
    b, ld = result["blis"], result["llmd"]
    if kind == "admission":
        verdict = (
            f"BLIS {'admits' if b.get('admit') else 'rejects'}, llm-d {'admits' if ld.get('admit') else 'rejects'}"
        )
    else:
        verdict = f"BLIS picks {b.get('target')}, llm-d picks {' or '.join(ld.get('best') or ['nothing'])}"
    return f"{who}; {'; '.join(parts)} -> {verdict}"


def _describe_queues(state: dict, result: dict, who: str, signals: Sequence[str], missing: frozenset[str]) -> str:
    """A scheduling state: each endpoint's real queue (classes, oldest first), the count the plugin sees,
    and where each side would serve the request."""
    blis, llmd = state["blis"], state["llmd"]
    scores = result["blis"].get("scores") or {}
    clock = blis.get("clock", 0)
    parts = []
    for snap, ep in zip(blis["snapshots"], llmd["endpoints"], strict=False):
        queue = (blis.get("queues") or {}).get(snap["ID"]) or []
        waiting = "; ".join(_waiting(q, clock) for q in queue[:4]) + ("; ..." if len(queue) > 4 else "")
        position = -int(scores.get(snap["ID"], 0))
        on_blis, on_llmd = fidelity_values.endpoint_values(signals, snap, ep, missing)
        parts.append(
            f"{snap['ID']}: BLIS queue {len(queue)} ({waiting or 'empty'}){on_blis}, serves it at position {position}; "
            f"llm-d q={(ep.get('metrics') or {}).get('WaitingQueueSize')}{on_llmd}"
        )
    b, ld = result["blis"], result["llmd"]
    best = [k for k, v in scores.items() if scores and v == max(scores.values())]
    verdict = f"BLIS serves it earliest on {' or '.join(best) or b.get('target')}, llm-d prefers {' or '.join(ld.get('best') or ['nothing'])}"
    return f"{who}; {'; '.join(parts)} -> {verdict}"


def _class(req: dict) -> str:
    return req.get("SLOClass") or '"" (standard)'


def _waiting(req: dict, clock: int) -> str:
    """One waiting request: its class, prompt length and how long it has waited."""
    waited = max(0, clock - int(req.get("ArrivalTime") or clock)) / 1000
    return f"{_class(req)}, {req.get('InputTokens', 0)} tokens, {waited:,.0f} ms"
