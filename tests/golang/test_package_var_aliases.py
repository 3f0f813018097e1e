"""A package-level variable the evolved code writes without naming it (package_vars.py): through a local or a
parameter that shares its storage (``m := seen; m[k] = true``, ``s := &stats; s.count++``, ``fill(seen, k)``), a
field of a struct holding a map (``x := st.m; x[k]++``), an element that is itself a map or slice, or a method
with a pointer receiver (``limiter.Allow()``). Each is refused as a CRITICAL ``hazard.package-state`` at the line
that writes, naming the variable, what shares its storage, and the fix, since a write missed ships a data race.
Reading the same variables (ranging a table, copying a number out of it, reading a field) is no write: a read-only
table is still carried and a read-only number still lifted, as before."""

from __future__ import annotations

import pytest

from bot.golang.package_vars import PACKAGE_STATE, written_vars
from bot.golang.source import parse_evolved_source
from bot.model import Severity

PROGRAM = """package sim

{decls}

type Gate struct{{}}

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {{
	load := float64(state.Snapshots[0].QueueDepth)
	if load > 4 {{
		return false, "busy"
	}}
	{body}
	return true, ""
}}

{helpers}
"""

_SET = "func fill(m map[string]bool, k string) {\n\tm[k] = true\n}"
_LIMITER = "type rateLimiter struct{ n int }\n\nfunc (r *rateLimiter) Allow() bool {\n\tr.n++\n\treturn r.n < 5\n}"


def _line(text: str, part: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if part in line)


@pytest.mark.parametrize(
    ("decls", "body", "helpers", "var", "write", "via"),
    [
        ("var stats struct{ count int }", "s := &stats\n\ts.count++", "", "stats", "s.count++", "s"),
        ("var seen = map[string]bool{}", "m := seen\n\tm[req.TenantID] = true", "", "seen", "m[req", "m"),
        ("var seen = make(map[string]bool)", "m := seen\n\tm[req.TenantID] = true", "", "seen", "m[req", "m"),
        ("type set map[string]bool\n\nvar seen = set{}", "m := seen\n\tm[req.TenantID] = true", "", "seen", "m[", "m"),
        (
            "var seen = newSet()",
            "var m = seen\n\tm[req.TenantID] = true",
            "func newSet() map[string]bool {\n\treturn map[string]bool{}\n}",
            "seen",
            "m[req",
            "m",
        ),
        ("var table = []int{1, 2}", "p := &table[0]\n\t*p = 1", "", "table", "*p = 1", "p"),
        ("var table = make([]int, 4)", "t := table\n\tt[0] = 1", "", "table", "t[0] = 1", "t"),
        ("var table = make([]int, 4)", "t := table[1:]\n\tt[0] = 1", "", "table", "t[0] = 1", "t"),
        ("var st = struct{ m map[string]int }{m: map[string]int{}}", "st.m[req.TenantID]++", "", "st", "st.m[", ""),
        (
            "var st = struct{ m map[string]int }{m: map[string]int{}}",
            "x := st.m\n\tx[req.TenantID]++",
            "",
            "st",
            "x[",
            "x",
        ),
        (
            "var st = struct{ m map[string]int }{m: map[string]int{}}",
            "x := st\n\tx.m[req.TenantID]++",
            "",
            "st",
            "x.m",
            "x",
        ),
        ("var hits = 0", "bump(&hits)", "func bump(p *int) {\n\t*p++\n}", "hits", "*p++", "p"),
        ("var seen = make(map[string]bool)", "fill(seen, req.TenantID)", _SET, "seen", "m[k] = true", "m"),
        (
            "var seen = make(map[string]bool)",
            "g.fill(seen, req.TenantID)",
            "func (g *Gate) fill(m map[string]bool, k string) {\n\tm[k] = true\n}",
            "seen",
            "m[k] = true",
            "m",
        ),
        ("var hist []float64", "hist = append(hist, load)", "", "hist", "hist = append", ""),
        ("var hist = make([]float64, 0, 8)", "_ = append(hist, load)", "", "hist", "_ = append", ""),
        (
            "var limiter = rateLimiter{}",
            'if !limiter.Allow() {\n\t\treturn false, "limited"\n\t}',
            _LIMITER,
            "limiter",
            "r.n++",
            "r",
        ),
        ("var lp = &rateLimiter{}", "l := lp\n\tl.n++", _LIMITER, "lp", "l.n++", "l"),
        ('var ms = map[string][]int{"a": {1}}', "for _, v := range ms {\n\t\tv[0] = 2\n\t}", "", "ms", "v[0]", "v"),
        ('var ms = map[string][]int{"a": {1}}', 'v := ms["a"]\n\tv[0] = 2', "", "ms", "v[0] = 2", "v"),
        ("var ms = [][]int{{1}}", "v := ms[0]\n\tw := v\n\tw[0] = 2", "", "ms", "w[0] = 2", "w"),
    ],
)
def test_a_write_through_what_shares_a_package_variable_is_refused_at_the_write(
    analyze_text, decls, body, helpers, var, write, via
):
    text = PROGRAM.format(decls=decls, body=body, helpers=helpers)
    an = analyze_text(text)
    found = [f for f in an.findings if f.check == PACKAGE_STATE]
    assert len(found) == 1, (text, an.findings)
    f = found[0]
    assert f.severity is Severity.CRITICAL and f"package-level variable `{var}`" in f.message, f.message
    assert f.source_line == _line(text, write), (f.source_line, f.message, text)
    assert not via or (" through `" in f.message and f"`{via}` (`" in f.message), f.message
    assert f"move `{var}` into the policy's receiver struct" in f.fix and "local" in f.fix, f.fix


@pytest.mark.parametrize(
    ("decls", "body", "helpers"),
    [
        ("var limiter = rateLimiter{}", "allow := limiter.Allow\n\t_ = allow()", _LIMITER),  # a method value
        ("var seen = map[string]bool{}", "m := seen\n\tkeep(m)", "func keep(m map[string]bool) { cache = m }"),
        ("var seen = map[string]bool{}", "m := seen\n\tg.keep(m)", ""),  # a method the file does not declare
        ("var seen = map[string]bool{}", "m := seen\n\t_ = []map[string]bool{m}", ""),
        ("var seen = ext.New()", "s := seen\n\ts.Touch()", ""),  # a type the file cannot tell
    ],
)
def test_storage_handed_where_the_file_cannot_follow_it_is_refused(analyze_text, decls, body, helpers):
    """When in doubt, refuse: a copy stored, returned, or given to code the file does not declare may be written
    there, and a missed write ships a data race."""
    decls += "\n\nvar cache map[string]bool" if "cache" in helpers else ""
    text = PROGRAM.format(decls=decls, body=body, helpers=helpers)
    an = analyze_text(text)
    found = [f for f in an.findings if f.check == PACKAGE_STATE]
    assert found and f"`{decls.split()[1]}`" in found[0].message, (text, an.findings)


READ_ONLY = """package sim

var kvCeiling = 0.9

var classWeights = map[string][]float64{"critical": {2, 1}, "batch": {0.5}}

var tiers = struct {
	floor float64
	names []string
}{floor: 0.2, names: []string{"a"}}

var bonus = map[string]int{"critical": 3}

type Gate struct{}

func weigh(ws []float64, load float64) float64 {
	total := 0.0
	for _, w := range ws {
		total += w * load
	}
	return total
}

func (g *Gate) Admit(req *Request, state *RouterState) (bool, string) {
	load := float64(state.Snapshots[0].QueueDepth)
	for class, ws := range classWeights {
		if class == req.SLOClass && weigh(ws, load) > 8 {
			return false, "heavy"
		}
	}
	for class, b := range bonus {
		if class == req.SLOClass {
			load -= float64(b)
		}
	}
	floor := tiers.floor
	first := classWeights["critical"][0]
	if load > kvCeiling && load*first > floor && len(tiers.names) > 0 {
		return false, "busy"
	}
	return true, ""
}
"""


def test_reading_package_tables_is_no_write_so_they_are_still_carried_and_the_number_lifted(analyze_text):
    """Ranging a package map (of numbers, of slices handed to a helper that only reads them), reading a field,
    copying a number out: none writes, so nothing is refused, and the number is still a parameter."""
    assert written_vars(parse_evolved_source(READ_ONLY, "snippet.go")) == {}
    an = analyze_text(READ_ONLY)
    assert not [f for f in an.findings if f.check == PACKAGE_STATE], an.findings
    assert [th for th in an.thresholds if th.const_decl == "kvCeiling" and th.param], an.thresholds


@pytest.mark.parametrize(
    ("decls", "body", "helpers"),
    [
        ("var seen = map[string]bool{}", "m := seen\n\tm2 := m\n\t_ = m2[req.TenantID]", ""),
        (
            "var seen = map[string]bool{}",
            'if rec(seen) {\n\t\treturn false, "x"\n\t}',
            'func rec(m map[string]bool) bool {\n\treturn m["a"] || rec(m)\n}',
        ),
        (
            "var lim rateLimiter",
            "lim.Reset()",
            "type rateLimiter struct{ n int }\n\nfunc (r rateLimiter) Reset() {\n\tr.n = 0\n}",
        ),
        (
            "var lim rateLimiter",
            "_ = lim.Get()",
            "type rateLimiter struct{ n int }\n\nfunc (r *rateLimiter) Get() int {\n\treturn r.n\n}",
        ),
        ("var hist = []float64{1}", "h := append([]float64{}, hist...)\n\th[0] = 1", ""),
        ("var hist = []float64{1}", "h := make([]float64, 1)\n\tcopy(h, hist)\n\th[0] = 2", ""),
    ],
)
def test_a_copy_of_its_own_or_storage_only_read_is_no_write(analyze_text, decls, body, helpers):
    """Followed to every use, storage only read (through a chain of locals, a recursive helper, a pointer receiver
    that reads) or copied into storage of its own (a value receiver of numbers, ``append``/``copy`` of numbers)
    writes nothing."""
    text = PROGRAM.format(decls=decls, body=body, helpers=helpers)
    an = analyze_text(text)
    assert not [f for f in an.findings if f.check == PACKAGE_STATE], (text, an.findings)
