"""`promote translate`: files written, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from bot.cli.translate import default_plugin_type

from .conftest import CORPUS, EXAMPLE, FIXTURES


def test_translate_writes_package_report_and_findings(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(
        [
            "translate",
            str(FIXTURES / "admission_gate.go"),
            "--out",
            str(out),
            "--plugin-type",
            "evolved-load-gate",
            "--no-check",
            "--json",
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kind"] == "admission" and summary["plugin_type"] == "evolved-load-gate"
    pkg = out / summary["package_dir"]
    assert (pkg / "evolved_load_gate.go").is_file() and (pkg / "evolved_load_gate_test.go").is_file()
    assert (out / "translation-report.md").read_text().startswith("# Translation report")
    assert isinstance(json.loads((out / "findings.json").read_text()), list)
    assert json.loads((out / "translation.json").read_text())["registration"]["line"].startswith("fwkplugin.Register(")


def test_critical_finding_exits_1(tmp_path, capsys):
    rc = main(["translate", str(CORPUS / "n02_inv9_admit_output_tokens.go"), "--out", str(tmp_path), "--no-check"])
    assert rc == 1
    assert "hazard.inv9-output-tokens" in capsys.readouterr().err


def test_unusable_input_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.go"
    bad.write_text(
        "func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {\n\tx := (1 +\n}\n"
    )
    rc = main(["translate", str(bad), "--out", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.go:2:" in err and "syntax error" in err


def test_kind_mismatch_exits_2(tmp_path, capsys):
    rc = main(["translate", str(FIXTURES / "admission_gate.go"), "--kind", "routing", "--out", str(tmp_path)])
    assert rc == 2
    assert "expected one of" in capsys.readouterr().err


def test_bundled_example_with_toolchain_check(tmp_path, capsys):
    rc = main(["translate", str(EXAMPLE), "--out", str(tmp_path), "--plugin-type", "evolved-adaptive-scorer"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "vet ok, test ok" in out
    assert "## Toolchain check" in (tmp_path / "translation-report.md").read_text()


def test_the_summary_counts_every_severity_and_says_when_agreement_misses_the_floor(tmp_path, capsys):
    """Found by a new user: a run with --fidelity-floor 0.99 printed "3 findings (0 CRITICAL)" and exit 0, hiding
    the IMPORTANT below-floor finding they had asked for."""
    args = [
        "--out",
        str(tmp_path),
        "--fidelity-floor",
        "0.995",
        "--no-check",
        "--plugin-type",
        "evolved-adaptive-scorer",
    ]
    rc = main(["translate", str(EXAMPLE), *args])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert " IMPORTANT, " in out and " SUGGESTION)" in out
    assert "decides like the BLIS original in 98.4% of 1000 sampled states: BELOW the floor (99.5%)" in out


def test_the_report_says_head_is_the_era_assumed_when_nothing_marks_an_older_one(tmp_path):
    """Found by an admission researcher: a01 read "BLIS era of the copy: head." as if the file said so, while the
    corpus lists it as 2026-03; only an older era is read from a mark in the file, head is the default."""
    assert main(["translate", str(CORPUS / "a01_pattern_c_adaptive_admission.go"), "--out", str(tmp_path / "a")]) in (
        0,
        1,
    )
    report = (tmp_path / "a" / "translation-report.md").read_text()
    assert "BLIS era of the copy: head (assumed: nothing in the file marks an older era)" in report
    assert main(["translate", str(CORPUS / "n01_removed_pending_priority.go"), "--out", str(tmp_path / "n")]) in (0, 1)
    assert "BLIS era of the copy: 2026-02." in (tmp_path / "n" / "translation-report.md").read_text()


@pytest.mark.parametrize(
    ("source", "before", "after"),
    [
        (EXAMPLE, "if load > 7 {", "if load > 1e19 {"),
        (CORPUS / "a01_pattern_c_adaptive_admission.go", "queuePerInstance > 8", "queuePerInstance > 1e19"),
    ],
)
def test_a_threshold_past_any_count_translates_and_its_tests_pass(tmp_path, capsys, source, before, after):
    """Found by a fresh pass (W4 #4): a "never" sentinel (`load > 1e19`) became probe counts past int64, the
    harness input could not be written (`TypeError: Integer exceeds 64-bit range`), and on GitHub the sandbox
    job died with no reply. Counts are now clamped to the largest a float64 holds exactly; and the order check's
    refused value (`loadLowThreshold` past `loadHighThreshold` = 1e19) is past it also where + 1 is lost."""
    text = source.read_text()
    assert before in text
    src = tmp_path / source.name
    src.write_text(text.replace(before, after, 1))
    rc = main(["translate", str(src), "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert rc in (0, 1), out.err
    assert "Traceback" not in out.err and "build ok" in out.out and "test ok" in out.out, out.out


def test_go_float_prints_an_infinite_value_as_a_literal_go_compiles():
    """`go_float(inf)` printed `inf`, which no Go file compiles: the largest finite float64 compares the same
    with every finite value."""
    import math

    from bot.golang.gonames import go_float

    assert go_float(math.inf) == "1.7976931348623157e+308" and go_float(-math.inf) == "-1.7976931348623157e+308"
    assert float(go_float(math.inf)) == math.nextafter(math.inf, 0) and go_float(1e19) == "1e+19"


def test_a_scorer_s_default_type_ends_in_scorer_and_a_given_type_is_kept(tmp_path, capsys):
    """Found by a Go reviewer: s01 (a `scheduling.Scorer`) shipped as `evolved-slo-aging-scheduler`, which a
    config author reads as a profile handler or an ordering policy; every upstream scorer's type ends in
    `-scorer`. The default now does too, the Go names follow it (QueueScorer, QueueScorerType,
    QueueScorerFactory upstream), and the package builds, vets and passes its tests on the real toolchain. A type
    the person gives is kept as given; an admitter keeps `evolved-<receiver>`."""
    s01 = CORPUS / "s01_slo_aging_scheduler.go"
    rc = main(["translate", str(s01), "--out", str(tmp_path / "d")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "build ok, vet ok, test ok" in out, out
    summary = json.loads((tmp_path / "d" / "translation.json").read_text())["summary"]
    assert summary["plugin_type"] == "evolved-slo-aging-scorer"
    assert summary["package_dir"].endswith("/scorer/evolvedsloagingscorer")
    main_go = (tmp_path / "d" / summary["package_dir"] / "evolved_slo_aging_scorer.go").read_text()
    assert 'const EvolvedSLOAgingScorerType = "evolved-slo-aging-scorer"' in main_go
    assert "type EvolvedSLOAgingScorer struct" in main_go and "func EvolvedSLOAgingScorerFactory(" in main_go
    assert (tmp_path / "d" / "deploy/config/evolved-slo-aging-scorer-epp-config.yaml").is_file()

    for source, given, want in [
        (s01, ["--plugin-type", "evolved-slo-aging-scheduler"], "evolved-slo-aging-scheduler"),
        (CORPUS / "a03_openevolve_tenant_fair_share.py", [], "evolved-tenant-fair-admission"),
    ]:
        assert main(["translate", str(source), "--out", str(tmp_path / want), *given, "--no-check", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["plugin_type"] == want
    assert default_plugin_type("WeightedScoring.Route", "scheduling.Scorer") == "evolved-weighted-scorer"
    assert default_plugin_type("AdaptiveScorer.Route", "scheduling.Scorer") == "evolved-adaptive-scorer"
    assert default_plugin_type("GuardedSJF.OrderQueue", "scheduling.Scorer") == "evolved-guarded-sjf-scorer"


def test_an_out_holding_an_earlier_translations_plugin_is_refused_naming_its_files(tmp_path, capsys):
    """`--plugin-type first-scorer`, then the default (or an upgrade that renamed the default) into the same
    --out left the first plugin and its config beside the second, unmentioned; now the second is refused with
    the files named, nothing is written, and the same translation again is fine."""
    out = tmp_path / "o"
    first = ["translate", str(EXAMPLE), "--out", str(out), "--no-check", "--plugin-type", "first-scorer"]
    assert main(first) == 0
    written = sorted(p for p in out.rglob("*") if p.is_file())
    assert main(first) == 0  # the same files again
    capsys.readouterr()
    assert main(["translate", str(EXAMPLE), "--out", str(out), "--no-check"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"promote: error: --out {out}: holds ")
    assert "deploy/config/first-scorer-epp-config.yaml" in err and "pass an empty or new --out directory" in err
    assert sorted(p for p in out.rglob("*") if p.is_file()) == written


def test_a_translation_without_the_check_removes_an_earlier_checks_log(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "toolchain.log").write_text("go test: ok (an earlier plugin)\n")
    assert main(["translate", str(EXAMPLE), "--out", str(out), "--no-check"]) == 0
    assert not (out / "toolchain.log").exists() and "removed" in capsys.readouterr().out


def test_the_summary_line_says_one_parameter_not_one_parameters(tmp_path, capsys):
    """Found by an llm-d maintainer reading the rehearsal's output: "6 signals, 1 parameters, 4 findings"."""
    rc = main(["translate", str(CORPUS / "g01_field_set_outside.go"), "--out", str(tmp_path), "--no-check"])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    assert ", 1 parameter, " in out and "1 parameters" not in out, out
