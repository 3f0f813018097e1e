"""The generated unit tests can fail when the behaviour they name breaks (Go review, finding 4).

a03 (corpus) is a stateful admitter: a tenant over its decayed fair share is rejected. Its behaviour table once
held six "admit" rows, each on a fresh plugin, so replacing the rejection with "admit" failed only the threshold
test, and removing the decay failed nothing. The table now replays sequences on one plugin, found by the probe
search: one the plugin rejects, and one replayed further apart that it decides differently. The mutations below
are the review's, applied to the generated evolved.go and run with the real Go toolchain.
"""

from __future__ import annotations

import pytest

from bot.golang.analyze import analyze
from bot.golang.never_binds import never_binds
from bot.golang.source import load_evolved_source

from .conftest import CORPUS, EXAMPLE, translate_path

A03 = CORPUS / "a03_openevolve_tenant_fair_share.py"
NEVER_REJECT = ('return false, "tenant over fair share"', 'return true, ""')
NO_DECAY = ("decay := math.Exp(-dt / t.params.DtDivisor)", "decay := math.Exp(-0 * dt / t.params.DtDivisor)")


def _go_test(module, package: str, tmp_path) -> str:
    from bot import sandbox
    from bot.golang import gorun, toolchain

    go, _ = toolchain._tool_paths()
    env = gorun.go_env(str(tmp_path / "gocache"), tmp_path, "/tmp")
    res = sandbox.run(
        [str(go), "test", "-count=1", "./" + package],
        cwd=module,
        env=env,
        mounts=sandbox.Mounts(read_only=(go.resolve().parent.parent,), read_write=(tmp_path,)),
        limits=sandbox.Limits(wall_seconds=900, cpu_seconds=900, memory_bytes=8 << 30),
    )
    return res.stdout + res.stderr


@pytest.mark.slow
def test_an_admitters_behaviour_test_fails_when_it_never_rejects_or_forgets_nothing(dictionary, tmp_path):
    from bot.golang import toolchain

    _, _, tr = translate_path(A03, dictionary)
    test = next(t for p, t in tr.files.items() if p.endswith("_test.go"))
    behaviour = test.split("func TestBehaviour", 1)[1].split("func TestThresholds", 1)[0]
    assert '"reject"' in behaviour and "warmups:" in behaviour  # a sequence on one plugin that it rejects
    assert " 0.2 s apart " in behaviour and " 2000 s apart " in behaviour  # the same one further apart
    module = toolchain._copy_mirror(tmp_path)
    for rel, text in tr.files.items():
        if rel.endswith(".go"):
            (module / rel).parent.mkdir(parents=True, exist_ok=True)
            (module / rel).write_text(text, encoding="utf-8")
    evolved = module / tr.summary.package_dir / "evolved.go"
    original = evolved.read_text(encoding="utf-8")
    for old, new in (NEVER_REJECT, NO_DECAY):
        assert old in original, old
        evolved.write_text(original.replace(old, new), encoding="utf-8")
        out = _go_test(module, tr.summary.package_dir, tmp_path)
        assert "--- FAIL: TestBehaviour" in out, (new, out[-3000:])
        assert "build failed" not in out and "[setup failed]" not in out, out[-3000:]


def test_a_floor_that_never_binds_says_so_and_for_which_values_it_would(dictionary):
    """The scorer's KV floor: max(0.3, 1 - 2*(kv - 0.82)) is at least 0.64 for a fraction, so 0.3 never applies."""
    an = analyze(load_evolved_source(EXAMPLE), dictionary, None)
    defaults = {th.param: th.value for th in an.thresholds if th.param}
    why = never_binds(an, defaults)
    assert sorted(why) == ["kvUtilizationFloor"], why
    text = why["kvUtilizationFloor"]
    assert text.startswith("it never binds at the default values:"), text
    assert "at least 0.64 for every KVUtilization in (0.82, 1]" in text, text
    for bound in (
        "kvUtilizationFloor above 0.64",
        "kvUtilizationCoeff above 3.89",
        "kvUtilizationThreshold below 0.65",
    ):
        assert bound in text, text
    # Once it can bind (a steeper taper), it is no longer reported as unable to.
    assert "kvUtilizationFloor" not in never_binds(an, defaults | {"kvUtilizationCoeff": 5.0})


def test_the_bundled_examples_report_says_the_floor_never_binds(dictionary):
    from bot.golang.translate import CHECK_UNTESTED

    _, _, tr = translate_path(EXAMPLE, dictionary, "evolved-adaptive-scorer")
    (floor,) = [f for f in tr.findings if f.check == CHECK_UNTESTED and "`kvUtilizationFloor`" in f.message]
    assert "never binds at the default values" in floor.message and "no llm-d input among" not in floor.message
