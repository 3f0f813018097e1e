"""Gate 1 reads a client-keyed map as capped only where the plugin on the branch caps it.

Found by a researcher's trial: stage 2 words the finding of a map the plugin caps as a SUGGESTION naming the cap,
and gate 1's own reading of the evolved program added the raw IMPORTANT back beside it. Gate 1 now words it the same
way, from the committed plugin: take the cap out of the plugin and the map grows without limit again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.dictionary import load_dictionary
from bot.golang.analyze import analyze
from bot.golang.hazards import UNBOUNDED_STATE
from bot.golang.source import load_evolved_source
from bot.golang.translate import translate
from bot.model import Severity
from bot.review.gate1 import _capped_as_committed

A01 = Path(__file__).resolve().parents[2] / "examples" / "corpus" / "a01_pattern_c_adaptive_admission.go"


@pytest.fixture(scope="module")
def a01():
    d = load_dictionary()
    src = load_evolved_source(A01)
    an = analyze(src, d, None)
    tr = translate(src, an, d, plugin_type="adaptive-admission")
    go_files = {p: c for p, c in tr.files.items() if p.endswith(".go")}
    main_go = next(p for p, c in go_files.items() if "capState" in c and not p.endswith("_test.go"))
    return src, an, go_files, main_go, tr


def unbounded(findings):
    return [f for f in findings if f.check == UNBOUNDED_STATE]


def test_a_map_the_committed_plugin_caps_reads_as_stage_2_wrote_it(a01):
    src, an, go_files, main_go, tr = a01
    [f] = unbounded(_capped_as_committed(src, an, go_files, main_go))
    assert f.severity is Severity.SUGGESTION and "maxTrackedTenantCounts" in f.message
    committed = {(g.check, g.source_line, g.message) for g in tr.summary.findings}
    assert (f.check, f.source_line, f.message) in committed  # so gate 1 lists it once


def test_without_the_cap_in_the_plugin_the_map_grows_without_limit(a01):
    src, an, go_files, main_go, _ = a01
    uncapped = dict(go_files)
    uncapped[main_go] = "\n".join(
        ln for ln in go_files[main_go].splitlines() if "evictStalest(&a.recent.tenantCounts," not in ln
    )
    [f] = unbounded(_capped_as_committed(src, an, uncapped, main_go))
    assert f.severity is Severity.IMPORTANT and "maxTracked" not in f.message
