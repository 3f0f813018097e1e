"""From per-cell statistics to cell and hypothesis statuses, for one promotion or 10,000 simulated ones.

``bot.stats.verdicts.evaluate`` calls ``decide`` with one row (the real
reports); the calibration tests call it with thousands of rows drawn with a
known truth. Both therefore exercise the same code: the per-cell tests of
``bot.stats.rule``, the promotion-wide multiplicity control of
``bot.stats.multiplicity`` and the aggregation over a hypothesis's cells.

Statuses are small integers so that a batch is one array: ``CONFIRMED`` 1,
``INCONCLUSIVE`` 0, ``REFUTED`` -1.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bot.stats import rule
from bot.stats.design import DecisionRule
from bot.stats.multiplicity import level_if_rejected, normalized_weights, weighted_holm

CONFIRMED, INCONCLUSIVE, REFUTED = 1, 0, -1
DIRECTIONAL = (rule.DECREASE, rule.INCREASE)


@dataclass(frozen=True)
class Claim:
    """What one hypothesis asks of the data: a kind of test on some cells of one metric."""

    id: str
    kind: str  # rule.DECREASE / INCREASE / EQUIVALENT / NO_WORSE
    margin: float
    better: str  # "lower" or "higher": the metric's good side
    cells: tuple[Hashable, ...]  # keys of the cells' statistics


@dataclass(frozen=True)
class Decisions:
    """A batch of decisions: arrays with one row per experiment; ``cell_*`` have one column per claim cell."""

    ids: list[str]
    status: np.ndarray  # (S, m) hypothesis status
    adjusted: np.ndarray  # (S, m) adjusted confirmation p
    level: np.ndarray  # (S, m) level each hypothesis's confirmations were tested at
    level_refute: np.ndarray  # (S, m) level of its refutations (per cell: divided by its number of cells)
    adjusted_refute: np.ndarray  # (S, m) adjusted refutation p (Holm over the refutation family)
    cell_status: dict[str, np.ndarray]  # id -> (S, k)
    pc_eff: dict[str, np.ndarray]  # id -> (S, k): p-values with the non-test conditions folded in
    pr_eff: dict[str, np.ndarray]

    def of(self, hid: str) -> np.ndarray:
        """Status of one hypothesis, one entry per experiment."""
        return self.status[:, self.ids.index(hid)]


def claim_pvalues(claim: Claim, stats_by_cell: Mapping[Hashable, rule.CellStats]) -> tuple[np.ndarray, np.ndarray]:
    """(pc_eff, pr_eff) of a claim's cells, each (S, k), for a fixed-size design."""
    pcs, prs = [], []
    for key in claim.cells:
        pc, pr = rule.effective_p(stats_by_cell[key], claim.kind, claim.margin, claim.better)
        pcs.append(pc)
        prs.append(pr)
    return np.stack(pcs, axis=1), np.stack(prs, axis=1)


def decide(
    claims: Sequence[Claim],
    stats_by_cell: Mapping[Hashable, rule.CellStats],
    decision: DecisionRule,
) -> Decisions:
    """Decide every claim of a promotion from its cells' statistics (fixed-size design)."""
    pc, pr = {}, {}
    for c in claims:
        pc[c.id], pr[c.id] = claim_pvalues(c, stats_by_cell)
    return decide_from_p(claims, pc, pr, decision)


def decide_from_p(
    claims: Sequence[Claim],
    pc_eff: Mapping[str, np.ndarray],
    pr_eff: Mapping[str, np.ndarray],
    decision: DecisionRule,
) -> Decisions:
    """Decide from per-cell effective p-values (fixed design: ``claim_pvalues``; sequential: repeated p-values).

    Confirmation family: p_H = max over cells (intersection-union), weighted
    Holm with the rule's weights. Refutation family: p_H = min over cells x cells
    (Bonferroni), Holm. A cell confirms when its p is within its hypothesis's
    level; it refutes when its refutation p is within the refutation level
    divided by the hypothesis's number of cells.
    """
    ids = [c.id for c in claims]
    if not ids:
        empty = np.zeros((1, 0))
        return Decisions([], empty.astype(np.int8), empty, empty, empty, empty, {}, {}, {})
    shapes = {pc_eff[i].shape[0] for i in ids} | {pr_eff[i].shape[0] for i in ids}
    if len(shapes) != 1 or any(pc_eff[i].shape[1] == 0 or pc_eff[i].shape != pr_eff[i].shape for i in ids):
        raise ValueError("every claim needs (S, k) p-values with k >= 1 cells and the same S for every claim")
    alpha = decision.alpha
    ks = np.array([pc_eff[i].shape[1] for i in ids])
    p_conf = np.stack([pc_eff[i].max(axis=1) for i in ids], axis=1)
    p_ref = np.stack([np.minimum(pr_eff[i].min(axis=1) * k, 1.0) for i, k in zip(ids, ks, strict=True)], axis=1)
    w_conf = normalized_weights(ids, decision.weights or dict.fromkeys(ids, 1.0))
    adj_c, lev_c = weighted_holm(p_conf, w_conf, alpha)
    adj_r, lev_r = weighted_holm(p_ref, normalized_weights(ids, None), alpha)
    lev_r = lev_r / ks[None, :]
    status = np.zeros(p_conf.shape, np.int8)
    cell_status: dict[str, np.ndarray] = {}
    for j, c in enumerate(claims):
        conf = (pc_eff[c.id] <= lev_c[:, j : j + 1]) | (adj_c[:, j : j + 1] <= alpha)
        ref = (pr_eff[c.id] <= lev_r[:, j : j + 1]) & ~conf
        cs = np.where(conf, CONFIRMED, np.where(ref, REFUTED, INCONCLUSIVE)).astype(np.int8)
        cell_status[c.id] = cs
        status[:, j] = aggregate(c.kind, cs)
    return Decisions(ids, status, adj_c, lev_c, lev_r, adj_r, cell_status, dict(pc_eff), dict(pr_eff))


def level_if_confirmed(
    dec: Decisions, decision: DecisionRule, unmeasured: set[str], j: int
) -> tuple[tuple[str, ...], float] | None:
    """(ids, level): the level hypothesis ``j`` would be tested at were the unconfirmed ``unmeasured`` ones (no
    measured cell: their share of alpha cannot pass on) confirmed, for the first experiment; None when ``j`` is
    confirmed or it would change nothing. The text says so (``bot.stats.explain``): otherwise the same evidence
    tested at another level in another run reads as if its own runs had changed."""
    ids = dec.ids
    w0 = normalized_weights(ids, decision.weights or dict.fromkeys(ids, 1.0))
    rejected = dec.adjusted[0] <= decision.alpha
    also = np.array([i != j and not rejected[i] and w0[i] > 0 and hid in unmeasured for i, hid in enumerate(ids)])
    if rejected[j] or not also.any():
        return None
    level = level_if_rejected(w0, rejected, also, j, decision.alpha)
    if level <= dec.level[0, j] * (1 + 1e-9):
        return None
    return tuple(h for h, a in zip(ids, also, strict=True) if a), level


def aggregate(kind: str, cell_status: np.ndarray) -> np.ndarray:
    """A hypothesis's status from its cells' (S, k): confirmed only if every cell confirms.

    Directional: refuted when some cell refutes and none confirms (a mix is
    inconclusive, "parameter-dependent"). Equivalence / no-worse: any refuting
    cell refutes (a regression anywhere is a regression).
    """
    if cell_status.shape[1] == 0:
        return np.zeros(cell_status.shape[0], np.int8)
    all_conf = np.all(cell_status == CONFIRMED, axis=1)
    any_ref = np.any(cell_status == REFUTED, axis=1)
    any_conf = np.any(cell_status == CONFIRMED, axis=1)
    refuted = any_ref & ~any_conf if kind in DIRECTIONAL else any_ref
    return np.where(all_conf, CONFIRMED, np.where(refuted, REFUTED, INCONCLUSIVE)).astype(np.int8)
