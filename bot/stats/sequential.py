"""The sequential design (issue 10, item 4): run in rounds, stop each cell as soon as its hypotheses are decided.

A fixed design runs every cell to its planned count even when the answer was
clear after three runs. Here each cell is looked at after every round (its
*looks*: cumulative runs per arm, the last one its *horizon*), and every
claim on it is tested with a group-sequential rule: alpha is spent across the
looks by a Pocock-type (the plan's choice, see ``bot.bench.sequential_plan``)
or O'Brien-Fleming-type spending function (``bot.stats.spending``), applied to the directional, equivalence and
non-inferiority tests alike. A claim's *repeated p-value* is the smallest
alpha at which some look so far crossed its boundary; it enters the
promotion-wide weighted Holm (``bot.stats.multiplicity``) exactly as a
fixed-design p-value does, which is Maurer and Bretz's (2013) graphical
procedure for group-sequential trials: when a hypothesis is confirmed its
alpha passes on and the others are re-tested at all their past looks with the
larger level.

A cell stops when the hypotheses that depend on it are decided: every
decidable hypothesis (the plan's; ``SequentialRule.decidable``) on it has its
cell confirmed or refuted, or the hypothesis itself decided elsewhere.
Under-powered hypotheses never keep a cell running: they are judged on the
runs their cells get anyway. A *guard* cell, one that serves only
under-powered hypotheses (Track C's scenarios at a noisy cluster), is there to
catch a regression: it stops once each claim on it is decided or a regression
of twice the noise floor on its metric is ruled out (one-sided 95%), else it
runs to its horizon, where a regression is refuted. A stopped cell's budget is simply not
spent; the runner spends what is left on cells still undecided (``assess``
orders them when the budget will not stretch to all).

Stage 5 replays the same looks from the reports alone (``looks_taken``): the
first ``n`` repetitions of each arm (in repetition order) form the look at
``n``, so the replay is the rule the runner applied. Only the scheduled looks
are looks: the plan's error control was sized for them, so a count between two
looks (a run set aside and not yet replaced, a round the budget cut short) is
judged at the last scheduled look it covers, and a cell below its first look
is not judged at all. Runs beyond a cell's horizon are not used.

``assess(spec, reports)`` is the runner's entry point between rounds;
``simulate`` runs the whole round loop on simulated promotions (the plan's
power and expected GPU-minutes, and the tests' error rates) through the same
functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from bot.stats import rule
from bot.stats.decide import CONFIRMED, INCONCLUSIVE, REFUTED, Claim, Decisions, decide_from_p
from bot.stats.design import DecisionRule
from bot.stats.spending import repeated_p

#: A guard cell stops once the one-sided interval at this level rules out a regression of 2 x T_eff.
GUARD_LEVEL = 0.95
#: Looks at these fractions of the horizon (at least MIN_FIRST_LOOK runs per arm at the first).
LOOK_FRACTIONS = (0.5, 0.75, 1.0)
MIN_FIRST_LOOK = 3


def schedule_for(horizon: int, fractions: Sequence[float] = LOOK_FRACTIONS) -> list[int]:
    """Cumulative runs per arm at each look for a cell whose horizon is ``horizon``."""
    return sorted({min(horizon, max(MIN_FIRST_LOOK, math.ceil(f * horizon))) for f in fractions} | {horizon})


def looks_taken(schedule: Sequence[int], available: int) -> list[int]:
    """The looks data with ``available`` runs per arm has reached: every scheduled count it covers.

    A partial count is never a look: taking one would spend alpha at a look the plan did not schedule
    (and stop the cell there), so a run set aside is replaced before its look is taken."""
    return [k for k in schedule if k <= available]


# --------------------------------------------------------------------------
# Repeated p-values of one cell
# --------------------------------------------------------------------------


@dataclass
class CellLooks:
    """One cell's looks for a batch of experiments: the statistics at each look, and which looks each row took.

    Built whole (``from_arms``: every look of every row, as a replay of real reports needs) or round by round
    (``for_rounds``, then ``take``: each look's statistics only for the rows that take it, as ``simulate``
    needs; about half the work, since most simulated cells stop before their horizon). A look's entries for
    rows that did not take it are never read: every reader masks by ``taken``.
    """

    looks: list[int]  # runs per arm at each look
    horizon: int
    stats: list[rule.CellStats]  # one per look computed so far, for the rows in ``rows``
    taken: np.ndarray  # (S, K) bool
    cache: dict = field(default_factory=dict)  # claim kind -> per-look repeated p-values (see claim_look_p)
    rows: list[np.ndarray | None] = field(default_factory=list)  # per look: the rows ``stats`` holds (None: all)
    arms: tuple[np.ndarray, np.ndarray] | None = None  # (baseline, evolved) runs of looks still to be taken

    @classmethod
    def from_arms(cls, baseline: np.ndarray, evolved: np.ndarray, looks: Sequence[int], horizon: int) -> CellLooks:
        b, e = rule.as_rows(baseline), rule.as_rows(evolved)
        stats = [rule.cell_stats(b[:, :n], e[:, :n]) for n in looks]
        return cls(list(looks), horizon, stats, np.ones((b.shape[0], len(looks)), bool), rows=[None] * len(looks))

    @classmethod
    def for_rounds(cls, baseline: np.ndarray, evolved: np.ndarray, looks: Sequence[int], horizon: int) -> CellLooks:
        """No look taken yet; ``take`` computes each look's statistics as rows take it."""
        b, e = rule.as_rows(baseline), rule.as_rows(evolved)
        return cls(list(looks), horizon, [], np.zeros((b.shape[0], len(looks)), bool), arms=(b, e))

    def take(self, j: int, step: np.ndarray) -> None:
        """The rows in ``step`` take look ``j`` (the looks in order); its statistics are computed for them."""
        self.taken[:, j] = step
        if j < len(self.stats):  # built whole
            return
        assert j == len(self.stats) and self.arms is not None, "looks are taken in order"
        idx, n = np.flatnonzero(step), self.looks[j]
        b, e = self.arms
        self.stats.append(rule.cell_stats(b[idx, :n], e[idx, :n]))  # row by row the same numbers as all rows'
        self.rows.append(idx)

    def fractions(self) -> list[float]:
        return [n / self.horizon for n in self.looks]

    def per_look(self, values: Callable[[rule.CellStats], np.ndarray], fill: float) -> np.ndarray:
        """(S, K): ``values`` of each look's statistics in the rows it holds, ``fill`` elsewhere."""
        out = np.full(self.taken.shape, fill)
        for j, st in enumerate(self.stats):
            out[slice(None) if self.rows[j] is None else self.rows[j], j] = values(st)
        return out

    def current(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(d, se, df, t_eff, runs) at each row's last look taken (NaN / 0 where none was taken)."""
        taken = self.taken
        last = np.where(taken.any(axis=1), taken.shape[1] - 1 - np.argmax(taken[:, ::-1], axis=1), -1)
        rows = np.arange(taken.shape[0])
        out = []
        for f in ("d", "se", "df", "t_eff"):
            stacked = self.per_look(lambda st, f=f: getattr(st, f), np.nan)
            out.append(np.where(last >= 0, stacked[rows, np.maximum(last, 0)], np.nan))
        runs = np.where(last >= 0, np.array(self.looks)[np.maximum(last, 0)], 0)
        return out[0], out[1], out[2], out[3], runs


def claim_look_p(cl: CellLooks, kind: str, margin: float, better: str, spending: str) -> tuple[np.ndarray, np.ndarray]:
    """(confirm, refute) repeated p-values of a claim at each look, each (S, K); 1 where a look was not taken.

    Each entry is the smallest alpha at which that look's test (its conditions folded in, as in
    ``rule.effective_p``) crosses the look's boundary; the claim's repeated p-value is the row minimum.
    The per-look values do not depend on which looks were taken, so they are computed once per claim
    kind, cell and look (a look's values only depend on its own p-values) and masked by ``taken`` on
    every round.
    """
    key = (kind, margin, better, spending)
    s, k = cl.taken.shape
    if key not in cl.cache:
        cl.cache[key] = (np.ones((s, k)), np.ones((s, k)), [0])  # the looks computed so far: done[0]
    rc, rr, done = cl.cache[key]
    ts = cl.fractions()
    for j in range(done[0], len(cl.stats)):
        at = slice(None) if cl.rows[j] is None else cl.rows[j]
        for out, p in zip((rc, rr), rule.effective_p(cl.stats[j], kind, margin, better), strict=True):
            alone = np.ones((p.shape[0], k))  # the other looks' columns are not used
            alone[:, j] = p
            out[at, j] = repeated_p(alone, ts, spending)[:, j]
    done[0] = len(cl.stats)
    return np.where(cl.taken, rc, 1.0), np.where(cl.taken, rr, 1.0)


def claim_repeated_p(
    cl: CellLooks, kind: str, margin: float, better: str, spending: str
) -> tuple[np.ndarray, np.ndarray]:
    """(confirm, refute) repeated p-values of a claim on a cell over the looks each row took; each (S,)."""
    rc, rr = claim_look_p(cl, kind, margin, better, spending)
    return rc.min(axis=1), rr.min(axis=1)


# --------------------------------------------------------------------------
# One round's decisions
# --------------------------------------------------------------------------


@dataclass
class RoundState:
    decisions: Decisions
    done: dict[Hashable, np.ndarray]  # cell key -> (S,) bool: nothing on it needs more runs
    pending: dict[Hashable, list[np.ndarray]]  # cell key -> per claim on it: (S,) bool still undecided


def decide_round(
    claims: Sequence[Claim],
    looks: Mapping[Hashable, CellLooks],
    metric_of: Mapping[str, str],
    decision: DecisionRule,
    decidable: set[str],
) -> RoundState:
    """Statuses after the looks taken so far, and which cells are finished.

    ``claims[i].cells`` are cell keys of ``looks``; ``metric_of`` maps a claim to the key of its
    metric's looks: ``looks[(cell, metric)]``.
    """
    seq = decision.sequential
    assert seq is not None
    pc, pr = {}, {}
    for c in claims:
        cols_c, cols_r = [], []
        for cell in c.cells:
            a, b = claim_repeated_p(looks[(cell, metric_of[c.id])], c.kind, c.margin, c.better, seq.spending)
            cols_c.append(a)
            cols_r.append(b)
        pc[c.id], pr[c.id] = np.stack(cols_c, axis=1), np.stack(cols_r, axis=1)
    dec = decide_from_p(claims, pc, pr, decision)
    by_cell: dict[Hashable, list[tuple[str, np.ndarray]]] = {}
    for j, c in enumerate(claims):
        hyp_decided = dec.status[:, j] != INCONCLUSIVE
        for k, cell in enumerate(c.cells):
            undecided = (dec.cell_status[c.id][:, k] == INCONCLUSIVE) & ~hyp_decided
            by_cell.setdefault(cell, []).append((c.id, undecided))
    done, pending = {}, {}
    for cell, items in by_cell.items():
        required = [u for hid, u in items if hid in decidable]
        if required:
            done[cell] = ~np.any(np.stack(required, axis=1), axis=1)
        else:  # a guard cell: done when each claim on it is decided or a regression on its metric is ruled out
            by_id = dict(items)
            open_ = [by_id[c.id] & ~_guarded(c, cell, looks, metric_of) for c in claims if cell in c.cells]
            done[cell] = ~np.any(np.stack(open_, axis=1), axis=1)
        pending[cell] = [u for _, u in items]
    return RoundState(dec, done, pending)


def _guarded(c: Claim, cell: Hashable, looks: Mapping, metric_of: Mapping[str, str]) -> np.ndarray:
    """On a guard cell: the latest look rules out a regression beyond twice the noise floor on this claim's metric.

    A guard cell serves only under-powered hypotheses; it is there to catch a regression, so it
    stops once the one-sided 95% interval of the change on the metric's bad side stays below
    2 x T_eff (the size of change the plan plans directional claims at). This only stops runs,
    never adds a rejection, so every error rate is that of the looks taken.
    """
    cl = looks[(cell, metric_of[c.id])]
    d, se, df, t_eff, n = cl.current()
    with np.errstate(invalid="ignore"):
        upper = rule.bad_sign(c.better) * d + _t95(df) * se
        return (upper < np.log1p(2 * t_eff)) & (n > 0)


def _t95(df: np.ndarray) -> np.ndarray:
    return special.stdtrit(np.where(df > 0, df, 1.0), GUARD_LEVEL)


# --------------------------------------------------------------------------
# The round loop on simulated promotions
# --------------------------------------------------------------------------


@dataclass
class SimulationResult:
    confirmed: dict[str, float]  # hypothesis -> share of promotions confirming it
    refuted: dict[str, float]
    runs: dict[Hashable, float]  # cell -> expected runs per arm
    rounds: float  # expected number of rounds
    runs_by_row: dict[Hashable, np.ndarray] = field(default_factory=dict)
    decisions: Decisions | None = None  # the final decisions, one row per simulated promotion


def simulate(
    claims: Sequence[Claim],
    metric_of: Mapping[str, str],
    arms: Mapping[tuple[Hashable, str], tuple[np.ndarray, np.ndarray]],
    decision: DecisionRule,
    schedules: Mapping[Hashable, Sequence[int]],
) -> SimulationResult:
    """Run the round loop on a batch of simulated promotions.

    ``arms[(cell, metric)]`` holds (S, horizon) run values per arm, drawn by the caller;
    ``schedules[cell]`` the cell's looks. Every cell takes its next look each round until it is done
    (``decide_round``) or at its horizon.
    """
    seq = decision.sequential
    assert seq is not None
    looks = {key: CellLooks.for_rounds(b, e, schedules[key[0]], schedules[key[0]][-1]) for key, (b, e) in arms.items()}
    sims = next(iter(looks.values())).taken.shape[0]
    cells = sorted({cell for cell, _ in looks}, key=repr)
    running = {cell: np.ones(sims, bool) for cell in cells}
    last = {cell: np.zeros(sims, int) for cell in cells}
    rounds = np.zeros(sims)
    state = None
    for r in range(max(len(schedules[c]) for c in cells)):
        active = np.zeros(sims, bool)
        for cell in cells:
            if r >= len(schedules[cell]):
                running[cell][:] = False
                continue
            step = running[cell]
            for (c2, _), cl in looks.items():
                if c2 == cell:
                    cl.take(r, step)
            last[cell] = np.where(step, schedules[cell][r], last[cell])
            active |= step
        rounds += active
        if not active.any():
            break
        state = decide_round(claims, looks, metric_of, decision, set(seq.decidable))
        for cell in cells:
            running[cell] &= ~state.done[cell]
    assert state is not None
    status = state.decisions.status
    return SimulationResult(
        confirmed={hid: float(np.mean(status[:, j] == CONFIRMED)) for j, hid in enumerate(state.decisions.ids)},
        refuted={hid: float(np.mean(status[:, j] == REFUTED)) for j, hid in enumerate(state.decisions.ids)},
        runs={cell: float(last[cell].mean()) for cell in cells},
        rounds=float(rounds.mean()),
        runs_by_row=last,
        decisions=state.decisions,
    )


# --------------------------------------------------------------------------
# The runner's entry point between rounds
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CellProgress:
    """One cell's state between rounds.

    ``outliers`` are shown, not re-run: the looks count runs and the plan's outlier allowance budgets
    for the ones the rule drops; adding runs after seeing which ones were bad would change the schedule
    the boundaries were computed for.
    """

    workload: str
    rate: float
    runs: dict[str, int]  # treatment -> runs so far
    looks: list[int]  # looks taken
    schedule: list[int]
    done: bool
    pending: list[str]  # hypotheses still undecided on this cell
    reason: str
    outliers: list[str] = field(default_factory=list)  # runs the robust rule flags at the latest look
    lacking: dict[str, int] = field(default_factory=dict)  # metric -> usable reports of the cell without it

    @property
    def label(self) -> str:
        return f"{self.workload}@{self.rate:g}"


@dataclass(frozen=True)
class RoundCell:
    """Run each treatment of this cell up to ``repetitions`` (cumulative, per arm)."""

    workload: str
    rate: float
    repetitions: int
    add: dict[str, int]  # treatment -> runs to add this round
    horizon: int | None = None  # no repetition number beyond it is ever run (None: no cap)


@dataclass(frozen=True)
class Progress:
    round: int  # rounds completed (the most looks any cell has taken)
    cells: list[CellProgress]
    next_round: list[RoundCell]
    deferred: list[RoundCell]  # wanted but beyond the budget given
    hypotheses: dict[str, str]  # id -> "confirmed" / "refuted" / "undecided"

    @property
    def done(self) -> bool:
        return not self.next_round


def assess(
    spec: Any,
    reports: Any,
    *,
    budget_minutes: float | None = None,
    run_minutes: Callable[[str, float], float] | None = None,
    stopped: Mapping[str, str] | None = None,
) -> Progress:
    """Where a sequential benchmark stands: which cells are decided, and what to run next.

    ``spec``: the evaluation spec (``bot.bench.evaluation_spec.EvaluationSpec``: its ``hypotheses``,
    ``cells`` and ``decision`` with a ``sequential`` rule); ``reports``: a ``ReportSet`` of the runs
    so far. ``budget_minutes`` (GPU-minutes left) with ``run_minutes(workload, rate)`` (GPU-minutes of
    one run of one arm) limits the next round: cells serving decidable hypotheses come first, the
    least advanced first; what does not fit is listed in ``deferred``. ``stopped`` (cell label -> why)
    names cells the runner gave up on (their runs add no usable report): they are done, with that reason.

    A cell's runs count per arm only with every metric its hypotheses need; a report without one is
    counted in the cell's ``lacking`` (metric -> reports), never silently as no run at all.
    """
    from bot.stats.cells import BASELINE, EVOLVED, ReportIndex, rate_key

    decision: DecisionRule = spec.decision
    seq = decision.sequential
    if seq is None:
        raise ValueError("the evaluation spec has no sequential rule; run the fixed plan instead")
    index = ReportIndex.build(reports)
    claims, metric_of = [], {}
    for hid in sorted(spec.hypotheses):
        h = spec.hypotheses[hid]
        claims.append(Claim(hid, h.direction.value, h.margin, h.better, tuple(c.label() for c in h.cells)))
        metric_of[hid] = h.metric
    cells = {c.label(): c for c in spec.cells}
    loaded = _loaded_runs(reports)
    stopped = stopped or {}
    runs: dict[str, dict[str, int]] = {}
    lacking: dict[str, dict[str, int]] = {}
    looks: dict[tuple[str, str], CellLooks] = {}
    flagged: dict[str, list[str]] = {}
    for hid, metric in metric_of.items():
        for label in next(c for c in claims if c.id == hid).cells:
            if (label, metric) in looks:
                continue
            cell = cells[label]
            b, e = index.arms(cell.workload, cell.rate, metric)
            schedule = seq.looks[label]
            taken = looks_taken(schedule, min(b.size, e.size))
            have = runs.setdefault(label, {BASELINE: int(b.size), EVOLVED: int(e.size)})
            have.update({BASELINE: min(have[BASELINE], int(b.size)), EVOLVED: min(have[EVOLVED], int(e.size))})
            without = sum(loaded.get((cell.workload, rate_key(cell.rate), arm), 0) for arm in (BASELINE, EVOLVED))
            if without > b.size + e.size:
                lacking.setdefault(label, {})[metric] = without - int(b.size + e.size)
            looks[(label, metric)] = _looks_of(b, e, taken, schedule[-1])
            if taken:
                st = looks[(label, metric)].stats[-1]
                labels_b, labels_e = index.labels(cell.workload, cell.rate, metric)
                flagged.setdefault(label, []).extend(
                    f"{metric}: {arm} rep {rep}"
                    for arm, reps, mask in ((BASELINE, labels_b, st.flag_b[0]), (EVOLVED, labels_e, st.flag_e[0]))
                    for rep, bad in zip(reps, mask, strict=False)
                    if bad
                )
    state = decide_round(claims, looks, metric_of, decision, set(seq.decidable)) if looks else None
    progress_cells, wanted = [], []
    for label in sorted(cells, key=lambda x: (cells[x].workload, cells[x].rate)):
        if label not in seq.looks or label not in runs:
            continue
        cell, schedule = cells[label], seq.looks[label]
        have = min(runs[label].values())
        taken = looks_taken(schedule, have)
        at_horizon = have >= schedule[-1]
        decided = bool(state.done[label][0]) if state is not None and taken else False
        on_cell = [c.id for c in claims if label in c.cells]
        pending = (
            [hid for hid, u in zip(on_cell, state.pending[label], strict=True) if bool(u[0])]
            if state is not None and taken
            else on_cell
        )
        done = at_horizon or decided or label in stopped
        guard = not any(h in seq.decidable for h in on_cell)  # serves only under-powered hypotheses
        if at_horizon:
            reason = "horizon reached"
        elif label in stopped and not decided:
            reason = stopped[label]
        elif decided and guard and pending:
            reason = "a guard cell: a regression beyond twice the noise floor is ruled out (its hypotheses are under-powered)"
        elif decided:
            reason = "every hypothesis that needs it is decided"
        else:
            reason = "undecided"
        progress_cells.append(
            CellProgress(
                cell.workload,
                cell.rate,
                runs[label],
                taken,
                list(schedule),
                done,
                pending,
                reason,
                flagged.get(label, []),
                lacking.get(label, {}),
            )
        )
        if not done:
            target = next(k for k in schedule if k > have) if taken else schedule[0]
            add = {t: max(0, target - n) for t, n in runs[label].items()}
            wanted.append(
                (
                    any(h in seq.decidable for h in pending),
                    have / schedule[-1],
                    label,
                    RoundCell(cell.workload, cell.rate, target, add, schedule[-1]),
                )
            )
    wanted.sort(key=lambda w: (not w[0], w[1], w[2]))
    next_round, deferred = [], []
    left = budget_minutes
    for _, _, _, rc in wanted:
        cost = sum(rc.add.values()) * (run_minutes(rc.workload, rc.rate) if run_minutes else 0.0)
        if left is not None and run_minutes is not None and cost > left:
            deferred.append(rc)
            continue
        next_round.append(rc)
        if left is not None:
            left -= cost
    names = {CONFIRMED: "confirmed", REFUTED: "refuted", INCONCLUSIVE: "undecided"}
    hyps = {hid: names[int(state.decisions.of(hid)[0])] for hid in metric_of} if state is not None else {}
    return Progress(
        round=max((len(c.looks) for c in progress_cells), default=0),
        cells=progress_cells,
        next_round=next_round,
        deferred=deferred,
        hypotheses=hyps,
    )


def _loaded_runs(reports: Any) -> dict[tuple[str, float, str], int]:
    """(workload, rate, arm) -> usable reports of that arm, whatever metrics they carry (one row per run)."""
    from bot.stats.cells import rate_key

    req = getattr(reports, "requests", None)
    if req is None or not len(req):
        return {}
    out: dict[tuple[str, float, str], int] = {}
    for arm, wl, rate in zip(req["treatment"], req["workload"], req["rate"], strict=False):
        key = (str(wl), rate_key(rate), str(arm))
        out[key] = out.get(key, 0) + 1
    return out


def _looks_of(b: np.ndarray, e: np.ndarray, taken: list[int], horizon: int) -> CellLooks:
    if not taken:  # no look yet: nothing to test, nothing crossed
        cl = CellLooks.from_arms(np.full((1, 2), np.nan), np.full((1, 2), np.nan), [2], max(horizon, 2))
        cl.taken[:] = False
        return cl
    return CellLooks.from_arms(b[None, :], e[None, :], taken, horizon)
