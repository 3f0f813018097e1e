"""What a fidelity finding tells a person to do: the fixes that exist for the cause the harness named.

A fix names only what can be done for that cause: a mapping a person cannot change is not "mapped as BLIS defines
it", a signal with no llm-d source cannot be carried, and accepting a gap is a decision with a directive (approve
with a reason) or a setting (``fidelity_floor``), not a paragraph somewhere. The class mapping's own words live in
``fidelity_classes``; this module picks per cause and says when the figure itself was measured on a setup the
translator flags (a two-scorer program run with three scorers on both sides). Pure.
"""

from __future__ import annotations

from bot.golang import fidelity_classes
from bot.golang.analysis_types import Analysis
from bot.golang.differential import held_constant_fix
from bot.golang.fidelity_classes import APPROVE_WITH_REASON, FLOOR_SETTING
from bot.golang.fidelity_values import UNTRANSLATABLE
from bot.golang.generate import Generated
from bot.golang.gonames import go_float
from bot.golang.plugin_docs import CHECK_SCORER_CONFIG
from bot.golang.scheduling_docs import queue_visible_alternative
from bot.model import Fidelity
from bot.model.evidence import DEPLOYED_VALUES

#: The lowest floor a request may set (``PromotionRequest.fidelity_floor``'s ``ge``).
LOWEST_FLOOR = 0.5


def below_floor_fix(largest: str | None, gen: Generated, f: Fidelity, an: Analysis | None = None) -> str:
    """The fix of ``translate.fidelity-below-floor`` for its largest cause (None: no single mapping explains it)."""
    if largest is None and f.held_constant:
        return held_constant_fix(f)
    if largest == fidelity_classes.CLASS_MAPPING:
        return fidelity_classes.below_floor_fix(f, an)
    if largest is not None and largest.startswith(UNTRANSLATABLE):
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
    meets = int(f.agreement * 100) / 100  # the highest two-decimal floor this figure meets
    floor = (
        f", or {FLOOR_SETTING} to {meets:.2f} or lower if the gap does not matter here" if meets >= LOWEST_FLOOR else ""
    )
    return (
        f"{signal} has no llm-d source, so no mapping or plugin term can carry it (the plugin reads the dictionary's "
        f"fallback; `hazard.unmapped-signal` says which); {alone}. To accept the gap, {APPROVE_WITH_REASON} (the "
        f"translation report lists example states per cause){floor}; to close it, re-evolve without {signal}"
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
