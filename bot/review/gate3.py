"""Gate 3 (validation): the seed's checklist over what stage 5 committed, without rerunning it.

- unit tests pass: ``go-checks.json`` as committed by stage 5 (gofmt, vet, build, test);
- every hypothesis has a verdict, and each verdict is consistent with the data it records: the
  verdict follows from its cells (confirmed only when every cell confirms; refuted only with a refuted
  cell), each decided cell's interval, change and adjusted p agree with its status, and every cell
  measures the hypothesis's own metric on one of its workloads;
- an undecided cell whose whole interval lies on the wrong side (beyond the margin, or against the prediction)
  is raised: its refutation was not significant after multiplicity control, so no count calls it a regression;
- a cell where the evolved arm lost more requests (failed or incomplete) than the baseline beyond the shedding
  guard's tolerance is raised: a regression no verdict counts;
- reports that failed validation (listed in ``verdicts.md``) are surfaced, and reports no look of their cell
  reached are noted (they decide nothing); no results at all is said;
- the arms were measured alike: the testbeds the reports record (``validation/testbed.json``) are one, or
  every one of them ran both arms.
What the evidence says (Track A direction, Track B gaps, Track C regressions) is summarized for the
person deciding; a refuted hypothesis is a result, not a defect of the artifacts.

Nothing here runs Go or the statistics again: the review reads the branch through the forge like
the reviewer does, so a review never rewrites the evidence it judges.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from bot.directives import request_changes_command, work_argument
from bot.model import Direction, Finding, Severity, Track, Verdict, VerdictStatus, status_counts
from bot.review import gate3_evidence

#: The change request the ``G3.no-results`` fix tells people to make once reports exist: gate 3's ``rejudge``
#: directive (``bot.directives``), so the command applies as written instead of being refused as prose.
REJUDGE_RESULTS = "rejudge: the benchmark results are in --results now"

#: On GitHub the same rerun is a comment; stage 5 then dispatches benchmark.yml for the plan at the branch's stage 4
#: commit when no report on the branch belongs to it (stage 5's ``benchmark_due``).
REJUDGE_ON_GITHUB = (
    "comment `/request-changes rejudge: benchmark the current plan`: stages 4 and 5 run again, and stage 5 "
    "dispatches benchmark.yml for the plan at this branch's stage 4 commit when no report on the branch belongs "
    "to it, then judges the reports it delivers"
)

CHECKLIST = [
    "unit tests pass",
    "every hypothesis has a verdict",
    "verdicts consistent with the data",
    "benchmark reports valid",
    "both arms measured on one testbed",
    "direction / gaps / regressions summarized",
]

ALPHA = 0.05  # the one-sided significance level stage 5 judges at (bot.stats.verdicts)


def _hypotheses(ctx) -> tuple[list, list[Finding]]:
    from bot.hypotheses import hypothesis_order, is_hypothesis_file, parse_hypothesis
    from bot.model import RequestError

    out, bad = [], []
    for p in ctx.list(ctx.paths.hypotheses_dir):
        if not is_hypothesis_file(p):
            continue
        try:
            out.append(parse_hypothesis(ctx.read(p) or "", p))
        except RequestError as exc:
            bad.append(Finding(severity=Severity.CRITICAL, check="G3.hypotheses", file=p, line=1, message=str(exc)))
    return sorted(out, key=hypothesis_order), bad


def _verdicts(ctx) -> dict[str, Verdict] | None:
    text = ctx.read(ctx.paths.verdicts_json)
    if text is None:
        return None
    return {v["hypothesis_id"]: Verdict.model_validate(v) for v in json.loads(text)}


def _go_checks(ctx) -> list[Finding]:
    path = ctx.paths.go_checks
    text = ctx.read(path)
    if text is None:
        return [
            Finding(
                severity=Severity.CRITICAL,
                check="G3.tests-pass",
                file=path,
                message="no Go check results on the branch (stage 5 writes them)",
                fix="rerun stage 5",
            )
        ]
    try:
        checks = json.loads(text)
        ok = {k: bool(checks[k]) for k in ("gofmt_ok", "vet_ok", "build_ok", "test_ok")}
        failed = int(checks.get("tests_failed", 0))
        recorded = [Finding.model_validate(f) for f in checks.get("findings", [])]
    except (ValueError, KeyError, TypeError, ValidationError):
        return [
            Finding(
                severity=Severity.CRITICAL,
                check="G3.tests-pass",
                file=path,
                message="the Go check results are unreadable",
                fix="rerun stage 5",
            )
        ]
    out = list(recorded)
    out += _stale_checks(ctx, checks.get("checked_files"))
    if not all(ok.values()) or failed:
        bad = ", ".join(
            k.removesuffix("_ok").replace("build", "go build").replace("vet", "go vet").replace("test", "go test")
            for k, v in ok.items()
            if not v
        )
        out.append(
            Finding(
                severity=Severity.CRITICAL,
                check="G3.tests-pass",
                file=path,
                message=f"the plugin's checks fail: {bad or 'go test'} ({failed} test(s) failed)",
                fix="fix the plugin or its translation and rerun stages 4-5",
            )
        )
    return out


def _stale_checks(ctx, checked: dict[str, str] | None) -> list[Finding]:
    """The recorded results belong to the plugin files on the branch, byte for byte (evidence binding)."""
    from bot.model import sha256_text

    path = ctx.paths.go_checks
    if not isinstance(checked, dict) or not checked:
        return [
            Finding(
                severity=Severity.CRITICAL,
                check="G3.tests-pass",
                file=path,
                message="the Go check results do not say which files they checked",
                fix="rerun stage 5",
            )
        ]
    summary = ctx.read(ctx.paths.translation_json)
    package_dir = json.loads(summary).get("package_dir", "") if summary else ""
    now = {p: sha256_text(ctx.read(p) or "") for p in ctx.list(package_dir) if p.endswith(".go")} if package_dir else {}
    changed = sorted(p for p in set(now) | set(checked) if now.get(p) != checked.get(p))
    if not changed:
        return []
    return [
        Finding(
            severity=Severity.CRITICAL,
            check="G3.tests-pass",
            file=changed[0],
            message=f"the Go check results on the branch are for other plugin files: {', '.join(changed)} changed after stage 5 checked them",
            fix="rerun stages 4-5 so the results belong to the committed plugin",
        )
    ]


def _cell_problems(h, v: Verdict) -> list[str]:
    """Why the recorded cells do not support the recorded verdict (empty when they do)."""
    problems = []
    p = h.prediction
    if h.not_testable or v.status is VerdictStatus.NOT_TESTABLE:
        # The translated plugin cannot exercise its mechanism: no cell may judge it, either way.
        if not h.not_testable:
            problems.append("it is recorded as not testable as translated, but its hypothesis gives no reason")
        elif v.status is not VerdictStatus.NOT_TESTABLE:
            problems.append(f"the translated plugin cannot test it ({h.not_testable.rstrip('.')})")
        if v.effects:
            problems.append("it is not testable as translated but records judged cells")
        return problems
    if v.admission:  # judged on the priority mix: its status must follow from the counts it records
        from bot.stats.shedding import recorded_status

        if v.effects:
            problems.append("it is judged on the priority mix but also records measured cells")
        derived = recorded_status(v.admission, ALPHA)
        if derived is not v.status:
            problems.append(f"its recorded per-class admission counts make it {derived.value}")
        return problems
    if p is None:
        if v.effects:
            problems.append("it makes no benchmark prediction but records measured cells")
        elif v.status is not VerdictStatus.INCONCLUSIVE:
            problems.append(f"it makes no benchmark prediction, so the data cannot make it {v.status.value}")
        return problems
    statuses = [e.status for e in v.effects]
    for e in v.effects:
        where = f"{e.workload} @ {e.rate:g}"
        if e.metric != p.metric:
            problems.append(f"the cell at {where} measures {e.metric}, not the predicted {p.metric}")
        if e.workload not in h.workloads:
            problems.append(f"the cell at {where} is on a workload the hypothesis does not cover")
        if e.status in (VerdictStatus.CONFIRMED, VerdictStatus.REFUTED):
            if e.p_adjusted is not None and e.p_adjusted >= ALPHA:
                problems.append(
                    f"the cell at {where} is {e.status.value} with adjusted p {e.p_adjusted:.3g} >= {ALPHA}"
                )
            if p.direction in (Direction.DECREASE, Direction.INCREASE):
                s = -1.0 if p.direction is Direction.DECREASE else 1.0
                want = s if e.status is VerdictStatus.CONFIRMED else -s
                if not (want * e.ci_low > 0 and want * e.ci_high > 0 and want * e.rel_change > e.t_eff):
                    problems.append(
                        f"the cell at {where} is {e.status.value} but its change {e.rel_change:+.1%} "
                        f"(interval {e.ci_low:+.1%} to {e.ci_high:+.1%}, noise floor {e.t_eff:.1%}) does not show it"
                    )
            elif p.direction is Direction.EQUIVALENT and e.status is VerdictStatus.CONFIRMED:
                if not (-p.margin < e.ci_low and e.ci_high < p.margin):
                    problems.append(
                        f"the cell at {where} is confirmed equivalent but its interval leaves ±{p.margin:.0%}"
                    )
    if v.status is VerdictStatus.CONFIRMED and (
        not statuses or any(s is not VerdictStatus.CONFIRMED for s in statuses)
    ):
        problems.append("it is confirmed although not every cell confirms")
    if v.status is VerdictStatus.REFUTED and VerdictStatus.REFUTED not in statuses:
        problems.append("it is refuted although no cell is refuted")
    return problems


def _unmeasured_arms(ctx, recorded: dict[str, Verdict]) -> list[Finding]:
    """An arm with no report stage 5 could use (``bot.bench.layout.unmeasured_flag``): no cell compares the arms,
    so the verdicts decide nothing, and a gate that passed them passed a plugin nobody measured. Blocking, like
    ``G3.no-results``, which is the same gap for both arms."""
    from bot.bench.layout import TREATMENTS, UNMEASURED, flagged_unmeasured

    if any("no-results" in v.flags for v in recorded.values()):
        return []
    named = {arm for v in recorded.values() for arm in flagged_unmeasured(v.flags)}
    out = []
    for arm in (a for a in TREATMENTS if a in named):
        said = next(f for v in recorded.values() for f in v.flags if f.startswith(f"{UNMEASURED}{arm} arm"))
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.arm-not-measured",
                file=ctx.paths.verdicts_md,
                message=f'{said}: no claim or regression guard is decided, and "no regression found" would mean '
                "nothing",
                fix=REJUDGE_ON_GITHUB
                if ctx.home == "github"
                else f"run the plan's {arm} arm (`promote bench run` at the branch's stage 4 commit runs both) and put "
                f"its reports in the --results directory under {arm}/, or fix why they were left out; then "
                f"{request_changes_command(3, REJUDGE_RESULTS, ctx.work)} so stage 5 judges them",
            )
        )
    return out


def _benchmark_ended_early(ctx) -> list[Finding]:
    """A benchmark that failed or was cancelled decided less than its plan; one stopped at the GPU budget did so by
    a person's choice of cap. Either way the gate says so (read from stage 5's gpu-time.json)."""
    from bot.bench.gpu_time import GpuTime

    text = ctx.read(ctx.paths.gpu_time)
    try:
        spent = GpuTime.from_json(text) if text else None
    except (ValueError, TypeError):
        spent = None
    if spent is None or not spent.stopped:
        return []
    failed = spent.stopped in ("failed", "cancelled")
    return [
        Finding(
            severity=Severity.IMPORTANT if failed else Severity.SUGGESTION,
            check="G3.benchmark-complete",
            file=ctx.paths.gpu_time,
            message=f"the benchmark ended early ({spent.stopped}) after {spent.cell_runs} cell run(s): "
            f"{spent.stop_reason[:300]}",
            fix=(
                "resume it (dispatch benchmark.yml again with resume=true and the inputs the stopped job's summary "
                "lists) and let stage 5 judge the whole run"
                if ctx.home == "github"
                else "resume it (`promote bench run ... --resume`, or dispatch benchmark.yml with resume=true) and "
                "let stage 5 judge the whole run"
            )
            if failed
            else "raise the GPU-minute cap and resume, or decide on what the cap allowed",
        )
    ]


def _rejected_reports(ctx) -> list[tuple[str, str]]:
    """The reports stage 5 did not use, as it recorded them (validation/reports-not-used.json)."""
    text = ctx.read(ctx.paths.reports_not_used)
    if not text:
        return []
    try:
        rows = json.loads(text)
        return [(str(r["report"]), str(r["reason"])) for r in rows]
    except (ValueError, TypeError, KeyError):
        return [(ctx.paths.reports_not_used, "unreadable: stage 5 writes a JSON list of {report, reason}")]


def review(ctx) -> list[Finding]:
    findings = _go_checks(ctx)
    recorded = _verdicts(ctx)
    if recorded is None:
        return [
            *findings,
            Finding(
                severity=Severity.CRITICAL,
                check="G3.verdicts",
                file=ctx.paths.verdicts_json,
                message="no verdicts on the branch",
            ),
        ]
    hypotheses, bad = _hypotheses(ctx)
    findings += bad
    for h in hypotheses:
        v = recorded.get(h.id)
        if v is None:
            findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check="G3.verdict-missing",
                    file=ctx.paths.verdicts_json,
                    message=f"{h.id} has no verdict",
                )
            )
            continue
        for problem in _cell_problems(h, v):
            findings.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check="G3.verdict-consistent",
                    file=ctx.paths.verdicts_json,
                    message=f"{h.id} is recorded as {v.status.value}, but {problem}",
                    fix="rerun stage 5; never edit verdicts by hand",
                )
            )
    findings += gate3_evidence.indicated(ctx, hypotheses, recorded)
    findings += gate3_evidence.requests_lost(ctx, recorded)
    known = {h.id for h in hypotheses}
    for hid in sorted(set(recorded) - known):
        findings.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.verdict-consistent",
                file=ctx.paths.verdicts_json,
                message=f"verdict for {hid}, which is not a hypothesis on the branch",
            )
        )
    if any("no-results" in v.flags for v in recorded.values()):
        findings.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.no-results",
                file=ctx.paths.verdicts_md,
                message="no benchmark results: every hypothesis is inconclusive",
                fix=REJUDGE_ON_GITHUB
                if ctx.home == "github"
                else "run the stage 4 plan on GPUs (`promote bench run` at the branch's stage 4 commit); then "
                f"`promote run REQUEST --results DIR --work {work_argument(ctx.work)}` and "
                f"{request_changes_command(3, REJUDGE_RESULTS, ctx.work)} so "
                "stage 5 judges them",
            )
        )
    findings += _unmeasured_arms(ctx, recorded)
    findings += _benchmark_ended_early(ctx)
    findings += gate3_evidence.testbeds(ctx)
    findings += _unused_reports(ctx)
    findings += _priority_mix(ctx)
    return findings


def priority_mix_gaps(ctx) -> list[str]:
    """What a planned priority mix lacked, as stage 5 recorded it (validation/priority-mix.json): "no evolved
    priority-mix result could be used (...)", or nothing when it judged (or the plan has no mix)."""
    text = ctx.read(ctx.paths.priority_mix)
    if not text:
        return []
    try:
        doc = json.loads(text)
        reason = doc.get("not_judged")
    except (ValueError, AttributeError):
        return [f"{ctx.paths.priority_mix} is unreadable: stage 5 writes it; rerun stage 5"]
    return [str(reason)] if reason else []


def _priority_mix(ctx) -> list[Finding]:
    """The plan runs a priority mix, but no result of it was used for an arm: an admitter's shedding, the one thing
    the mix is for, is not judged, and the page must not read as if it were."""
    out = []
    for reason in priority_mix_gaps(ctx):
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.priority-mix",
                file=ctx.paths.verdicts_md,
                message=f"the plan's priority mix judged nothing: {reason}; the shedding order (per-class admit "
                "rate) is not decided",
                fix=REJUDGE_ON_GITHUB
                if ctx.home == "github"
                else "`promote bench run` runs the plan's priority mix: its manifest.json says which mix runs it set "
                "aside and why (`priority_mix`, `rejected`); fix the cause and run the same command again with --resume "
                "(it runs the set-aside mix runs again, within the budget), or run priority-mix/experiment.yaml by hand "
                "and put each run's results.json + run_metadata.yaml in the --results directory; then "
                f"{request_changes_command(3, REJUDGE_RESULTS, ctx.work)}",
            )
        )
    return out


#: Words of a reason that says a report was measured for something other than what the branch plans.
_MISMATCH = (
    "the plan's",
    "belongs to",
    "image",
    "arm",
    "plugin config",
    "EndpointPickerConfig",
    "differs from this branch",
)


#: A run whose Track B fault never happened (bot.bench.fault_runs): the claim about it was never measured.
FAULT_FIX = (
    "the cluster did not let the runner carry out the fault, so the claims about it are not runnable here (their "
    "verdicts say so): let it (for pod-failure, `kubectl delete pod` in the benchmark namespace must succeed while "
    "the harness runs), benchmark those cells again and rejudge, or decide those claims by review"
)


def _unused_reports(ctx) -> list[Finding]:
    """One finding per distinct reason stage 5 gave for leaving reports out, with how many and which: after a
    parameter change every report of the earlier plan fails the same way, and 56 rows saying so buried the one
    thing to do."""
    from bot.bench.fault_runs import NEVER_HAPPENED
    from bot.bench.reports_aside import valid_not_used_reasons
    from bot.stats.judged import PAST_LAST_LOOK

    by_reason: dict[str, list[str]] = {}
    for path, reason in _rejected_reports(ctx):
        by_reason.setdefault(reason, []).append(path)
    out = []
    for reason, paths in by_reason.items():
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        what = (
            f"benchmark report {paths[0]} was not used"
            if len(paths) == 1
            else f"{len(paths)} benchmark reports were not used"
        )
        message = f"{what}: {reason}" + (f" ({shown})" if len(paths) > 1 else "")
        if reason.startswith(valid_not_used_reasons()):
            # Valid reports nothing rests on: cells the plan does not have (sample data for every workload, an
            # earlier plan's run) or runs no look reached. Nothing in them is wrong to fix, so they block nothing.
            use = (
                "to use such runs, plan more looks (a longer horizon) at gate 2 and benchmark again, else leave them "
                "out of the results"
                if reason.startswith(PAST_LAST_LOOK)
                else "leave them out of the results, or plan their cells at gate 2 if they should decide something"
            )
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check="G3.report-unused",
                    file=ctx.paths.reports_not_used,
                    message=message,
                    fix=f"nothing in the verdicts rests on them; {use}",
                )
            )
            continue
        mismatch = any(w in reason for w in _MISMATCH)
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check="G3.report-invalid",
                file=ctx.paths.verdicts_md,
                message=message,
                fix=FAULT_FIX
                if reason.startswith(NEVER_HAPPENED)
                else (
                    f"they were measured for another plan than the one at this branch's stage 4 commit: {REJUDGE_ON_GITHUB}"
                    if mismatch and ctx.home == "github"
                    else "they were measured for another plan than the one at this branch's stage 4 commit: run that "
                    "plan (`promote bench run`), put its reports in the run's --results directory, then "
                    + request_changes_command(3, "rejudge: reports of the current plan", ctx.work)
                    + (SAMPLE_CANNOT_FOLLOW if _sample_data(ctx) else "")
                    if mismatch
                    else f"fix or leave out the report(s); stage 5 lists every report it did not use in {ctx.paths.reports_not_used}"
                ),
            )
        )
    return out


#: Said after G3.report-invalid's fix when the reports left out for another plan are sample data (trial4): after a
#: gate-1 `param` change the rehearsal's sample reports all fail the same way, and "run that plan" alone read as if
#: making them again would do. The sample script reads promotion.yaml, not the gates' decisions (README, "Quick
#: start"), so it writes the BLIS values again.
SAMPLE_CANNOT_FOLLOW = (
    "; these reports are sample data, which cannot follow a gate-1 change: the README's sample-data command "
    "(`python examples/weighted-adaptive/make_sample_reports.py --request REQUEST --out RESULTS`) makes them for "
    "promotion.yaml as written, the plugin's BLIS values, and reads no gate decision, so making them again gives "
    "the same; to see stage 5 judge sample reports, make them and rehearse again in a new --work (`promote run "
    "REQUEST --work NEW --results RESULTS --allow-sample-data`) without the gate-1 change, or decide this gate "
    "knowing nothing was judged"
)


def _sample_data(ctx) -> bool:
    """Whether stage 5 judged sample data (its verdicts carry the sample-data flag, as ``notes`` reads them)."""
    from bot.bench.evidence import SAMPLE_FLAG

    return any(SAMPLE_FLAG in v.flags for v in (_verdicts(ctx) or {}).values())


def _margins(hypotheses) -> str:
    """The margin(s) in force, as gate 2 left them: a change request may have set one (``margin: 0.04``) or one per
    hypothesis, so the figure is read from the hypotheses rather than assumed to be the default."""
    found = sorted({h.prediction.margin for h in hypotheses if h.prediction is not None})
    if not found:
        return "the margin"
    return f"{found[0]:.0%}" if len(found) == 1 else f"{found[0]:.0%}-{found[-1]:.0%}"


def notes(ctx) -> list[str]:
    """The evidence in a few lines, for the person deciding gate 3: the counts per track, then only what needs a
    look (refuted, not testable, flagged beyond the sample-data flag). The numbers are in the claims table
    (verdicts.md), which the gate's headline points to; repeating every summary here buried the few that matter."""
    from bot.bench.evidence import SAMPLE_FLAG
    from bot.render.claims import indicated_cells
    from bot.render.lost import lost_summary
    from bot.stats.explain import INDICATED_FLAG
    from bot.stats.unjudged import caveat_mark

    recorded = _verdicts(ctx) or {}
    hypotheses, _ = _hypotheses(ctx)
    out = []
    sample = any(SAMPLE_FLAG in v.flags for v in recorded.values())
    if sample:
        out.append(
            "The benchmark reports are SAMPLE DATA (--allow-sample-data): these verdicts are no evidence for the plugin."
        )
    out += rule_caveat_notes(hypotheses, recorded)
    for t, label in (
        (Track.A, "Track A (direction matches BLIS)"),
        (Track.B, "Track B (sim-to-real gaps)"),
        (Track.C, f"Track C (no regression beyond {_margins(h for h in hypotheses if h.track is Track.C)})"),
    ):
        hs = [h for h in hypotheses if h.track is t]
        out.append(f"{label}: {status_counts(recorded[h.id].status for h in hs if h.id in recorded)} of {len(hs)}")
        if t is Track.C and (lost := lost_summary(recorded.values())):
            out.append(f"{lost[0].upper()}{lost[1:]}: a regression the guards' metrics do not count")
        for h in hs:
            v = recorded.get(h.id)
            # An early group-sequential stop (bot.stats.verdicts) is how the plan works, not something to look at;
            # an indicated cell's flag repeats the reason the note gives (``held_back``).
            skip = ("decided at look", INDICATED_FLAG)
            flags = (
                [f for f in v.flags if f != SAMPLE_FLAG and not f.startswith(skip) and not caveat_mark(f)] if v else []
            )
            if v and (
                v.status in (VerdictStatus.REFUTED, VerdictStatus.NOT_TESTABLE) or flags or indicated_cells(h, v)
            ):
                out.append(_note(h, v, flags))
    return out


def rule_caveat_notes(hypotheses, recorded: dict[str, Verdict]) -> list[str]:
    """'A1, C1: per-tenant rule not exercised on these cells (gate 2's G2.tenants-exercised): cause; to measure it,
    fix': one line per caveat naming every verdict that carries it, so a confirmed claim is never read bare at gate 3
    and the same long flag is not repeated under each hypothesis."""
    from bot.stats.unjudged import caveat_mark

    by_flag: dict[str, list[str]] = {}
    for h in hypotheses:
        for flag in filter(caveat_mark, recorded[h.id].flags if h.id in recorded else []):
            by_flag.setdefault(flag, []).append(h.id)
    return [f"{', '.join(ids)}: {flag}" for flag, ids in by_flag.items()]


def _note(h, v: Verdict, flags: list[str]) -> str:
    """'A3 inconclusive (title): at 20 req/s: within the noise floor. Flag: attenuated: ...': the verdict's own
    reason in the words the report and the PR give it (``bot.render.claims.held_back``), then the flags as flags,
    so an attenuation flag never reads as why a claim is inconclusive."""
    from bot.model.better import DIFFERS_BETTER, better_than_margin
    from bot.render.claims import held_back
    from bot.render.outcome import is_untested
    from bot.stats.unjudged import unjudged_reason

    # A guard refuted by being better than its margin is no regression (bot.model.better): it differs.
    head = f"{h.id} {DIFFERS_BETTER if better_than_margin(h, v) else v.status.value} ({h.title})"
    if is_untested(h, v):  # not runnable, not testable as translated: its flags are the reason
        # The verdict's own reason first, in the words the PR body and verdicts.md give it (``unjudged_reason``).
        reason = unjudged_reason(v)
        said = ([reason] if reason else []) + [f for f in flags if f != reason]
        return head + (f": {'; '.join(said)}" if said else "")
    reason = held_back(h, v)
    text = head + (f": {reason}" if reason else "")
    if flags:
        text += (". " if reason else ": ") + ("Flags: " if len(flags) > 1 else "Flag: ") + "; ".join(flags)
    return text


__all__ = ["CHECKLIST", "notes", "review"]
