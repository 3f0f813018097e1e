"""check_plugin against the real Go 1.26.6 toolchain and the in-repo mirror of llm-d-router v0.10.0."""

from __future__ import annotations

import pytest

from bot.golang import gooutput, toolchain
from bot.model import Severity

from .toolchain_samples import IMPORT, PKG, PLUGIN_GO, PLUGIN_TEST_GO, REGISTER, line_of, plugin_files


@pytest.fixture(scope="module")
def good_report(go_cache):
    return toolchain.check_plugin(
        plugin_files(), registration_import=IMPORT, registration_line=REGISTER, cache_dir=go_cache
    )


def test_valid_plugin_passes_everything(good_report):
    r = good_report
    assert r.findings == [], r.output
    assert (r.gofmt_ok, r.build_ok, r.vet_ok, r.test_ok) == (True, True, True, True)
    assert r.ok
    assert r.tests_failed == 0
    assert r.tests_passed == 2  # TestScore, TestFactory (subtests are not counted twice)
    assert "$ go vet ./..." in r.output
    assert "/tmp/" not in r.output  # scratch paths are replaced: output is reproducible


def test_registration_is_compiled(go_cache):
    """A registration naming a missing factory must fail in runner.go: proves vet/build cover the registration."""
    bad = REGISTER.replace("evolvedtoy.Factory", "evolvedtoy.NoSuchFactory")
    r = toolchain.check_plugin(plugin_files(), registration_import=IMPORT, registration_line=bad, cache_dir=go_cache)
    assert not r.build_ok
    hits = [f for f in r.findings if f.file == toolchain.RUNNER_GO and f.severity is Severity.CRITICAL]
    assert hits and "NoSuchFactory" in hits[0].message


def test_type_error_is_critical_at_file_and_line(go_cache):
    broken = PLUGIN_GO.replace(
        "queue := 1 / (1 + float64(m.WaitingQueueSize))",
        'queue := 1 / (1 + float64(m.WaitingQueueSize))\n\t\tvar wrong int = "x"\n\t\t_ = wrong',
    )
    r = toolchain.check_plugin(plugin_files(plugin=broken), cache_dir=go_cache)
    assert not r.build_ok and not r.ok
    crit = [f for f in r.findings if f.severity is Severity.CRITICAL and f.check == toolchain.CHECK_BUILD]
    assert crit, r.output
    assert crit[0].file == f"{PKG}/evolved_toy.go"
    assert crit[0].line == line_of(broken, 'var wrong int = "x"')
    assert "cannot use" in crit[0].message


def test_vet_problem_is_reported(go_cache):
    vetty = PLUGIN_GO.replace(
        "return nil, fmt.Errorf(\"failed to parse parameters of '%s': %w\", EvolvedToyScorerType, err)",
        "return nil, fmt.Errorf(\"failed to parse parameters of '%d': %w\", EvolvedToyScorerType, err)",
    )
    assert vetty != PLUGIN_GO
    r = toolchain.check_plugin(plugin_files(plugin=vetty), cache_dir=go_cache)
    assert r.build_ok and not r.vet_ok
    vet = [f for f in r.findings if f.check == toolchain.CHECK_VET]
    assert vet, r.output
    assert vet[0].severity is Severity.IMPORTANT
    assert vet[0].file == f"{PKG}/evolved_toy.go"
    assert vet[0].line == line_of(vetty, "failed to parse parameters of '%d'")


def test_a_vet_finding_quoting_a_100k_literal_of_slashes_is_bounded(go_cache):
    """go vet quotes the literal whole; the bot cuts the line before reading it (a quadratic pattern took over a
    minute on it, outside every sandbox limit) and the finding keeps only its head and end."""
    literal = "/" * 100_000
    vetty = PLUGIN_GO.replace(
        "return nil, fmt.Errorf(\"failed to parse parameters of '%s': %w\", EvolvedToyScorerType, err)",
        f'return nil, fmt.Errorf("%d: %w", "{literal}", err)',
    )
    assert vetty != PLUGIN_GO
    r = toolchain.check_plugin(plugin_files(plugin=vetty), cache_dir=go_cache)
    assert r.build_ok and not r.vet_ok
    [vet] = [f for f in r.findings if f.check == toolchain.CHECK_VET]
    assert (vet.file, vet.line) == (f"{PKG}/evolved_toy.go", line_of(vetty, 'fmt.Errorf("%d: %w"'))
    assert vet.message.startswith('fmt.Errorf format %d has arg "///') and "characters cut]" in vet.message
    assert vet.message.endswith('///" of wrong type string'), vet.message
    assert len(vet.message) < gooutput.MESSAGE_CHARS + 40
    assert max(len(ln) for ln in r.output.splitlines()) < gooutput.LINE_CHARS + 40


def test_unformatted_file_is_a_gofmt_finding(go_cache):
    ugly = PLUGIN_GO.replace(
        "func (s *Scorer) TypedName() fwkplugin.TypedName { return s.typedName }",
        "func (s *Scorer) TypedName() fwkplugin.TypedName {   return s.typedName }",
    )
    assert ugly != PLUGIN_GO
    r = toolchain.check_plugin(plugin_files(plugin=ugly), cache_dir=go_cache)
    assert not r.gofmt_ok and r.build_ok and r.vet_ok and r.test_ok
    fmt_findings = [f for f in r.findings if f.check == toolchain.CHECK_GOFMT]
    assert [f.file for f in fmt_findings] == [f"{PKG}/evolved_toy.go"]
    assert fmt_findings[0].severity is Severity.IMPORTANT
    assert fmt_findings[0].line == line_of(ugly, "{   return s.typedName }")


def test_failing_test_is_counted_and_located(go_cache):
    wrong = PLUGIN_TEST_GO.replace("podB: 0.125}", "podB: 0.5}")
    assert wrong != PLUGIN_TEST_GO
    r = toolchain.check_plugin(plugin_files(test=wrong), cache_dir=go_cache)
    assert r.build_ok and not r.test_ok
    assert r.tests_failed == 1 and r.tests_passed == 1
    fails = [f for f in r.findings if f.check == toolchain.CHECK_TEST]
    assert len(fails) == 1 and fails[0].severity is Severity.CRITICAL
    assert fails[0].file == f"{PKG}/evolved_toy_test.go"
    assert fails[0].line == line_of(wrong, 'Errorf("Unexpected output')
    assert "TestScore" in fails[0].message


def test_bad_file_path_is_a_request_error(go_cache):
    with pytest.raises(toolchain.PluginFilesError, match="relative"):
        toolchain.check_plugin({"../escape.go": "package x\n"}, cache_dir=go_cache)


def test_panicking_test_points_at_the_panic(go_cache):
    panicky = PLUGIN_TEST_GO.replace(
        "\tgot := New(0.5).Score(", '\tvar nilMap map[string]int\n\tnilMap["boom"] = 1\n\tgot := New(0.5).Score('
    )
    assert panicky != PLUGIN_TEST_GO
    r = toolchain.check_plugin(plugin_files(test=panicky), cache_dir=go_cache)
    assert not r.test_ok and r.tests_failed >= 1
    fails = [f for f in r.findings if f.check == toolchain.CHECK_TEST]
    assert fails and fails[0].file == f"{PKG}/evolved_toy_test.go", r.output
    assert fails[0].line == line_of(panicky, 'nilMap["boom"] = 1')
    assert "panic" in fails[0].message


@pytest.mark.slow
def test_the_check_kind_runs_the_same_passing_bytes_once_and_a_failure_every_time(monkeypatch):
    """Stages 2 and 5 ask for the same check: the second answer is the first, a failing one is rerun."""
    real, calls = toolchain.check_plugin, []

    def counted(files, **kwargs):
        calls.append(sorted(files))
        return real(files, **kwargs)

    monkeypatch.setattr(toolchain, "check_plugin", counted)
    monkeypatch.setattr(toolchain, "_PASSED", {})
    args = {"registration_import": IMPORT, "registration_line": REGISTER}
    first = toolchain.execute_check(plugin_files(), args)
    assert first["test_ok"] and first["tests_passed"] == 2, first["output"]
    first["findings"].append("a caller's edit")  # answers are copies: nothing a caller does reaches the next
    again = toolchain.execute_check(plugin_files(), args)
    assert len(calls) == 1 and again["findings"] == [] and again["tests_passed"] == 2
    toolchain.execute_check(plugin_files(), {**args, "registration_line": ""})  # another request: checked
    assert len(calls) == 2
    wrong = plugin_files(test=PLUGIN_TEST_GO.replace("podB: 0.125}", "podB: 0.5}"))
    for _ in range(2):
        assert toolchain.execute_check(wrong, args)["tests_failed"] == 1
    assert len(calls) == 4


def test_a_failing_cmp_diff_names_the_field_that_differs_and_how_to_fix_it(go_cache):
    """Found on GitHub: a stale stage-4 test failed with only the diff's first line (`...Parameters{`) and no fix,
    so the CRITICAL did not say which parameter differed."""
    defaults = """
func TestDefaults(t *testing.T) {
	want := Parameters{QueueWeight: 0.4}
	got := Parameters{QueueWeight: 0.5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unexpected output (-want +got): %v", diff)
	}
}
"""
    r = toolchain.check_plugin(plugin_files(test=PLUGIN_TEST_GO + defaults), cache_dir=go_cache)
    [fail] = [f for f in r.findings if f.check == toolchain.CHECK_TEST]
    assert fail.message == (
        "test TestDefaults failed: Unexpected output (-want +got): evolvedtoy.Parameters differs in "
        "QueueWeight: want 0.4, got 0.5"
    ), fail.message
    assert fail.fix and "want" in fail.fix and "got" in fail.fix
