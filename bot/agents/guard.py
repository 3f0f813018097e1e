"""Everything the author writes passes the deterministic checks before anyone reviews it.

- **Paths: an allowlist per stage.** Only stage 2's author writes files, and
  only the exact paths ``translation_writable`` names: the plugin's generated
  Go sources (not its tests) and its README. Never anything a deterministic
  check reads as data or evidence (``translation.json``,
  ``translation-checks.json``, ``validation/``, the hypotheses, the evaluation
  spec, benchmark results), never a new file, never ``.github/``, the fork's
  runner or a test (stage 4 regenerates the tests from the translation). Its
  words for the translation report go through ``report_notes``, which the
  stage appends under its own heading. Stages 3 and 6 answer with wording
  fields, not paths. A path the forge would refuse (``bot.forge.git.path_problem``)
  is refused here first, so it goes back to the author like any other error.
- **Edits apply exactly.** ``find`` must occur exactly once in the current text.
- **Go: comments only.** The differential check measured the generated code,
  and nothing here can measure an edited one, so an edit to a Go file may change
  comments and layout, not one token of the program (``bot.golang.gofiles.code_tokens``);
  a code change is for a person, through the gate's change request. The
  package with the edits is still gofmt-clean, builds, vets and passes the
  translation's unit tests with the pinned toolchain, run through the execution
  port (``bot.golang.toolchain.run_checks``), never directly.
- **Hypothesis documents** render and parse back (``bot.hypotheses``).

The functions return errors as sentences the author can act on; the caller
returns them once, then drops the patch with a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.agents.schemas import FileEdit


@dataclass(frozen=True)
class Allowed:
    """The exact branch paths the author may change at this stage (an allowlist: nothing else, no new file)."""

    paths: frozenset[str]

    def check(self, path: str) -> str | None:
        """Why ``path`` may not be written, or None."""
        from bot.forge.git import path_problem

        why = path_problem(path)
        if why:
            return f"{path!r}: the branch refuses this name: {why}"
        if path.endswith("_test.go"):
            return f"{path}: test files are generated in stage 4 from the translation; change the code, not the test"
        if path not in self.paths:
            return f"{path}: not one of the files you may change at this stage ({', '.join(sorted(self.paths))})"
        return None


def translation_writable(files: dict[str, str], package_dir: str) -> Allowed:
    """Stage 2's allowlist: the plugin's generated Go sources (comments only, ``go_logic_changed``) and its
    README. Everything else stage 2 writes is data a deterministic check reads (the summary, the Go check
    results, the EndpointPickerConfig, the registration) or prose the stage generates (the report)."""
    prefix = package_dir.rstrip("/") + "/"
    go = {p for p in files if p.startswith(prefix) and "/" not in p[len(prefix) :] and p.endswith(".go")} - {
        p for p in files if p.endswith("_test.go")
    }
    return Allowed(frozenset(go | {prefix + "README.md"}))


def go_logic_changed(before: dict[str, str], after: dict[str, str], changed: list[str]) -> list[str]:
    """Errors for each changed Go file whose program (not its comments or layout) differs."""
    from bot.golang.gofiles import code_tokens

    return [
        f"{p}: the edit changes Go code, not only comments; the differential check measured the generated code "
        "and cannot measure an edited one, so change comments, the README or the report notes, or answer "
        "'justified' and name the code change in your note for a person to make at the gate"
        for p in changed
        if p.endswith(".go") and code_tokens(before.get(p, "")) != code_tokens(after[p])
    ]


@dataclass
class Applied:
    files: dict[str, str]
    changed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def apply_edits(files: dict[str, str], edits: list[FileEdit], allowed: Allowed) -> Applied:
    """``files`` with ``edits`` applied, or the errors that stop them. All or nothing."""
    out = dict(files)
    changed: list[str] = []
    errors: list[str] = []
    for i, e in enumerate(edits, 1):
        why = allowed.check(e.path)
        if why:
            errors.append(f"edit {i}: {why}")
            continue
        if e.find is None:
            out[e.path] = e.replace if e.replace.endswith("\n") else e.replace + "\n"
        else:
            current = out.get(e.path)
            if current is None:
                errors.append(f"edit {i}: {e.path} does not exist; use find: null to create it")
                continue
            n = current.count(e.find) if e.find else 0
            if n != 1:
                errors.append(f"edit {i}: `find` occurs {n} times in {e.path}; it must match exactly once")
                continue
            out[e.path] = current.replace(e.find, e.replace, 1)
        if e.path not in changed:
            changed.append(e.path)
    if errors:
        return Applied(dict(files), [], errors)
    return Applied(out, [p for p in changed if out.get(p) != files.get(p)], [])


def go_errors(
    package_files: dict[str, str], *, registration_import: str, registration_line: str, executor
) -> list[str]:
    """gofmt, build, vet and test through the execution port; [] when all pass."""
    from bot.golang.toolchain import run_checks

    report = run_checks(
        package_files,
        registration_import=registration_import,
        registration_line=registration_line,
        executor=executor,
    )
    if report.ok:
        return []
    errors = [
        f"{f.check} {f.file or ''}{':' + str(f.line) if f.line else ''}: {f.message}".strip()
        for f in report.findings
        if f.severity.blocking
    ]
    failed = [
        name
        for name, ok in (
            ("gofmt", report.gofmt_ok),
            ("go build", report.build_ok),
            ("go vet", report.vet_ok),
            ("go test", report.test_ok),
        )
        if not ok
    ]
    if not errors:
        tail = report.output.strip().splitlines()[-8:]
        errors = [f"{', '.join(failed)} failed: " + " | ".join(tail)]
    return errors[:12]
