"""How many repetitions each cell of the plan gets, which hypotheses it can decide, and with what power.

The rule, before any GPU is spent:

1. **Planned effects.** One truth per cell and metric: a directional claim is
   planned at 2 x T_eff in its direction (T_eff = max(5%, 2 x CV): the verdict
   never calls a smaller change real, so planning at T_eff would be a coin
   flip), and every other claim on the same cell and metric at that same
   change (a no-worse claim is then easy where an improvement is predicted);
   elsewhere equivalence and no-worse claims are planned at no change.
2. **Noise model** (``bot.stats.power.NoiseModel``): the CV of earlier runs (or
   5%), the evolved arm up to ``evolved_ratio`` (2) times as noisy as the
   baseline, and ``outlier_rate`` (10%) of runs bad enough for the outlier rule
   to drop. Sizing for the noisier case is what keeps the promised power when
   the new policy is less steady; the plan also shows the power with equal
   spreads and no outliers.
3. **Decidable hypotheses and their alpha.** Confirmations are controlled over
   the whole promotion by weighted Holm (``bot.stats.multiplicity``). A
   hypothesis is *decidable* when every one of its cells can reach the power
   target within ``max_reps`` runs per arm at the level it will be tested at;
   the decidable set D is the largest set whose members all are decidable at
   the level they get: 90% of alpha shared equally among them. The others are
   reported as under-powered and share the remaining 10% (so that a cluster
   quieter than assumed can still decide them on strong evidence); all of
   alpha goes to D when every hypothesis is decidable. Confirmed hypotheses
   pass their alpha on (weighted Holm). The weights go into the evaluation
   spec, so stage 5 tests each hypothesis at exactly the level it was sized for.
4. **Repetitions.** A hypothesis is confirmed only when every cell confirms,
   so a hypothesis on k cells needs power ``target^(1/k)`` on each. A cell gets
   the largest need of the decidable claims it serves, at least ``MIN_PLAN_REPS``
   (3: the outlier rule needs 3 runs in an arm); a cell that serves no
   decidable hypothesis gets what a directional claim in either direction would
   need (so its noise floor is as well estimated as a directional claim's, and
   a regression there can be refuted).
5. **Power printed** per hypothesis: ``power_floor``, the exact probability
   (``bot.stats.power``) that the whole verdict rule confirms every cell at the
   planned effect when no other hypothesis is confirmed, and ``power``, the
   simulated chance with every claim at its planned effect
   (``bot.stats.scenario``), where confirmed hypotheses pass their alpha on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bot.model import Direction
from bot.stats import dist
from bot.stats.multiplicity import normalized_weights
from bot.stats.power import MAX_CV, NoiseModel, claim_power, claim_repetitions, log_sd, noise_floor

#: The fewest runs per arm the plan asks for: the outlier rule needs 3 in an arm to tell a bad one.
MIN_PLAN_REPS = 3
#: The share of alpha reserved for the under-powered hypotheses together: enough for a cluster quieter
#: than the plan assumed to still decide them on strong evidence, little enough (10%) that the
#: decidable ones barely pay for it.
UNDERPOWERED_SHARE = 0.10
_DIRECTIONAL = (Direction.DECREASE, Direction.INCREASE)


@dataclass
class ClaimNeed:
    """One hypothesis on one cell: the effect it is planned at, the runs it needs, the power it gets."""

    hypothesis: str
    track: str
    cell: object  # bot.bench.plan_model.Cell
    kind: str
    margin: float
    better: str
    effect: float
    need: int | None = None  # runs per arm for its cell share of the target, None: beyond max_reps
    power: float = 0.0  # this cell confirms, at the hypothesis's level and the cell's planned runs


@dataclass
class Sizing:
    reps: dict = field(default_factory=dict)  # Cell -> runs per arm
    needs: list[ClaimNeed] = field(default_factory=list)
    decidable: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    level: float = 0.0  # alpha / |D|
    floor: int = MIN_PLAN_REPS  # the directional floor every cell gets
    power_floor: dict[str, float] = field(default_factory=dict)
    # hypothesis -> (BLIS's magnitude, the power_floor at it): a directional claim BLIS predicts short of 2 x T_eff
    power_at_blis: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def share(self, hid: str, ids: Sequence[str]) -> float:
        """The share of alpha stage 5 starts ``hid`` at: its weight as ``multiplicity.normalized_weights`` reads
        the spec's weights, so equal shares when none is given (no decidable hypothesis: ``weights`` is empty)."""
        w = normalized_weights(list(ids), self.weights)
        return float(w[list(ids).index(hid)])


def improves(direction: Direction, better: str) -> bool:
    """A directional claim that the metric gets better (lower latency, higher throughput)."""
    return (direction is Direction.DECREASE and better == "lower") or (
        direction is Direction.INCREASE and better == "higher"
    )


def planned_effect(direction: Direction, t_eff: float) -> float:
    """The true change a directional claim is planned at: 2 x T_eff in its direction."""
    return -2 * t_eff if direction is Direction.DECREASE else 2 * t_eff


def scenario_truth(planned: Sequence, t_eff: float) -> dict[tuple[object, str], float]:
    """The planned scenario: a true relative change per (cell, metric), from the directional claims there.

    Claims that disagree about a (cell, metric) leave it at 0 (no coherent truth to plan for).
    """
    votes: dict[tuple[object, str], set[float]] = {}
    for h in planned:
        if h.direction in _DIRECTIONAL:
            for c in h.cells:
                votes.setdefault((c, h.metric), set()).add(planned_effect(h.direction, t_eff))
    return {k: next(iter(v)) for k, v in votes.items() if len(v) == 1}


def claim_needs(planned: Sequence, t_eff: float) -> list[ClaimNeed]:
    """Every (hypothesis, cell) at the planned scenario's true change there (its own direction for a directional claim)."""
    truth = scenario_truth(planned, t_eff)
    out = []
    for h in planned:
        for c in h.cells:
            if h.direction in _DIRECTIONAL:
                effect = planned_effect(h.direction, t_eff)
            else:
                effect = truth.get((c, h.metric), 0.0)
            out.append(ClaimNeed(h.id, h.track, c, h.direction.value, h.margin, h.better, effect))
    return out


def size(
    planned: Sequence,
    noise: NoiseModel,
    *,
    alpha: float,
    target: float,
    max_reps: int,
    fixed_reps: int | None = None,
) -> Sizing:
    """Decidable set, weights and per-cell repetitions (see the module docstring)."""
    t_eff = noise_floor(noise.cv)
    needs = claim_needs(planned, t_eff)
    by_h: dict[str, list[ClaimNeed]] = {}
    for cn in needs:
        by_h.setdefault(cn.hypothesis, []).append(cn)
    ids = [h.id for h in planned]
    cap = fixed_reps if fixed_reps is not None else max_reps
    low = fixed_reps if fixed_reps is not None else MIN_PLAN_REPS

    def need(cn: ClaimNeed, level: float) -> int | None:
        share = target ** (1 / len(by_h[cn.hypothesis]))
        return claim_repetitions(
            cn.kind,
            cn.effect,
            level,
            noise,
            target=share,
            margin=cn.margin,
            better=cn.better,
            max_reps=cap,
            min_reps=low,
        )

    def decidable(hid: str, level: float) -> bool:
        share = target ** (1 / len(by_h[hid]))
        return all(
            claim_power(cn.kind, cn.effect, cap, level, noise, margin=cn.margin, better=cn.better) >= share
            for cn in by_h[hid]
        )

    def share(k: int) -> float:
        """The level each of k decidable hypotheses gets (under-powered ones keep a small reserve)."""
        return alpha * (1.0 if k == len(ids) else 1.0 - UNDERPOWERED_SHARE) / k

    chosen = [hid for hid in ids if decidable(hid, share(len(ids)))]
    # Alpha freed by the under-powered ones may make some of them decidable after all.
    changed = True
    while changed and chosen:
        changed = False
        for hid in ids:
            if hid not in chosen and decidable(hid, share(len(chosen) + 1)):
                chosen.append(hid)
                changed = True
        keep = [hid for hid in chosen if decidable(hid, share(len(chosen)))]
        if len(keep) != len(chosen):
            chosen, changed = keep, True
    chosen = [hid for hid in ids if hid in chosen]
    level = share(len(chosen)) if chosen else alpha / max(len(ids), 1)
    sizing = Sizing(decidable=chosen, level=level)
    under = [hid for hid in ids if hid not in chosen]
    if chosen:
        sizing.weights = dict.fromkeys(chosen, level / alpha)
        sizing.weights.update({hid: UNDERPOWERED_SHARE / len(under) for hid in under})

    # A cell that serves no decidable hypothesis still gets what a directional claim in either direction
    # would need: its noise floor is then as well estimated, and a regression there can be refuted.
    floor = max(
        (claim_repetitions(k, planned_effect(d, t_eff), level, noise, target=target, max_reps=cap, min_reps=low) or cap)
        for k, d in (("decrease", Direction.DECREASE), ("increase", Direction.INCREASE))
    )
    sizing.floor = floor
    cells = sorted({cn.cell for cn in needs}, key=lambda c: c.key())
    reps = dict.fromkeys(cells, low)
    served = set()
    for cn in needs:
        cn.need = need(cn, level) if cn.hypothesis in chosen else None
        if cn.need is not None:
            reps[cn.cell] = max(reps[cn.cell], cn.need)
            served.add(cn.cell)
    for c in cells:
        if c not in served:
            reps[c] = max(reps[c], floor)
    if fixed_reps is not None:
        reps = dict.fromkeys(cells, fixed_reps)
    sizing.reps = reps
    for hid in ids:
        w = sizing.share(hid, ids)  # as stage 5 will test it: equal shares when no hypothesis is decidable
        floor_power = 1.0
        for cn in by_h[hid]:
            cn.power = (
                claim_power(cn.kind, cn.effect, reps[cn.cell], alpha * w, noise, margin=cn.margin, better=cn.better)
                if w > 0
                else 0.0
            )
            floor_power *= cn.power
        sizing.power_floor[hid] = round(floor_power, 4)
    sizing.needs = needs
    sizing.power_at_blis = _power_at_blis(planned, sizing, noise, alpha, by_h, ids)
    sizing.notes = _notes(planned, sizing, noise, alpha, target, cap, by_h, fixed_reps is not None)
    sizing.notes += [blis_note(hid, m, p, noise_floor(noise.cv)) for hid, (m, p) in sizing.power_at_blis.items()]
    return sizing


def _power_at_blis(planned, sizing: Sizing, noise: NoiseModel, alpha, by_h, ids) -> dict[str, tuple[float, float]]:
    """The power of each directional claim whose BLIS magnitude is smaller than the 2 x T_eff it is planned at,
    at that magnitude (every cell must confirm, at the level it starts at: like ``power_floor``). The plan's
    power is promised at 2 x T_eff; a claim BLIS puts at the floor (-10% beside T_eff 10%) is confirmed about
    half the time at best, and a person approving the GPU time should read that beside the planned figure."""
    t_eff = noise_floor(noise.cv)
    out = {}
    for h in planned:
        m = getattr(h, "blis_magnitude", None)
        if h.direction not in _DIRECTIONAL or m is None or abs(m) >= 2 * t_eff:
            continue
        if (m < 0) != (h.direction is Direction.DECREASE):  # BLIS's sign against the claim: not this note's case
            continue
        w = sizing.share(h.id, ids)
        p = 1.0
        for cn in by_h[h.id]:
            p *= claim_power(cn.kind, m, sizing.reps[cn.cell], alpha * w, noise, margin=cn.margin, better=cn.better)
        out[h.id] = (m, round(p if w > 0 else 0.0, 4))
    return out


def blis_note(hid: str, magnitude: float, power: float, t_eff: float) -> str:
    """The plan note for a claim BLIS predicts short of the effect it is planned at (``_power_at_blis``)."""
    where = "at or below the noise floor" if abs(magnitude) <= t_eff + 1e-9 else "short of twice the noise floor"
    return (
        f"{hid}: BLIS predicts {magnitude:+.0%}, {where} (T_eff {t_eff:.1%}); its power is planned at "
        f"{planned_effect(Direction.DECREASE if magnitude < 0 else Direction.INCREASE, t_eff):+.0%} (2 × T_eff), "
        f"and at BLIS's {magnitude:+.0%} it is about {power:.0%}: a verdict confirms only a change beyond the floor, "
        "so if BLIS is right this claim is likely inconclusive"
    )


def _notes(planned, sizing: Sizing, noise: NoiseModel, alpha, target, cap, by_h, fixed: bool) -> list[str]:
    notes = []
    under = [h for h in planned if h.id not in sizing.decidable]
    if not sizing.decidable:
        notes.append(
            f"no hypothesis can reach {target:.0%} power within {cap} repetitions per arm; every verdict will "
            "likely be inconclusive: reduce the noise or widen the margins before spending GPU hours"
        )
    ids = [h.id for h in planned]
    for h in under:
        cns = by_h[h.id]
        what = "the given repetitions" if fixed else f"{cap} repetitions per arm"
        if noise.cv > MAX_CV:
            more = (
                f"no repetition count helps: CV {noise.cv:.1%} is above the {MAX_CV:.0%} halt, where a cell stops as "
                "'cluster too noisy' whatever its runs"
            )
        else:  # at the level it would get were it decidable, never fewer runs than the ones found too few
            level = alpha * (1 - UNDERPOWERED_SHARE) / (len(sizing.decidable) + 1)
            estimate = max(_rough_need(cn, noise, level, target ** (1 / len(cns))) for cn in cns)
            more = (
                f"it would need about {max(estimate, cap + 1)} per arm"
                if estimate < 10_000
                else ("it would need more than any budget allows")
            )
        if sizing.decidable:
            shares = (
                f"it shares the {UNDERPOWERED_SHARE:.0%} of alpha kept for under-powered hypotheses (plus what "
                "confirmed hypotheses pass on)"
            )
        else:
            shares = (
                f"no hypothesis is decidable, so alpha is shared equally: each of the {len(ids)} is tested at level "
                f"{alpha * sizing.share(h.id, ids):.3g} (plus what confirmed hypotheses pass on)"
            )
        notes.append(
            f"{h.id} ({cns[0].kind}, margin {h.margin:.0%}) is under-powered: it cannot reach {target:.0%} power within "
            f"{what} at CV {noise.cv:.1%} ({more}); {shares}, so it will likely be "
            "inconclusive unless the cluster is quieter than assumed; less run-to-run noise or a wider margin "
            "would decide it"
        )
    return notes


def _rough_need(cn: ClaimNeed, noise: NoiseModel, level: float, target: float) -> int:
    """Normal-approximation runs per arm for a claim (only for the under-powered note; sizing is exact)."""
    s = log_sd(noise.cv)
    var = s * s * (1 + noise.evolved_ratio**2)
    z_a = dist.norm_isf(level)
    if cn.kind == "equivalent":
        gap, z_b = math.log1p(cn.margin), dist.norm_isf((1 - target) / 2)
    elif cn.kind == "no-worse":
        bad = 1.0 if cn.better == "lower" else -1.0
        gap, z_b = bad * (math.log1p(bad * cn.margin) - math.log1p(cn.effect)), dist.norm_isf(1 - target)
    else:
        gap, z_b = abs(math.log1p(cn.effect)) - math.log1p(noise_floor(noise.cv)), dist.norm_isf(1 - target)
    if gap <= 0:
        return 10_000
    n = var * (z_a + z_b) ** 2 / (gap * gap) / (1 - noise.outlier_rate)
    return max(MIN_PLAN_REPS, math.ceil(n))


def narrowest_guard_margin(
    planned: Sequence,
    noise: NoiseModel,
    *,
    alpha: float,
    target: float,
    max_reps: int,
    ceiling: float,
    step: float = 0.01,
) -> tuple[float | None, str, float]:
    """The narrowest margin, a multiple of ``step`` up to ``ceiling``, that gate 2's ``margin: X`` (every equivalence
    and no-worse prediction at X) gives a plan with a decidable hypothesis, by this module's own sizing (``size``):
    (X, the decidable guard with the most power there, its ``power_floor``). When even ``ceiling`` decides
    nothing: (None, the guard with the most power at ``ceiling`` and ``max_reps`` runs per arm, that power), so no
    margin is offered that would not help.

    A guard's power only grows with its margin (a wider interval holds the same estimate) and a directional claim's
    does not depend on it, so whether anything is decidable only grows with X (the search bisects the grid), and
    what a wider margin first makes decidable is a guard.
    """
    guard_kinds = (Direction.EQUIVALENT, Direction.NO_WORSE)
    guards = [h.id for h in planned if h.direction in guard_kinds]
    if not guards:
        raise ValueError("narrowest_guard_margin: the plan has no equivalence or no-worse prediction to widen")

    def sized(k: int) -> Sizing:
        x = round(k * step, 10)
        at = [h.model_copy(update={"margin": x}) if h.direction in guard_kinds else h for h in planned]
        return size(at, noise, alpha=alpha, target=target, max_reps=max_reps)

    def at_most(s: Sizing, hid: str) -> float:
        """Every cell of ``hid`` confirms with ``max_reps`` runs per arm, at the level it starts at."""
        return math.prod(
            claim_power(cn.kind, cn.effect, max_reps, s.level, noise, margin=cn.margin, better=cn.better)
            for cn in s.needs
            if cn.hypothesis == hid
        )

    def best(power: Callable[[str], float], among: Sequence[str]) -> tuple[str, float]:
        hid = max(among, key=power)
        return hid, round(power(hid), 4)

    lo, hi = 1, math.floor(ceiling / step + 1e-9)
    top = sized(hi)
    if not top.decidable:
        return (None, *best(lambda hid: at_most(top, hid), guards))
    found = top
    while lo < hi:  # the smallest k whose sizing decides something
        mid = (lo + hi) // 2
        s = sized(mid)
        if s.decidable:
            hi, found = mid, s
        else:
            lo = mid + 1
    widened = [hid for hid in found.decidable if hid in guards] or found.decidable  # a guard (see above)
    return (round(hi * step, 10), *best(found.power_floor.__getitem__, widened))
