"""A failing generated test names the cause the translator already found (``bot.golang.failing_tests``): package
state (``package_vars.shared_state_failures``), a draw from math/rand's global source (``safety.global-rand``);
and one recorded by an older bot with no fix at all gets the fix every failing generated test carries."""

from __future__ import annotations

from bot.golang.failing_tests import with_causes
from bot.golang.gooutput import CHECK_TEST, failing_test_fix
from bot.golang.package_vars import PACKAGE_STATE
from bot.golang.safety import CHECK_GLOBAL_RAND
from bot.model import Finding, Severity

FAILED = Finding(severity=Severity.CRITICAL, check=CHECK_TEST, message="test TestX failed: got 1, want 2")
DRAW = Finding(
    severity=Severity.IMPORTANT,
    check=CHECK_GLOBAL_RAND,
    message="rand.Float64 draws from the process-global source, which Go seeds randomly",
    fix="draw from a seeded *rand.Rand field (the receiver's `rng`, which the translator seeds)",
    source_line=14,
)


def test_a_failing_test_of_a_program_drawing_from_the_global_source_names_the_draw_and_its_fix():
    [f] = with_causes([FAILED], [DRAW])
    assert f.message.startswith(FAILED.message) and CHECK_GLOBAL_RAND in f.message, f.message
    assert "evolved line 14" in f.message and "not deterministic" in f.message, f.message
    assert DRAW.fix in f.fix and "re-file" in f.fix and "gate 1" in f.fix, f.fix


def test_package_state_keeps_its_own_wording():
    hazard = Finding(
        severity=Severity.CRITICAL,
        check=PACKAGE_STATE,
        message="`routed++` changes the package-level variable `routed`: state every request shares",
        fix="move `routed` into the policy's receiver struct",
        source_line=7,
    )
    [f] = with_causes([FAILED], [hazard])
    assert "package variable `routed`" in f.message and f.fix == hazard.fix, f


def test_a_failing_test_recorded_without_a_fix_gets_the_generic_one():
    """A record stage 2 committed before every failing generated test carried a fix: gate 1 reads it as is."""
    other = Finding(severity=Severity.IMPORTANT, check="toolchain.vet", message="x")
    assert with_causes([FAILED, other], []) == [FAILED.model_copy(update={"fix": failing_test_fix("test")}), other]
    kept = FAILED.model_copy(update={"fix": "already said"})
    assert with_causes([kept], []) == [kept]
