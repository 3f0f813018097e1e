"""A program's BLIS era (before or after 9a603bca, 2026-02-27, when PendingRequests became InFlightRequests and
changed meaning) from its own names and from its metadata: best_program_info.json's timestamp and
origin.blis_version. A copy that reads the load only through EffectiveLoad() names neither counter, so only its
metadata can say its numbers were tuned on the old count; evidence that contradicts itself is one finding.

Fixtures (tests/golang/fixtures/era/, corpus-style): the same least-loaded-under-a-cap router (`EffectiveLoad() >
6`) as a bare function (names neither counter), and as a go-file whose RoutingSnapshot declares PendingRequests or
InFlightRequests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.golang import blis_era, counter_era
from bot.golang.analyze import analyze
from bot.golang.source import load_evolved_source
from bot.model import EvolvedOn, PromotionRequest, Severity

from .conftest import EXAMPLE, FIXTURES

ERA = FIXTURES / "era"
SILENT, PENDING, INFLIGHT = "effective_load_only.go", "declares_pending.go", "declares_inflight.go"
FEB_2 = datetime(2026, 2, 2, tzinfo=UTC).timestamp()
MAR_18 = 1773850214.0  # the bundled example's timestamp


def _analyze(name, dictionary, timestamp=None, blis_version=None):
    on = EvolvedOn(timestamp, blis_version, "best_program_info.json")
    return analyze(load_evolved_source(ERA / name), dictionary, None, on)


def _checks(an, check):
    return [f for f in an.findings if f.check == check]


# (fixture, timestamp, blis_version, era, counter finding, conflict finding)
ROWS = [
    (PENDING, None, None, "before", True, False),
    (INFLIGHT, None, None, "after", False, False),
    (SILENT, None, None, "unknown", False, False),
    (SILENT, FEB_2, None, "before", True, False),
    (SILENT, MAR_18, None, "unknown", False, False),  # evolved in March, maybe on a February checkout
    (SILENT, None, "inference-sim main at 2026-02-20", "before", True, False),
    (SILENT, None, "inference-sim main, 2026-03-02", "after", False, False),
    (SILENT, None, "main, January 2026", "before", True, False),
    (SILENT, None, "main, March 2026", "after", False, False),
    (SILENT, None, "18 March 2026", "after", False, False),
    (SILENT, None, "2026-01", "before", True, False),
    (SILENT, None, "main, February 2026", "unknown", False, False),  # the month of the change
    (SILENT, None, "2026-02-27", "unknown", False, False),  # the day of the change
    (SILENT, None, "before 9a603bca", "before", True, False),
    (SILENT, None, "main, after 9a603bca", "after", False, False),
    (SILENT, None, "f90a1e3a", "unknown", False, False),  # a commit alone cannot be ordered offline
    (INFLIGHT, FEB_2, None, "after", False, True),
    (PENDING, None, "inference-sim main (after 9a603bca)", "before", True, True),
    (SILENT, FEB_2, "main, March 2026", "unknown", False, True),
]


@pytest.mark.parametrize(("name", "timestamp", "version", "era", "counter", "conflict"), ROWS)
def test_each_row_of_evidence(dictionary, name, timestamp, version, era, counter, conflict):
    an = _analyze(name, dictionary, timestamp, version)
    reading = blis_era.reading_of(an, EvolvedOn(timestamp, version, "best_program_info.json"))
    assert reading.era == era
    assert bool(_checks(an, counter_era.CHECK)) == counter
    assert bool(_checks(an, blis_era.CHECK_CONFLICT)) == conflict


def test_a_copy_dated_before_by_its_timestamp_is_told_its_load_cap_was_tuned_on_the_old_count(dictionary):
    """The function names neither counter; its metadata says February 2: its EffectiveLoad() added the routed,
    not-yet-queued PendingRequests, and the cap of 6 was tuned on that."""
    [f] = _checks(_analyze(SILENT, dictionary, FEB_2), counter_era.CHECK)
    assert f.severity == Severity.IMPORTANT and f.source_line == 4
    assert "best_program_info.json's timestamp" in f.message and "2026-02-02" in f.message
    assert "names neither counter" in f.message and "routed and not yet queued" in f.message
    assert "`effectiveLoadThreshold` (6, line 4)" in f.message
    assert "param effectiveLoadThreshold" in f.fix and "re-evolve" in f.fix


def test_blis_version_dating_the_copy_is_named(dictionary):
    [f] = _checks(_analyze(SILENT, dictionary, None, "main, January 2026"), counter_era.CHECK)
    assert "origin.blis_version 'main, January 2026'" in f.message


def test_a_file_naming_in_flight_with_an_older_timestamp_is_one_finding_naming_both(dictionary):
    [f] = _checks(_analyze(INFLIGHT, dictionary, FEB_2), blis_era.CHECK_CONFLICT)
    assert f.severity == Severity.IMPORTANT and f.source_line == 7
    assert "`InFlightRequests` (line 7)" in f.message and "timestamp" in f.message and "2026-02-02" in f.message
    assert "check which BLIS copy" in f.fix
    assert _checks(_analyze(INFLIGHT, dictionary, FEB_2), counter_era.CHECK) == []  # the file settles it


def test_blis_version_after_on_a_pending_copy_asks_to_correct_blis_version(dictionary):
    an = _analyze(PENDING, dictionary, None, "inference-sim main (after 9a603bca)")
    [f] = _checks(an, blis_era.CHECK_CONFLICT)
    assert "origin.blis_version 'inference-sim main (after 9a603bca)'" in f.message
    assert "`PendingRequests` (line 7)" in f.message
    assert "correct `origin.blis_version`" in f.fix
    [counter] = _checks(an, counter_era.CHECK)  # the file's name decides the counter finding, as before
    assert "directly or through" in counter.message


def test_metadata_that_contradicts_itself_on_a_silent_copy_says_the_thresholds_hang_on_it(dictionary):
    [f] = _checks(_analyze(SILENT, dictionary, FEB_2, "main, March 2026"), blis_era.CHECK_CONFLICT)
    assert f.source_line is None
    assert "names neither counter" in f.message and counter_era.CHECK in f.message
    assert "correct `origin.blis_version`" in f.fix and "re-calibrating" in f.fix


def test_a_silent_copy_dated_before_gets_the_harness_note_and_parameter_words(dictionary):
    from bot.golang.translate import translate

    src = load_evolved_source(ERA / SILENT)
    an = analyze(src, dictionary, None, EvolvedOn(FEB_2, None, "best_program_info.json"))
    tr = translate(src, an, dictionary, plugin_type="t-era-silent")
    assert "the copy's metadata dates it before 9a603bca" in tr.report_markdown
    main = next(t for p, t in tr.files.items() if p.endswith(".go") and "type Parameters struct" in t)
    assert "InFlightLoad.Requests" in main.split("type Parameters struct", 1)[1]


def test_the_bundled_example_stays_without_either_finding(dictionary):
    """Its metadata says March 18 and "after 9a603bca", and its RoutingSnapshot declares InFlightRequests."""
    request = PromotionRequest.load(EXAMPLE.parent / "promotion.yaml")
    on = request.evolved_on()
    assert on.timestamp == MAR_18 and "after 9a603bca" in on.blis_version
    an = analyze(load_evolved_source(EXAMPLE), dictionary, request.kind, on)
    assert blis_era.reading_of(an, on).era == "after"
    assert _checks(an, counter_era.CHECK) == [] and _checks(an, blis_era.CHECK_CONFLICT) == []


def test_a_missing_metadata_file_gives_no_timestamp(tmp_path):
    request = PromotionRequest.load(EXAMPLE.parent / "promotion.yaml").model_copy(update={"base_dir": str(tmp_path)})
    on = request.evolved_on()
    assert on.timestamp is None and on.blis_version and on.metadata_file == "best_program_info.json"


def test_comments_naming_a_counter_are_no_evidence():
    text = "// was PendingRequests before 9a603bca\nfunc f(s RoutingSnapshot) int { return s.EffectiveLoad() }\n"
    assert blis_era.read_era(text).era == "unknown"


def test_stage_2_passes_the_requests_metadata_to_the_analysis(dictionary, tmp_path, monkeypatch):
    """Stage 2 reads origin.blis_version and the metadata file's timestamp (PromotionRequest.evolved_on) and hands
    them to the analysis; they are part of its cache key, so a corrected blis_version translates again."""
    import json
    import shutil
    from types import SimpleNamespace

    import yaml

    from bot.golang import translate as translate_module
    from bot.stages import translate as stage

    raw = yaml.safe_load((EXAMPLE.parent / "promotion.yaml").read_text(encoding="utf-8"))
    raw["source"] = SILENT
    raw["origin"].pop("blis_version")
    shutil.copy(ERA / SILENT, tmp_path / SILENT)
    (tmp_path / "best_program_info.json").write_text(json.dumps({"timestamp": FEB_2}), encoding="utf-8")
    (tmp_path / "promotion.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    request = PromotionRequest.load(tmp_path / "promotion.yaml")
    seen = []
    monkeypatch.setattr(translate_module, "translate", lambda src, an, *a, **k: seen.append(an) or an)
    monkeypatch.setattr(stage, "_CACHE", {})
    ctx = SimpleNamespace(request=request, dictionary=dictionary, executor=None)
    stage.translation(ctx, None)
    [an] = seen
    assert _checks(an, counter_era.CHECK) and "2026-02-02" in _checks(an, counter_era.CHECK)[0].message
    dated = stage.translation_key(ctx, None)
    ctx.request = request.model_copy(update={"origin": request.origin.model_copy(update={"blis_version": "x"})})
    assert stage.translation_key(ctx, None) != dated
