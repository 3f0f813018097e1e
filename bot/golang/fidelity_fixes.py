"""What a fidelity finding tells a person to do: the fixes that exist for the cause the harness named.

A fix names only what can be done for that cause: a mapping a person cannot change is not "mapped as BLIS defines
it", a signal with no llm-d source cannot be carried, and accepting a gap is a decision with a directive (approve
with a reason) or a setting (``fidelity_floor``), not a paragraph somewhere. The class mapping's own words live in
``fidelity_classes``; this module picks per cause and says when the figure itself was measured on a setup the
translator flags (a two-scorer program run with three scorers on both sides). Pure.
"""

from __future__ import annotations

from bot.golang import fidelity_classes, fidelity_unexplained
from bot.golang.analysis_types import Analysis
from bot.golang.fidelity_classes import APPROVE_WITH_REASON, CLASS_MAPPING, FLOOR_SETTING
from bot.golang.fidelity_unexplained import held_constant_clause, held_constant_fix
from bot.golang.fidelity_values import UNTRANSLATABLE
from bot.golang.generate import Generated
from bot.golang.gonames import go_float
from bot.golang.plugin_docs import CHECK_SCORER_CONFIG
from bot.golang.scheduling_docs import queue_visible_alternative
from bot.model import Fidelity
from bot.model.evidence import DEPLOYED_VALUES

#: The lowest floor a request may set (``PromotionRequest.fidelity_floor``'s ``ge``).
LOWEST_FLOOR = 0.5


def largest_cause(f: Fidelity, an: Analysis | None = None) -> str:
    """``the largest cause is ...`` of ``translate.fidelity-below-floor``: the disagreements no mapping explains
    when they outnumber the largest mapping's (``fidelity_unexplained.leads``), else that mapping."""
    if fidelity_unexplained.leads(f):
        return fidelity_unexplained.largest_clause(f)
    if not f.causes:  # every disagreement is a failure of the plugin's (``failure_findings`` names them)
        return "no mapping explains them"
    top = f.causes[0]
    uses = fidelity_classes.uses_clause(fidelity_classes.class_uses(an)) if top.mapping == CLASS_MAPPING else ""
    return (
        f"the largest cause is {top.mapping} ({top.title}: {top.states} of the disagreements; "
        f"{top.agreement_without:.1%} agreement with it switched off){uses}"
        + fidelity_unexplained.behind_clause(f)
        + held_constant_clause(f)
    )


def below_floor_fix(gen: Generated, f: Fidelity, an: Analysis | None = None) -> str:
    """The fix of ``translate.fidelity-below-floor`` for the largest cause ``largest_cause`` names."""
    if fidelity_unexplained.leads(f) or not f.causes:
        return unexplained_fix(f, gen)
    largest = f.causes[0].mapping
    if largest == fidelity_classes.CLASS_MAPPING:
        return fidelity_classes.below_floor_fix(f, an)
    if largest.startswith(UNTRANSLATABLE):
        return untranslatable_fix(f, largest.removeprefix(UNTRANSLATABLE))
    if largest == DEPLOYED_VALUES:  # and not the only reason (``floor_missed_by_choice``): the others block
        rest = ", ".join(c.mapping for c in f.causes[1:4]) or "disagreements no mapping explains"
        return (
            f"with the evolved values agreement is still {f.causes[0].agreement_without:.1%}, below the floor: the "
            f"other causes ({rest}) keep it there, so map them as BLIS defines them or {APPROVE_WITH_REASON}; "
            "the values set at gate 1 stay a decision on record (Track B measures what they do on GPUs)"
        )
    if largest == "queue-contents":
        assumed = [f"`{p.name}`" for p in gen.params if p.assumed and p.name != "maxPseudoQueue"]  # those it has
        how = f"as identical incumbents ({', '.join(assumed)})" if assumed else "by their number alone"
        return (
            f"the EPP cannot see which requests wait, so the plugin models them {how}; no setting recovers a mixed "
            "queue, so accept the gap with the report's figures in view (and Track B's queue-ordering-authority "
            "hypothesis measuring it on GPUs), or translate the ordering where the real queue is visible "
            f"({queue_visible_alternative(gen.request_fields)})"
        )
    return (
        f"map the signal as BLIS defines it, carry the term into the plugin, or {APPROVE_WITH_REASON} "
        "(the translation report lists example states per cause)"
    )


def untranslatable_fix(f: Fidelity, signal: str) -> str:
    """A signal with no llm-d source as the largest cause: nothing can carry it, so the gap is accepted (approve
    with a reason, or a floor the figure meets) or the program is evolved without it."""
    top = f.causes[0]
    if top.agreement_without >= f.floor:
        alone = f"with it switched off agreement would be {top.agreement_without:.1%}, at or above the floor"
    else:
        rest = ", ".join(c.mapping for c in f.causes[1:4]) or "disagreements no mapping explains"
        alone = f"with it switched off agreement is still {top.agreement_without:.1%}: {rest} keep it below the floor"
    return (
        f"{signal} has no llm-d source, so no mapping or plugin term can carry it (the plugin reads the dictionary's "
        f"fallback; `hazard.unmapped-signal` says which); {alone}. To accept the gap, {APPROVE_WITH_REASON} (the "
        f"translation report lists example states per cause){floor_clause(f)}; to close it, re-evolve without {signal}"
    )


def floor_clause(f: Fidelity) -> str:
    """``, or set `fidelity_floor` ... to 0.87 or lower ...``: the highest two-decimal floor the figure meets, when
    a request may set it (``LOWEST_FLOOR``); else nothing."""
    meets = int(f.agreement * 100) / 100
    return (
        f", or {FLOOR_SETTING} to {meets:.2f} or lower if the gap does not matter here" if meets >= LOWEST_FLOOR else ""
    )


def unexplained_fix(f: Fidelity, gen: Generated) -> str:
    """The fix when what no mapping explains is the largest cause (``fidelity_unexplained``): never "map the
    signal", which cannot close it, but what sets it for this policy, or accepting the gap."""
    accept = f"{APPROVE_WITH_REASON}{floor_clause(f)}"
    if fidelity_unexplained.draws(f):
        return fidelity_unexplained.draws_fix(f, accept)
    if f.held_constant:
        return held_constant_fix(f)
    if "admit" in (f.decision or ""):
        return (
            "several mappings act together on them (none switched off alone restores them), so no one mapping's fix "
            f"closes them; to accept the admission path as llm-d runs it, {accept}"
        )
    if "ordering" in (f.decision or ""):
        cap = next((p for p in gen.params if p.name == "maxPseudoQueue"), None)
        raise_cap = (
            f"; it models at most `maxPseudoQueue` ({cap.json_default}) waiting requests per endpoint: where queues "
            f"run longer, raise it in `{gen.config_path}`"
            if cap
            else ""
        )
        return (
            "no mapping is at fault, so mapping a signal does not close it: with every mapping switched off the "
            f"plugin's pseudo-queue holds the requests BLIS's queue holds and still places the request elsewhere"
            f"{raise_cap}; otherwise the difference is in how the translator builds that queue: report it with the "
            f"translation report, or {accept}"
        )
    return "no mapping is at fault, so mapping a signal does not close it: " + _composition_fix(gen, accept)


def _composition_fix(gen: Generated, accept: str) -> str:
    """A router's score composition: what rescales and sums the plugin's scores, as the EndpointPickerConfig has it
    (and the plugin's own ``scorers``, where it combines BLIS scorers itself)."""
    weight = go_float(gen.weights.get("evolved", 1.0))
    others = ", ".join(f"{n}:{go_float(w)}" for n, w in gen.weights.items() if n != "evolved")
    own = gen.uses_scorers and gen.scorer_defaults
    said = (
        f"; its `scorers` parameter ({', '.join(f'{n}:{go_float(w)}' for n, w in gen.scorer_defaults)}) sets how it "
        "combines its own terms"
        if own
        else ""
    )
    head = f"the plugin rescales its scores to [0, 1], the profile in `{gen.config_path}` "
    if not others:
        settable = "set `scorers` to the scorers the program was evolved with and translate again, or " if own else ""
        return (
            f"{head}runs the plugin alone (weight {weight}), and the picker breaks ties at random{said}; no other "
            f"scorer is summed in; {settable}to accept the gap, {accept}"
        )
    return (
        f"{head}sums the plugin's scores (weight {weight}) with {others}, and the picker breaks ties at random{said}; "
        f"set {'`scorers`, ' if own else ''}the other scorers and their weights, or the plugin's weight, to the profile "
        f"the program was evolved with and translate again, or {accept}"
    )


def flagged_setup(gen: Generated) -> str:
    """``the figure was measured with the default `scorers` (...) on both sides, the setup `...` flags``: taken on
    a scorer profile the translator says is wrong for the program (both sides run the plugin's ``scorers``), so it
    does not show how the program decides under the profile it was evolved with. Empty when nothing is flagged."""
    if not gen.scorer_defaults or not any(x.check == CHECK_SCORER_CONFIG for x in gen.findings):
        return ""
    names = ", ".join(f"{n}:{go_float(w)}" for n, w in gen.scorer_defaults)
    return (
        f"the figure was measured with the default `scorers` ({names}) on both sides, the setup "
        f"`{CHECK_SCORER_CONFIG}` flags, so it does not show how the program decides under the two-scorer profile it "
        "was evolved with"
    )


def setup_fix(setup: str) -> str:
    """What a fidelity finding's fix says first when its figure was measured on a flagged setup."""
    if not setup:
        return ""
    return (
        f"set `scorers` as `{CHECK_SCORER_CONFIG}` says and translate again, so the figure is measured on the setup "
        "the program was evolved with; "
    )
