"""Package-level constants the evolved decision reads (fixtures/routing_package_consts.go,
admission_package_consts.go): ``const overloadQueue = 12`` at file level, outside the evolved function, compared
with a signal or weighing one. They were neither parameters nor listed, and the plugin did not even declare them, so
it did not build. Each is now a parameter named by the constant, as a local ``const`` is (local_consts.py), read at
every use from the Parameters; one Go needs constant (an array's length, another constant's expression) keeps its
number, is carried beside the decision, and the reason is listed."""

from __future__ import annotations

import re

import pytest

from bot.golang.literals import CHECK_UNLISTED_LITERAL
from bot.golang.params import param_specs

from .conftest import FIXTURES, passes_with_test, translate_path

ROUTER = FIXTURES / "routing_package_consts.go"
ADMITTER = FIXTURES / "admission_package_consts.go"


def _by_const(an) -> dict:
    return {th.const_decl: th for th in an.thresholds if th.param and th.const_decl}


@pytest.mark.parametrize(
    ("path", "consts"),
    [
        (ROUTER, {"overloadQueue": (12, "int"), "kvCeiling": (0.85, "float64"), "kvWeight": (0.4, "float64")}),
        (ADMITTER, {"shedPressure": (8, "float64"), "queueWeight": (1.5, "float64"), "kvWeight": (10, "float64")}),
    ],
)
def test_a_package_const_the_decision_reads_is_a_parameter_documented_as_the_evolved_constant(
    analyze_text, path, consts
):
    an = analyze_text(path.read_text(encoding="utf-8"))
    got = _by_const(an)
    assert {k: (th.value, th.go_type) for k, th in got.items()} == consts, an.thresholds
    docs = {s.name: s.doc for s in param_specs(an, None, False)}
    for name, th in got.items():
        assert f"the evolved constant `{name}`" in docs[th.param], docs[th.param]
    text = path.read_text(encoding="utf-8").splitlines()
    for name, th in got.items():  # its lines are where the decision reads it, not the declaration
        assert all(name in text[line - 1] and "const" not in text[line - 1] for line in th.lines), (name, th.lines)


PROGRAM = """package sim

{decls}

type Gate struct{{}}

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {{
	n := len(state.Snapshots)
	load := float64(state.Snapshots[0].QueueDepth)
	if load > busy {{
		return false, "busy"
	}}
	{more}
	return true, ""
}}
"""


@pytest.mark.parametrize(
    ("decls", "more", "why"),
    [
        # Go needs a constant for an array's length
        ("const busy = 4", "var spare [busy]int\n\t_ = spare", "read at `[busy]int`"),
        # and for another constant's value
        ("const busy = 4\n\nconst idle = busy / 2", "_ = idle", "the constant `idle = busy / 2`"),
        # the next constant of its group repeats its value: without it, that one would change
        ("const (\n\tbusy = 4\n\tbusier\n)", "_ = busier", "repeats"),
        # one constant, two types
        ("const busy = 4", 'if n > busy && load > 2 {\n\t\treturn false, "few"\n\t}', "used as float64 and int"),
    ],
)
def test_a_package_const_that_cannot_be_read_from_a_parameter_keeps_its_number_with_the_reason(
    analyze_text, decls, more, why
):
    an = analyze_text(PROGRAM.format(decls=decls, more=more))
    busy = next(th for th in an.thresholds if th.value == 4)
    assert busy.param is None and busy.reason is not None and why in busy.reason, busy.reason
    assert "package-level constant `busy`" in busy.reason, busy.reason
    kept = [f for f in an.findings if f.check == CHECK_UNLISTED_LITERAL and "`const busy" in f.message]
    assert len(kept) == 1 and why in kept[0].message and "needs a rebuild" in kept[0].message, an.findings


def test_a_package_const_in_a_group_with_iota_keeps_its_number(analyze_text):
    decls = "const (\n\tmodeA = iota\n\tbusy = 4\n\tmodeB\n)"
    an = analyze_text(PROGRAM.format(decls=decls, more="_ = modeB"))
    busy = next(th for th in an.thresholds if th.value == 4)
    assert busy.param is None and "repeats" in (busy.reason or ""), busy.reason


def test_a_local_variable_of_the_same_name_hides_the_package_const(analyze_text):
    an = analyze_text(PROGRAM.format(decls="const busy = 4", more="").replace("n := len", "busy := 9.0\n\tn := len"))
    assert not [th for th in an.thresholds if th.value == 4], an.thresholds


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "reads"),
    [
        (ROUTER, ("overloadQueue", "kvCeiling", "kvWeight")),
        (ADMITTER, ("shedPressure", "queueWeight", "kvWeight")),
    ],
)
def test_the_plugin_reads_each_package_const_from_its_parameter_and_builds(dictionary, path, reads):
    _, an, tr = translate_path(path, dictionary)
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    by_const = _by_const(an)
    for name in reads:
        th = by_const[name]
        assert not re.search(rf"\b{name}\b", evolved.split("package ", 1)[1]), evolved
        assert f".params.{th.field}" in evolved, evolved
        assert f"    {th.param}: " in tr.epp_config, tr.epp_config
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
    passes_with_test(tr, "evolved.go", "zz_builds_test.go", lambda pkg: f"package {pkg}\n")


@pytest.mark.slow
def test_a_package_const_kept_as_a_number_is_carried_beside_the_decision_and_builds(dictionary, tmp_path):
    text = ROUTER.read_text(encoding="utf-8").replace(
        "\tfor _, snap := range snaps {\n\t\tif snap.QueueDepth",
        "\tvar seen [overloadQueue]bool\n\t_ = seen\n\tfor _, snap := range snaps {\n\t\tif snap.QueueDepth",
    )
    path = tmp_path / "routing_array_const.go"
    path.write_text(text, encoding="utf-8")
    _, an, tr = translate_path(path, dictionary)
    kept = next(th for th in an.thresholds if th.value == 12)
    assert kept.param is None and "`[overloadQueue]bool`" in (kept.reason or ""), kept.reason
    evolved = next(t for p, t in tr.files.items() if p.endswith("/evolved.go"))
    assert "\nconst overloadQueue = 12\n" in evolved, evolved
    assert not [f for f in tr.findings if f.check.startswith("toolchain.")], tr.findings
