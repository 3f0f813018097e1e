"""An admitter's agreement figure beside the trivial admitter's: how often the BLIS original rejects in the sample.

A plugin that admits every request decides like the BLIS original in every state the original admits, so an
admitter's agreement is worth what it adds to that share. Always-admit is an admitter's reference
(``differential._reference``), as queue-scorer alone is a scheduler's. When always-admit would itself meet the
floor, the figure cannot tell the plugin from no admitter at all: the sample did not make the original reject
often enough to test the reject rule (DA4 p3: 99.8% agreement, BLIS rejected 1 state in 500). For a program that
keeps state (a tenant's bucket, a learned load) that is the sample's reach, not the program's: its histories did
not drive the state to a reject, and nothing else the translation runs does either, so it is IMPORTANT. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.golang import harness_world as world
from bot.model import Fidelity, Finding, Severity

ALWAYS_ADMIT = "always-admit (admits every request)"
CHECK_LIKE_ALWAYS_ADMIT = "translate.fidelity-like-always-admit"


def is_admitters(f: Fidelity | None) -> bool:
    """Whether ``f``'s reference is always-admit (an admitter's figure)."""
    return f is not None and f.reference == ALWAYS_ADMIT and f.reference_agreement is not None


def rejects(f: Fidelity) -> int:
    """How many of the compared states the BLIS original rejected (always-admit disagrees on exactly those)."""
    return round(f.states * (1 - (f.reference_agreement or 0.0)))


def below_always_admit(f: Fidelity | None) -> bool:
    """Whether always-admit decides like the BLIS original more often than the plugin, by more than half a point (the
    tolerance of a scheduler's ``plugin_summary.below_reference``): the plugin does worse than admitting everything."""
    return is_admitters(f) and f.measured and f.agreement + 0.005 < f.reference_agreement  # type: ignore[union-attr,operator]


#: Gate 1's recommendation for an admitter that does worse than always-admit (``review.brief.not_as_is``): the
#: alternative always-admit stands for, and where the report shows what to fix.
BELOW_ALWAYS_ADMIT_THEN = " and keep the baseline, which has no admitter: it admits every request"
BELOW_ALWAYS_ADMIT_WHERE = (
    "the translation report's Fidelity section lists, per SLO class, the states where the plugin rejects what the "
    "original admits"
)


def like_always_admit(f: Fidelity | None) -> bool:
    """Whether always-admit would meet the floor on the same states: the figure cannot tell the plugin from it."""
    return is_admitters(f) and f.measured and f.reference_agreement >= f.floor  # type: ignore[union-attr,operator]


def sentence(f: Fidelity) -> str:
    """The original's reject rate in the sample and always-admit's figure, said after the plugin's."""
    n = rejects(f)
    out = (
        f" The BLIS original rejects {n} of the {f.states} states ({1 - f.reference_agreement:.1%}), so "  # type: ignore[operator]
        f"{ALWAYS_ADMIT} would decide like it in {f.reference_agreement:.1%} of them"
    )
    if below_always_admit(f):
        return out + ": the plugin does worse than admitting everything."
    if like_always_admit(f):
        return out + (
            f", at or above the {f.floor_pct} floor: the figure cannot tell this plugin from one that admits "
            "everything (it does not test the reject rule)."
        )
    return out + "."


def clause(f: Fidelity | None) -> str:
    """The same, as a clause for a one-line headline (gate 1's fidelity line, the review brief); "" for others."""
    if not is_admitters(f):
        return ""
    assert f is not None
    out = f"; the BLIS original rejects {rejects(f)} of them, so always-admit would score {f.reference_agreement:.1%}"
    return out + (" (the figure cannot tell the plugin from it)" if like_always_admit(f) else "")


def history_words() -> str:
    """What a stateful admitter's sampled histories hold (``harness_world``), for the finding that they fell short."""
    lo, hi = world.BURST
    fast, slow = (round(1e6 / g) for g in world.BURST_GAP_US)
    return (
        f"up to 12 earlier requests of three tenants, and in {world.BURST_SHARE:.0%} of the states a burst of {lo} "
        f"to {hi} requests at {slow} to {fast} a second, mostly from the request's tenant"
    )


def findings(f: Fidelity | None, stateful: bool, state_fields: Sequence[str] = ()) -> list[Finding]:
    """``translate.fidelity-like-always-admit`` when always-admit would meet the floor: IMPORTANT for a program
    that keeps state (the sample did not reach it), SUGGESTION otherwise (its rule rarely rejects these states)."""
    if not like_always_admit(f):
        return []
    assert f is not None
    n = rejects(f)
    message = (
        f"the BLIS original rejects {n} of the {f.states} sampled states, so {ALWAYS_ADMIT} would decide like it in "
        f"{f.reference_agreement:.1%} of them (floor {f.floor_pct}): the plugin's {f.agreement:.1%} cannot tell this "
        "admitter from one that admits everything"
    )
    if stateful:
        held = ", ".join(f"`{s}`" for s in state_fields) or "its receiver's fields"
        message += (
            f"; the program keeps state between requests ({held}), and the sampled histories ({history_words()}) "
            "did not drive that state to a reject, so what the plugin decides once the state reaches its limits "
            "(an emptied bucket, a tenant over its share) is not measured"
        )
        fix = (
            "do not read the figure as the reject rule translated faithfully: compare the plugin's reject path with "
            "the evolved code by hand (the report's decision lines), with the volume that reaches its state's limits "
            "in mind; the generated sequence tests and Track B's runs are the only other place it is exercised"
        )
    else:
        message += "; the original's rule rarely rejects the sampled states"
        fix = (
            "the figure vouches for the admit path only: check the plugin's reject rule against the evolved code by "
            "hand (the report's decision lines) before approving"
        )
    return [
        Finding(
            severity=Severity.IMPORTANT if stateful else Severity.SUGGESTION,
            check=CHECK_LIKE_ALWAYS_ADMIT,
            message=message,
            fix=fix,
        )
    ]
