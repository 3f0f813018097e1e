"""Dead code carried from the evolved program is named for the reviewer, never deleted (an llm-d maintainer found
it carried silently in the bundled example and the corpus).

Each instance is a ``translate.dead-code`` SUGGESTION at its evolved line, anchored to the evolved.go line that
carries it, and the shipped README's Caveats name them in one line; evolved.go still carries every one verbatim.
"""

from __future__ import annotations

import pytest

from bot.golang import dead_code
from bot.golang.dead_code import CHECK_DEAD_CODE
from bot.model import PolicyKind, Severity

from .conftest import CORPUS, EXAMPLE, FIXTURES, translate_path

DEAD = FIXTURES / "routing_dead_code.go"


def _dead(tr) -> dict[int, object]:
    return {f.source_line: f for f in tr.findings if f.check == CHECK_DEAD_CODE}


def _evolved(tr) -> list[str]:
    return next(t for p, t in tr.files.items() if p.endswith("/evolved.go")).splitlines()


def _readme(tr) -> str:
    return " ".join(next(t for p, t in tr.files.items() if p.endswith("/README.md")).split())


@pytest.fixture(scope="module")
def fixture_tr(dictionary):
    return translate_path(DEAD, dictionary, "evolved-dead-code")[2]


#: The fixture's evolved line of each kind -> what evolved.go's line carries and what the message says.
FIXTURE_LINES = {
    27: ("if len(snapshots) == 0 {", "the panic under `len(snapshots) == 0` is never reached"),
    38: (
        'note := fmt.Sprintf("%d instances", len(snapshots))',
        "`note`, the text `fmt.Sprintf(...)` builds, is never read",
    ),
    57: ('_ = fmt.Sprintf("best %d of %d", bestIdx, len(snapshots))', "is assigned to `_`"),
    60: ("for _, obs := range ws.observers {", "the loop over `ws.observers` never runs: `ws.observers` is never set"),
    64: ('fmt.Sprintf("weighted-scoring (score=%.3f)", bestScore), scores)', "the decision's Reason"),
}


def test_each_kind_of_dead_code_is_a_suggestion_at_its_evolved_go_line(fixture_tr):
    dead = _dead(fixture_tr)
    assert sorted(dead) == sorted(FIXTURE_LINES)
    lines = _evolved(fixture_tr)
    for source_line, (carried, said) in FIXTURE_LINES.items():
        f = dead[source_line]
        assert f.severity is Severity.SUGGESTION
        assert f.file.endswith("/evolved.go") and lines[f.line - 1].strip() == carried  # still carried, verbatim
        assert said in f.message, f.message
        assert "delete it in the upstream PR" in f.fix and "line for line like the BLIS original" in f.fix


def test_the_readme_caveats_name_the_dead_code_with_its_evolved_go_lines(fixture_tr):
    readme = _readme(fixture_tr)
    assert "Dead code carried from the evolved program" in readme
    for f in _dead(fixture_tr).values():
        assert f"evolved.go line {f.line}: " in readme
    assert "translate.dead-code" not in readme


def test_the_bundled_examples_dead_code(dictionary):
    """The example's panic guard, observers loop and Reason text, at their lines; its rng tie-break is live (the plugin
    hands it a seeded rng, as BLIS does)."""
    tr = translate_path(EXAMPLE, dictionary)[2]
    dead = _dead(tr)
    assert sorted(dead) == [145, 234, 240]
    lines = _evolved(tr)
    assert lines[dead[145].line - 1].strip() == "if len(snapshots) == 0 {"
    assert lines[dead[145].line].strip() == 'panic("WeightedScoring.Route: empty snapshots")'
    assert "`ws.observers` is never set in the plugin" in dead[234].message


def test_an_admitters_reason_is_read_so_it_is_not_dead(dictionary):
    """An admitter's rejection carries the evolved reason: its fmt.Sprintf is live."""
    tr = translate_path(CORPUS / "a02_gaie_saturation_shedder.go", dictionary)[2]
    assert not _dead(tr)


def test_a_branch_needing_rng_is_live_the_plugin_sets_rng(analyze_text):
    """``s == bestScore && ws.rng != nil``: the plugin hands the evolved code a seeded rng, as BLIS does."""
    an = analyze_text(DEAD.read_text(encoding="utf-8"), "routing_dead_code.go")
    assert an.kind is PolicyKind.ROUTING
    assert 50 not in {f.source_line for f in dead_code.findings(an)}
    assert not [f for f in dead_code.findings(an) if "rng" in f.message]


def test_a_field_the_carried_code_sets_is_not_dead(analyze_text):
    text = DEAD.read_text(encoding="utf-8").replace(
        "\tscores := make(", "\tws.observers = append(ws.observers, nil)\n\tscores := make(", 1
    )
    an = analyze_text(text, "routing_dead_code.go")
    assert not [f for f in dead_code.findings(an) if "observers" in f.message]


def test_a_var_declared_text_read_only_by_blank_is_dead(analyze_text):
    text = DEAD.read_text(encoding="utf-8").replace("\tnote := fmt.Sprintf(", "\tvar note = fmt.Sprintf(", 1)
    an = analyze_text(text, "routing_dead_code.go")
    assert "`note`, the text `fmt.Sprintf(...)` builds, is never read" in {
        f.message.split(":", 1)[0] for f in dead_code.findings(an) if f.source_line == 38
    }
