"""The first screen of a promotion's result: did it transfer, did anything regress, what was not tested.

A researcher opens the report to learn whether BLIS's claims held in llm-d and how
sure the numbers are; a maintainer wants to know whether anything got worse. So the
report opens the way Conbench does ("Found 0 regressions", then the machines): one
headline, then one table of the distinct claims (BLIS's prediction beside what
llm-d measured, with its interval), the regressions, and what could not be tested
and why. The detail below says each number once: one line per cell, the method
explained once in "How to read this" instead of in every sentence.

Pure: (hypothesis, verdict) pairs in, markdown out. Every string a person or a
program wrote (titles, workloads, reasons) goes through ``md``. The claims table
and the cell and verdict wording are ``bot.render.claims``'s, the same the PR body
shows, so a claim never reads differently in two places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bot.escape import md
from bot.model import Direction, Effect, Hypothesis, Track, Verdict, VerdictStatus
from bot.model.evidence import CONDITION_NOT_RECORDED
from bot.render.claims import (
    ci_level,
    claim_rows,
    indicated_cells,
    measured_text,
    pct,
    shed_demoted,
    verdict_text,
)
from bot.render.lost import lost_summary
from bot.stats.unjudged import (
    NOT_BENCHMARKED,
    NOT_EXERCISED,
    NOT_RUNNABLE,
    rule_caveats,
    unexercised_cause,
    unjudged_reason,
)

Pair = tuple[Hypothesis, Verdict]

#: The verdicts the statistics decide; any other status (e.g. "not testable as translated") is a reason not to test.
DECIDED = (VerdictStatus.CONFIRMED, VerdictStatus.REFUTED, VerdictStatus.INCONCLUSIVE)
NO_RESULTS = "no-results"

_FAMILY = {"ttft": "TTFT", "tpot": "time per output token", "itl": "inter-token latency", "e2e": "end-to-end latency"}
_WHOLE = {"throughput": "output-token throughput", "request_rate": "request rate"}


def _num(x: float) -> str:
    """Four significant digits, without an exponent (31,810 ms, not 3.181e+04): ``bot.stats.explain.mean_text``,
    the format verdicts.md and the findings use, so a mean reads alike on every page."""
    from bot.stats.explain import mean_text

    return mean_text(x)


def _p(x: float | None) -> str:
    """p-values in the one format the verdicts use (``bot.stats.explain.p_text``), so a number reads alike."""
    from bot.stats.explain import p_text

    return "n/a" if x is None else p_text(x)


def _p_adjusted(e: Effect) -> str:
    """The adjusted p with what overrode the cell's test beside it (``bot.stats.explain.p_adjusted_text``)."""
    from bot.stats.explain import p_adjusted_text

    return p_adjusted_text(e.p_adjusted, e.held_by)


def _unit(metric: str) -> str:
    from bot.model.metrics import METRICS

    return METRICS[metric].unit if metric in METRICS else ""


def metric_words(metric: str) -> str:
    """``e2e_p95`` -> "p95 end-to-end latency", ``ttft_mean`` -> "mean TTFT"; unknown names stay as written."""
    if metric in _WHOLE:
        return _WHOLE[metric]
    family, _, stat = metric.partition("_")
    if family in _FAMILY and stat:
        return f"{stat} {_FAMILY[family]}"
    return metric


def claim_words(h: Hypothesis) -> str:
    """What a hypothesis claims, in a few words built from its prediction (its title when it has none)."""
    p = h.prediction
    if p is None:
        return md(h.title)
    m = metric_words(p.metric)
    what = {
        Direction.DECREASE: f"lower {m}",
        Direction.INCREASE: f"higher {m}",
        Direction.NO_WORSE: f"{m} no worse than {p.margin:.0%}",
        Direction.EQUIVALENT: f"{m} within ±{p.margin:.0%}",
    }[p.direction]
    return md(f"{what} on {', '.join(h.workloads)}")


# --------------------------------------------------------------------------
# What a verdict is, in a word
# --------------------------------------------------------------------------


def is_untested(h: Hypothesis, v: Verdict) -> bool:
    """Not tested: no benchmark could decide it (not runnable here, no prediction, not testable as translated,
    no results). An inconclusive verdict with measured cells was tested."""
    if v.status not in DECIDED:
        return True
    return v.status is VerdictStatus.INCONCLUSIVE and not _measured(v) and not v.admission


def _measured(v: Verdict) -> list[Effect]:
    return [e for e in v.effects if math.isfinite(e.rel_change)]


def status_word(h: Hypothesis, v: Verdict) -> str:
    if NO_RESULTS in v.flags:
        return "not measured yet"
    if NOT_RUNNABLE in v.flags:
        return NOT_RUNNABLE
    if NOT_EXERCISED in v.flags:
        return NOT_EXERCISED
    if CONDITION_NOT_RECORDED in v.flags:
        return CONDITION_NOT_RECORDED
    if v.status is VerdictStatus.INCONCLUSIVE and NOT_BENCHMARKED in v.flags:
        return NOT_BENCHMARKED
    if v.status is VerdictStatus.INCONCLUSIVE and not _measured(v) and not v.admission:
        return "inconclusive (no measured cell)"
    return v.status.value


def untested_reason(h: Hypothesis, v: Verdict) -> str:
    """Why a hypothesis was not tested, in the words the stage that decided it wrote."""
    if NO_RESULTS in v.flags:
        return "no benchmark results were supplied"
    if v.status is VerdictStatus.NOT_TESTABLE and h.not_testable:
        return h.not_testable
    if NOT_EXERCISED in v.flags:  # the status already says it
        return v.summary.removeprefix("[SAMPLE DATA] ").removeprefix(f"{h.id} is {NOT_EXERCISED}: ")
    from bot.stats.shedding import NOT_USED_FLAG

    # "it needs a run this cluster cannot do: <why>": the status already says the first half. A planned priority
    # mix that judged nothing says why in its own words instead.
    if h.not_in_plan and NOT_USED_FLAG not in v.flags:
        return h.not_in_plan.removeprefix("it needs a run this cluster cannot do: ")
    return v.summary.removeprefix("[SAMPLE DATA] ")


# --------------------------------------------------------------------------
# Headline
# --------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _rest(pairs: Sequence[Pair]) -> str:
    """'(1 refuted, 1 inconclusive)' for the claims that are not confirmed, in a fixed order; the claims the
    shedding guard held back are named, since their p-values alone would have confirmed them."""
    words: dict[str, int] = {}
    for h, v in pairs:
        if v.status is not VerdictStatus.CONFIRMED:
            w = status_word(h, v)
            words[w] = words.get(w, 0) + 1
    order = ["refuted", "inconclusive"]
    keys = sorted(words, key=lambda w: (order.index(w) if w in order else len(order), w))
    shed = [h.id for h, v in pairs if v.status is VerdictStatus.INCONCLUSIVE and any(map(shed_demoted, v.effects))]
    note = f"; the shedding guard held back {', '.join(shed)}" if shed else ""
    against = [h.id for h, v in pairs if indicated_cells(h, v)]
    if against:
        note += f"; {', '.join(against)} indicated against the prediction, not significant after multiplicity control"
    return f" ({', '.join(f'{words[w]} {_unnested(w)}' for w in keys)}{note})" if keys else ""


def _unnested(word: str) -> str:
    """A status word inside the headline's parentheses, without parentheses of its own:
    "inconclusive (no measured cell)" reads "inconclusive with no measured cell"."""
    head, _, inner = word.partition(" (")
    return f"{head} with {inner.rstrip(')')}" if inner else word


def headline(pairs: Sequence[Pair]) -> str:
    """One line: transferred / partly / not (Track A's distinct claims), and regressions found (Track C refuted).

    "Not transferred" needs a refuted claim; with none confirmed and none refuted the claims are "not shown":
    inconclusive is no evidence that the policy does not transfer.

    Plain text the bot wrote from counts and hypothesis ids (no person's words), safe in markdown as is.
    """
    claims = [(h, v) for h, v in pairs if h.track is Track.A]
    guards = [(h, v) for h, v in pairs if h.track is Track.C]
    if pairs and all(NO_RESULTS in v.flags for _, v in pairs):
        n = len(claims)
        return (
            f"Not measured yet: no benchmark results, so none of the {_plural(n, 'claim')} "
            f"and {_plural(len(guards), 'regression guard')} is decided."
        )
    unmeasured = _unmeasured(pairs)
    if unmeasured and not any(v.status in (VerdictStatus.CONFIRMED, VerdictStatus.REFUTED) for _, v in claims + guards):
        arms = " and ".join(unmeasured)
        return (
            f"Not measured: nothing was measured for the {arms} arm{'s' if len(unmeasured) > 1 else ''} (no report "
            f"of it was used), so none of the {_plural(len(claims), 'claim')} and "
            f"{_plural(len(guards), 'regression guard')} is decided."
        )
    if any(NOT_EXERCISED in v.flags for _, v in claims + guards) and not any(
        v.status in (VerdictStatus.CONFIRMED, VerdictStatus.REFUTED) for _, v in claims + guards
    ):
        # The cells send only traffic the plugin does not act on, or its order ranks alike (gate 2 said so):
        # nothing about the transfer was measured, so neither "transferred" nor "not shown" (which reads as measured) fits.
        return _unexercised_headline(claims, guards, [(h, v) for h, v in pairs if h.track is Track.B])
    confirmed = sum(v.status is VerdictStatus.CONFIRMED for _, v in claims)
    n = len(claims)
    if n == 0:
        transfer = "No transfer claim to judge"
    elif all(NOT_EXERCISED in v.flags for _, v in claims):
        # A scheduler's guards are judged on cells that leave its order inert: the claims were never measured.
        cause = unexercised_cause(v.summary for _, v in claims)
        gaps = [(h, v) for h, v in pairs if h.track is Track.B]  # set aside with the claims: counted with them
        transfer = (
            f"{NOT_EXERCISED.capitalize()}: {cause}, so none of the {_set_aside_count([*claims, *gaps])} is decided"
        )
    elif confirmed == n:
        transfer = "Transferred: " + ("the claim is confirmed" if n == 1 else f"all {n} claims confirmed")
    elif confirmed:
        transfer = f"Partly transferred: {confirmed} of {_plural(n, 'claim')} confirmed"
    elif any(v.status is VerdictStatus.REFUTED for _, v in claims):
        transfer = f"Not transferred: none of the {_plural(n, 'claim')} confirmed"
    else:
        transfer = f"Not shown: none of the {_plural(n, 'claim')} confirmed"
    transfer += "" if n and all(NOT_EXERCISED in v.flags for _, v in claims) else _rest(claims)
    from bot.model.better import better_than_margin, differ_count
    from bot.model.better import regressed as regression

    # An equivalence guard refuted by being better than its margin is no regression (bot.model.better).
    regressed = [h.id for h, v in guards if regression(h, v)]
    better = [h.id for h, v in guards if better_than_margin(h, v)]
    indicated = [_indicated_words(h, v) for h, v in guards if indicated_cells(h, v)]
    # Requests the evolved arm lost beyond the baseline's are a regression no guard's metric counts (bot.render.lost).
    lost = lost_summary(v for _, v in pairs)
    if regressed:
        regress = f"{_plural(len(regressed), 'regression')} found ({', '.join(regressed)})"
        if indicated:
            regress += f"; {len(indicated)} more indicated ({'; '.join(indicated)})"
        regress += f"; {lost}" if lost else ""
    elif indicated:
        # A guard whose whole interval lies beyond its margin is no "no regression" of any kind: the data point to
        # one, only not significantly after multiplicity control.
        held = sum(v.status is VerdictStatus.CONFIRMED for _, v in guards)
        # the other undecided guards' bound stays: one indicated regression says nothing of their intervals
        others = [v for h, v in guards if v.status is not VerdictStatus.CONFIRMED and not indicated_cells(h, v)]
        upto = _not_ruled_out(others)
        regress = (
            f"{_plural(len(indicated), 'regression')} indicated, not significant after multiplicity control "
            f"({'; '.join(indicated)}; {held} of {_plural(len(guards), 'guard')} shown to hold"
            + (f"; regressions up to {upto:.1%} not ruled out for the other {len(others)} undecided" if upto else "")
            + ")"
        )
        regress += f"; {lost}" if lost else ""
    elif lost:
        # However the guards' metrics came out, a plugin that fails more requests has regressed.
        held = sum(v.status is VerdictStatus.CONFIRMED for _, v in guards)
        regress = f"{lost}, a regression the guards' metrics do not count" + (
            f" ({held} of {_plural(len(guards), 'guard')} shown to hold on their metrics)" if guards else ""
        )
    else:
        held = sum(v.status is VerdictStatus.CONFIRMED for _, v in guards)
        regress = "no regression found"
        if guards and held + len(better) < len(guards):
            # An undecided guard is no evidence that nothing regressed (a plan's guards often catch a real 10%
            # regression less than half the time, bot.bench.guard_power): "found" would read as reassurance.
            upto = _not_ruled_out(
                [v for h, v in guards if v.status is not VerdictStatus.CONFIRMED and not better_than_margin(h, v)]
            )
            regress = (
                f"no regression shown ({held} of {_plural(len(guards), 'guard')} shown to hold, "
                f"{len(guards) - held - len(better)} undecided"
                + (f"; regressions up to {upto:.1%} not ruled out" if upto is not None else "")
                + ")"
            )
    # Measured on cells that never exercise one of its rules (gate 2 said so): the verdicts stand, caveated.
    caveat = rule_caveats(v for _, v in claims + guards)
    return (
        f"{transfer}; {regress}"
        + (f"; {differ_count(better)}" if better else "")
        + (f"; caveat: {caveat}" if caveat else "")
        + "."
    )


#: How the headline counts the set-aside hypotheses of each track.
_COUNTED = ((Track.A, "claim"), (Track.B, "sim-to-real gap"), (Track.C, "regression guard"))


def _set_aside_count(pairs: Sequence[Pair]) -> str:
    """'1 claim, 3 sim-to-real gaps and 6 regression guards': every hypothesis of ``pairs`` set aside as not
    measurable on these cells, by track (the verdicts table lists each of them so)."""
    set_aside = [h for h, v in pairs if NOT_EXERCISED in v.flags]
    counted = [_plural(n, word) for track, word in _COUNTED if (n := sum(h.track is track for h in set_aside))]
    return ", ".join(counted[:-1]) + f" and {counted[-1]}" if len(counted) > 1 else counted[0]


def _unexercised_headline(claims: Sequence[Pair], guards: Sequence[Pair], gaps: Sequence[Pair] = ()) -> str:
    """'Not measurable on these cells: ... so none of the 6 regression guards is decided; A1 is undecided for another
    reason (not decided by benchmarks).' Only the hypotheses set aside for the cells' traffic are counted under that
    cause, every one of them (the Track B ``gaps`` too: the table lists them set aside, so a headline that left them
    out counted fewer than the table); one undecided for another reason (no prediction, a run the cluster cannot
    do) says its own, the reason its verdict, the PR and verdicts.md give, so no page attributes it to a cause
    another page does not."""
    cause = unexercised_cause(v.summary for h, v in [*claims, *gaps, *guards] if NOT_EXERCISED in v.flags)
    line = f"{NOT_EXERCISED.capitalize()}: {cause}, so none of the {_set_aside_count([*claims, *gaps, *guards])} is decided"
    by_reason: dict[str, list[str]] = {}
    for h, v in [*claims, *guards]:
        if NOT_EXERCISED not in v.flags:
            by_reason.setdefault(unjudged_reason(v) or status_word(h, v), []).append(h.id)
    for reason, ids in by_reason.items():
        line += f"; {', '.join(ids)} {'is' if len(ids) == 1 else 'are'} undecided for another reason ({reason})"
    return line + "."


def _indicated_words(h: Hypothesis, v: Verdict) -> str:
    """'C5 at least +7.1% at 10 req/s': the largest regression a guard's intervals lie wholly beyond."""
    from bot.render.claims import several_workloads, where

    e, bound = max(indicated_cells(h, v), key=lambda eb: abs(eb[1]))
    return f"{h.id} at least {pct(bound)} {where(e, several_workloads(v))}"


def _not_ruled_out(verdicts: Sequence[Verdict]) -> float | None:
    """The largest regression the undecided guards' intervals still allow: the bad end of each measured cell's
    interval (higher for a lower-is-better metric), at least 0; None when no cell was measured."""
    from bot.model.metrics import METRICS

    worst = [
        e.ci_high if METRICS[e.metric].better == "lower" else -e.ci_low
        for v in verdicts
        for e in v.effects
        if e.metric in METRICS and math.isfinite(e.ci_low) and math.isfinite(e.ci_high)
    ]
    return max(0.0, *worst) if worst else None


def _unmeasured(pairs: Sequence[Pair]) -> list[str]:
    """The arms stage 5 had no report of (``bot.bench.layout.unmeasured_flag``), in the plan's order."""
    from bot.bench.layout import TREATMENTS, flagged_unmeasured

    named = {arm for _, v in pairs for arm in flagged_unmeasured(v.flags)}
    return [arm for arm in TREATMENTS if arm in named]


def is_sample(pairs: Sequence[Pair]) -> bool:
    from bot.bench.evidence import SAMPLE_FLAG

    return any(SAMPLE_FLAG in v.flags for _, v in pairs)


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------


def claims_table(pairs: Sequence[Pair], *, alpha: float = 0.05) -> str:
    """The distinct claims (Track A), through the one table the PR body uses too (``_claims_table.md.j2``)."""
    from bot.render import render

    verdicts = {v.hypothesis_id: v for _, v in pairs}
    rows = claim_rows([h for h, _ in pairs], verdicts, Track.A)
    return render("_claims_table.md.j2", claims=rows, ci_level=ci_level(alpha)).rstrip("\n")


def guards_table(pairs: Sequence[Pair], track: Track, *, alpha: float = 0.05) -> str:
    """Track B or C hypotheses that were tested, one row each: what must hold | measured | verdict."""
    rows = [(h, v) for h, v in pairs if h.track is track and not is_untested(h, v)]
    if not rows:
        return ""
    head = "Gap: what must hold" if track is Track.B else "Guard"
    out = [f"| {head} | llm-d measured ({ci_level(alpha)} CI) | Verdict |", "|---|---|---|"]
    for h, v in rows:
        gap = f"`{md(h.source)}`: " if track is Track.B else ""
        out.append(f"| **{h.id}** {gap}{claim_words(h)} | {measured_text(v)} | {verdict_text(v, h)} |")
    return "\n".join(out)


def untested_list(pairs: Sequence[Pair]) -> str:
    """What could not be tested and why, one line each (one line in all when no results were supplied)."""
    rows = [(h, v) for h, v in pairs if is_untested(h, v)]
    if not rows:
        return "Every hypothesis was tested."
    if all(NO_RESULTS in v.flags for _, v in rows):
        ids = ", ".join(h.id for h, _ in rows)
        return f"- {ids}: no benchmark results were supplied; run the stage 4 plan on a GPU cluster."
    lines = []
    unexercised = [(h, v) for h, v in rows if NOT_EXERCISED in v.flags]
    if unexercised:  # one cause for all of them (the cells' traffic), said once
        ids = ", ".join(f"**{h.id}**" for h, _ in unexercised)
        lines.append(f"- {ids}: {NOT_EXERCISED}: {md(untested_reason(*unexercised[0]))}")
        rows = [(h, v) for h, v in rows if NOT_EXERCISED not in v.flags]
    for h, v in rows:
        # The verdict's own reason (``unjudged_reason``, as the PR body and verdicts.md say it), once: a title that
        # already ends with it ("...: no planned run varies it") is not followed by it again.
        word = unjudged_reason(v) or status_word(h, v)
        said = "" if h.title.endswith(word) else f": {md(word)}"
        lines.append(f"- **{h.id}** {md(h.title)}{said}: {md(untested_reason(h, v))}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Detail: each fact once
# --------------------------------------------------------------------------


def cell_line(h: Hypothesis, e: Effect) -> str:
    """One measured cell in one line: change, interval, the two means, noise floor, repetitions, p raw and adjusted."""
    unit = _unit(e.metric)
    excluded = f" ({_plural(len(e.excluded_runs), 'outlier run')} excluded)" if e.excluded_runs else ""
    line = (
        f"- {md(e.workload)} at {e.rate:g} req/s: {pct(e.rel_change)} [{pct(e.ci_low)}, {pct(e.ci_high)}]; "
        f"{_num(e.baseline_mean)} → {_num(e.evolved_mean)} {md(unit)}; noise floor {e.t_eff:.1%}; "
        f"n {e.n_baseline}/{e.n_evolved}{excluded}; p {_p(e.p_value)}"
        + (f" (adjusted {_p_adjusted(e)})" if e.p_adjusted is not None else "")
        + _lost(e)
    )
    if e.status is not None and e.status is not VerdictStatus.CONFIRMED:
        line += f"; {e.status.value}: {md(e.reason)}" if e.reason else f"; {e.status.value}"
    return line


def _lost(e: Effect) -> str:
    """'; requests lost 0.00% → 12.00%' when either arm lost requests: an admission policy's shed rate, which
    its latency must be read beside (a latency gain bought by rejecting requests is no gain). Two decimals, as the
    shedding guard's flags give them (a baseline's 0.02% is no "0.0%"); nothing when both round to 0.00%."""
    if e.lost_baseline is None or e.lost_evolved is None:
        return ""
    shown = f"{e.lost_baseline:.2%}", f"{e.lost_evolved:.2%}"
    return "" if shown == ("0.00%", "0.00%") else f"; requests lost {shown[0]} → {shown[1]}"


def _hypothesis_notes(v: Verdict) -> list[str]:
    """Flags other than where the data came from (said once at the top) and than the untested reasons."""
    from bot.bench.evidence import SAMPLE_FLAG

    skip = {SAMPLE_FLAG, NOT_RUNNABLE, NOT_BENCHMARKED, NOT_EXERCISED, NO_RESULTS, VerdictStatus.NOT_TESTABLE.value}
    return [f for f in v.flags if f not in skip]


def detail_markdown(h: Hypothesis, v: Verdict, *, findings_link: str) -> str:
    """A hypothesis in a few lines: title, verdict, BLIS's prediction; one line per cell; its flags."""
    head = f"**{h.id}** {md(h.title)}: {verdict_text(v, h)}"
    if h.prediction and h.prediction.blis_magnitude is not None:
        head += f" · BLIS predicted {pct(h.prediction.blis_magnitude)}"
    head += f" · [findings]({findings_link})"
    lines = [head]  # an untested hypothesis's reason is said once, under "Not tested"
    lines += [cell_line(h, e) for e in v.effects]
    lines += [f"- Note: {md(f)}" for f in _hypothesis_notes(v)]
    return "\n".join(lines)


def how_to_read(pairs: Sequence[Pair], *, alpha: float = 0.05) -> str:
    """The method, said once: what a number, an interval and each verdict mean, and which tests were used."""
    level = ci_level(alpha)
    lines = [
        (
            f"- **Measured**: the evolved arm against the baseline arm in each cell (workload @ rate), as the ratio of "
            f"geometric means over repetitions (outlier runs excluded), with its {level} Welch interval. "
            "Per cell: change [interval]; baseline → evolved mean; noise floor; repetitions baseline/evolved; p, and "
            "adjusted for multiplicity."
        ),
        (
            "- **Noise floor** T_eff = max(5%, 2 × the baseline's coefficient of variation): a change inside it is not "
            "counted as an effect, however small its p."
        ),
        (
            f"- **Confirmed**: every cell moves as predicted beyond the noise floor (or stays within the margin) and is "
            f"significant after weighted Holm over every benchmarked hypothesis of the promotion (adjusted p ≤ {alpha:g}). "
            "**Refuted**: a cell's contradiction is significant after Holm over the refutation tests of every "
            "benchmarked hypothesis: a claim moves the other way beyond the noise floor in some cell and confirms in "
            "none; a guard or gap lies beyond its margin in any cell. **Inconclusive**: neither; not evidence of no "
            "effect. A cell whose whole interval lies on the wrong side but whose contradiction is not significant "
            'stays inconclusive and says what it indicates ("a regression of at least …% indicated, not significant after '
            'multiplicity control").'
        ),
        (
            "- **Claims** (Track A) are BLIS's predictions; **guards** (Track C) must not regress (no worse than the "
            "margin, one-sided non-inferiority) or must match (within ±margin, TOST); **gaps** (Track B) are the "
            "sim-to-real differences the policy touches, held to no regression under the gap's condition."
        ),
        (
            f"- **{NOT_RUNNABLE.capitalize()}**: the hypothesis needs a run the declared cluster cannot do. "
            "**Not testable as translated**: the mechanism reads a signal the plugin holds constant or the translation "
            "removed, so no benchmark of this plugin can show it. "
            f"**{NOT_EXERCISED.capitalize()}**: the plugin does not act on the traffic every planned cell sends (an "
            "admitter that never sheds their priority-0 requests), so the cells would measure the baseline twice, or a "
            "scheduler whose evolved order ranks every request of them alike, so they measure queue length "
            "re-weighted, not the order."
        ),
    ]
    tests: dict[str, list[str]] = {}
    for h, v in pairs:
        for t in sorted({e.test for e in v.effects if e.test}):
            tests.setdefault(t, []).append(h.id)
    if tests:
        lines.append(
            "- **Tests**: " + "; ".join(f"{md(t)} ({', '.join(ids)})" for t, ids in sorted(tests.items())) + "."
        )
    return "\n".join(lines)


__all__ = [
    "DECIDED",
    "claim_words",
    "claims_table",
    "detail_markdown",
    "guards_table",
    "headline",
    "how_to_read",
    "is_sample",
    "is_untested",
    "metric_words",
    "status_word",
    "untested_list",
    "untested_reason",
]
