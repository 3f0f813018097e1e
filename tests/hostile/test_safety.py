"""The static refusal (bot.golang.safety): every way out of a pure computation is a CRITICAL finding on the right line."""

from __future__ import annotations

import re

import pytest

from bot import PROJECT_ROOT
from bot.golang.safety import (
    ALLOWED_IMPORTS,
    UnsafeProgram,
    check_evolved_source,
    check_evolved_text,
    critical,
    refusal_line,
    refuse_unsafe,
)
from bot.golang.source import parse_evolved_source
from bot.model import Severity


def checks(text: str, name: str = "p.go") -> list[tuple[str, int, str]]:
    return [(f.check, f.source_line, f.severity.value) for f in check_evolved_text(text, name)]


def crit_at(text: str, name: str = "p.go") -> set[tuple[str, int]]:
    return {(f.check, f.source_line) for f in critical(check_evolved_text(text, name))}


# --------------------------------------------------------------- the allowlist, one test per entry
#: A realistic use of every allowed package. A new ALLOWED_IMPORTS entry needs one here.
ALLOWED_USES = {
    "math": "x := math.Max(1, math.Sqrt(2))\n\t_ = x",
    "math/bits": "_ = bits.OnesCount(7)",
    "math/rand": "r := rand.New(rand.NewSource(1))\n\t_ = r.Intn(3)",
    "sort": "s := []int{2, 1}\n\tsort.Ints(s)",
    "slices": "_ = slices.Max([]int{1, 2})",
    "maps": "_ = maps.Clone(map[string]int{})",
    "cmp": "_ = cmp.Compare(1, 2)",
    "strings": '_ = strings.HasPrefix("ab", "a")',
    "strconv": "_ = strconv.Itoa(3)",
    "errors": 'var e error = errors.New("x")\n\t_ = e',
    "fmt": '_ = fmt.Sprintf("%d", 1)\n\t_ = fmt.Errorf("x")',
    "time": "d := 3 * time.Millisecond\n\t_ = time.Duration(d).Seconds()",
    "hash/fnv": 'h := fnv.New64a()\n\t_, _ = h.Write([]byte("k"))\n\t_ = h.Sum64()',
}


def program(imports: list[str], body: str) -> str:
    imp = "".join(f'\t"{p}"\n' for p in imports)
    return f"package sim\n\nimport (\n{imp})\n\nfunc helper() {{\n\t{body}\n}}\n"


def test_every_allowlist_entry_has_a_use_case():
    assert set(ALLOWED_USES) == set(ALLOWED_IMPORTS)
    assert all(entry.why for entry in ALLOWED_IMPORTS.values())


@pytest.mark.parametrize("path", sorted(ALLOWED_USES))
def test_allowed_package_passes(path):
    assert checks(program([path], ALLOWED_USES[path])) == []


# --------------------------------------------------------------- imports
@pytest.mark.parametrize(
    "path",
    [
        "os",
        "os/exec",
        "net",
        "net/http",
        "syscall",
        "unsafe",
        "reflect",
        "plugin",
        "runtime",
        "runtime/debug",
        "embed",
        "io/ioutil",
        "sync",
        "math/rand/v2",
        "github.com/sirupsen/logrus",
        "./evil",
    ],
)
def test_import_outside_the_allowlist_is_critical_on_its_line(path):
    text = f'package sim\n\nimport (\n\t"fmt"\n\t"{path}"\n)\n\nfunc F() string {{ return fmt.Sprint(1) }}\n'
    found = critical(check_evolved_text(text, "p.go"))
    assert [(f.check, f.source_line) for f in found] == [("safety.import", 5)]
    assert path in found[0].message and "fmt" in found[0].fix and "math" in found[0].fix


def test_cgo_is_critical():
    text = 'package sim\n\n/*\n#include <stdlib.h>\n*/\nimport "C"\n\nfunc F() { C.free(nil) }\n'
    assert ("safety.cgo", 6) in crit_at(text)


def test_aliases_do_not_hide_a_package():
    text = 'package sim\n\nimport m "os/exec"\n\nfunc F() { m.Command("touch", "x").Run() }\n'
    assert crit_at(text) == {("safety.import", 3)}


def test_blank_import_of_a_refused_package_is_refused():
    assert crit_at('package sim\n\nimport _ "embed"\n') == {("safety.import", 3)}


def test_escaped_or_raw_import_paths_never_slip_through():
    assert crit_at('package sim\n\nimport "o\\x73"\n') == {("safety.import-path", 3)}
    assert crit_at("package sim\n\nimport `os`\n") == {("safety.import", 3)}


def test_dot_import_is_refused_even_for_an_allowed_package():
    assert crit_at('package sim\n\nimport . "math"\n\nfunc F() float64 { return Sqrt(2) }\n') == {
        ("safety.dot-import", 3)
    }


def test_unimported_package_in_a_function_form_input():
    text = 'func (ws *W) Route(req *Request, state *RouterState) RoutingDecision {\n\tos.WriteFile("../../x", nil, 0o644)\n\treturn RoutingDecision{}\n}\n'
    assert crit_at(text) == {("safety.unimported-package", 2)}


def test_a_local_variable_named_like_a_package_is_not_a_package():
    text = "package sim\n\nfunc F(os struct{ X int }) int { return os.X }\n"
    assert checks(text) == []


# --------------------------------------------------------------- members of allowed packages
@pytest.mark.parametrize(
    "body,member",
    [
        ("time.Sleep(time.Second)", "time.Sleep"),
        ("_ = time.Now()", "time.Now"),
        ("time.AfterFunc(time.Second, func() {})", "time.AfterFunc"),
        ("rand.Seed(1)", "rand.Seed"),
        ("var s string\n\tfmt.Scanln(&s)", "fmt.Scanln"),
    ],
)
def test_members_that_reach_outside_are_critical(body, member):
    path = {"time": "time", "rand": "math/rand", "fmt": "fmt"}[member.split(".")[0]]
    found = critical(check_evolved_text(program([path], body), "p.go"))
    assert found and found[0].check == "safety.member" and member in found[0].message


def test_unimported_time_in_function_form_gets_the_member_rules():
    text = "func (ws *W) Route(req *Request, state *RouterState) RoutingDecision {\n\ttime.Sleep(1)\n\treturn RoutingDecision{}\n}\n"
    assert crit_at(text) == {("safety.member", 2)}


# --------------------------------------------------------------- names that hide a guarded package
def _planted(helper: str, body: str) -> str:
    """The red-team program: h08 without its directive, a helper before the block, a body at its end."""
    base = (PROJECT_ROOT / "tests" / "hostile" / "corpus" / "h08_go_generate.go").read_text()
    base = re.sub(r"(?m)^//go:generate.*$", helper, base)
    return base.replace("\t// EVOLVE-BLOCK-END", body + "\n\t// EVOLVE-BLOCK-END")


def test_a_parameter_named_time_or_rand_does_not_switch_off_the_member_rules():
    text = _planted(
        "func helper(time, rand int) int { return time + rand }",
        "\ttime.AfterFunc(0, func() { rand.Seed(time.Now().UnixNano()) })",
    )
    found = {(f.check, f.message.split(",")[0]) for f in critical(check_evolved_text(text, "p.go"))}
    assert ("safety.shadowed-package", "declares `time`") in found
    assert ("safety.shadowed-package", "declares `rand`") in found
    members = {m for c, m in found if c == "safety.member"}
    assert members == {
        "calls rand.Seed",
        'uses time.AfterFunc; from "time" an evolved policy may use only Duration',
        'uses time.Now; from "time" an evolved policy may use only Duration',
    }
    with pytest.raises(UnsafeProgram, match="declares `"):
        refuse_unsafe(parse_evolved_source(text, "p.go"))


@pytest.mark.parametrize(
    "decl",
    [
        "func helper(time int) int { return time }",
        "func helper() (fmt int) { return 1 }",
        "func helper(xs []int) int { for rand := range xs { return rand }; return 0 }",
        "func helper() int { sync := 1; return sync }",
        "func helper() int { var time = 2; return time }",
        "const println = 3",
        "type rand struct{}",
        "func print(x int) int { return x }",
        "func (time *W) helper() int { return 0 }",
        "func helper() func(int) int { return func(fmt int) int { return fmt } }",
    ],
)
def test_declaring_a_guarded_name_anywhere_is_refused(decl):
    text = _planted(decl, "\t_ = 1")
    found = critical(check_evolved_text(text, "p.go"))
    assert [f.check for f in found] == ["safety.shadowed-package"]
    assert "rename" in found[0].fix and found[0].source_line == text.splitlines().index(decl) + 1


def test_other_package_names_may_still_be_local_names():
    text = _planted("func helper(log, cmp, os float64) float64 { return log + cmp + os }", "\t_ = 1")
    assert critical(check_evolved_text(text, "p.go")) == []


def test_global_rand_and_printing_are_important_not_refused():
    found = check_evolved_text(program(["math/rand", "fmt"], 'fmt.Println("x")\n\t_ = rand.Intn(3)'), "p.go")
    assert {(f.check, f.source_line, f.severity) for f in found} == {
        ("safety.print", 9, Severity.IMPORTANT),
        ("safety.global-rand", 10, Severity.IMPORTANT),
    }


# --------------------------------------------------------------- code that runs at load time, or outside Go
def test_init_function():
    assert crit_at('package sim\n\nimport "fmt"\n\nfunc init() {\n\tfmt.Sprint(1)\n}\n') == {("safety.init", 5)}


def test_method_named_init_is_fine():
    assert checks("package sim\n\ntype T struct{}\n\nfunc (T) init() {}\n") == []


@pytest.mark.parametrize(
    "decl,line",
    [
        ("var x = compute()", 3),
        ("var (\n\ta = 1\n\tb = compute()\n)", 5),
        ('var m = map[string]int{"k": compute()}', 3),
        ("var _ = func() int { return compute() }()", 3),
        ("var big = make([]byte, 10<<30)", 3),
    ],
)
def test_package_level_initialiser_calling_something(decl, line):
    text = f"package sim\n\n{decl}\n\nfunc compute() int {{ return 1 }}\n"
    assert crit_at(text) == {("safety.package-initializer", line)}


def test_package_level_literals_conversions_and_func_values_are_fine():
    text = 'package sim\n\nvar a = 3\nvar b = float64(2)\nvar c = map[string]int{"x": 1}\nvar f = func() int { return g() }\n\nfunc g() int { return 1 }\n'
    assert checks(text) == []


@pytest.mark.parametrize(
    "directive",
    [
        "//go:generate sh -c 'touch x'",
        "//go:linkname now runtime.nanotime",
        "//go:embed secrets.txt",
        "//export Evil",
        "//line other.go:1",
        "/*line other.go:1*/",
        "/*line other.go:1:5*/",
        "/*line :7*/",
        "//go:build ignore",
        "// +build ignore",
        "//go:noescape",
    ],
)
def test_directives(directive):
    text = f"package sim\n\n{directive}\nfunc F() int {{ return 1 }}\n"
    assert crit_at(text) == {("safety.directive", 3)}


def test_a_block_line_directive_inside_a_line_is_refused_on_its_line():
    """/*line may sit anywhere: it re-labels the position of the code right after it (go doc cmd/compile)."""
    text = "package sim\n\nfunc F() int {\n\treturn /*line adapter.go:40:2*/ 1\n}\n"
    assert crit_at(text) == {("safety.directive", 4)}


def test_the_directive_refusal_states_the_rule_it_applies():
    """Found by an llm-d maintainer: "a /* comment must not start with `line`" while `/*lineup ...*/` is accepted
    (rightly): a user would strip harmless comments. The fix says `line` then a space, and that others may stay."""
    [f] = critical(check_evolved_text("package sim\n\n/*line other.go:1*/\nfunc F() int { return 1 }\n", "p.go"))
    assert "must not start with `line ` (`line`, then a space" in f.fix and "`/*lineup ...*/` among them" in f.fix
    assert crit_at("package sim\n\n/*lineup: weights line up */\nfunc F() int { return 1 }\n") == set()


def test_ordinary_comments_mentioning_go_are_fine():
    assert checks("package sim\n\n// go: this is prose\n// Ties go to the lowest index.\nfunc F() {}\n") == []


def test_function_without_body_is_assembly():
    assert crit_at("package sim\n\nfunc fast(x int) int\n") == {("safety.bodyless-func", 3)}


# --------------------------------------------------------------- concurrency
def test_goroutines_and_channels():
    text = (
        "package sim\n\nfunc F() int {\n\tch := make(chan int, 1)\n\tgo func() { ch <- 1 }()\n"
        "\tselect {\n\tcase v := <-ch:\n\t\treturn v\n\t}\n}\n"
    )
    got = crit_at(text)
    assert ("safety.channel", 4) in got
    assert ("safety.goroutine", 5) in got
    assert ("safety.channel", 6) in got
    assert ("safety.channel", 7) in got


# --------------------------------------------------------------- forms, lines, API
def test_python_form_reports_lines_of_the_python_file():
    py = (
        '# OpenEvolve program\n\nGO_ROUTING_CODE = """package sim\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
        'func F() string { os.Exit(1); return fmt.Sprint(1) }\n"""\n'
    )
    assert crit_at(py, "best_program.py") == {("safety.import", 7)}


def test_function_form_lines_are_the_input_lines():
    text = "func F() {\n\tgo F()\n}\n"
    assert crit_at(text) == {("safety.goroutine", 2)}


def test_refuse_unsafe_raises_one_line_naming_line_and_fix():
    src = parse_evolved_source('package sim\n\nimport "os"\n\nfunc init() { os.Exit(3) }\n', "evil.go")
    with pytest.raises(UnsafeProgram) as exc:
        refuse_unsafe(src)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith('evil.go:3: refused before anything is built or run: imports "os"')
    assert "fix: remove the import" in msg and "(and 1 more" in msg
    assert len(critical(exc.value.findings)) == 2


def test_refuse_unsafe_returns_non_blocking_findings():
    src = parse_evolved_source(program(["math/rand"], "_ = rand.Intn(2)"), "ok.go")
    assert [f.check for f in refuse_unsafe(src)] == ["safety.global-rand"]
    assert refusal_line("ok.go", check_evolved_source(src)) == ""


def test_deep_nesting_does_not_exhaust_the_stack():
    text = "package sim\n\nfunc F() int { return " + "(" * 3000 + "1" + ")" * 3000 + " }\n"
    # The parser refuses such a program (source.too-deep); the checker's own walk must not depend on that.
    from bot.golang.source import EvolvedSource, SourceError

    with pytest.raises(SourceError, match="nested deeper than"):
        checks(text)
    assert check_evolved_source(EvolvedSource(path="p.go", form="go-file", go_text=text, original_text=text)) == []


# --------------------------------------------------------------- what a reader cannot see (redteam3 items 3 and 5)
@pytest.mark.parametrize("blank", ["\u3164", "\u115f", "\u1160", "\uffa0"])
def test_a_name_holding_a_blank_letter_is_refused_naming_line_column_and_code_point(blank):
    """`limit<U+3164>` is a second variable that reads as `limit`: the reviewer approves code that is not what runs."""
    text = (
        f"package sim\n\nfunc F(x float64) float64 {{\n\tlimit := 1.0\n\tlimit{blank} := 0.0\n"
        f"\tif x > limit{blank} {{\n\t\treturn limit\n\t}}\n\treturn x\n}}\n"
    )
    found = critical(check_evolved_text(text, "p.go"))
    assert [(f.check, f.source_line) for f in found] == [
        ("safety.invisible-character", 5),
        ("safety.invisible-character", 6),
    ]
    assert found[0].message.startswith(f"column 7 holds U+{ord(blank):04X} ") and "FILLER" in found[0].message
    assert found[1].message.startswith(f"column 14 holds U+{ord(blank):04X} ")
    with pytest.raises(UnsafeProgram) as exc:
        refuse_unsafe(parse_evolved_source(text, "p.go"))
    assert str(exc.value).startswith(
        f"p.go:5: refused before anything is built or run: column 7 holds U+{ord(blank):04X}"
    )


@pytest.mark.parametrize(
    "ch", ["\u202e", "\u202a", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u061c", "\u200b", "\u200d", "\ufeff"]
)
@pytest.mark.parametrize("where", ["comment", "string", "raw string"])
def test_bidi_and_zero_width_characters_are_refused_anywhere(ch, where):
    line = {
        "comment": f"\t// ok {ch} here\n\treturn 1",
        "string": f'\t_ = "ad{ch}min"\n\treturn 1',
        "raw string": f"\t_ = `ad{ch}min`\n\treturn 1",
    }[where]
    found = critical(check_evolved_text(f"package sim\n\nfunc F() int {{\n{line}\n}}\n", "p.go"))
    assert [(f.check, f.source_line) for f in found] == [("safety.invisible-character", 4)]
    assert f"U+{ord(ch):04X}" in found[0].message and f"\\u{ord(ch):04x}" in found[0].fix


def test_ordinary_non_ascii_letters_and_text_are_fine():
    """Go allows Unicode letters: only the invisible ones are refused."""
    text = (
        "package sim\n\n// Latency in µs, « per request » — café.\n"
        'func F(tempsµs float64, été int) string {\n\t_ = été\n\t_ = tempsµs\n\treturn "naïve → 日本語 ✓"\n}\n'
    )
    assert checks(text) == []


def test_invisible_characters_are_placed_in_the_python_file_and_counted_per_line():
    py = '# OpenEvolve program\nGO_ROUTING_CODE = """package sim // a\u200b\n\nfunc F() string { return "\u202e\u2066x\u2069" }\n"""\n'
    found = critical(check_evolved_text(py, "best_program.py"))
    assert [(f.source_line, f.message.split(",")[0]) for f in found] == [
        (2, "column 38 holds U+200B ZERO WIDTH SPACE"),
        (4, "column 27 holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    ]
    assert found[1].message.endswith("(and 2 more on this line)") and "Trojan Source" in found[1].message


def test_a_file_full_of_invisible_characters_gets_a_bounded_number_of_findings():
    body = "".join(f"\t_ = {i} // \u200b\n" for i in range(500))
    found = critical(check_evolved_text(f"package sim\n\nfunc F() {{\n{body}}}\n", "p.go"))
    assert len(found) == 20 and found[-1].message.endswith("; 480 more lines hold such characters")


def test_control_characters_and_line_separators_are_refused():
    for ch in ("\x1b", "\x7f", "\r", "\u2028", "\u0085"):
        found = critical(check_evolved_text(f'package sim\n\nfunc F() string {{\n\treturn "a{ch}b"\n}}\n', "p.go"))
        assert [(f.check, f.source_line) for f in found] == [("safety.invisible-character", 4)], repr(ch)


@pytest.mark.parametrize(
    "comment",
    [
        "//nolint",
        "//nolint:all",
        "//nolint:errcheck,gocritic // reason",
        "// nolint:gocritic",
        "///nolint",
        "//NOLINT",
        "//lint:ignore SA4006 reason",
        "//lint:file-ignore U1000 reason",
        "//revive:disable",
        "//revive:disable-next-line:exported",
        "//exhaustive:ignore",
        "//gosec:disable G404",
        "// #nosec G404",
        "// weights // #nosec",
    ],
)
@pytest.mark.parametrize("trailing", [False, True])
def test_linter_suppressions_are_refused(comment, trailing):
    """llm-d-router's CI runs golangci-lint with no nolintlint: a carried `//nolint:all` switches it off unseen."""
    code = f"\treturn 1 {comment}\n" if trailing else f"\t{comment}\n\treturn 1\n"
    found = critical(check_evolved_text(f"package sim\n\nfunc F() int {{\n{code}}}\n", "p.go"))
    assert [(f.check, f.source_line) for f in found] == [("safety.lint-suppression", 4)]
    assert comment in found[0].message and "golangci-lint" in found[0].message


@pytest.mark.parametrize(
    "comment",
    ["// Note: weights sum to 1", "// TODO: tune", "//TODO: tune", "// see https://example.com/x", "// no lint here"],
)
def test_prose_comments_are_not_linter_directives(comment):
    assert checks(f"package sim\n\n{comment}\nfunc F() int {{ return 1 }}\n") == []


def test_the_gccgo_extern_directive_is_refused():
    assert crit_at("package sim\n\n//extern getpid\nfunc F() int { return 1 }\n") == {("safety.directive", 3)}
