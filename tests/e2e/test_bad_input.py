"""Bad input: one clear line naming the problem, exit code 2, no traceback, nothing on the fork branch."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.cli import main
from tests.conftest import EXAMPLE, REQUEST, RESULTS, git

GO_PROGRAM = PROJECT_ROOT / "examples" / "corpus" / "r01_pattern_a_penalties.go"


@pytest.fixture()
def request_copy(tmp_path):
    """A copy of the example request we can break, next to its program."""
    d = tmp_path / "req"
    d.mkdir()
    shutil.copy(EXAMPLE / "best_program.py", d / "best_program.py")
    shutil.copy(EXAMPLE / "best_program_info.json", d / "best_program_info.json")  # origin.metadata_file
    doc = yaml.safe_load(REQUEST.read_text())
    path = d / "promotion.yaml"

    def write(mutate=None, source_text=None, raw=None):
        data = yaml.safe_load(yaml.safe_dump(doc))
        if mutate:
            mutate(data)
        if source_text is not None:
            (d / data["source"]).write_text(source_text)
        path.write_text(raw if raw is not None else yaml.safe_dump(data))
        return path

    return write


def run_bad(tmp_path, capsys, *args) -> str:
    fork = tmp_path / "fork"
    code = main([*args, "--work", str(tmp_path / "work"), "--fork", str(fork), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("promote: error: ") and "\n" not in err, err
    assert "Traceback" not in err
    if (fork / ".git").exists():
        assert "promotion/" not in git(fork, "branch", "--list")
    return err


def test_missing_request_file(tmp_path, capsys):
    err = run_bad(tmp_path, capsys, "run", str(tmp_path / "nope.yaml"))
    assert "no such file" in err


def test_malformed_yaml_names_line(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(raw="id: 1\ntitle: [unclosed\n")))
    assert "not valid YAML at line" in err


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d.pop("origin"), "origin"),
        (lambda d: d.update(kind="autoscaling"), "kind"),
        (lambda d: d["workloads"][0].update(rates="fast"), "workloads.0.rates"),
        (lambda d: d.update(colour="blue"), "colour"),
        (lambda d: d["claims"][0].update(workload="nowhere"), "claims"),
    ],
    ids=["missing-field", "unknown-kind", "wrong-type", "unknown-field", "unknown-workload"],
)
def test_malformed_request_names_the_field(tmp_path, capsys, request_copy, mutate, field):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(mutate)))
    assert field in err


def test_every_missing_field_is_named_at_once(tmp_path, capsys, request_copy):
    """Found by a README audit: only the first of five missing fields was named ("(and 4 more)"), so the fields
    a request needs were found one run at a time."""

    def strip(d):
        for name in ("id", "title", "origin", "workloads"):
            d.pop(name)

    err = run_bad(tmp_path, capsys, "run", str(request_copy(strip)))
    for name in ("'id'", "'title'", "'origin'", "'workloads'"):
        assert f"field {name}: Field required" in err, err
    assert "more)" not in err


def test_unknown_policy_kind_message_lists_kinds(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(kind="autoscaling"))))
    assert "routing" in err and "admission" in err and "scheduling" in err


def test_missing_source(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(source="gone.go"))))
    assert "gone.go" in err and "does not exist" in err


def test_a_source_that_is_a_directory_is_named_as_one(tmp_path, capsys, request_copy):
    path = request_copy(lambda d: d.update(source="dirsrc"))
    (path.parent / "dirsrc").mkdir()
    err = run_bad(tmp_path, capsys, "run", str(path))
    assert "field 'source': 'dirsrc' is a directory; name the evolved program file in it" in err
    assert "does not exist" not in err


def test_non_go_source(tmp_path, capsys, request_copy):
    p = request_copy(lambda d: d.update(source="notes.go"), source_text="Dear reviewer,\nthis is not code at all.\n")
    err = run_bad(tmp_path, capsys, "run", str(p))
    assert "notes.go" in err


def test_no_recognizable_policy_function(tmp_path, capsys, request_copy):
    src = "package sim\n\nfunc helper(x int) int {\n\treturn x + 1\n}\n"
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(source="helper.go"), source_text=src)))
    assert "Route" in err or "policy" in err.lower()


def test_kind_mismatch(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(kind="admission"))))
    assert "kind" in err and "routing" in err


@pytest.mark.parametrize(
    ("signals", "says"),
    [(["GpuBandwidth"], "GpuBandwidth is not a signal the dictionary knows"), (["TTFT"], "TTFT is not read")],
)
def test_a_claim_declaring_a_signal_the_plugin_does_not_read(tmp_path, capsys, request_copy, signals, says):
    """Refused before the fork is touched, naming the claim, the signal and what the program reads."""
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d["claims"][0].update(signals=signals))))
    assert f"claims[{yaml.safe_load(REQUEST.read_text())['claims'][0]['id']}].signals: {says}" in err
    assert "the program reads BatchSize, CacheHitRate, EffectiveLoad, InFlightRequests" in err


@pytest.mark.parametrize(
    ("mutate", "field", "name"),
    [
        (lambda d: d["claims"][0].update(metric="e2e_p95_msec"), "claims[{claim}].metric", "e2e_p95_msec"),
        (
            lambda d: d["baselines"][0].update(guarded_metrics=["ttft_meen", "e2e_p95"]),
            "baselines[{baseline}].guarded_metrics",
            "ttft_meen",
        ),
    ],
)
def test_an_unknown_metric_is_refused_before_stage_1(tmp_path, capsys, request_copy, mutate, field, name):
    """Stage 3 would refuse it only after a person decided gate 1; preflight names it and the known metrics."""
    doc = yaml.safe_load(REQUEST.read_text())
    err = run_bad(tmp_path, capsys, "run", str(request_copy(mutate)))
    where = field.format(claim=doc["claims"][0]["id"], baseline=doc["baselines"][0]["name"])
    assert f"{where}: unknown metric '{name}'" in err and "e2e_p95, e2e_p99" in err, err
    assert not (tmp_path / "work" / "state.json").exists()


def test_missing_results_directory(tmp_path, capsys):
    err = run_bad(tmp_path, capsys, "run", str(REQUEST), "--results", str(tmp_path / "no-results"))
    assert "no-results" in err


def test_malformed_results_directory(tmp_path, capsys):
    bad = tmp_path / "results"
    (bad / "baseline" / "w" / "rate-1" / "rep-1").mkdir(parents=True)
    (bad / "baseline" / "w" / "rate-1" / "rep-1" / "benchmark_report_v0.2,_x.yaml").write_text("version: '0.1'\n")
    err = run_bad(tmp_path, capsys, "run", str(REQUEST), "--results", str(bad))
    assert "results" in err


def test_bad_approve_flag(tmp_path, capsys):
    err = run_bad(tmp_path, capsys, "run", str(REQUEST), "--approve", "4")
    assert "--approve" in err


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_approve_value_is_refused_like_any_bad_one(tmp_path, capsys, value):
    """`--approve "$GATES"` with the variable unset: refused, not taken as "approve nothing"."""
    err = run_bad(tmp_path, capsys, "run", str(REQUEST), "--approve", value)
    assert f"--approve {value!r}: give 'all' or a comma-separated list of gates 1, 2, 3" in err
    assert not (tmp_path / "work" / "state.json").exists()


def test_approve_all_in_capitals_is_all():
    from bot.cli.pipeline import parse_approve

    assert parse_approve("ALL") == parse_approve("All") == parse_approve("all") == {1, 2, 3}
    assert parse_approve(None) == frozenset()


def test_deciding_without_a_promotion(tmp_path, capsys):
    code = main(["approve", "1", "--work", str(tmp_path / "empty")])
    err = capsys.readouterr().err
    assert code == 2 and "no promotion here" in err


def test_the_installed_console_script_prints_no_traceback(tmp_path):
    exe = shutil.which("promote", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe, "the console script `promote` is installed with the package"
    proc = subprocess.run(
        [exe, "run", str(tmp_path / "missing.yaml"), "--work", str(tmp_path / "w")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_sample_data_is_refused_at_run_without_the_flag(tmp_path, capsys):
    """`promote run`'s pre-check holds the reports to the evidence rules without ``--allow-sample-data``: the
    bundled sample reports are synthetic numbers, which must never become gate-3 verdicts unannounced."""
    err = run_bad(tmp_path, capsys, "run", str(REQUEST), "--results", str(RESULTS))
    assert "every report there is sample data, not a measurement" in err and "--allow-sample-data" in err, err
    assert not (tmp_path / "work" / "state.json").exists()


def test_results_of_another_promotion_are_refused_at_run(tmp_path, capsys, request_copy):
    """Every report under --results names promotion 1: promotion 7 cannot start on them (stage 5 would refuse)."""
    err = run_bad(
        tmp_path,
        capsys,
        "run",
        str(request_copy(lambda d: d.update(id="7"))),
        "--results",
        str(RESULTS),
        "--allow-sample-data",
    )
    assert "belongs to promotion '1' (run.keywords), not '7'" in err


def test_a_directory_given_as_the_request_is_named_as_one(tmp_path, capsys, request_copy):
    path = request_copy()
    err = run_bad(tmp_path, capsys, "run", str(path.parent))
    assert f"{path.parent}: is a directory, not a request file; pass {path}" in err and "no such file" not in err


@pytest.mark.parametrize("name", ["my_router.go", "best_program.py", "router.txt"])
def test_the_program_given_as_the_request_is_named_as_one(tmp_path, capsys, name):
    """`promote run my_router.go` said "not valid YAML at line 4 ... '\\t'": people went to edit their program."""
    text = (EXAMPLE / "best_program.py").read_text() if name.endswith(".py") else GO_PROGRAM.read_text()
    (tmp_path / name).write_text(text)
    err = run_bad(tmp_path, capsys, "run", str(tmp_path / name))
    assert "this looks like the evolved program, not the request; pass the promotion.yaml (request)" in err, err
    assert "YAML" not in err


def test_a_plugin_name_that_is_not_kebab_case_is_answered_with_its_kebab_case_form(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(plugin_name="Load Penalty Scorer"))))
    assert "field 'plugin_name': 'Load Penalty Scorer' must be kebab-case" in err, err
    assert "write 'load-penalty-scorer'" in err and "should match pattern" not in err


def test_an_unknown_evolved_for_names_the_field_and_the_workloads(tmp_path, capsys, request_copy):
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d.update(evolved_for="load-spike"))))
    workloads = sorted(w["name"] for w in yaml.safe_load(REQUEST.read_text())["workloads"])
    assert f"field 'evolved_for': 'load-spike' is not one of workloads {workloads}" in err, err
    assert "(top level)" not in err and "Value error" not in err


def test_a_magnitude_the_statement_contradicts_is_refused_naming_both(tmp_path, capsys, request_copy):
    """The statement says -24% and magnitude -0.18: the PR would show "BLIS predicted −18.0%" under it."""
    doc = yaml.safe_load(REQUEST.read_text())
    claim = doc["claims"][0]
    assert "-24%" in claim["statement"] and claim["magnitude"] == -0.24
    err = run_bad(tmp_path, capsys, "run", str(request_copy(lambda d: d["claims"][0].update(magnitude=-0.18))))
    assert (
        f"claims[{claim['id']}].magnitude: -0.18 is -18%, but the statement says -24%; set magnitude: -0.24 "
        "if the statement is right, or correct the statement"
    ) in err, err
    assert not (tmp_path / "work" / "state.json").exists()
