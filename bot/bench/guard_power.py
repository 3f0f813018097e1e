"""The plan's chance of catching a real regression on each regression guard (Track C), which it otherwise never says.

The plan sizes every hypothesis for *confirmation* power, but a Track C guard exists to catch a regression, and a
regression is caught by *refuting* the guard. At the assumed noise that chance can be small: a guard left
undecided is then no evidence that nothing regressed, and the headline must not read as if it were
(``bot.render.outcome.headline``). So the plan reports, per guard, the simulated chance that the whole verdict
rule refutes it when its metric is truly worse on every one of its cells by

- the guard's margin (the largest change the guard tolerates), and
- 2 x T_eff (the change a directional claim is planned at; the sequential design stops a guard cell once a
  regression that large is ruled out, ``bot.stats.sequential``),

with every other claim at its planned effect, under the noise the plan is sized for, judged by the code stage 5
runs (``bot.stats.scenario.refute_rates`` for all planned runs; ``bot.stats.sequential.simulate`` for the
sequential design). Below ``LOW_REFUTATION`` the plan says so in a note.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

#: Below this chance of refuting a regression of the guard's margin, the plan warns that the guard is weak.
LOW_REFUTATION = 0.5
#: Simulated promotions per planted regression.
GUARD_SIMS = 1000
#: What ``HypothesisPower.refute`` holds.
REFUTE_FIELD = (
    "Track C only: simulated chance the verdict refutes this guard (catches the regression) when its metric is truly "
    "worse on every cell by [its margin, 2 x T_eff], every planned run, under the noise the plan is sized for"
)

Truth = dict[tuple[Hashable, str], float]


def fixed_refutation(planned, claims, metric_of, truth, noise, reps, decision) -> dict[str, list[float]]:
    """guard id -> [chance refuted at its margin, at 2 x T_eff] with every planned run (the fixed design)."""
    from bot.stats.power import noise_floor
    from bot.stats.scenario import refute_rates

    truths = regression_truths(planned, truth, noise_floor(noise.cv))
    return rounded(
        [refute_rates(claims, metric_of, t, noise, reps, decision, sims=GUARD_SIMS) for t in truths], planned
    )


def guards_of(planned: Sequence) -> list:
    """The plan's Track C hypotheses (``PlannedHypothesis``), in plan order."""
    return [h for h in planned if h.track == "C"]


def regression_truths(planned: Sequence, truth: Mapping, t_eff: float, key: Callable = lambda c: c) -> list[Truth]:
    """[at each guard's margin, at 2 x T_eff]: the planned truth with every guard's metric worse by that much on
    its cells (higher for a lower-is-better metric, lower otherwise). ``key`` maps a plan cell to the truth's key."""
    out = []
    for size in (None, 2 * t_eff):
        t: Truth = dict(truth)
        for h in guards_of(planned):
            r = h.margin if size is None else size
            for c in h.cells:
                t[(key(c), h.metric)] = r if h.better == "lower" else -r
        out.append(t)
    return out


def rounded(rates: Sequence[Mapping[str, float]], planned: Sequence) -> dict[str, list[float]]:
    """guard id -> [chance refuted at its margin, at 2 x T_eff], from one rate mapping per planted regression."""
    return {h.id: [round(r[h.id], 3) for r in rates] for h in guards_of(planned)}


def fixed_notes(planned: Sequence, hypothesis_power: Sequence, t_eff: float) -> list[str]:
    """``low_notes`` for the fixed design, from the plan's ``HypothesisPower`` rows."""
    return low_notes(planned, {h.hypothesis: h.refute for h in hypothesis_power}, t_eff, "every run")


def low_notes(planned: Sequence, refute: Mapping[str, Sequence[float]], t_eff: float, design: str) -> list[str]:
    """One note naming the guards that catch a regression of 2 x T_eff less than ``LOW_REFUTATION`` of the time
    (none: no note). A regression of exactly the margin sits on the refutation test's boundary, so it is refuted
    about as often as the test's level: the note says that too, as what "undecided" cannot rule out."""
    weak = [h for h in guards_of(planned) if refute.get(h.id) and refute[h.id][1] < LOW_REFUTATION]
    if not weak:
        return []
    chances = ", ".join(f"{h.id} {refute[h.id][1]:.0%}" for h in weak)
    margins = sorted({h.margin for h in weak})
    margin = " / ".join(f"{m:.0%}" for m in margins)
    note = (
        f"regression guards are judged by refutation, and with {design} the verdict catches a {2 * t_eff:.0%} "
        f"(2 x T_eff) regression on {', '.join(h.id for h in weak)} less than {LOW_REFUTATION:.0%} of the time "
        f"({chances}), and a regression of the margin ({margin}) almost never; a guard left undecided does not show "
        "that nothing regressed. Less run-to-run noise or more repetitions on those cells would catch them"
    )
    return [note]
