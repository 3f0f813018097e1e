"""The disagreements no mapping explains: what they come from, in the words every fidelity text uses.

A disagreement that survives every mapping switched off is no mapping's fault, and what it comes from depends on
the policy: for a router, how the plugin's scores are rescaled and combined with the profile's other scorers and
the picker's ties (score composition), or, for a router whose random draws decide (power of two choices, a weighted
random pick), the two sides drawing different random numbers; for a scheduler, how the plugin builds its
pseudo-queue; for an admitter, several mappings acting together; and, whatever the policy, ties on a signal the
harness holds constant. The
report's paragraph, the fidelity findings and the gate-1 note say it with these words, written once here, so the
finding that names them as its largest cause (an llm-d maintainer saw metric-staleness, 16 disagreements, named
while 218 survived every mapping) says what the report says. Pure.
"""

from __future__ import annotations

from typing import NamedTuple

from bot.model import Fidelity


class Unexplained(NamedTuple):
    """What the disagreements no mapping explains come from: a name (``score composition``) and why."""

    name: str
    why: str


def draws(f: Fidelity) -> bool:
    """Whether a random draw decides the router's choice, not only a tie among equal scores: the BLIS original, run
    again on the same states with another seed, chose otherwise on some (``differential.redraws``)."""
    return f.redrawn > 0 and f.redraw_agreement is not None


def unexplained(f: Fidelity) -> Unexplained:
    """The case this policy's unexplained disagreements are: random draws first (they decide whatever the signals
    say, ties on a signal held constant included), then a signal held constant (its ties decide)."""
    if draws(f):
        return Unexplained(
            "random draws",
            "the evolved code draws at random and decides by the numbers it draws even where the scores differ, "
            "and the two sides draw different random numbers, so they choose differently on the same state; such "
            "disagreements are not evidence against a mapping: the BLIS original itself, run again on the same "
            f"states with another seed, chose otherwise on {f.redrawn} of them and decided like itself in "
            f"{f.redraw_agreement:.1%}, about what a plugin drawing its own numbers can be expected to reach",
        )
    if f.held_constant:
        names = constant_names(f)
        return Unexplained(
            f"ties on {names}",
            f"the program reads {names}, which the harness holds constant: states that differ only there tie on both "
            "sides, and the two sides break ties differently; they are not evidence against a mapping",
        )
    if "admit" in (f.decision or ""):
        return Unexplained(
            "the admission path as a whole",
            "several mappings act together on them (the admission path as a whole); the example states show which "
            "signals differ",
        )
    if "ordering" in (f.decision or ""):
        return Unexplained(
            "how the plugin builds its pseudo-queue",
            "the plugin's pseudo-queue and the BLIS queue it models then hold the same requests, so these come from "
            "how the plugin builds that queue",
        )
    return Unexplained(
        "score composition",
        "they come from how the plugin's scores are rescaled and combined with the profile's other scorers and the "
        "picker's ties (score composition)",
    )


def survivors(f: Fidelity) -> str:
    """``N disagreement(s) survive every mapping switched off``: how many no mapping explains."""
    one_at_a_time = " one at a time" if "admit" in (f.decision or "") and not f.held_constant else ""
    return f"{f.unattributed} disagreement(s) survive every mapping switched off{one_at_a_time}"


def survivors_sentence(f: Fidelity) -> str:
    """``N disagreement(s) survive every mapping switched off: why``, the report's paragraph (without its stop)."""
    return f"{survivors(f)}: {unexplained(f).why}"


def leads(f: Fidelity) -> bool:
    """More disagreements survive every mapping switched off than the largest mapping explains (or no mapping
    explains any): those are the largest cause, not the mapping ``Fidelity.causes`` lists first."""
    return f.unattributed > 0 and (not f.causes or f.unattributed > f.causes[0].states)


def largest_clause(f: Fidelity) -> str:
    """``the largest cause is score composition: N disagreement(s) survive ...: why; the largest mapping, ...``:
    a below-floor finding's cause when ``leads``, with the figure all mappings off and the ties in the counts."""
    case = unexplained(f)
    ties = (
        f"; {f.tied} of the disagreements counted are ties BLIS or llm-d's picker breaks at random, counted in part "
        "in the figure"
        if f.tied
        else ""
    )
    top = f.causes[0] if f.causes else None
    mapping = f"; the largest mapping, {top.mapping} ({top.title}), explains {top.states}" if top else ""
    return (
        f"the largest cause is {case.name}: {survivors(f)} ({f.agreement_all_off:.1%} agreement with every mapping "
        f"switched off{ties}): {case.why}{mapping}"
    )


def behind_clause(f: Fidelity) -> str:
    """``; N disagreement(s) survive every mapping switched off (score composition)`` beside a mapping that
    outnumbers them, or nothing."""
    return f"; {survivors(f)} ({unexplained(f).name})" if f.unattributed else ""


def unexplained_words(f: Fidelity) -> str:
    """What the disagreements no single mapping explains come from, in a few words (``; 12 from ...``). When the
    program reads a signal the harness holds constant, states that differ only there tie on both sides and the
    sides break ties differently: that is said, and neither a mapping nor the score composition is blamed; nor
    where the router's random draws decide."""
    if draws(f):
        return (
            f"random draws (the two sides draw different random numbers, not a mapping; the BLIS original decides "
            f"like itself with another seed in {f.redraw_agreement:.1%})"
        )
    if f.held_constant:
        return (
            f"states the sampled world cannot tell apart: the program reads {constant_names(f)}, which the "
            "harness holds constant, so ties there decide (not a mapping)"
        )
    if "admit" in (f.decision or ""):
        return "the admission path as a whole (no single mapping explains them; several act together)"
    return unexplained(f).name


def constant_names(f: Fidelity) -> str:
    """``A`` and ``B``: the signals the program reads that the harness holds constant."""
    names = [f"`{n}`" for n in f.held_constant]
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def held_constant_clause(f: Fidelity) -> str:
    """ "; the harness holds X constant ..." for a fidelity finding's message, or nothing."""
    if not f.held_constant:
        return ""
    them = "it" if len(f.held_constant) == 1 else "them"
    return (
        f"; the program reads {constant_names(f)}, which the harness holds at one value in every sampled "
        f"state: this figure does not exercise {them}"
    )


def draws_fix(f: Fidelity, accept: str) -> str:
    """The fix when a router's random draws are what no mapping explains: neither a mapping nor the profile's
    weights, but judging the figure against the original's agreement with itself."""
    return (
        "no mapping is at fault and neither are the profile's weights: the evolved code draws at random and the two "
        f"sides draw different numbers; the BLIS original decides like itself with another seed in "
        f"{f.redraw_agreement:.1%} of the states, so judge the plugin's figure against that; to accept the gap, {accept}"
    )


def held_constant_fix(f: Fidelity) -> str:
    """The fix when no mapping explains the disagreements and a signal read is held constant: not a mapping's."""
    them = "it" if len(f.held_constant) == 1 else "them"
    return (
        f"no mapping is at fault: the harness never varies {constant_names(f)}, so the figure cannot test "
        f"{them}; judge {them} on the benchmark (Track B) and the example states, or give the harness a way to vary "
        f"{them} (bot/golang/harness_world.py HELD_CONSTANT says why it does not)"
    )
