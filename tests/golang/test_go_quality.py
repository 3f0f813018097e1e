"""The bundled example's plugin as an llm-d maintainer reads it, and its fidelity to the BLIS original."""

from __future__ import annotations

import re

import pytest

from bot.golang.harness_world import MAPPINGS
from bot.golang.translate import translate

from .conftest import CORPUS, EXAMPLE, race_go, translate_path, write_module


@pytest.fixture(scope="module")
def example(dictionary):
    return translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")


def _go(tr, shipped_only=True):
    return {p: t for p, t in tr.files.items() if p.endswith(".go") and not (shipped_only and p.endswith("_test.go"))}


def test_no_global_mutex_and_consumes_and_log_on_recover(example):
    _, _, tr = example
    code = "\n".join(_go(tr).values())
    assert "sync.Mutex" not in code and '"sync"' not in code  # stateless receiver: built once, read-only
    main = next(t for p, t in tr.files.items() if p.endswith("evolved_adaptive_scorer.go"))
    assert "func (s *EvolvedAdaptiveScorer) Consumes() plugin.DataDependencies" in main
    # the keys named after the configured producers (test_data_keys.py)
    assert (
        "s.keys.PrefixCacheMatchInfoDataKey: attrprefix" in main and "s.keys.InFlightLoadDataKey: concurrency" in main
    )
    assert re.search(r"recover\(\).*\n.*err = fmt.Errorf", main)
    assert "s.failures.failed(ctx, err," in main  # logged at most once a minute (test_go_polish.py)


def test_shipped_code_reads_like_upstream(example):
    _, _, tr = example
    files = _go(tr, shipped_only=False)
    main = next(t for p, t in files.items() if p.endswith("evolved_adaptive_scorer.go"))
    assert re.search(r"^// Package evolvedadaptivescorer ", main, re.M)
    for path, text in files.items():
        assert "EVOLVE-BLOCK" not in text, path
        assert not re.search(r"//\s*(HYPOTHESIS|MECHANISM|EXPECT)-\d", text), path
        assert "best_program.py" not in text, path  # no reference to files outside the repository
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("//"):
                assert len(line.expandtabs(4)) <= 100, f"{path}:{n} comment over 100 columns"
        assert "loadThreshold2" not in text and "KvUtilization" not in text, path


def test_signals_mapped_as_blis_defines_them(example, dictionary):
    _, _, tr = example
    inflight = dictionary.signal("InFlightRequests").llmd.expr
    assert "InFlightLoad" in inflight and "m.WaitingQueueSize + m.RunningRequestsSize" in inflight
    adapter = next(t for p, t in tr.files.items() if p.endswith("adapter.go"))
    assert "s.InFlightRequests = inFlightRequestsSignal(m, ep, keys)" in adapter
    # An endpoint the EPP has not scraped (no metrics, or the empty ones a new pod gets) is left out of BLIS's
    # snapshots and scores 0, never as idle.
    assert "if m == nil || m.UpdateTime.IsZero() {" in adapter
    baseline = next(t for p, t in tr.files.items() if p.endswith("baseline.go"))
    assert "scorePrefixDelegated" not in baseline and "prefixMatchBlocks" in baseline


def test_tests_are_readable_and_in_llmd_terms(example):
    _, _, tr = example
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    assert not re.search(r"\d\.\d{7,}", test), "unreadable literals"
    assert "an endpoint with more waiting requests scores lower" in test
    assert "an endpoint holding more of the prompt's prefix scores higher" in test
    assert "func TestThresholds(t *testing.T)" in test and "scoreWith(t, moved" in test
    # CacheHitRate has no llm-d source: its branch cannot fire in production, so it gets no test, and its threshold
    # is a constant of evolved.go (dead_branches.demote), whose row in the report says why.
    assert "cacheHitRateThreshold" not in test
    assert any(
        "(constant `cacheHitRateThreshold`)" in line and "acts only on CacheHitRate, which llm-d cannot provide" in line
        for line in tr.report_markdown.splitlines()
    )


def test_bundled_example_decides_like_blis_and_every_difference_has_a_documented_cause(example):
    _, _, tr = example
    f = tr.summary.fidelity
    assert f.measured and f.states >= 1000
    assert f.agreement >= 0.95, f
    assert f.unattributed == 0 and f.errors == 0
    documented = set(MAPPINGS) | {"untranslatable:CacheHitRate", "several-mappings"}
    assert {c.mapping for c in f.causes} <= documented, f.causes
    assert not [x for x in tr.findings if x.check == "translate.fidelity-below-floor"]
    assert "## Fidelity: the plugin against the BLIS original" in tr.report_markdown
    assert f"{f.agreement:.1%}" in tr.report_markdown


def test_the_cache_hit_rate_example_shows_each_endpoints_hit_rate_and_the_plugins_zero(example):
    """Found by a new-program pass: the `untranslatable:CacheHitRate` example never showed a hit rate."""
    _, _, tr = example
    cause = next(c for c in tr.summary.fidelity.causes if c.mapping == "untranslatable:CacheHitRate")
    line = cause.examples[0]
    assert "CacheHitRate has no llm-d source: the plugin reads 0" in line, line
    pods = re.findall(r"pod-\d+: BLIS [^;]*?CacheHitRate=([\d.]+)[^;]*; llm-d [^;]*?CacheHitRate=0\b", line)
    assert len(pods) == line.count(": BLIS q=") > 0, line
    assert any(float(v) > 0 for v in pods)
    assert "CacheHitRate has no llm-d source" in tr.report_markdown


def test_every_translator_finding_is_anchored_to_a_plugin_line(example):
    _, _, tr = example
    for f in tr.findings:
        assert f.file and f.line, f
        assert f.file in tr.files, f


@pytest.mark.slow
def test_a_wrong_mapping_lowers_agreement_and_is_named(example, dictionary):
    src, an, tr = example
    planted = dictionary.model_copy(deep=True)
    kv = planted.signal("KVUtilization", "snapshot")
    kv.llmd.expr = "float64(m.KVCacheUsagePercent) * 100"  # percent instead of a fraction
    wrong = translate(src, an, planted, plugin_type="evolved-adaptive-scorer", states=400)
    f = wrong.summary.fidelity
    assert f.agreement < tr.summary.fidelity.agreement - 0.02, f.agreement
    assert f.causes[0].mapping == "signal:KVUtilization", f.causes
    named = [x for x in wrong.findings if x.check.startswith("translate.fidelity-")]
    assert named and "signal:KVUtilization" in named[0].message


@pytest.mark.slow
@pytest.mark.parametrize("path", [EXAMPLE, CORPUS / "a01_pattern_c_adaptive_admission.go"], ids=lambda p: p.stem)
def test_the_bundled_plugin_passes_go_test_race(path, dictionary, tmp_path, race_cache):
    """`go test -race` as llm-d-router's `make test-unit` runs it: the race detector needs cgo and a C
    compiler, so this run (in the sandbox, like every Go run on generated code) also sees /usr and /lib.
    a01 too: a stateful admitter whose shed limits are read from its parameters."""
    _, _, tr = translate_path(path, dictionary, "evolved-adaptive-scorer" if path == EXAMPLE else None)
    module = write_module(tr, tmp_path)
    res = race_go(module, tmp_path, race_cache, ["test", "-race", "-count=1", "./" + tr.summary.package_dir])
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert "ok" in res.stdout and "DATA RACE" not in res.stdout + res.stderr
