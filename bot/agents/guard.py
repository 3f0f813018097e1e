"""Everything the author writes passes the deterministic checks before anyone reviews it.

- **Paths.** Only the promotion's own places: the plugin package,
  ``docs/promotion/<slug>/`` and ``benchmarks/promotion/<slug>/``. Never
  ``.github/``, never the fork's runner (its registration line is generated),
  never a test file (stage 4 regenerates the tests from the translation, so an
  edited test would not survive), never a path that escapes the tree.
- **Edits apply exactly.** ``find`` must occur exactly once in the current text.
- **Go.** The plugin package with the edits is gofmt-clean, builds, vets and
  passes the translation's unit tests with the pinned toolchain, run through
  the execution port (``bot.golang.toolchain.run_checks``), never directly.
- **Hypothesis documents** render and parse back (``bot.hypotheses``).

The functions return errors as sentences the author can act on; the caller
returns them once, then drops the patch with a finding.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from bot.agents.schemas import FileEdit

FORBIDDEN_PREFIXES = (".github/", "cmd/", ".git/")


@dataclass(frozen=True)
class Allowed:
    """The path prefixes the author may write under."""

    prefixes: tuple[str, ...]

    def check(self, path: str) -> str | None:
        """Why ``path`` may not be written, or None."""
        if not path or path.startswith("/") or "\\" in path or "\0" in path:
            return f"{path!r}: not a relative branch path"
        norm = posixpath.normpath(path)
        if norm != path or norm.startswith("..") or "/../" in f"/{norm}/":
            return f"{path!r}: not a normalized path inside the branch"
        if any(norm.startswith(p) or f"/{p}" in f"/{norm}" for p in FORBIDDEN_PREFIXES):
            return f"{path}: outside the promotion's allowed paths (never .github/, cmd/ or .git/)"
        if norm.endswith("_test.go"):
            return f"{path}: test files are generated in stage 4 from the translation; change the code, not the test"
        if not any(norm.startswith(p.rstrip("/") + "/") for p in self.prefixes):
            return f"{path}: outside the promotion's allowed paths ({', '.join(self.prefixes)})"
        return None


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
