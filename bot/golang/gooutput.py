"""What the Go tools print, turned into review findings: pure functions, tested without running Go.

`go build`/`go vet` report `file:line:col: message` against the scratch copy of the mirror module; `go test
-json` reports events per test. These parsers make every location branch-relative (the scratch module's path
is dropped), keep test failures with their first useful line, and remove run-specific text (durations, scratch
paths) so the same failure reads the same on every run.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from bot.model import Finding, Severity

MODULE = "github.com/llm-d/llm-d-router"
CHECK_BUILD = "toolchain.build"
CHECK_VET = "toolchain.vet"
CHECK_TEST = "toolchain.test"
CHECK_GOFMT = "toolchain.gofmt"
CHECK_LIMIT = "toolchain.limit"  # a sandbox limit (time, CPU, memory, output) stopped a command


SCRATCH_PREFIX = "promotion-go-"
_SCRATCH_MODULE = re.compile(r"^.*/" + SCRATCH_PREFIX + r"[^/]+/llm-d-router/")
_SCRATCH_DIR = "/" + SCRATCH_PREFIX
_TOKEN = re.compile(r"\S+")
_LOCATION = re.compile(r"^(?:vet: )?(?P<file>[^\s:][^:\n]*?\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")


#: The longest line of tool output the bot reads. `go vet` quotes an evolved string literal whole and a panic's
#: text is printed whole, so one line can be as long as the program (a megabyte); a longer line keeps its head
#: and its end (where vet says what is wrong) around a note of what was cut, before any pattern reads it.
LINE_CHARS = 2_000
#: The longest message of a finding made from tool output. Findings are kept in the promotion state (on GitHub,
#: one 65,536-character comment) and quoted in every review; the full line is in the toolchain log.
MESSAGE_CHARS = 500


def cut_middle(text: str, limit: int) -> str:
    """``text``, or its head and end around ``[N characters cut]`` when it is longer than ``limit`` characters.

    Deterministic, so the same tool output gives the same finding on every run (checklist findings are
    matched across rounds by their exact text)."""
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    return f"{text[:head]} … [{len(text) - limit:,} characters cut] … {text[len(text) - tail :]}"


def cut_lines(text: str, limit: int = LINE_CHARS) -> str:
    """Every line of ``text`` at most ``limit`` characters (plus the note saying what was cut)."""
    lines = text.split("\n")
    if all(len(ln) <= limit for ln in lines):
        return text
    return "\n".join(cut_middle(ln, limit) for ln in lines)


def scratch_relative(path: str, scratch_module: str | None = None) -> str:
    """A tool-reported path -> module-relative (= branch-relative) POSIX path."""
    p = path.strip()
    if scratch_module and p.startswith(scratch_module):
        p = p[len(scratch_module) :].lstrip("/")
    # Go replays cached vet output verbatim, so it can name an earlier run's scratch dir.
    p = _SCRATCH_MODULE.sub("", p)
    if p.startswith(MODULE + "/"):
        p = p[len(MODULE) + 1 :]
    while p.startswith("./"):
        p = p[2:]
    return p


def parse_locations(
    output: str,
    *,
    check: str,
    severity: Severity,
    scratch_module: str | None = None,
    type_error_check: str | None = None,
) -> list[Finding]:
    """'file.go:LINE:COL: msg' lines -> findings. 'vet: ' lines are type errors (type_error_check)."""
    findings: list[Finding] = []
    for raw in cut_lines(output).splitlines():
        m = _LOCATION.match(raw.strip())
        if not m:
            continue
        is_type_error = raw.strip().startswith("vet: ") and type_error_check is not None
        findings.append(
            Finding(
                severity=Severity.CRITICAL if is_type_error else severity,
                check=type_error_check if is_type_error else check,
                message=cut_middle(m.group("msg").strip(), MESSAGE_CHARS),
                file=scratch_relative(m.group("file"), scratch_module),
                line=max(int(m.group("line")), 1),
            )
        )
    return findings


class GoTestRun(BaseModel):
    """What ``go test -json`` reported, in the terms a reviewer needs."""

    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    failed: int = 0
    started: int = 0  # top-level tests whose "run" event was seen
    finished: int = 0  # top-level tests whose pass, fail or skip event was seen
    failed_packages: list[str] = Field(default_factory=list)
    build_output: str = ""
    text: str = ""
    findings: list[Finding] = Field(default_factory=list)


_TEST_LOC = re.compile(r"^\s*(?P<file>[\w.\-]+_test\.go|[\w.\-]+\.go):(?P<line>\d+): (?P<msg>.*)$")
#: A ``dir/file.go:LINE`` in a stack trace. It starts only where a path starts (after its leading slashes), not
#: at every segment: tried from each ``/`` of a long run of ``a/a/a…``, it would take time quadratic in the line.
TRACE_LOC = re.compile(r"(?<![\w.\-/])/*(?P<file>(?:[\w.\-]+/)++[\w.\-]+\.go):(?P<line>\d+)")


def parse_test_json(stream: str, *, scratch_module: str | None = None) -> GoTestRun:
    """Count top-level test results and turn each failure into a CRITICAL finding at its file:line."""
    outputs: dict[tuple[str, str], list[str]] = {}
    results: dict[tuple[str, str], str] = {}
    started: set[tuple[str, str]] = set()
    pkg_results: dict[str, str] = {}
    build_lines: list[str] = []
    text: list[str] = []
    for raw in stream.splitlines():
        raw = raw.strip()
        if not raw.startswith("{"):
            if raw:
                text.append(cut_middle(raw, LINE_CHARS))
            continue
        try:
            ev = json.loads(raw)
        except json.JSONDecodeError:
            text.append(cut_middle(raw, LINE_CHARS))
            continue
        action = ev.get("Action")
        if action == "build-output":
            build_lines.append(cut_lines(ev.get("Output", "").rstrip("\n")))
            continue
        pkg = ev.get("Package", "")
        test = ev.get("Test")
        if action == "output":
            out = cut_lines(ev.get("Output", "").rstrip("\n"))
            text.append(out)
            if test:
                outputs.setdefault((pkg, test), []).append(out)
        elif action == "run" and test and "/" not in test:
            started.add((pkg, test))
        elif action in ("pass", "fail", "skip"):
            if test:
                results[(pkg, test)] = action
            else:
                pkg_results[pkg] = action
    run = GoTestRun(build_output="\n".join(build_lines), text="\n".join(text))
    top = {key for key in results if "/" not in key[1]}
    run.started, run.finished = len(started | top), len(top)
    for (pkg, test), action in sorted(results.items()):
        if "/" in test:
            continue
        if action == "pass":
            run.passed += 1
        elif action == "fail":
            run.failed += 1
            lines = [
                ln
                for (p, t), out in outputs.items()
                if p == pkg and (t == test or t.startswith(test + "/"))
                for ln in out
            ]
            run.findings.append(_test_failure(pkg, test, lines, scratch_module))
    run.failed_packages = sorted(p for p, a in pkg_results.items() if a == "fail")
    for pkg in run.failed_packages:
        if not any(p == pkg and a == "fail" for (p, _), a in results.items()):
            # The package failed with no failing test: a build failure (reported from
            # build output) or a panic/TestMain exit outside any test.
            pkg_lines = [ln for (p, _), out in outputs.items() if p == pkg for ln in out]
            if not _build_failed(pkg, build_lines):
                run.findings.append(_test_failure(pkg, None, pkg_lines + run.text.splitlines(), scratch_module))
    return run


def _build_failed(pkg: str, build_lines: list[str]) -> bool:
    return any(ln.startswith(f"# {pkg}") for ln in build_lines)


#: What a researcher can do about a failing generated test, after the sentence saying what failed. A generated
#: test states what the compiled evolved program did on the case the harness chose, so the plugin failing it is
#: nondeterminism in the evolved code, state its cases share (``package_vars.shared_state_failures`` says so when
#: the translation found it) or a translator bug; running the translation again tells the first from the last.
TEST_FAILURE_STEPS = (
    "translate the program again (`promote translate SOURCE --out DIR`) and see whether the failure repeats. One "
    "that moves to another case or value, or goes away, is nondeterminism in the evolved code: look for a draw from "
    "math/rand's global source or another one the plugin does not seed, a read of the clock, a range over a map "
    "whose order decides the result (Go iterates maps in random order); make it deterministic and re-file the "
    "program. One that repeats the same way in deterministic evolved code is a translator bug: report it to the "
    "bot's maintainers with the translation report and this finding. Either way the plugin as generated is not the "
    "program: reject it at gate 1 (or the gate open when a later stage's check fails) unless it is re-filed. A test "
    "added to the branch by hand may itself be wrong: fix whichever of it and the plugin is"
)
#: How each kind of generated-test failure opens its fix (``failing_test_fix``).
_FAILURE_OPENINGS = {
    "test": "the generated test states what the compiled evolved program did, and on this case the plugin did otherwise",
    "diff": (
        "the generated test wants the values marked want (what the compiled evolved program returned on this case) "
        "and the plugin gives those marked got"
    ),
    "panic": "the plugin panicked on a case the generated test states the compiled evolved program's decision for",
    "timeout": "the plugin's tests ran past go test's time limit on cases the compiled evolved program decided",
    "package": (
        "the plugin's test package failed outside any test (in its setup or TestMain, or with no output the bot "
        "could read: the toolchain log has it all)"
    ),
}


def failing_test_fix(kind: str) -> str:
    """The fix of a ``toolchain.test`` finding of ``kind`` (test, diff, panic, timeout, package): what failed, then
    ``TEST_FAILURE_STEPS``. Every finding a person reads says what to do; this one once said nothing."""
    return f"{_FAILURE_OPENINGS[kind]}: {TEST_FAILURE_STEPS}"


def _test_failure(pkg: str, test: str | None, lines: list[str], scratch_module: str | None) -> Finding:
    pkg_dir = scratch_relative(pkg) if pkg.startswith(MODULE) else pkg
    file, line, detail, kind = None, None, "", "test" if test else "package"
    panic = next((x.strip() for x in lines if x.strip().startswith("panic:")), "")
    for i, ln in enumerate(lines):
        m = _TEST_LOC.match(ln)
        if m:
            file = str(PurePosixPath(pkg_dir) / m.group("file"))
            line, detail = int(m.group("line")), m.group("msg").strip()
            differs = diff_fields(_continuation(lines[i + 1 :]))
            if differs:  # a `cmp.Diff` (-want +got): its first line names only the type, the rest say what differs
                head = re.sub(r"\s+", " ", detail).rstrip("{ ")  # cmp pads with no-break spaces
                detail = f"{head} differs in {'; '.join(differs)}"
                kind = "diff"
            break
    if file is None:
        for ln in lines:
            m = TRACE_LOC.search(ln)
            if m and (MODULE + "/" in ln or (scratch_module and scratch_module in ln)):
                file, line = scratch_relative(m.group("file"), scratch_module), int(m.group("line"))
                detail = panic
                break
    if file is None and panic:
        detail = panic
    if panic and kind != "diff" and (file is None or detail == panic):
        kind = "timeout" if panic.startswith("panic: test timed out") else "panic"
    what = f"test {test} failed" if test else f"package {pkg_dir} failed outside any test"
    return Finding(
        severity=Severity.CRITICAL,
        check=CHECK_TEST,
        message=cut_middle(f"{what}: {detail}" if detail else what, MESSAGE_CHARS),
        file=file,
        line=line if line and line >= 1 else None,
        fix=failing_test_fix(kind),
    )


def _continuation(lines: list[str]) -> list[str]:
    """The indented lines that continue a test's message (``t.Errorf`` with a multi-line value), up to the next
    message or test event."""
    out = []
    for ln in lines:
        if not ln[:1].isspace() or _TEST_LOC.match(ln):
            break
        out.append(ln)
    return out


_DIFF_LINE = re.compile(r"^\s*(?P<sign>[-+])\s+(?P<body>\S.*?),?\s*$")


_DIFF_FIELD = re.compile(r"^(?P<name>[A-Za-z_]\w*|\"[^\"]{1,40}\"):\s*(?P<value>[^\s{}\[\]][^{}\[\]]{0,59})$")


def diff_fields(lines: list[str], *, limit: int = 3) -> list[str]:
    """What a ``cmp.Diff`` (-want +got) of a struct says differs: ``Field: want A, got B``, at most ``limit``.

    Only when every changed line is a plain ``Field: value``: other diffs (maps keyed by objects, nested
    values) print pointers and whole structs, which would make the message long and differ from run to run."""
    pairs: dict[str, dict[str, str]] = {}
    for ln in lines:
        m = _DIFF_LINE.match(ln)
        if not m:
            continue
        field = _DIFF_FIELD.match(m.group("body"))
        if field is None or "0x" in field.group("value"):
            return []
        side = "want" if m.group("sign") == "-" else "got"
        pairs.setdefault(field.group("name"), {})[side] = field.group("value").strip()
    out = [
        f"{name}: want {sides.get('want', '(absent)')}, got {sides.get('got', '(absent)')}"
        for name, sides in pairs.items()
    ]
    return out[:limit] + ([f"and {len(out) - limit} more"] if len(out) > limit else [])


_DURATION = re.compile(r"(?<=[\s(])\d+(?:\.\d+)?s(?=[)\s]|$)", re.M)


def normalize_output(text: str) -> str:
    """Scratch paths -> $SCRATCH and test durations -> 0s, so the same code gives the same log; lines cut to
    ``LINE_CHARS`` first, as this runs in the bot's own process, outside every sandbox limit."""
    return _DURATION.sub("0s", unscratch(cut_lines(text)))


def unscratch(text: str) -> str:
    """Every path through a scratch directory (``/…/promotion-go-XXXX``, even an earlier run's, as Go replays
    cached vet output) -> ``$SCRATCH``.

    In time linear in the text: a pattern like ``/\\S*/promotion-go-…`` would try every ``/`` of a long
    token, each to the token's end (quadratic on a string literal of slashes that go vet quotes)."""
    if _SCRATCH_DIR not in text:
        return text
    return "\n".join(
        _TOKEN.sub(lambda m: _unscratch_token(m.group()), ln) if _SCRATCH_DIR in ln else ln for ln in text.split("\n")
    )


def _unscratch_token(token: str) -> str:
    """From the token's first ``/`` to the end of its last ``/promotion-go-NAME`` past it -> ``$SCRATCH``."""
    first = token.find("/")
    at = len(token)
    while (at := token.rfind(_SCRATCH_DIR, 0, at)) > first:
        name = at + len(_SCRATCH_DIR)
        end = token.find("/", name)
        end = len(token) if end < 0 else end
        if end > name:
            return token[:first] + "$SCRATCH" + token[end:]
    return token


def first_changed_line(original: str, formatted: str) -> int:
    """1-based line of the first difference gofmt would make."""
    a, b = original.splitlines(), formatted.splitlines()
    for tag, i1, _, _, _ in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            return min(i1 + 1, max(len(a), 1))
    return 1


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (file, line, message); the most severe wins. Sorted."""
    best: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.file, f.line, f.message)
        if key not in best or f.sort_key() < best[key].sort_key():
            best[key] = f
    return sorted(best.values(), key=Finding.sort_key)
