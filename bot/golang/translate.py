"""Stage 2's work: the plugin, its unit test, the fidelity measured, and the report that justifies it all.

``translate`` generates the plugin package (``generate``), then asks the execution port once for the
differential harness (``harness_build``/``harness_run``): the compiled plugin and the compiled BLIS
original on the same sampled states, plus the probes that choose the unit test's inputs. It writes
the unit test from those probes (``testgen``), turns the measured fidelity into findings, anchors
every finding to a plugin file and line, and renders the translation report (``report``). The same
source, dictionary, plugin type and feedback give byte-identical output.

Reviewer feedback from a "request changes" decision is recorded in the report under "Reviewer
feedback addressed". A few directives steer the generator (``feedback_options``); anything else is
recorded for the author agent and the reviewer, never silently ignored.

Findings added here (check ids, stable):

- ``translate.fidelity-below-floor`` (IMPORTANT): the plugin decides like the BLIS original in fewer
  sampled states than the floor; the message names the largest cause, the fix what exists for it
  (``fidelity_fixes``).
- ``translate.fidelity-values-chosen`` (SUGGESTION): below the floor only because of the values a person set at
  gate 1 (with the evolved ones it is at or above it): their decision, on record, so the review can converge.
- ``translate.fidelity-not-measured`` (IMPORTANT): the differential harness could not run.
- ``translate.program-does-not-compile`` (CRITICAL): the evolved program itself does not compile as BLIS Go
  (``harness_failed``); it replaces the not-measured finding, and no parameter is called untested.
- ``translate.output-flood`` (CRITICAL): the harness was stopped by the sandbox's output limit: the evolved
  code prints on every call, which in the EPP writes to its standard output on every request.
- ``translate.evolved-code-fails`` (IMPORTANT, CRITICAL past the floor's share): the plugin, or the BLIS
  original itself, panicked or errored on sampled states; names how many, an example and the first message,
  and where it was raised: the evolved line, and for the plugin's own panics its evolved.go line, where the
  finding is anchored (the plugin's error names that line, so the EPP's log does too).
- ``translate.fidelity-differences`` (SUGGESTION): at or above the floor, the remaining differences and
  the mapping each comes from.
- ``translate.untested-parameter`` (SUGGESTION): a parameter llm-d inputs can set that no generated test
  exercises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from bot import directives
from bot.dictionary import Dictionary
from bot.golang import (
    dead_branches,
    dead_code,
    fidelity_classes,
    harness_build,
    never_binds,
    param_coverage,
    param_relations,
    probes,
    sequences,
)
from bot.golang.analysis_types import Analysis
from bot.golang.blis_mirror import program_line
from bot.golang.fidelity_admit import findings as admit_findings
from bot.golang.fidelity_fixes import below_floor_fix, flagged_setup, largest_cause, setup_fix
from bot.golang.fidelity_unexplained import held_constant_clause, unexplained_words
from bot.golang.generate import Generated, generate
from bot.golang.gofiles import format_go, remap_lines
from bot.golang.gonames import go_float
from bot.golang.harness_failed import HARNESS_DID_NOT_RUN, NOT_BUILT, does_not_compile, fidelity_of, flood_findings
from bot.golang.params import ParamSpec, shown, type_problem
from bot.golang.plugin_docs import config_line
from bot.golang.plugin_shape import BASELINE_SCORERS
from bot.golang.plugin_summary import ship
from bot.golang.queue_properties import findings as queue_shape_findings
from bot.golang.recalibration import (
    SIM_SCALE,
    cut_values,
    inversion_findings,
    recalibrated_findings,
    recalibration_values,
    same_step_alternatives,
)
from bot.golang.report import render_report
from bot.golang.safety import refuse_unsafe
from bot.golang.scheduling_docs import below_reference_findings
from bot.golang.source import EvolvedSource
from bot.golang.state_caps import capped_findings
from bot.golang.testgen import fields_read, render_test
from bot.model import Fidelity, FidelityCause, Finding, RequestError, Severity, TranslationSummary, sha256_text

REPORT_NAME = "translation-report.md"
CHECK_BELOW_FLOOR = "translate.fidelity-below-floor"
CHECK_NOT_MEASURED = "translate.fidelity-not-measured"
CHECK_DIFFERENCES = "translate.fidelity-differences"
CHECK_FAILS = "translate.evolved-code-fails"
CHECK_UNTESTED = "translate.untested-parameter"
CHECK_CHOSEN_VALUES = "translate.fidelity-values-chosen"


def _untested_finding(th, dead: tuple[int, str] | None) -> Finding:
    """``translate.untested-parameter`` for ``th``, saying why when it is known: a branch llm-d never enters, or a
    term added to every candidate's key, which cancels in every comparison (then it is the constant
    ``th.constant``, no parameter: dead_branches.demote, order_keys.py)."""
    if th.constant and th.cancels:
        return Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNTESTED,
            source_line=th.line,
            message=(
                f"no generated test exercises `{th.constant}` (the evolved {th.literal}, the constant `{th.constant}` "
                f"in evolved.go, not a parameter): {th.reason}"
            ),
            fix=(
                f"nothing to test: no input can make {th.constant} decide; drop it from the evolved code, or make it "
                "act on one candidate's key and not another's if it was meant to"
            ),
        )
    if dead is not None:
        line, guard = dead
        return Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNTESTED,
            source_line=th.line,
            message=(
                f"no generated test exercises `{th.constant}` (the evolved {th.literal}, the constant `{th.constant}` "
                f"in evolved.go, not a parameter): it acts only in the branch on `{guard}` (line {line}), for an SLO "
                "class the plugin never receives (it reads the class from the request's llm-d priority: critical, "
                "standard or sheddable), so it cannot change an outcome in llm-d"
            ),
            fix=f"nothing to test while that branch is dead; map the class explicitly (e.g. a priority band per "
            f"class in the InferenceObjectives) and make {th.constant} a parameter if it should act in llm-d",
        )
    return Finding(
        severity=Severity.SUGGESTION,
        check=CHECK_UNTESTED,
        source_line=th.line,
        message=(
            f"no generated test exercises `{th.param}` (the evolved {th.literal}): no llm-d input among the "
            "candidates made it change the outcome, so a regression in it would pass the unit tests"
        ),
        fix=f"add a test case for {th.param} by hand, or check in the report why it cannot decide",
    )


class TranslationError(RequestError):
    """The translation cannot be produced as asked (e.g. a malformed plugin type)."""


@dataclass
class Translation:
    summary: TranslationSummary
    files: dict[str, str]
    registration_import: str
    registration_line: str
    epp_config: str
    report_markdown: str
    findings: list[Finding]
    line_map: dict[str, dict[int, int]]
    tests: list[str] = field(default_factory=list)
    feedback_applied: list[str] = field(default_factory=list)
    harness_log: str = ""

    def to_json(self) -> str:
        """translation.json: the summary plus what reviewers and later stages need to locate things."""
        payload = {
            "summary": json.loads(self.summary.model_dump_json()),
            "registration": {"import": self.registration_import, "line": self.registration_line},
            "files": sorted(self.files),
            "line_map": {f: {str(k): v for k, v in sorted(m.items())} for f, m in sorted(self.line_map.items())},
            "tests": self.tests,
        }
        return json.dumps(payload, indent=2, sort_keys=True) + "\n"


def feedback_options(feedback: str | None) -> tuple[dict, list[str]]:
    """Directives the generator understands in reviewer feedback, and what was applied (for the report).

    Understood: ``scorers: name:weight, name:weight`` (the routing_policy.yaml the program was
    evolved with, e.g. ``scorers: prefix-affinity:1, load-balance:1``), and ``param name: value`` (a
    parameter's value in the deployed EndpointPickerConfig, e.g. a simulator-scale threshold re-calibrated
    to this deployment, or a scheduling plugin's ``incumbentSLOClass: batch``; the plugin's code keeps its
    default, BLIS's value for an evolved number, so the translation stays faithful and the deployment choice is
    on record). The feedback is every change request at gate 1 so far (``pipeline.change_requests``), so a
    later line wins: the last ``scorers:``, the last value of each parameter. A value that is neither a number
    nor a word is refused here, naming its line; whether the parameter takes it is ``check_deployed``'s.
    """
    opts: dict = {}
    applied: list[str] = []
    if not feedback:
        return opts, applied
    # The forms live in one registry the gate comments list too; a later ``scorers:`` replaces an earlier one.
    m = next(reversed(list(directives.SCORERS.finditer(feedback))), None)
    if m:
        pairs = re.findall(r"([a-z][a-z-]*)\s*:\s*(\d+(?:\.\d+)?)", m.group(1))
        bad = [n for n, _ in pairs if n not in BASELINE_SCORERS]
        if bad:
            raise TranslationError(
                f"feedback names unknown scorer(s) {', '.join(bad)}; use the BLIS names {', '.join(BASELINE_SCORERS)}"
            )
        opts["scorers"] = [(n, float(w)) for n, w in pairs]
        applied.append("baseline scorers set to " + ", ".join(f"{n}:{go_float(float(w))}" for n, w in pairs))
    deployed: dict[str, float | str] = {}
    for m in directives.PARAM.finditer(feedback):
        value = directives.param_value(m.group(2))
        if value is None:
            raise TranslationError(
                f"`param {m.group(1)}: {m.group(2)}`: the value must be {directives.PARAM_VALUE_FORM}"
            )
        deployed[m.group(1)] = value
    if deployed:
        opts["deployed"] = deployed
        applied.append(
            "deployed with "
            + ", ".join(f"{n} = {shown(v)}" for n, v in deployed.items())
            + " (set at gate 1; the plugin's defaults keep their values, BLIS's for the evolved numbers)"
        )
    return opts, applied


def check_deployed(deployed: dict[str, float | str], params: list[ParamSpec]) -> list[str]:
    """Why the ``param`` values cannot go in the EndpointPickerConfig: a name the plugin does not have, a value
    of the wrong type (``type_problem``). Every parameter the generated plugin has may be set, the scheduling
    plugin's own (``maxPseudoQueue``, ``incumbent*``) too."""
    by_name = {p.name: p for p in params}
    unknown = sorted(set(deployed) - set(by_name))
    if unknown:
        return [
            f"`param {', '.join(unknown)}` is not a parameter of the plugin (its parameters: "
            + ", ".join(p.name for p in params)
            + ")"
        ]
    mistyped = [why for n, v in deployed.items() if (why := type_problem(n, by_name[n].go_type, v))]
    if mistyped:
        return mistyped
    return [
        f"the plugin's Validate() refuses the values in effect: {r.message(deployed)}"
        for r in param_relations.broken({p.name: p.checks for p in params}, deployed)
    ]


def translate(
    src: EvolvedSource,
    analysis: Analysis,
    dictionary: Dictionary,
    *,
    plugin_type: str,
    feedback: str | None = None,
    executor=None,
    states: int | None = None,
    floor: float | None = None,
) -> Translation:
    """Generate, measure against the BLIS original through ``executor`` (default: here), test, report."""
    from bot.execution import DirectExecutor

    if not re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", plugin_type or ""):
        raise TranslationError(f"plugin type {plugin_type!r} must be kebab-case (e.g. evolved-adaptive-scorer)")
    # Defence in depth: callers refuse unsafe programs first; nothing below may build or run one. A global draw
    # in a fallback for a nil rng never runs in the plugin: dead code (named once, at the fallback), not a hazard.
    safety = dead_code.without_dead_draws(refuse_unsafe(src), analysis)
    options, applied = feedback_options(feedback)
    source_name = PurePosixPath(src.path.replace("\\", "/")).name
    gen = generate(src, analysis, dictionary, plugin_type, options=options)
    problems = check_deployed(options.get("deployed", {}), gen.params)
    if problems:
        raise TranslationError("feedback: " + "; ".join(problems))
    kind = analysis.kind.value
    defaults = {p.name: p.json_default for p in gen.params}
    checks = {p.name: p.checks for p in gen.params}
    probe_specs, untested = probes.specs(analysis, defaults, kind, gen.stateful, checks)
    reads = set(analysis.signal_names) | ({"prefix"} if gen.consumes_prefix else set())
    behaviour = probes.behaviour_specs(kind, reads, defaults)
    behaviour += sequences.sequence_specs(kind, gen.stateful, analysis, defaults, probe_specs)
    probe_specs += behaviour + probes.behaviour_moves(behaviour, defaults, checks)
    recalibrated = recalibration_values(analysis, options.get("deployed", {}))
    alternatives = same_step_alternatives(analysis, gen, recalibrated)
    cuts = cut_values(analysis, recalibrated, alternatives)
    probe_specs += probes.recalibration_specs(kind, defaults, recalibrated, alternatives, cuts)
    request, _ = harness_build.request(
        src, analysis, gen, dictionary, plugin_type, probe_specs=probe_specs, states=states, floor=floor
    )
    answer = (executor or DirectExecutor()).run(request)
    cases = probes.select(analysis, probe_specs, answer.get("probes", []), kind) if answer.get("ok") else []
    behaviours = probes.behaviour_facts(probe_specs, answer.get("probes", [])) if answer.get("ok") else []
    queue_rows = probes.queue_behaviour(probe_specs, answer.get("probes", [])) if answer.get("ok") else []
    inversions = probes.recalibration_inversions(probe_specs, answer.get("probes", [])) if answer.get("ok") else []
    # Values Validate() refuses: the harness cannot build the plugin with them, so it reports no inversion for them
    refused = param_relations.broken(checks, recalibrated)
    safe = next(
        (
            alt
            for i, alt in enumerate(alternatives)
            if answer.get("ok")
            and not param_relations.broken(checks, recalibrated | alt)
            and not probes.recalibration_inversions(probe_specs, answer["probes"], f"recalibrated:{i}")
        ),
        None,
    )
    sequence_rows = sequences.rows(probe_specs, answer.get("probes", [])) if answer.get("ok") else []
    never = never_binds.never_binds(analysis, defaults)  # a floor no input reaches: say so, and when it would bind
    # Every evolved parameter once: exercised by a named test (a threshold case or a behaviour row), or why not.
    covered = param_coverage.coverage(
        analysis, cases, probe_specs, answer.get("probes", []) if answer.get("ok") else None, untested, never
    )
    tested, untested = covered.params, covered.untested
    constants = [th for th in analysis.thresholds if th.constant and (th.dead_branch or th.cancels)]
    untested_findings = [
        never_binds.finding(th, never[th.param]) if th.param in never else _untested_finding(th, None)
        for th in analysis.thresholds
        if th.param and th.param not in tested and any(s["param"] == th.param for s in probe_specs)
    ] + [_untested_finding(th, th.dead_branch) for th in constants]
    if not answer.get("ok"):  # nothing ran, so no parameter is to blame: the one not-measured finding says it
        covered.tested, untested, untested_findings = [], [f"every parameter: {HARNESS_DID_NOT_RUN}"], []
    fidelity = fidelity_of(answer)
    if fidelity is not None and fidelity.classes:
        fidelity.classes = fidelity_classes.annotate(fidelity.classes, analysis.slo_names)
    if fidelity is not None and fidelity.measured and (setup := flagged_setup(gen)):
        fidelity.notes.append(setup[0].upper() + setup[1:])
    _plugin_sites(fidelity, gen)
    if fidelity is not None and fidelity.measured:
        fidelity.files = {
            p: sha256_text(c)
            for p, c in sorted(gen.files.items())
            if p.startswith(gen.package_dir + "/") and p.endswith(".go")
        }
    files = dict(gen.files)
    files[gen.test_path] = format_go(
        {gen.test_path: render_test(gen, analysis, plugin_type, cases, behaviours, queue_rows, sequence_rows)}
    )[gen.test_path]
    hazards = recalibrated_findings(analysis, options.get("deployed", {}))
    # A client-keyed map the plugin caps: the finding says where, with which parameter, and what a clear does.
    hazards = capped_findings(
        hazards, gen.state_caps, files[gen.main_go], gen.main_go.rsplit("/", 1)[-1], gen.state_fields
    )
    chosen = bool(options.get("deployed")) and recalibrated == options.get("deployed")
    hazards += inversion_findings(
        inversions,
        recalibrated,
        analysis,
        gen,
        chosen=chosen,
        safe=safe,
        pairs=probes.recalibration_pairs(probe_specs),
        refused=[r.message(recalibrated) for r in refused],
    )
    measured = does_not_compile(answer, src) or flood_findings(answer)  # the evolved code's own, CRITICAL
    measured = measured or fidelity_findings(fidelity, gen, lambda at: _evolved_line(src, gen, at), analysis)
    shape = queue_shape_findings(queue_rows, fields_read(gen))  # a busier endpoint scoring higher
    findings = _anchor(safety + hazards + gen.findings + untested_findings + measured + shape, gen, analysis)
    findings.sort(key=Finding.sort_key)
    files, findings = ship(files, findings, fidelity, plugin_type, gen)  # what ships says what the report says
    # gate 2 and stage 5 read an admitter's behaviour rows (bot.bench.priority_plan.sheds_nothing), and whether a
    # scheduler's order moved with the prompt length (bot.bench.order_cells): the probes ran the plugin's defaults,
    # so with values set at gate 1 the deployed plugin was not measured and nothing is said
    at_defaults = answer.get("ok") and not options.get("deployed")
    unmoved = param_coverage.prompt_length_unmoved(analysis, tested, queue_rows) if at_defaults else None
    summary = _summary(analysis, dictionary, gen, plugin_type, findings, fidelity).model_copy(
        update={"behaviour": dict(behaviours), "prompt_length_unmoved": unmoved}
    )
    report = render_report(
        src,
        analysis,
        dictionary,
        gen,
        summary,
        findings,
        source_name,
        feedback,
        applied,
        covered.tested,
        untested,
    )
    return Translation(
        summary=summary,
        files=files,
        registration_import=gen.registration_import,
        registration_line=gen.registration_line,
        epp_config=files.get(gen.config_path, gen.epp_config),
        report_markdown=report,
        findings=findings,
        line_map=gen.line_map,
        tests=[c.name for c in cases],
        feedback_applied=applied,
        harness_log=answer.get("build_log", ""),
    )


def fidelity_findings(f: Fidelity | None, gen: Generated, line_of=None, an: Analysis | None = None) -> list[Finding]:
    """IMPORTANT below the floor (naming the largest cause), SUGGESTION for what remains above it; either says when
    the figure was measured on a setup the translator flags (``fidelity_fixes.flagged_setup``)."""
    if f is None:
        return []
    if not f.measured:
        return [
            Finding(
                severity=Severity.IMPORTANT,
                check=CHECK_NOT_MEASURED,
                message=f"how often the plugin decides like the BLIS original is unknown: {f.reason}; no "
                "parameter got a generated test case either (they are chosen by running the harness)",
                fix="the generated plugin or the bot's BLIS mirror did not build (not the evolved program: it "
                "compiled): report the error above with the translation report, and translate again once it is fixed"
                if f.reason.startswith(NOT_BUILT)
                else "the evolved code crashed the harness on sampled states (the line quoted is the first of the "
                "crash): make it return on every state, with bounded memory and short error texts, and translate again",
            )
        ]
    causes = ", ".join(f"{c.mapping} ({c.states})" for c in f.causes[:3]) or "none identified"
    setup = flagged_setup(gen)
    setup_clause = f"; {setup}" if setup else ""
    out = below_reference_findings(f, gen.request_fields) + admit_findings(f, gen.stateful, gen.state_fields)
    out += failure_findings(f, line_of, set(gen.files))
    if (chosen := f.floor_missed_by_choice) is not None:
        return [*out, chosen_values_finding(f, chosen)]
    if f.below_floor:
        return [
            *out,
            Finding(
                severity=Severity.IMPORTANT,
                check=CHECK_BELOW_FLOOR,
                message=(
                    f"the plugin decides like the BLIS original ({f.decision}) in {f.agreement:.1%} of {f.states} "
                    f"sampled states, below the {f.floor_pct} floor; {largest_cause(f, an)}{setup_clause}"
                ),
                fix=setup_fix(setup) + below_floor_fix(gen, f, an),
            ),
        ]
    if f.agreement < 1.0:
        return [
            *out,
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_DIFFERENCES,
                message=(
                    f"{f.agreement:.1%} agreement with the BLIS original over {f.states} states (floor {f.floor_pct}); "
                    f"the differences come from: {causes}"
                    + (f"; {f.unattributed} from {unexplained_words(f)}" if f.unattributed else held_constant_clause(f))
                    + setup_clause
                ),
                fix=setup_fix(setup) + "read the example states in the translation report's Fidelity section",
            ),
        ]
    return out


def chosen_values_finding(f: Fidelity, chosen: FidelityCause) -> Finding:
    """SUGGESTION when only the values a person set at gate 1 take agreement below the floor: following gate 1's
    own advice (pod-scale thresholds) must let the review converge, so it is recorded as their decision, with
    both figures, and Track B measures what the values do on GPUs."""
    return Finding(
        severity=Severity.SUGGESTION,
        check=CHECK_CHOSEN_VALUES,
        message=(
            f"the plugin decides like the BLIS original ({f.decision}) in {f.agreement:.1%} of {f.states} sampled "
            f"states, below the {f.floor_pct} floor, only because of the values set at gate 1 ({chosen.why}: "
            f"{chosen.states} of the disagreements); with the evolved values it is {chosen.agreement_without:.1%}, "
            "at or above the floor, so this is recorded as the decision made at gate 1, not a gap to fix"
        ),
        fix="nothing to fix in the translation: Track B measures what the values do on GPUs; to decide otherwise, "
        "set values nearer the evolved ones at gate 1 (`param NAME: VALUE`)",
    )


def failure_findings(f: Fidelity, line_of=None, plugin_files: set[str] | None = None) -> list[Finding]:
    """A blocking finding per side that failed on sampled states: in the EPP each such request gets an error logged
    (at default verbosity) and no decision of the evolved logic's. IMPORTANT; CRITICAL when the failures are more
    than the share of states the floor lets disagree (1 - floor): they alone would then put the plugin below it,
    so no reading of the other figures can make up for them. ``line_of`` maps where the panic was raised
    (FILE:LINE) to the evolved line, so the finding points there and not at the plugin's decision method; a
    plugin-side panic raised at a line of ``plugin_files`` is anchored at that line, with or without an evolved
    line (a line the generator wrote has none)."""
    sampled = f.states + f.errors
    out = []
    for fail in f.failures:
        severity = Severity.CRITICAL if sampled and fail.states / sampled > 1.0 - f.floor else Severity.IMPORTANT
        line = line_of(fail.at) if line_of and fail.at else None
        path, _, number = fail.at.rpartition(":")
        anchor = (
            (path, int(number)) if fail.side == "plugin" and path in (plugin_files or ()) and number.isdigit() else None
        )
        site = f"{PurePosixPath(path).name}:{number}" if anchor else ""
        at = f" at evolved line {line}" if line else ""
        at = f"{at} ({site})" if at and site else at or (f" at {site}" if site else "")
        where = f"{fail.states} of {sampled} sampled states (e.g. {fail.example}; by endpoint count: {fail.shapes})"
        if fail.side == "plugin":
            what = f"the plugin fails{at} on {where} where the BLIS original decides: {fail.message}; they count as disagreements"
        else:
            too = f"the plugin fails on {fail.plugin_too} of them too" if fail.plugin_too else "the plugin does not"
            what = (
                f"the evolved program itself fails in BLIS{at} on {where}: {fail.message}; {too}; they are left out of "
                "the agreement (there is no BLIS decision to compare)"
            )
        out.append(
            Finding(
                severity=severity,
                check=CHECK_FAILS,
                source_line=line,
                file=anchor[0] if anchor else None,
                line=anchor[1] if anchor else None,
                message=what,
                fix="make the evolved logic return a decision on every state it can be given (the example is a "
                "state where it fails), and translate again; in the EPP each such request gets no decision of the evolved "
                "logic's, and the plugin logs the failure (the first, then at most one a minute with the count since)",
            )
        )
    return out


def _plugin_sites(f: Fidelity | None, gen: Generated) -> None:
    """A plugin-side failure's ``at`` as the shipped plugin's FILE:LINE. The plugin's error names a line of
    evolved.go, but the harness ran its own copy (the threshold subjects watched), whose lines are not the
    shipped file's: the two texts are matched line by line."""
    path = f"{gen.package_dir}/evolved.go"
    shipped, harness = gen.files.get(path), gen.harness_files.get(path)
    for fail in f.failures if f is not None and shipped and harness else []:
        name, _, number = fail.at.rpartition(":")
        if fail.side != "plugin" or name != "evolved.go" or not number.isdigit():
            continue
        lines = remap_lines(shipped, harness, {i: i for i in range(1, len(shipped.splitlines()) + 1)})
        fail.at = f"{path}:{lines[int(number)]}" if int(number) in lines else ""


def _evolved_line(src: EvolvedSource, gen: Generated, at: str) -> int | None:
    """The evolved source's line for where a failure was raised: a line of the BLIS original's package, or a line
    of the plugin the carry map knows (None for a line the generator wrote)."""
    path, _, number = at.rpartition(":")
    if path in gen.line_map:
        return gen.line_map[path].get(int(number)) if number.isdigit() else None
    return program_line(src, at)


def _anchor(findings: list[Finding], gen: Generated, an: Analysis) -> list[Finding]:
    """Every finding gets a plugin file and line: the line carrying its evolved line, the config line of
    a simulator-scale parameter (its own: one evolved line can hold several), the nearest carried line, or the
    plugin's decision method."""
    inverse: dict[int, tuple[str, int]] = {}
    for path in sorted(gen.line_map, key=lambda p: (not p.endswith("evolved.go"), p)):
        for gline, sline in sorted(gen.line_map[path].items()):
            inverse.setdefault(sline, (path, gline))
    main_text = gen.files.get(gen.main_go, "")
    decide = next(
        (i for i, ln in enumerate(main_text.splitlines(), 1) if re.match(r"func \(\w+ \*\w+\) (Score|Admit)\(", ln)), 1
    )
    out = []
    for f in findings:
        if f.file is None:
            where: tuple[str, int] | None = None
            if f.check == SIM_SCALE and f.param:
                line = config_line(gen.epp_config, f.param)
                where = (gen.config_path, line) if line else None
            if where is None and f.source_line is not None:
                if f.source_line in inverse:
                    where = inverse[f.source_line]
                elif inverse:
                    where = inverse[min(inverse, key=lambda s: (abs(s - f.source_line), s))]
            if where is None:
                where = (gen.main_go, decide)
            f = f.model_copy(update={"file": where[0], "line": where[1]})
        out.append(f)
    return out


def _summary(
    an: Analysis, d: Dictionary, gen: Generated, plugin_type: str, findings: list[Finding], fidelity: Fidelity | None
) -> TranslationSummary:
    signals = sorted(set(an.signal_names) | set(gen.baseline_signals))
    freshness = sorted(s for s in signals if (e := d.signal(s)) is not None and e.freshness.gap)
    untranslatable = sorted(s for s in signals if (e := d.signal(s)) is None or e.llmd is None)
    thresholds = {p.name: float(p.threshold.value) for p in gen.params if p.threshold is not None}
    return TranslationSummary(
        kind=an.kind,
        plugin_type=plugin_type,
        package_dir=gen.package_dir,
        signals=signals,
        freshness_gaps=freshness,
        touched_gaps=d.touched_gaps(an.kind, [s for s in signals if d.signal(s) is not None]),
        thresholds=thresholds,
        untranslatable=untranslatable,
        dead_logic=dead_branches.dead_logic(an),  # gate 1's dead logic: stage 3 sets aside claims resting on it
        epp_plugins=gen.epp_plugins,
        findings=findings,
        registration_import=gen.registration_import,
        registration_line=gen.registration_line,
        fidelity=fidelity,
        stateful=gen.stateful,
    )
