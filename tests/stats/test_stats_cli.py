"""`promote hypothesize | plan | evaluate` end to end on the bundled example, and their one-line errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import bot.cli
from bot import PROJECT_ROOT
from bot.stats.evidence import verdicts_from_json
from bot.stats.judged import NOT_USED_HEADING

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: `promote evaluate` of the bundled reports into {tmp}/o, as the bad-input cases spell it.
EVALUATE = ["evaluate", "--allow-sample-data", "--hypotheses", "{hyp}", "--results", "{results}", "--out", "{tmp}/o"]
PLAN = ["plan", "{request}", "--hypotheses", "{hyp}", "--out", "{tmp}/o"]


@pytest.fixture
def promote(monkeypatch, capsys):
    """bot.cli.main with only this module's commands, so other command groups cannot break these tests."""
    monkeypatch.setattr(bot.cli, "COMMANDS", ["evidence"])

    def run(*argv: str) -> tuple[int, str, str]:
        code = bot.cli.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """hypothesize -> plan -> evaluate once for the module (the evaluate step renders every plot)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(bot.cli, "COMMANDS", ["evidence"])
    root = tmp_path_factory.mktemp("cli")
    request = EXAMPLE / "promotion.yaml"
    codes = [
        bot.cli.main(
            [
                "hypothesize",
                str(request),
                "--out",
                str(root / "hyp"),
                "--translation",
                str(FIXTURES / "translation.json"),
            ]
        ),
        bot.cli.main(
            [
                "plan",
                str(request),
                "--hypotheses",
                str(root / "hyp"),
                "--out",
                str(root / "plan"),
                "--evolved-config",
                str(FIXTURES / "evolved-epp-config.yaml"),
            ]
        ),
    ]
    spec = next((root / "plan").rglob("evaluation.yaml"))
    codes.append(
        bot.cli.main(
            [
                "evaluate",
                "--allow-sample-data",
                "--hypotheses",
                str(root / "hyp"),
                "--results",
                str(EXAMPLE / "results"),
                "--out",
                str(root / "ev"),
                "--spec",
                str(spec),
            ]
        )
    )
    mp.undo()
    return root, codes


def test_the_chain_writes_hypotheses_plan_and_verdicts(chain):
    root, codes = chain
    assert codes == [0, 0, 0]
    hyps = sorted(p.name for p in (root / "hyp").glob("[ABC]*.md"))
    assert hyps and (root / "hyp" / "README.md").is_file()
    plan = json.loads((root / "plan" / "plan.json").read_text())
    assert plan["repetitions"] >= 2 and (root / "plan" / "plan.md").is_file()
    verdicts = verdicts_from_json((root / "ev" / "verdicts.json").read_text())
    assert sorted(f"{v.hypothesis_id}.md" for v in verdicts) == hyps
    md = (root / "ev" / "verdicts.md").read_text()
    assert "## Track A" in md and "mermaid" not in md
    # at most eight images: the forest plot of every measured cell and a distribution plot per Track A claim
    plots = sorted(p.name for p in (root / "ev" / "plots").glob("*.png"))
    assert "claims-forest.png" in plots and 1 < len(plots) <= 8
    assert all(p == "claims-forest.png" or p.startswith("A") for p in plots)
    assert sorted(re.findall(r"\]\(plots/([^)]+\.png)\)", md)) == plots  # each image shown once, none missing


def test_every_figure_of_the_bundled_example_fits(chain):
    """The label-fit check on the bundled example's figures: every text box lies inside its figure."""
    from bot.bench.reports import load_results
    from bot.hypotheses import load_hypotheses
    from bot.stats.label_fit import text_outside
    from bot.stats.plots import build_figures

    root, _ = chain
    verdicts = verdicts_from_json((root / "ev" / "verdicts.json").read_text())
    built = build_figures(load_hypotheses(root / "hyp"), verdicts, load_results(EXAMPLE / "results"))
    assert sorted(built.figures) == sorted(p.name for p in (root / "ev" / "plots").glob("*.png"))
    for name, fig in built.figures.items():
        assert text_outside(fig) == [], name


def test_evaluate_is_deterministic(chain, promote, tmp_path):
    root, _ = chain
    spec = next((root / "plan").rglob("evaluation.yaml"))
    code, out, _ = promote(
        "evaluate",
        "--allow-sample-data",
        "--hypotheses",
        root / "hyp",
        "--results",
        EXAMPLE / "results",
        "--out",
        tmp_path / "again",
        "--spec",
        spec,
    )
    assert code == 0 and "verdicts:" in out
    for p in sorted((root / "ev").rglob("*")):
        if p.is_file():
            assert (tmp_path / "again" / p.relative_to(root / "ev")).read_bytes() == p.read_bytes(), p.name


def test_evolved_for_changes_only_the_mechanism_flags(chain, promote, tmp_path):
    root, _ = chain
    spec = next((root / "plan").rglob("evaluation.yaml"))
    code, _, _ = promote(
        "evaluate",
        "--allow-sample-data",
        "--hypotheses",
        root / "hyp",
        "--results",
        EXAMPLE / "results",
        "--out",
        tmp_path,
        "--evolved-for",
        "sanity-random",
        "--spec",
        spec,
    )
    assert code == 0
    other = {v.hypothesis_id: v for v in verdicts_from_json((tmp_path / "verdicts.json").read_text())}
    base = {v.hypothesis_id: v for v in verdicts_from_json((root / "ev" / "verdicts.json").read_text())}
    assert {k: v.status for k, v in other.items()} == {k: v.status for k, v in base.items()}
    assert any("mechanism check" in f for v in other.values() for f in v.flags)


def test_the_spec_carries_the_plans_multiplicity_weights(chain):
    """`promote evaluate --spec` applies the plan's decision rule (its weighted-Holm weights), not a default."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.reports import load_results
    from bot.hypotheses import load_hypotheses
    from bot.stats.verdicts import evaluate

    root, _ = chain
    spec = load_evaluation_spec(next((root / "plan").rglob("evaluation.yaml")).read_text())
    assert spec.decision.weights and set(spec.decision.weights) <= set(spec.hypotheses)
    expected = evaluate(
        load_hypotheses(root / "hyp"),
        load_results(EXAMPLE / "results"),
        evolved_for=spec.evolved_for,
        decision=spec.decision,
    )
    cli = verdicts_from_json((root / "ev" / "verdicts.json").read_text())
    assert {v.hypothesis_id: v.status for v in cli} == {v.hypothesis_id: v.status for v in expected}


def test_evaluate_without_the_spec_says_no_report_was_bound_to_an_arm(chain, promote, tmp_path, capsys):
    """N2 #7: without --spec, baseline-config reports filed under evolved/ confirmed A3 and nothing said the arms were
    never checked; the summary line's counts also left out the not-testable verdicts (12 + 0 + 3 of 17)."""
    root, _ = chain
    hyp = tmp_path / "hyp"
    shutil.copytree(root / "hyp", hyp)
    a1 = hyp / "A1.md"  # one hypothesis the translated plugin cannot test, as A2/B8 of the bundled example
    a1.write_text(a1.read_text().replace("not_testable: null", "not_testable: 'the plugin holds CacheHitRate at 0'"))
    argv = ["evaluate", "--allow-sample-data", "--hypotheses", hyp, "--results", EXAMPLE / "results"]
    code, out, _ = promote(*argv, "--out", tmp_path / "nospec")
    assert code == 0 and "WARNING: arms not verified: pass --spec <evaluation.yaml>" in out
    md = (tmp_path / "nospec" / "verdicts.md").read_text()
    assert md.startswith("# Verdicts\n\n> ⚠️ **Arms not verified: pass `--spec <evaluation.yaml>`")
    verdicts = verdicts_from_json((tmp_path / "nospec" / "verdicts.json").read_text())
    total, counts = re.match(r"(\d+) verdicts: ([^;]+?)(?:;| ->)", out).groups()
    assert int(total) == len(verdicts) == sum(int(c.split()[0]) for c in counts.split(", "))
    assert ", 1 not testable as translated" in counts
    # with the plan's spec the reports are bound to their arms: no warning
    spec = next((root / "plan").rglob("evaluation.yaml"))
    code, out, _ = promote(*argv, "--out", tmp_path / "spec", "--spec", spec)
    assert code == 0 and "arms not verified" not in out
    assert "Arms not verified" not in (tmp_path / "spec" / "verdicts.md").read_text()
    with pytest.raises(SystemExit):
        promote("evaluate", "--help")
    assert "evidence binding" in capsys.readouterr().out


def test_evaluate_says_when_it_could_not_check_what_stage_5_sets_aside(chain, promote, tmp_path):
    """CC4: without the translation, `promote evaluate` cannot tell the hypotheses stage 5 reports not measurable on
    these cells (an admitter that sheds nothing there, a scheduler whose order they leave inert): it says so, and
    how to give it; with it (here a router's, which sets nothing aside) it says nothing. `promote translate`'s
    translation.json, which wraps the summary, is read as stage 2's."""
    root, _ = chain
    spec = next((root / "plan").rglob("evaluation.yaml"))
    argv = ["evaluate", "--allow-sample-data", "--hypotheses", root / "hyp", "--results", EXAMPLE / "results"]
    code, out, _ = promote(*argv, "--out", tmp_path / "a", "--spec", spec)
    assert code == 0 and "WARNING: not-measurable set-aside not checked: pass --translation <translation.json>" in out
    assert "**Not-measurable set-aside not checked: pass --translation" in (tmp_path / "a" / "verdicts.md").read_text()
    wrapped = tmp_path / "translation.json"
    wrapped.write_text(json.dumps({"summary": json.loads((FIXTURES / "translation.json").read_text()), "files": []}))
    for translation in (FIXTURES / "translation.json", wrapped):
        code, out, _ = promote(*argv, "--out", tmp_path / "b", "--spec", spec, "--translation", translation)
        assert code == 0 and "set-aside not checked" not in out, out
        assert "set-aside not checked" not in (tmp_path / "b" / "verdicts.md").read_text()


def test_evaluate_with_the_spec_sets_aside_reports_of_cells_not_in_the_plan_as_stage_5_does(chain, promote, tmp_path):
    """EV: stage 5 moves the reports of a (workload, rate) none of the spec's cells names to the reports not used
    (NOT_IN_PLAN); `promote evaluate --spec` counted them as used, so the same spec and results gave another page.
    The bundled sample data holds load-spikes+pod-failure@30, which the plan here does not run. Those reports are
    valid: the summary line says them not used, beside the past-the-last-look ones, never "rejected"."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.reports_aside import NOT_IN_PLAN
    from bot.stats.cells import rate_key

    root, _ = chain
    spec_path = next((root / "plan").rglob("evaluation.yaml"))
    planned = {(c.workload, rate_key(c.rate)) for c in load_evaluation_spec(spec_path.read_text()).cells}
    unplanned = sorted(
        p.relative_to(EXAMPLE / "results").as_posix()
        for p in (EXAMPLE / "results").glob("*/*/rate-*/rep-*/benchmark_report*.yaml")
        if (p.parts[-4], rate_key(float(p.parts[-3].removeprefix("rate-")))) not in planned
    )
    assert unplanned and all("/load-spikes+pod-failure/rate-30/" in rel for rel in unplanned)
    argv = ["evaluate", "--allow-sample-data", "--hypotheses", root / "hyp", "--results", EXAMPLE / "results"]
    code, out, _ = promote(*argv, "--spec", spec_path, "--out", tmp_path / "o")
    assert code == 0
    assert f"; {len(unplanned)} valid report(s) of a cell not in the plan, not used (listed in verdicts.md)" in out
    assert "rejected" not in out, out
    md = (tmp_path / "o" / "verdicts.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| `") and NOT_IN_PLAN in line]
    assert sorted(row.split("`")[1] for row in rows) == unplanned
    assert all(f"{NOT_IN_PLAN}: no hypothesis reads its workload and rate" in row for row in rows)
    # without --spec nothing says which cells are planned: nothing is set aside as not in the plan
    code, out, _ = promote(*argv, "--out", tmp_path / "nospec")
    assert code == 0 and "not in the plan" not in out
    assert NOT_IN_PLAN not in (tmp_path / "nospec" / "verdicts.md").read_text()


def test_evaluate_leaves_out_runs_cut_short_and_lists_runs_no_look_reached_apart(chain, promote, tmp_path):
    """Found by a statistician on the bundled reports: seven evolved load-spikes@30 runs that recorded 6 requests each
    still decided A1 there; and with evolved rep-3 of load-spikes@45 gone, the valid baseline rep-7 no look reached
    was listed under "Reports that failed validation" and counted as rejected, while the missing run was named
    nowhere."""
    import yaml

    root, _ = chain
    spec = next((root / "plan").rglob("evaluation.yaml"))
    results = tmp_path / "results"
    shutil.copytree(EXAMPLE / "results", results)
    shutil.rmtree(results / "evolved" / "load-spikes" / "rate-45" / "rep-3")
    for p in sorted((results / "evolved" / "load-spikes" / "rate-30").glob("rep-*/benchmark_report*.yaml")):
        doc = yaml.safe_load(p.read_text())
        doc["results"]["request_performance"]["aggregate"]["requests"]["total"] = 6
        p.write_text(yaml.safe_dump(doc, sort_keys=False))
    argv = ["evaluate", "--allow-sample-data", "--hypotheses", root / "hyp", "--results", results, "--spec", spec]
    code, out, _ = promote(*argv, "--request", EXAMPLE / "promotion.yaml", "--out", tmp_path / "o")
    assert code == 0
    assert "; 7 report(s) rejected (listed in verdicts.md)" in out
    assert "; 1 valid report(s) past the last look of their cell, not used (listed in verdicts.md)" in out
    md = (tmp_path / "o" / "verdicts.md").read_text()
    invalid = md.split(f"## {NOT_USED_HEADING}")[1].split("\n## ")[0]
    unreached = md.split("## Valid reports no look reached (not used)")[1].split("\n## ")[0]
    assert invalid.count("| `evolved/load-spikes/rate-30/rep-") == 7 and "cut short: it recorded 6 requests" in invalid
    assert "about 3600 (30 req/s x 120 s, the plan's 'load-spikes' workload)" in invalid
    assert "rate-45" not in invalid
    [row] = [line for line in unreached.splitlines() if line.startswith("| `")]
    assert row.startswith("| `baseline/load-spikes/rate-45/rep-7/")
    assert "the evolved arm has 6 run(s) here (evolved rep-3 missing)" in row
    verdicts = verdicts_from_json((tmp_path / "o" / "verdicts.json").read_text())
    assert not any(e.workload == "load-spikes" and e.rate == 30 for v in verdicts for e in v.effects)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["evaluate", "--hypotheses", "{tmp}/nope", "--results", "{results}", "--out", "{tmp}/o"], "no such directory"),
        (
            ["evaluate", "--hypotheses", "{hyp}", "--results", "{tmp}/nope", "--out", "{tmp}/o"],
            "no such results directory",
        ),
        (
            [
                "evaluate",
                "--allow-sample-data",
                "--hypotheses",
                "{hyp}",
                "--results",
                "{results}",
                "--out",
                "{tmp}/o",
                "--per-request",
                "{tmp}/x.csv",
            ],
            "--per-request",
        ),
        (
            [
                "evaluate",
                "--allow-sample-data",
                "--hypotheses",
                "{hyp}",
                "--results",
                "{results}",
                "--out",
                "{tmp}/o",
                "--alpha",
                "0.7",
            ],
            "alpha",
        ),
        (
            [
                "evaluate",
                "--allow-sample-data",
                "--hypotheses",
                "{hyp}",
                "--results",
                "{results}",
                "--out",
                "{tmp}/o",
                "--spec",
                "{tmp}/bad.yaml",
            ],
            "evaluation spec",
        ),
        pytest.param(  # the bundled reports are sample data: refused without --allow-sample-data
            ["evaluate", "--hypotheses", "{hyp}", "--results", "{results}", "--out", "{tmp}/o"],
            "every report there is sample data, not a measurement; pass --allow-sample-data",
            id="sample-data-without-the-flag",
        ),
        pytest.param(
            [*EVALUATE, "--spec", "{spec}", "--translation", "{tmp}/other.json"],
            "the translation of the routing plugin 'other-scorer', but the --spec plans plugin 'evolved-adaptive-scorer'",
            id="translation-of-another-plugin",
        ),
        # Red team 8 item 2: another plugin's translation set aside every hypothesis as "not measurable" for what
        # that plugin does; the hypotheses name their plugin, so it is refused with neither --request nor --spec
        pytest.param(
            [*EVALUATE, "--translation", "{tmp}/admitter.json"],
            "the translation of the admission plugin 'gaie-saturation-shedder', but the --hypotheses are about the "
            "routing plugin 'evolved-adaptive-scorer'",
            id="translation-of-another-plugin-without-request-or-spec",
        ),
        pytest.param(
            [*EVALUATE, "--spec", "{spec}", "--translation", "{tmp}/other-kind.json"],
            "the translation of the admission plugin 'evolved-adaptive-scorer', but the --hypotheses are about the "
            "routing plugin 'evolved-adaptive-scorer'",
            id="translation-of-another-kind-with-the-specs-plugin",
        ),
        pytest.param(
            [*EVALUATE, "--request", "{request}", "--translation", "{tmp}/admitter.json"],
            "the translation of the admission plugin 'gaie-saturation-shedder', but the --request promotes the "
            "routing plugin 'evolved-adaptive-scorer'",
            id="translation-of-another-plugin-than-the-request",
        ),
        pytest.param(
            ["hypothesize", "{request}", "--out", "{tmp}/o", "--translation", "{tmp}/admitter.json"],
            "promotion.yaml promotes the routing plugin 'evolved-adaptive-scorer'",
            id="hypothesize-from-another-plugins-translation",
        ),
        # CH1: `promote plan --translation` reads it as `promote evaluate` does: another plugin's is refused
        pytest.param(
            [*PLAN, "--translation", "{tmp}/admitter.json"],
            "the translation of the admission plugin 'gaie-saturation-shedder', but ",  # ...: the request's is a router
            id="plan-from-another-plugins-translation",
        ),
        pytest.param(
            [*PLAN, "--translation", "{tmp}/other-kind.json"],
            "the translation of the admission plugin 'evolved-adaptive-scorer', but ",  # ...: the request's is a router
            id="plan-from-another-kinds-translation",
        ),
        pytest.param(
            [*PLAN, "--translation", "{tmp}/notjson.json"],
            "notjson.json: not JSON",
            id="plan-translation-not-json",
        ),
        # Red team 8 item 4: json.loads raises RecursionError on deep nesting, which is no JSONDecodeError
        pytest.param(
            [*EVALUATE, "--translation", "{tmp}/deep.json"],
            "deep.json: not JSON the bot reads (nested too deep",
            id="translation-nested-too-deep",
        ),
        pytest.param(
            ["hypothesize", "{request}", "--out", "{tmp}/o", "--translation", "{tmp}/deep.json"],
            "deep.json: not JSON the bot reads (nested too deep",
            id="hypothesize-translation-nested-too-deep",
        ),
        pytest.param(
            [*EVALUATE, "--translation", "{tmp}/notjson.json"],
            "not JSON",
            id="translation-not-json",
        ),
        (["hypothesize", "{tmp}/missing.yaml", "--out", "{tmp}/o"], "no such file"),
        (["hypothesize", "{request}", "--out", "{tmp}/o", "--translation", "{tmp}/bad.json"], "bad.json"),
        (
            [*PLAN, "--evolved-config", "{tmp}/none.yaml"],
            "evolved EndpointPickerConfig",
        ),
        ([*PLAN, "--prior-cv", "3"], "--prior-cv"),
    ],
)
def test_bad_input_exits_2_with_one_line(chain, promote, tmp_path, argv, needle):
    root, _ = chain
    (tmp_path / "bad.json").write_text('{"kind": "routing"}')
    (tmp_path / "bad.yaml").write_text("version: 1\n")
    (tmp_path / "notjson.json").write_text("{")
    other = json.loads((FIXTURES / "translation.json").read_text()) | {"plugin_type": "other-scorer"}
    (tmp_path / "other.json").write_text(json.dumps(other))
    other_kind = other | {
        "plugin_type": "evolved-adaptive-scorer",
        "kind": "admission",
        "behaviour": {"idle:0": "admit"},
    }
    (tmp_path / "other-kind.json").write_text(json.dumps(other_kind))
    (tmp_path / "admitter.json").write_text(json.dumps(other_kind | {"plugin_type": "gaie-saturation-shedder"}))
    (tmp_path / "deep.json").write_text('{"summary":' + "[" * 200_000 + "]" * 200_000 + "}")
    subst = {
        "{spec}": str(next((root / "plan").rglob("evaluation.yaml"))),
        "{tmp}": str(tmp_path),
        "{results}": str(EXAMPLE / "results"),
        "{hyp}": str(root / "hyp"),
        "{request}": str(EXAMPLE / "promotion.yaml"),
    }
    args = []
    for a in argv:
        for k, v in subst.items():
            a = a.replace(k, v)
        args.append(a)
    code, out, err = promote(*args)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("promote: error:") and needle in err, err
    assert not (tmp_path / "o").exists()  # nothing half-written
