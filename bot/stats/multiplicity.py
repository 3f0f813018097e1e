"""Promotion-wide error control: at most alpha of promotions confirm any false hypothesis.

A promotion tests many hypotheses at once (25 in the bundled example, over
Tracks A, B and C). Holm within each track let the error add up over the three
tracks: with 25 true nulls, 17% of simulated promotions confirmed at least one.
The family here is every benchmarked hypothesis of the promotion.

Procedure: weighted Holm (Holm 1979, with weights), i.e. the sequentially
rejective graphical procedure of Bretz, Maurer, Brannath and Posch (2009) whose
weights, for any set J of hypotheses not yet rejected, are

    w_i(J) = w_i / sum_{k in J} w_k        if some k in J has w_k > 0,
    w_i(J) = 1 / |J|                       otherwise (only zero-weight ones are left),

and H_i in J is rejected when p_i <= w_i(J) alpha. The weights only grow as
hypotheses are rejected, so this is a consonant closed test of weighted
Bonferroni tests: the family-wise error rate is at most alpha under any
dependence between the hypotheses (they share baseline runs).

Why these weights, and not the alternatives the issue names:

- *Holm over the whole family* is the special case of equal weights. It is what
  ``evaluate`` uses when no plan says otherwise.
- *Fixed-sequence gatekeeping A -> C -> B* gives Track C any alpha only when every
  Track A hypothesis is confirmed; with five Track A claims at 80% power each,
  that happens about a third of the time, so Track C, the guard against
  regressions, would mostly be untestable.
- The plan (stage 4) knows, before any GPU is spent, which hypotheses can reach
  their power target within the repetition cap. It gives those equal weights
  and only a small reserve (10% of alpha, shared) to the ones it reports as
  under-powered: alpha spent on a hypothesis that will most likely not be
  decided is alpha taken from one that can, yet the reserve still lets a
  cluster quieter than assumed decide them on strong evidence. Every
  hypothesis is tested, and a hypothesis of weight 0 still receives alpha
  once every positive-weight hypothesis is confirmed (the second line above).
  The weights are written into the evaluation spec, so stage 5 applies exactly
  the rule the plan sized for.

A hypothesis confirmed on several cells needs every cell to confirm (BLIS: one
contradicting seed means not confirmed). That is an intersection-union test, so
its p-value is the largest of its cells' p-values, at no multiplicity cost;
refuting needs only one cell, so its p-value is the smallest cell p-value times
the number of cells (Bonferroni within the hypothesis). Confirmations and
refutations are two families, each held at alpha.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def normalized_weights(ids: Sequence[str], weights: Mapping[str, float] | None) -> np.ndarray:
    """Initial weights for ``ids``: the given ones (missing ids get 0), scaled to sum to 1; equal when none is positive."""
    m = len(ids)
    if m == 0:
        return np.zeros(0)
    w = np.array([float((weights or {}).get(i, 0.0)) for i in ids], dtype=float)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("multiplicity weights must be finite and >= 0")
    total = w.sum()
    return w / total if total > 0 else np.full(m, 1.0 / m)


def local_weights(w0: np.ndarray, remaining: np.ndarray) -> np.ndarray:
    """w_i(J) for every row's set J of remaining hypotheses (``remaining``: (S, m) bool); 0 outside J."""
    rem = remaining.astype(float)
    total = rem @ w0
    count = rem.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_weight = w0[None, :] * rem / total[:, None]
        equal = rem / count[:, None]
    return np.where((total > 0)[:, None], by_weight, np.where((count > 0)[:, None], equal, 0.0))


def weighted_holm(p: np.ndarray, w0: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(adjusted p-values, levels) of weighted Holm; H_i is rejected at ``alpha`` iff its adjusted p <= alpha.

    ``p``: (m,) or (S, m) unadjusted p-values (rows are independent promotions);
    ``w0``: (m,) initial weights summing to 1. The algorithm is the usual one for
    sequentially rejective procedures: repeatedly take the hypothesis with the
    smallest p_i / w_i(J), record the running maximum of that ratio, remove it.
    ``levels`` is the level each hypothesis was tested at in the end: w_i(J) alpha
    with J the set it was rejected from, or, when it is not rejected, the set of
    hypotheses left unrejected.
    """
    p = np.asarray(p, dtype=float)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    s, m = p.shape
    adjusted = np.ones((s, m))
    at_removal = np.zeros((s, m))
    if m:
        remaining = np.ones((s, m), bool)
        running = np.zeros(s)
        rows = np.arange(s)
        for _ in range(m):
            w = local_weights(w0, remaining)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(remaining & (w > 0), p / w, np.inf)
            j = np.argmin(ratio, axis=1)
            running = np.minimum(np.maximum(running, ratio[rows, j]), 1.0)
            live = remaining[rows, j]
            adjusted[rows[live], j[live]] = running[live]
            at_removal[rows[live], j[live]] = w[rows[live], j[live]]
            remaining[rows, j] = False
    rejected = adjusted <= alpha
    levels = np.where(rejected, at_removal, local_weights(w0, ~rejected)) * alpha
    return (adjusted[0], levels[0]) if single else (adjusted, levels)


def level_if_rejected(w0: np.ndarray, rejected: np.ndarray, also: np.ndarray, j: int, alpha: float) -> float:
    """The level hypothesis ``j`` (not rejected) would be tested at were ``also`` rejected too (all (m,) bool):
    their shares of alpha would pass on, as the weights above say, so the text can say what this level depends on."""
    return float(local_weights(w0, ~(rejected | also)[None, :])[0, j] * alpha)


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values (equal weights), for one family."""
    p = np.asarray(list(pvalues), dtype=float)
    if p.size == 0:
        return p
    return weighted_holm(p, np.full(p.size, 1.0 / p.size), 0.05)[0]


def intersection_union(cell_p: Sequence[np.ndarray]) -> np.ndarray:
    """p-value of 'every cell confirms': the largest cell p-value (rows are experiments)."""
    return np.max(np.stack([np.atleast_1d(x) for x in cell_p], axis=-1), axis=-1)


def union(cell_p: Sequence[np.ndarray]) -> np.ndarray:
    """p-value of 'some cell refutes': the smallest cell p-value times the number of cells, at most 1."""
    stacked = np.stack([np.atleast_1d(x) for x in cell_p], axis=-1)
    return np.minimum(stacked.min(axis=-1) * stacked.shape[-1], 1.0)
