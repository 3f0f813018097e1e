"""The gate reviewers catch defects planted in a real promotion branch, and pass the clean one."""

from __future__ import annotations

import json
import re

import pytest

from bot.model import Severity
from bot.review import review_gate
from tests.conftest import BRANCH, private_copy


@pytest.fixture()
def branch(full_run, tmp_path):
    """A private copy of the finished promotion: fork, work dir, and a context to review it."""
    forge, ctx = private_copy(full_run, tmp_path)

    def edit(path: str, change) -> None:
        text = forge.read_file(BRANCH, path).decode()
        new = change(text)
        assert new != text, f"the edit of {path} changed nothing"
        forge.commit_files(BRANCH, {path: new.encode()}, message="plant a defect")

    def remove(path: str) -> None:
        forge.commit_files(BRANCH, {}, message="remove", remove=(path,))

    return ctx, edit, remove


def checks(findings, blocking=True):
    return {f.check for f in findings if (f.severity is not Severity.SUGGESTION or not blocking)}


def package_file(ctx, containing: str) -> str:
    """The generated plugin file (not the mirror's built-ins) whose text contains ``containing``."""
    package_dir = ctx.read_json(ctx.paths.translation_json)["package_dir"]
    return next(p for p in ctx.list(package_dir) if p.endswith(".go") and containing in (ctx.read(p) or ""))


@pytest.mark.parametrize("gate", [1, 2, 3])
def test_clean_branch_has_no_checklist_defects(branch, gate):
    ctx, _, _ = branch
    findings = review_gate(gate, ctx)
    defects = {c for c in checks(findings) if c.startswith(f"G{gate}.") and c not in ("G3.no-results",)}
    assert not defects, [f for f in findings if f.check in defects]


def test_gate1_missing_freshness_annotation(branch):
    ctx, edit, _ = branch
    path = package_file(ctx, "InFlightRequests = ")

    def drop_annotation(text: str) -> str:
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if "s.InFlightRequests = " in line)
        start = at
        while lines[start - 1].strip().startswith("//"):
            start -= 1
        return "\n".join(lines[:start] + lines[at:]) + "\n"

    edit(path, drop_annotation)
    found = [f for f in review_gate(1, ctx) if f.check == "G1.freshness-annotation"]
    assert found and found[0].file == path and found[0].severity is Severity.IMPORTANT


def test_gate1_broken_conventions_and_compile_error(branch):
    ctx, edit, _ = branch
    path = package_file(ctx, "_ scheduling.Scorer")
    edit(
        path,
        lambda t: re.sub(r"\t_ scheduling\.Scorer\s+= [^\n]+\n", "", t).replace(
            "return ", "return undefinedThing + ", 1
        ),
    )
    found = review_gate(1, ctx)
    assert "G1.plugin-conventions" in checks(found)
    assert any(f.severity is Severity.CRITICAL and f.check.startswith("toolchain") for f in found)


def test_gate1_flags_a_runner_without_the_plugins_registration(branch):
    """The mirror's runner.go now carries upstream's last registration (agent-identity, StabilityAlpha), as
    v0.10.0's does: "some plugin is registered at Alpha" no longer says this one is."""
    ctx, edit, _ = branch
    line = ctx.read_json(ctx.paths.translation_json)["registration_line"]
    edit("cmd/epp/runner/runner.go", lambda t: t.replace(f"\t{line}\n", ""))
    found = [f for f in review_gate(1, ctx) if f.check == "G1.registration"]
    assert found and found[0].severity is Severity.CRITICAL


def test_gate1_says_a_test_failing_on_package_state_fails_because_of_it(branch):
    """Stage 2 recorded a CRITICAL hazard.package-state and a failed generated test: gate 1 words the test's
    failure by its cause (the cases share the package variable) with the hazard's fix, as `promote translate`
    does, not as a bug in the generated test."""
    ctx, edit, _ = branch
    hazard = {
        "severity": "CRITICAL",
        "check": "hazard.package-state",
        "source_line": 30,
        "message": "`routed++` changes the package-level variable `routed`: state every request shares",
        "fix": "move `routed` into the policy's receiver struct",
    }
    failed = {"severity": "CRITICAL", "check": "toolchain.test", "message": "test TestThresholds failed: want lower"}

    def add(key: str, finding: dict, **flags):
        def change(text: str) -> str:
            data = json.loads(text)
            data[key] = [*data[key], finding]
            return json.dumps(data | flags, indent=2, sort_keys=True) + "\n"

        return change

    edit(ctx.paths.translation_json, add("findings", hazard))
    edit(ctx.paths.translation_checks, add("findings", failed, test_ok=False))
    [found] = [f for f in review_gate(1, ctx) if f.check == "toolchain.test"]
    assert found.message.startswith(failed["message"]), found.message
    assert "package variable `routed` (written at evolved line 30)" in found.message, found.message
    assert "hazard.package-state" in found.message and found.fix == hazard["fix"], found


def test_gate1_gives_a_test_failure_recorded_without_a_fix_one_and_names_a_global_draw(branch):
    """Found in a researcher's trial: gate 1 showed a CRITICAL toolchain.test with an empty "Suggested fix" (stage
    2's record held none). It now says what to do, and names the translation's safety.global-rand as the cause."""
    ctx, edit, _ = branch
    draw = {
        "severity": "IMPORTANT",
        "check": "safety.global-rand",
        "source_line": 21,
        "message": "rand.Float64 draws from the process-global source, which Go seeds randomly",
        "fix": "draw from a seeded *rand.Rand field (the receiver's `rng`, which the translator seeds)",
    }
    failed = {"severity": "CRITICAL", "check": "toolchain.test", "message": "test TestThresholds failed: want lower"}

    def add(finding: dict, **flags):
        def change(text: str) -> str:
            data = json.loads(text)
            return json.dumps(data | {"findings": [*data["findings"], finding]} | flags, indent=2) + "\n"

        return change

    edit(ctx.paths.translation_checks, add(failed, test_ok=False))
    [found] = [f for f in review_gate(1, ctx) if f.check == "toolchain.test"]
    assert found.fix and "translate the program again" in found.fix, found
    edit(ctx.paths.translation_json, add(draw))
    [found] = [f for f in review_gate(1, ctx) if f.check == "toolchain.test"]
    assert "safety.global-rand" in found.message and "evolved line 21" in found.message, found.message
    assert draw["fix"] in found.fix, found.fix


def test_gate1_unflagged_map_c_gap(branch):
    ctx, edit, _ = branch
    report = ctx.paths.translation_report
    gap = ctx.dictionary.touched_gaps(ctx.request.kind, ["InFlightRequests"])[0]
    edit(report, lambda t: t.replace(gap, "g-a-p"))
    assert any(f.check == "G1.map-c-gap-flagged" and gap in f.message for f in review_gate(1, ctx))


def test_gate1_shows_no_fidelity_figure_for_code_the_check_did_not_measure(branch):
    """Found by an engineer testing the Claude author: a changed algorithm under "98.4% fidelity". The figure
    goes whenever the branch's plugin is not what the differential check measured, or it names no files."""
    from bot.review import gate1
    from bot.review.brief import brief

    ctx, edit, _ = branch
    assert any("% of" in n for n in gate1.notes(ctx)) and "% of" in brief(1, ctx)[0]
    path = package_file(ctx, "DeltaCoeff*delta*delta*delta")
    edit(path, lambda t: t.replace("DeltaCoeff*delta*delta*delta", "DeltaCoeff*delta", 1))
    assert any(f.check == "G1.fidelity-stale" and f.file == path for f in review_gate(1, ctx))
    assert not any("% of" in n for n in gate1.notes(ctx)) and "% of" not in brief(1, ctx)[0]
    assert "other plugin files than the branch holds" in brief(1, ctx)[0]

    def unbound(text: str) -> str:
        data = json.loads(text)
        data["fidelity"]["files"] = {}
        return json.dumps(data, indent=2) + "\n"

    edit(path, lambda t: t.replace("DeltaCoeff*delta", "DeltaCoeff*delta*delta*delta", 1))
    edit(ctx.paths.translation_json, unbound)
    assert any(f.check == "G1.fidelity-stale" for f in review_gate(1, ctx))
    assert not any("% of" in n for n in gate1.notes(ctx))


def test_gate2_missing_track_a_and_wrong_direction(branch):
    ctx, edit, remove = branch
    a = sorted(p for p in ctx.list(ctx.paths.hypotheses_dir) if p.rsplit("/", 1)[-1].startswith("A"))
    remove(a[0])
    edit(a[1], lambda t: t.replace("direction: decrease", "direction: increase", 1))
    found = review_gate(2, ctx)
    assert "G2.track-a-coverage" in checks(found)
    assert any(f.check == "G2.track-a-faithful" and f.file == a[1] for f in found)


def test_gate2_unparseable_document_and_missing_gap_coverage(branch):
    ctx, edit, remove = branch
    docs = ctx.list(ctx.paths.hypotheses_dir)
    b = sorted(p for p in docs if p.rsplit("/", 1)[-1].startswith("B"))
    for p in b:
        remove(p)
    c1 = next(p for p in docs if p.endswith("/C1.md"))
    edit(c1, lambda t: t.replace("family:", "famly:", 1))
    found = review_gate(2, ctx)
    assert {"G2.parse", "G2.track-b-coverage"} <= checks(found)


def test_gate2_reads_a_gap_a_person_excluded_as_decided_not_missing(branch):
    """Found by a new user: the README's own `exclude: B2, B4 (...)` made gate 2 report "Map C gap
    `lora-affinity` has no Track B hypothesis" and reopen unconverged."""
    from bot.hypotheses import parse_hypothesis, render_hypotheses
    from bot.model import Stage

    ctx, _, remove = branch
    gone = [ctx.paths.hypothesis(i) for i in ("B2", "B4")]
    excluded = [parse_hypothesis(ctx.read(p) or "", p) for p in gone]
    assert {h.source for h in excluded} == {"lora-affinity", "pd-role-split"}
    for p in gone:
        remove(p)
    record = render_hypotheses([], feedback="exclude: B2, B4 (no LoRA here)", excluded=excluded)["excluded.json"]
    ctx.forge.commit_files(ctx.branch, {ctx.paths.hypotheses_excluded: record.encode()}, message="exclude")

    def gaps_missing() -> list[str]:
        return [f.message for f in review_gate(2, ctx) if f.check == "G2.track-b-coverage"]

    assert len(gaps_missing()) == 2  # a record no person's reason backs covers nothing
    ctx.state.stages[int(Stage.HYPOTHESIZE)].feedback = "exclude: B2, B4 (no LoRA here)"
    assert gaps_missing() == []
    ctx.state.stages[int(Stage.HYPOTHESIZE)].feedback = "exclude: B2 (no LoRA here)"
    assert gaps_missing() == ["Map C gap `pd-role-split` has no Track B hypothesis"]


def test_gate3_verdict_edited_by_hand_is_inconsistent(branch):
    ctx, edit, _ = branch
    path = ctx.paths.verdicts_json
    edit(path, lambda t: t.replace('"status": "confirmed"', '"status": "refuted"', 1))
    assert "G3.verdict-consistent" in checks(review_gate(3, ctx))


def test_gate3_failing_unit_test(branch):
    ctx, edit, _ = branch
    package_dir = ctx.read_json(ctx.paths.translation_json)["package_dir"]
    test = next(p for p in ctx.list(package_dir) if p.endswith("_test.go"))
    edit(test, lambda t: t + '\nfunc TestPlantedFailure(t *testing.T) { t.Fatal("planted") }\n')
    assert "G3.tests-pass" in checks(review_gate(3, ctx))


def test_gate3_reads_committed_results_and_never_reruns_a_stage(branch, monkeypatch):
    ctx, edit, _ = branch

    def no_go(*args, **kwargs):
        raise AssertionError("gate 3 must read stage 5's committed results, not run Go again")

    monkeypatch.setattr("bot.golang.toolchain.run_checks", no_go)
    assert not checks(review_gate(3, ctx)) - {"G3.no-results"}
    edit(
        ctx.paths.go_checks,
        lambda t: t.replace('"test_ok": true', '"test_ok": false').replace('"tests_failed": 0', '"tests_failed": 2'),
    )
    found = [f for f in review_gate(3, ctx) if f.check == "G3.tests-pass"]
    assert found and "go test" in found[0].message and "2 test(s) failed" in found[0].message


def test_gate3_cell_that_does_not_support_its_status(branch):
    import json

    ctx, edit, _ = branch

    def weaken(text: str) -> str:
        verdicts = json.loads(text)
        v = next(v for v in verdicts if v["status"] == "confirmed" and v["effects"])
        v["effects"][0]["ci_high"] = abs(v["effects"][0]["ci_high"]) + 0.05  # interval now crosses zero
        return json.dumps(verdicts, indent=2)

    edit(ctx.paths.verdicts_json, weaken)
    found = [f for f in review_gate(3, ctx) if f.check == "G3.verdict-consistent"]
    assert found and "does not show it" in found[0].message


def test_gate3_raises_a_guard_whose_interval_lies_beyond_its_margin(branch):
    """Reanalysis finding 1: C5 measured +10.3% [+7.1%, +13.7%] against a 5% margin, its refutation not significant
    after multiplicity control, passed gate 3 with no finding and "0 regressions"."""
    ctx, edit, _ = branch

    def slower(text: str) -> str:
        verdicts = json.loads(text)
        (e,) = next(v for v in verdicts if v["hypothesis_id"] == "C5")["effects"]
        e.update(rel_change=0.103, ci_low=0.071, ci_high=0.137, status="inconclusive", reason="indicated")
        return json.dumps(verdicts, indent=2)

    edit(ctx.paths.verdicts_json, slower)
    found = [f for f in review_gate(3, ctx) if f.check == "G3.against-indicated"]
    assert [f.severity for f in found] == [Severity.IMPORTANT]
    assert found[0].message.startswith("C5 at sanity-random @ 10 req/s: indicated (interval +7.1% to +13.7%)")


def test_review_imports_no_stage():
    from pathlib import Path

    import bot.review

    for module in Path(bot.review.__file__).parent.glob("*.py"):
        assert "bot.stages" not in module.read_text(), module.name


def test_gate3_says_when_the_benchmark_ended_early(branch):
    """Found by a new user: a benchmark that failed after 11 of 88 runs passed gate 3 with no finding."""
    import json

    ctx, edit, _ = branch

    def stopped(how):
        def change(text: str) -> str:
            return json.dumps(json.loads(text) | {"spent": 3.5, "cell_runs": 11, "stopped": how, "stop_reason": "x"})

        return change

    edit(ctx.paths.gpu_time, stopped("failed"))
    found = [f for f in review_gate(3, ctx) if f.check == "G3.benchmark-complete"]
    assert found and found[0].severity.value == "IMPORTANT" and "ended early (failed) after 11" in found[0].message
    edit(ctx.paths.gpu_time, stopped("budget"))
    found = [f for f in review_gate(3, ctx) if f.check == "G3.benchmark-complete"]
    assert found and found[0].severity.value == "SUGGESTION"


def test_gate3_raises_arms_measured_on_different_testbeds(branch):
    """Stage 5 records the testbeds its reports name; a comparison whose arms ran on different ones (here the
    evolved arm on other GPUs) is raised, and verdicts pooled over testbeds that each ran both arms are noted."""
    import json

    ctx, edit, _ = branch
    assert not [f for f in review_gate(3, ctx) if f.check == "G3.testbed"]  # the bundled example: one testbed

    def split(both_arms_on_each: bool):
        def change(text: str) -> str:
            doc = json.loads(text)
            (one,) = doc["testbeds"]
            other = json.loads(json.dumps(one))
            other["engines"][0]["accelerator"] = "NVIDIA-A100-SXM4-40GB"
            if not both_arms_on_each:
                one["arms"], other["arms"] = ["baseline"], ["evolved"]
            return json.dumps(doc | {"testbeds": [one, other]})

        return change

    edit(ctx.paths.testbed, split(both_arms_on_each=False))
    found = [f for f in review_gate(3, ctx) if f.check == "G3.testbed"]
    assert len(found) == 1 and found[0].severity is Severity.IMPORTANT
    assert "not measured on one testbed (2 testbeds)" in found[0].message
    assert "of evolved: meta-llama/Llama-3.1-8B-Instruct on NVIDIA-A100-SXM4-40GB" in found[0].message
    assert found[0].file == ctx.paths.testbed

    def one_again(text: str) -> str:
        doc = json.loads(text)
        return json.dumps(doc | {"testbeds": [doc["testbeds"][0] | {"arms": ["baseline", "evolved"]}]})

    edit(ctx.paths.testbed, one_again)
    edit(ctx.paths.testbed, split(both_arms_on_each=True))
    found = [f for f in review_gate(3, ctx) if f.check == "G3.testbed"]
    assert len(found) == 1 and found[0].severity is Severity.SUGGESTION and "pool 2 testbeds" in found[0].message


def test_gate3s_testbed_finding_names_the_other_testbeds_reports_and_the_verdicts_they_enter(branch):
    """Reanalysis finding 3: one evolved report of another engine image was rep 1 of A1's deciding cell, and the
    finding named neither the report nor the cell. It names both, with the hypotheses judged there."""
    import json

    ctx, edit, _ = branch
    path = "evolved/load-spikes/rate-30/rep-1/r.yaml"

    def split(text: str) -> str:
        doc = json.loads(text)
        (one,) = doc["testbeds"]
        other = json.loads(json.dumps(one)) | {"reports": 1, "arms": ["evolved"], "report_paths": [path]}
        other["engines"][0]["image"] = "vllm/vllm-openai:v0.6.0"
        other["cells"] = [{"workload": "load-spikes", "rate": 30.0, "reports": 1, "hypotheses": ["A1", "B6"]}]
        return json.dumps(doc | {"testbeds": [one, other]})

    edit(ctx.paths.testbed, split)
    [found] = [f for f in review_gate(3, ctx) if f.check == "G3.testbed"]
    assert found.severity is Severity.IMPORTANT
    assert "vllm/vllm-openai:v0.6.0; harness" in found.message
    assert f"reports {path}; they enter load-spikes @ 30 req/s (1 report, judged for A1, B6)" in found.message


def test_gate3_raises_requests_the_evolved_plugin_lost_as_a_regression(branch):
    """Reanalysis finding 2: the evolved arm lost 20% of its requests at sanity-random (latencies as before), and gate
    3 said "0 blocking of 0 findings". An IMPORTANT finding names the cell, the shares and the hypotheses, and the
    brief and the notes say it beside the regression count; a few failed requests raise nothing."""
    import json

    from bot.review.brief import brief
    from bot.review.gate3 import notes

    ctx, edit, _ = branch
    assert not [f for f in review_gate(3, ctx) if f.check == "G3.requests-lost"]  # the bundled example

    def lose(share: float):
        def change(text: str) -> str:
            rows = json.loads(text)
            for row in rows:
                for e in row["effects"]:
                    if e["workload"] == "sanity-random":
                        e["lost_baseline"], e["lost_evolved"] = 0.0, share
            return json.dumps(rows)

        return change

    edit(ctx.paths.verdicts_json, lose(0.0004))  # 16 in 37,847: no regression
    assert not [f for f in review_gate(3, ctx) if f.check == "G3.requests-lost"]
    edit(ctx.paths.verdicts_json, lose(0.2))
    [found] = [f for f in review_gate(3, ctx) if f.check == "G3.requests-lost"]
    assert found.severity is Severity.IMPORTANT
    assert found.message.startswith(
        "the evolved plugin lost 20.0% of requests (failed or incomplete) vs 0.0% for baseline at sanity-random "
        "@ 10 req/s (the runs of C4, C5, C6)"
    ), found.message
    said = "requests lost more often with the evolved plugin (sanity-random at 10 req/s: 20.0% of requests lost"
    assert said in brief(3, ctx)[0]
    assert any(n.startswith("Requests lost more often") for n in notes(ctx))


def test_each_gate_says_what_it_decides_on_and_what_to_read_first(branch):
    from bot.review.brief import brief

    ctx, _, remove = branch
    headline, read = brief(1, ctx)
    assert re.search(r"decides like the BLIS original in \d+\.\d% of \d+ sampled states \(floor \d+%\)", headline)
    assert "no llm-d source for CacheHitRate" in headline
    assert "BELOW" not in headline and "do not benchmark" not in headline  # 98.4%, above its floor: no advice
    assert read == {
        "the translation report": ctx.paths.translation_report,
        "the plugin diff": ctx.read_json(ctx.paths.translation_json)["package_dir"] + "/",
    }
    headline, read = brief(2, ctx)
    assert re.search(r"^the hypotheses: \d+ \(Track A \d+, B \d+, C \d+\); approving plans \d+ benchmarked", headline)
    # one cost figure pair to decide on (trial4: four numbers in one clause); no thousands separator (consistency 9)
    assert re.search(r": expected \d+(\.\d+)? GPU-minutes, at most \d+(\.\d+)? \(the cap `promote bench run`", headline)
    assert "the fixed plan" not in headline and " in all" not in headline
    assert read == {"the hypotheses index": ctx.paths.hypotheses_dir + "/README.md"}  # not a self-reference
    headline, read = brief(3, ctx)
    assert re.search(r"Track A \d+ of \d+ claims transferred.*Track C \d+ regressions? of \d+ guarded", headline)
    assert read == {"the claims table": ctx.paths.verdicts_md}
    remove(ctx.paths.translation_json)  # missing: a sentence, never an error (the checklist raises it)
    assert brief(1, ctx)[0] == "the translation: no translation.json on the branch"


def test_gate2s_report_shows_the_hypotheses_the_counts_and_its_directives(branch):
    from bot import directives
    from bot.model import ReviewRound
    from bot.review import render_review_report
    from bot.review.brief import brief, cost_breakdown, hypothesis_rows

    ctx, _, _ = branch
    headline, read = brief(2, ctx)
    lines = cost_breakdown(ctx)
    assert lines and lines[0].startswith("the cells, sequential design") and "fixed plan" in lines[1]
    review = ReviewRound(gate=2, round=1, headline=headline, read_first=read, headline_lines=lines)
    text = render_review_report(review, ctx, ctx.state)
    assert "No findings." not in text and "**Findings: 0 CRITICAL, 0 IMPORTANT, 0 SUGGESTION.**" in text
    # the cost's breakdown on lines of its own under the headline (trial4)
    assert f"**Deciding on** {headline}.\n" + "".join(f"\n- {line}" for line in lines) in text
    rows = hypothesis_rows(ctx)
    assert rows and all(f"| {r['id']} | {r['track']} |" in text for r in rows)
    a1 = next(r for r in rows if r["id"] == "A1")
    assert a1["cells"] and all("@" in c for c in a1["cells"]) and ", ".join(a1["cells"]) in text
    assert all(f"| `{d.syntax}` | `{d.example}` |" in text for d in directives.for_gate(2))
    assert "`scorers:" not in text  # gate 1's forms are not gate 2's


def test_gate3s_notes_list_only_what_needs_a_look(branch):
    """The numbers are in the claims table; the notes say the counts and what is refuted, untestable or flagged."""
    from bot.review import gate3

    ctx, _, _ = branch
    notes = gate3.notes(ctx)
    assert notes[0].startswith("The benchmark reports are SAMPLE DATA")  # said once, not on every line
    assert [n.split(" (")[0] for n in notes if n.startswith("Track ")] == ["Track A", "Track B", "Track C"]
    assert not any("decided at look" in n or "Welch" in n or "SAMPLE DATA (" in n for n in notes[1:])
    assert any(n.startswith("B2 inconclusive") and "not runnable on this cluster" in n for n in notes)


def test_gate3_groups_reports_left_out_for_the_same_reason(branch):
    """Found by a new user: after a gate-1 parameter change every report of the earlier plan was left out, and
    gate 3 listed 56 findings saying so, none with a fix. One finding per reason, with how many and what to do."""
    import json

    ctx, edit, _ = branch
    rows = [
        {"report": f"r{i}.yaml", "reason": "parameter 'loadHighThreshold' is 40.0, the plan's is 60.0"}
        for i in range(5)
    ]
    rows.append({"report": "bad.yaml", "reason": "not a benchmark report: missing 'version'"})
    text = json.dumps(rows)
    if ctx.read(ctx.paths.reports_not_used):
        edit(ctx.paths.reports_not_used, lambda _: text)
    else:
        ctx.forge.commit_files(BRANCH, {ctx.paths.reports_not_used: text.encode()}, message="plant unused reports")
    found = [f for f in review_gate(3, ctx) if f.check == "G3.report-invalid"]
    assert len(found) == 2
    grouped = next(f for f in found if "5 benchmark reports were not used" in f.message)
    assert "(r0.yaml, r1.yaml, r2.yaml and 2 more)" in grouped.message
    assert "promote bench run" in grouped.fix and "rejudge:" in grouped.fix
    # trial4: the reports are sample data, which no gate-1 change reaches; the fix says so and what does
    assert "these reports are sample data, which cannot follow a gate-1 change" in grouped.fix
    assert "make_sample_reports.py --request REQUEST --out RESULTS" in grouped.fix and "a new --work" in grouped.fix
    single = next(f for f in found if f is not grouped)
    assert single.message.startswith("benchmark report bad.yaml was not used") and single.fix
    assert "sample data" not in single.fix


def test_gate3_notes_reports_no_look_reached_without_blocking(branch):
    """Reanalysis finding 5: a run past its cell's last look is listed as not used; it is no invalid evidence, and the
    'measured for another plan' fix its words ('per arm') drew was wrong. A suggestion of its own, with what to do."""
    import json

    from bot.stats.judged import PAST_LAST_LOOK

    ctx, edit, _ = branch
    reason = f"{PAST_LAST_LOOK} (sanity-random @ 10 req/s): its looks use the first 7 runs per arm (looks at [4, 6, 7])"
    text = json.dumps([{"report": "evolved/sanity-random/rate-10/rep-8/r.yaml", "reason": reason}])
    if ctx.read(ctx.paths.reports_not_used):
        edit(ctx.paths.reports_not_used, lambda _: text)
    else:
        ctx.forge.commit_files(BRANCH, {ctx.paths.reports_not_used: text.encode()}, message="plant unused reports")
    found = review_gate(3, ctx)
    assert not [f for f in found if f.check == "G3.report-invalid"]
    [unused] = [f for f in found if f.check == "G3.report-unused"]
    assert unused.severity is Severity.SUGGESTION and "rep-8" in unused.message and reason in unused.message
    assert "another plan" not in unused.fix and "looks" in unused.fix


def test_gate3_no_results_fix_is_a_change_request_that_applies_as_written(branch):
    """The suggested `promote request-changes 3 --reason '...'` is not refused as prose naming no directive."""
    from bot.review.change_request import refusal

    ctx, edit, _ = branch

    def no_results(text: str) -> str:
        verdicts = json.loads(text)
        verdicts[0]["flags"] = ["no-results"]
        return json.dumps(verdicts, indent=2) + "\n"

    edit(ctx.paths.verdicts_json, no_results)
    [found] = [f for f in review_gate(3, ctx) if f.check == "G3.no-results"]
    [(gate, reason)] = re.findall(r"`promote request-changes (\d) --reason '([^']*)' --work W`", found.fix)
    assert refusal(int(gate), reason) is None, refusal(int(gate), reason)


def test_gate2_raises_nothing_for_an_admitter_whose_plan_has_the_priority_mix():
    """Found by a new user: an admission promotion's plan priced 1,640 GPU-minutes of runs that never send a request
    the admitter could reject. The plan now adds the priority mix (classes 100 / 0 / -10), so gate 2 no longer
    warns that shedding is never exercised."""
    from types import SimpleNamespace

    from bot.bench.plan import make_plan
    from bot.model import PolicyKind, TranslationSummary
    from bot.review.gate2_traffic import _class_exercised
    from tests.bench.test_bench_plan import _example_hypotheses, _request

    paths = SimpleNamespace(hypotheses_dir="docs/promotion/x/hypotheses")

    def summary(kind):
        return TranslationSummary(kind=kind, plugin_type="x", package_dir="pkg/x", signals=["InFlightRequests"])

    admission = SimpleNamespace(request=SimpleNamespace(kind=PolicyKind.ADMISSION), paths=paths)
    assert _class_exercised(admission, [], summary(PolicyKind.ADMISSION)) == []
    plan = make_plan(_request(kind="admission"), _example_hypotheses())
    assert plan.priority_mix is not None and any(c.priority < 0 for c in plan.priority_mix.classes)
    routing = SimpleNamespace(request=SimpleNamespace(kind=PolicyKind.ROUTING), paths=paths)
    assert _class_exercised(routing, [], summary(PolicyKind.ROUTING)) == []


def test_gate3s_notes_give_the_margin_gate_2_left_in_force(branch):
    """A `margin: 0.04` change request at gate 2 is what Track C was judged at; the notes must not say 5%."""
    from bot.review import gate3

    ctx, edit, _ = branch
    for p in ctx.list(ctx.paths.hypotheses_dir):
        if p.rsplit("/", 1)[-1].startswith("C") and p.endswith(".md"):
            edit(p, lambda t: re.sub(r"(?m)^(\s*margin:) 0\.05$", r"\1 0.04", t))
    track_c = next(n for n in gate3.notes(ctx) if n.startswith("Track C"))
    assert track_c.startswith("Track C (no regression beyond 4%)"), track_c


def test_gate1s_param_example_is_a_change_the_review_asks_for_and_a_no_op_is_refused(branch):
    """Found by a maintainer: the example was `param cacheHitRateCoeff: 0.3`, a parameter llm-d gives no input to,
    at the value it has; applying it was recorded and reran stage 2 for nothing."""
    from bot.review.change_request import gate_examples, refusal_on_branch

    ctx, _, _ = branch
    example = gate_examples(1, ctx)["param"]
    # Not the recalibration finding's pod-scale value: alone, with the taper's values as evolved, Validate() refuses
    # it (found by a Go reviewer: the example inverted the policy); the finding's fix sets the three together.
    assert example == "param deltaCoeff: 10", example
    assert refusal_on_branch(1, example, ctx, author=False) is None
    alone = refusal_on_branch(1, "param loadHighThreshold: 56", ctx, author=False)
    assert alone and "cannot apply with the values in effect" in alone, alone
    inert = refusal_on_branch(1, "param cacheHitRateCoeff: 0.5", ctx, author=False)  # a constant of evolved.go now
    assert inert and "has no effect in llm-d" in inert and "nothing was recorded" in inert, inert
    same = refusal_on_branch(1, "param loadHighThreshold: 7", ctx, author=False)
    assert same and "already has loadHighThreshold = 7" in same, same
    assert refusal_on_branch(1, "param loadHighThreshold: 7", ctx, author=True) is None  # Claude reads the prose


def test_gate2s_table_plans_no_cells_for_a_hypothesis_the_benchmark_does_not_judge(branch):
    """Found by a maintainer: A2 and B8 (not testable as translated) were listed with planned cells."""
    from bot.review.brief import hypotheses_on_branch, hypothesis_rows

    ctx, _, _ = branch
    untestable = {h.id for h in hypotheses_on_branch(ctx) if h.prediction and not h.benchmarked}
    assert untestable
    for row in hypothesis_rows(ctx):
        if row["id"] in untestable:
            assert row["cells"] == [] and "not testable as translated" in row["what"], row


def test_gate3s_headline_says_when_no_evolved_report_could_be_used(branch):
    """Found by a new user: after a gate-1 parameter change every evolved report was left out, and the headline
    said only "0 of 2 claims transferred (2 inconclusive)"; the cause was in a table further down."""
    from bot.review.brief import brief

    ctx, edit, _ = branch
    why = "EPP config differs from the evolved arm's in this plan: plugin 'p' parameter 'loadThreshold' is 10.0"
    rows = [{"report": f"evolved/chat/rate-10/rep-{n}/benchmark_report_v0.2,_x.yaml", "reason": why} for n in (1, 2)]
    text = json.dumps(rows)
    if ctx.read(ctx.paths.reports_not_used):
        edit(ctx.paths.reports_not_used, lambda _: text)
    else:
        ctx.forge.commit_files(BRANCH, {ctx.paths.reports_not_used: text.encode()}, message="plant unused reports")
    assert "no evolved report" not in brief(3, ctx)[0]  # the example's evolved reports were used
    edit(ctx.paths.testbed, lambda t: json.dumps(json.loads(t) | {"router_images": {"baseline": []}}))
    headline = brief(3, ctx)[0]
    assert headline.endswith(
        "; no evolved report could be used (2 left out: EPP config differs from the evolved arm's in this plan), "
        "so no claim is measured"
    )
    assert "no baseline report" not in headline


def test_gate2s_brief_prices_no_priority_mix_for_a_router_that_reads_the_class(branch):
    """Found promoting a new program (newprog finding 5): a router that reads the request's class was billed a
    priority mix (348 GPU-minutes) that judges only an admitter's shedding. The brief prices what stage 4 plans:
    no mix for a router, whatever it reads."""
    from bot.review.brief import brief

    ctx, edit, _ = branch
    assert "priority mix" not in brief(2, ctx)[0]
    edit(
        ctx.paths.translation_json,
        lambda t: json.dumps(json.loads(t) | {"signals": [*json.loads(t)["signals"], "SLOClass"]}),
    )
    assert "priority mix" not in brief(2, ctx)[0]


def test_gate3s_notes_give_the_verdicts_own_reason_and_a_flag_as_a_flag(branch):
    """Found by an llm-d reader: gate 3 said 'A3 inconclusive (...): attenuated: observed -3.9% is 0.19x BLIS's' while
    the report and verdicts.md say 'at 20 req/s: within the noise floor'. The reason is the verdict's; a flag is one."""
    from bot.model import Verdict, VerdictStatus
    from bot.render.claims import held_back
    from bot.review import gate3
    from bot.stages.hypothesize import load_hypotheses

    ctx, edit, _ = branch
    # The example's A3 (-3.9% [-5.7%, -2.1%] against BLIS's -21%, within the 5% floor) is no longer flagged: widened
    # by the floor its interval reaches 0.51x (bot.stats.guards.magnitude_gap). A flag is planted where it was.
    flag = "attenuated: observed -3.9% [-5.7%, -2.1%] at cache-warmup @ 20 req/s is at most 0.19x BLIS's -21.0%"

    def plant(text: str) -> str:
        records = json.loads(text)
        for r in records:
            r["flags"] += [flag] if r["hypothesis_id"] == "A3" else []
        return json.dumps(records, indent=2)

    edit(ctx.paths.verdicts_json, plant)
    verdicts = {v["hypothesis_id"]: Verdict.model_validate(v) for v in json.loads(ctx.read(ctx.paths.verdicts_json))}
    notes = gate3.notes(ctx)
    checked = 0
    for h in load_hypotheses(ctx):
        v = verdicts.get(h.id)
        attenuated = [f for f in (v.flags if v else []) if f.startswith("attenuated")]
        if v is None or v.status is not VerdictStatus.INCONCLUSIVE or not attenuated or not v.effects:
            continue
        note = next(n for n in notes if n.startswith(f"{h.id} inconclusive"))
        reason = held_back(h, v)
        assert reason and note.startswith(f"{h.id} inconclusive ({h.title}): {reason}. Flag"), note
        assert note.index(attenuated[0]) > note.index("Flag"), note
        checked += 1
    assert checked, "A3 is inconclusive and flagged attenuated"


def test_thousands_of_toolchain_findings_reach_the_review_bounded_and_the_full_list_stays(branch):
    """6,000 distinct `go build` errors recorded by stage 5: the review round keeps the first 25 and one finding
    counting the rest (go-checks.json keeps them all), deterministically, so the stall check still tells the
    same errors from different ones; the status comment then holds the round without cutting it."""
    from bot.github.state import decode_state, status_body
    from bot.model import ReviewRound
    from bot.model.findings import KEEP_PER_CHECK

    ctx, edit, _ = branch

    def flood(marker: str):
        return _build_errors(6_000, lambda i: f"undefined: evolved_{i:05d}{marker if i == 5_999 else ''}")

    edit(ctx.paths.go_checks, flood(""))
    assert len(json.loads(ctx.read(ctx.paths.go_checks))["findings"]) == 6_000  # the full list stays there
    found = [f for f in review_gate(3, ctx) if f.check == "toolchain.build"]
    assert len(found) == KEEP_PER_CHECK + 1
    *first, count = sorted(found, key=lambda f: f.file is None)
    assert [f.line for f in first] == list(range(1, KEEP_PER_CHECK + 1))
    assert count.severity is Severity.CRITICAL and count.message.startswith("and 5,975 more like this")
    assert ctx.paths.go_checks in count.message
    keys = {f.key() for f in review_gate(3, ctx)}
    assert keys == {f.key() for f in review_gate(3, ctx)}  # the same output, the same round: a stall is a stall
    edit(ctx.paths.go_checks, flood(" (changed)"))  # one error far down the list differs
    assert keys != {f.key() for f in review_gate(3, ctx)}
    review = ReviewRound(gate=3, round=1, findings=review_gate(3, ctx))
    state = ctx.state.model_copy(update={"reviews": {3: [review]}, "open_gate": 3, "review_round": 1})
    assert decode_state(status_body(state, "status")).reviews[3][-1] == review  # kept whole, nothing cut


def _build_errors(n: int, message):
    """An edit of go-checks.json: `go build` failed with ``n`` CRITICAL errors, ``message(i)`` each."""

    def change(text: str) -> str:
        data = json.loads(text)
        data["build_ok"] = False
        data["findings"] = [
            {
                "severity": "CRITICAL",
                "check": "toolchain.build",
                "message": message(i),
                "file": "pkg/plugins/evolved/evolved.go",
                "line": i + 1,
            }
            for i in range(n)
        ]
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    return change


def test_a_bounded_round_counts_the_findings_it_stands_for_in_every_tally(branch):
    """40 `go build` errors: the round keeps 25 and one finding counting 15, but the review's tally (the PR
    review's, the report's, the status comment's), an approval's record of the CRITICAL findings open and the PR
    body's Known issues count 40 (each used to count the "and 15 more" finding as one: 26)."""
    from datetime import UTC, datetime

    from bot import pipeline
    from bot.model import Decision, Finding, ReviewRound, Status
    from bot.stages import pr_parts

    ctx, edit, _ = branch

    edit(ctx.paths.go_checks, _build_errors(40, lambda i: f"undefined: evolved_{i:02d}"))
    found = review_gate(3, ctx)
    build = [f for f in found if f.check == "toolchain.build"]
    assert len(build) == 26 and build[-1].message.startswith("and 15 more like this") and build[-1].count == 15
    others = [f for f in found if f.check != "toolchain.build"]
    critical = 40 + sum(f.severity is Severity.CRITICAL for f in others)
    review = ReviewRound(gate=3, round=1, findings=found)
    assert review.tally().startswith(f"{critical} CRITICAL, "), review.tally()

    state = ctx.state.model_copy(
        update={"reviews": {3: [review]}, "open_gate": 3, "review_round": 1, "status": Status.AWAITING_DECISION}
    )
    approved = pipeline.decide(state, 3, Decision.APPROVE, actor="maria", now=datetime.now(UTC))
    note = approved.decisions[-1].critical_note()
    assert note.startswith(f"{critical} CRITICAL findings were open when approved: "), note
    assert note in approved.audit[-1].detail

    # gate 1's findings fill the body's list, so every one of gate 3's is counted after it: each as many as it is
    first = [Finding(severity=Severity.CRITICAL, check="G1.x", message=f"x{i}") for i in range(pr_parts.MAX_ISSUES)]
    issues = pr_parts.known_issues({1: [ReviewRound(gate=1, round=1, findings=first)], 3: [review]}, lambda *_: "")
    assert pr_parts.issues_left(issues) == 40 + len(others)


def test_no_finding_read_on_github_tells_to_run_a_local_promote_command(branch):
    """ghuser3 finding 7: on GitHub, gate 2's G2.priority-exercised fix said to run `promote request-changes 2
    --reason 'exclude: A1'`. Every gate's findings, with the checks that carry a command planted, are read with
    home github: no fix names a `promote ` command (the gate-2 exclude checks are in test_gate2_scheduling)."""
    import json

    from bot.bench.layout import unmeasured_flag

    ctx, edit, _ = branch
    ctx.home = "github"

    def failed(text: str) -> str:
        return json.dumps(json.loads(text) | {"spent": 3.5, "cell_runs": 11, "stopped": "failed", "stop_reason": "x"})

    def flag(how: str):
        def change(text: str) -> str:
            verdicts = json.loads(text)
            verdicts[0]["flags"] = [*verdicts[0]["flags"], how]
            return json.dumps(verdicts, indent=2)

        return change

    edit(ctx.paths.gpu_time, failed)
    edit(ctx.paths.verdicts_json, flag(unmeasured_flag("evolved", 0)))
    ctx.forge.commit_files(
        BRANCH,
        {
            ctx.paths.reports_not_used: json.dumps(
                [{"report": "evolved/x/rate-1/rep-1/r.yaml", "reason": "the plan's workload differs"}]
            ).encode(),
            ctx.paths.priority_mix: json.dumps({"not_judged": "no evolved priority-mix result could be used"}).encode(),
        },
        message="plant",
    )
    findings = [f for gate in (1, 2, 3) for f in review_gate(gate, ctx)]
    edit(ctx.paths.verdicts_json, flag("no-results"))  # which G3.arm-not-measured gives way to
    findings += review_gate(3, ctx)
    planted = {"G3.benchmark-complete", "G3.no-results", "G3.arm-not-measured", "G3.report-invalid", "G3.priority-mix"}
    assert planted <= {f.check for f in findings}, sorted({f.check for f in findings})
    local = [(f.check, f.fix) for f in findings if "promote " in (f.fix or "")]
    assert not local, local


def test_a_local_change_request_a_finding_offers_carries_the_work_directory():
    """CF2 (consistency3 7): G2.priority-exercised's `promote request-changes 2 --reason 'exclude: A1, B7'`, copied
    after a run with --work /tmp/s01b, failed: "/.../.promote: no promotion here". It carries --work W now, and the
    real CLI parses it into the directive and the work directory."""
    import shlex

    from bot.cli import build_parser
    from bot.directives import exclude_command, request_changes_command
    from bot.review.change_request import refusal

    for text in (
        exclude_command("local", "A1, B7"),
        request_changes_command(3, "rejudge: reports of the current plan"),
    ):
        [command] = re.findall(r"`(promote request-changes [^`]*)`", text)
        assert command.endswith(" --work W"), command
        args = build_parser().parse_args(shlex.split(command.replace(" W", " /tmp/s01b"))[1:])
        assert str(args.work) == "/tmp/s01b" and refusal(args.gate, args.reason) is None, command
    assert "--work" not in exclude_command("github", "A1")


def test_gate1_suggests_a_plugin_type_named_like_its_neighbours():
    """A scorer typed `slo-aging-scheduler` (upstream2 #6): every scorer llm-d ships ends in -scorer, every
    admitter in -admitter; said at gate 1, while a rename is an edit of the request."""
    from bot.model import PolicyKind
    from bot.review.gate1 import type_name

    [scorer] = type_name(PolicyKind.SCHEDULING, "slo-aging-scheduler", "pkg/x/x.go")
    assert (scorer.check, scorer.severity) == ("G1.plugin-type-name", Severity.SUGGESTION)
    assert "`-scorer`" in scorer.message and "`slo-aging-scorer`" in scorer.fix and "plugin_name" in scorer.fix
    [admitter] = type_name(PolicyKind.ADMISSION, "saturation-shedder", None)
    assert "`-admitter`" in admitter.message and "`saturation-admitter`" in admitter.fix
    assert type_name(PolicyKind.ROUTING, "evolved-adaptive-scorer", None) == []
    assert type_name(PolicyKind.ADMISSION, "probabilistic-admitter", None) == []


def test_a_command_a_finding_offers_carries_the_runs_own_work_or_says_what_w_is():
    """DH2 (verify2 #6): `promote request-changes 2 --reason 'exclude: A1, B7' --work W`, copied as is, gave
    "/tmp/da1/W: no promotion here": W was defined nowhere. A review `promote run` writes knows its --work (the
    stage context carries it) and names it, quoted for a shell; one that does not says once what W is."""
    import shlex

    from bot.cli import build_parser
    from bot.directives import WORK_SAID, exclude_command, request_changes_command
    from bot.stages.runner import Runner

    work = "/tmp/my promotions/s01"
    for text in (exclude_command("local", "A1, B7", work), request_changes_command(3, "rejudge: results", work)):
        [command] = re.findall(r"`(promote request-changes [^`]*)`", text)
        assert " W" not in command and WORK_SAID not in text, text
        assert str(build_parser().parse_args(shlex.split(command)[1:]).work) == work
    unknown = exclude_command("local", "A1")
    assert unknown.endswith("--work W` (W: your --work)") and unknown.count("W: your --work") == 1
    runner = Runner.__new__(Runner)  # the context `promote run` reviews with: its status_context names the work
    runner.status_context = {"home": "local", "work": work}
    for name in ("request", "forge", "results_dir", "allow_sample_data", "executor", "agents"):
        setattr(runner, name, None)
    assert runner.context(None).work == work


def test_gate2_raises_a_plan_that_decides_nothing_and_benchmarks_no_claim(branch):
    """Trials p2 and p4: a plan of guards only, none at 80% power, priced 1920-2480 GPU-minutes, and gate 2's
    checklist raised nothing. Here a person excluded every claim of the bundled example at gate 2 (its guards' 5%
    margins cannot be shown at CV 5%): what approving then buys is said, with a change request that applies."""
    from bot.hypotheses import parse_hypothesis, render_hypotheses
    from bot.model import Stage
    from bot.review.change_request import refusal_on_branch

    ctx, _, remove = branch
    claims = sorted(p for p in ctx.list(ctx.paths.hypotheses_dir) if p.rsplit("/", 1)[-1].startswith("A"))
    assert claims
    excluded = [parse_hypothesis(ctx.read(p) or "", p) for p in claims]
    ids = ", ".join(h.id for h in excluded)
    for p in claims:
        remove(p)
    record = render_hypotheses([], feedback=f"exclude: {ids} (x)", excluded=excluded)["excluded.json"]
    ctx.forge.commit_files(ctx.branch, {ctx.paths.hypotheses_excluded: record.encode()}, message="exclude")
    ctx.state.stages[int(Stage.HYPOTHESIZE)].feedback = f"exclude: {ids} (x)"
    found = {f.check: f for f in review_gate(2, ctx)}
    assert {"G2.plan-decides-nothing", "G2.no-claim-benchmarked"} <= set(found)
    claims = found["G2.no-claim-benchmarked"]  # the person's reason quoted back for each claim they excluded
    assert f"{excluded[0].id} (claim `" in claims.message and 'excluded at gate 2 ("x")' in claims.message
    # a claim out for another cause as well (the bundled example's A2: not testable as translated) was decided on
    # all the same: the person excluded it and said why, so the finding quotes them and does not ask again
    also = [h for h in excluded if h.not_testable]
    assert also and claims.severity is Severity.SUGGESTION
    for h in also:
        assert (
            f'{h.id} (claim `{h.source}`): excluded at gate 2 ("x"), and not testable as translated' in claims.message
        )
    fix = found["G2.plan-decides-nothing"].fix
    [(gate, reason)] = re.findall(r"`promote request-changes (\d) --reason '([^']*)' --work W`", fix)
    assert refusal_on_branch(int(gate), reason, ctx, author=False) is None
