"""Adding a plugin's registration to llm-d-router's ``cmd/epp/runner/runner.go`` (pure text editing).

``insert_registration`` adds the plugin's import (a group of its own at the end of the import block,
so gofmt stays clean and the lines around it do not depend on the plugin's name) and its
``plugin.Register(...)`` line at the end of ``registerInTreePlugins()``; idempotent. Both places are
ones whose surrounding lines the mirror's runner.go shares with upstream's (see its package comment),
so the diff of a mirror's runner.go applies to llm-d-router v0.10.0's. Split from
``bot.golang.toolchain`` (which re-exports it).
"""

from __future__ import annotations

import re

from bot.model import RequestError


class RegistrationError(RequestError):
    """The runner source cannot take the plugin registration."""


_REGISTER_FUNC = re.compile(r"func\s*\(\s*\w+\s+\*?\s*Runner\s*\)\s*registerInTreePlugins\s*\(\s*\)\s*\{")
_IMPORT_BLOCK = re.compile(r"^import[ \t]*\([ \t]*$", re.M)
_IMPORT_SINGLE = re.compile(r"^import[ \t]+((?:[\w.]+[ \t]+)?\"[^\"]+\")[ \t]*$", re.M)
_PACKAGE = re.compile(r"^package\s+\w+.*$", re.M)


def _normalize_import(import_line: str) -> str:
    """Accept 'path', '"path"', 'alias "path"' or 'import alias "path"'; return the spec."""
    spec = import_line.strip()
    if spec.startswith("import "):
        spec = spec[len("import ") :].strip()
    if '"' not in spec:
        parts = spec.split()
        if len(parts) == 1:
            spec = f'"{parts[0]}"'
        elif len(parts) == 2:
            spec = f'{parts[0]} "{parts[1]}"'
        else:
            raise RegistrationError(_bad_import(import_line))
    if not re.fullmatch(r'(?:[\w.]+\s+)?"[^"\s]+"', spec):
        raise RegistrationError(_bad_import(import_line))
    return re.sub(r"\s+", " ", spec)


def _bad_import(import_line: str) -> str:
    return f"registration import {import_line!r} is not an import spec; pass e.g. 'alias \"module/path\"'"


def _add_import(src: str, spec: str) -> str:
    block = _IMPORT_BLOCK.search(src)
    if block is None:
        single = _IMPORT_SINGLE.search(src)
        if single is not None:
            src = src[: single.start()] + f"import (\n\t{single.group(1)}\n)" + src[single.end() :]
            block = _IMPORT_BLOCK.search(src)
        else:
            pkg = _PACKAGE.search(src)
            if pkg is None:
                raise RegistrationError("runner.go has no package clause; pass the real cmd/epp/runner/runner.go")
            return src[: pkg.end()] + f"\n\nimport (\n\t{spec}\n)" + src[pkg.end() :]
    assert block is not None
    start = block.end() + 1
    end = src.index("\n)", block.end()) + 1
    lines = src[start:end].split("\n")[:-1] if src[start:end] else []
    if any(re.sub(r"\s+", " ", ln.split("//")[0].strip()) == spec for ln in lines):
        return src
    # A group of its own at the block's end: gofmt and goimports keep it (they sort within a group and never
    # merge groups), and the lines around it are the block's last lines whatever the plugin is called. In sorted
    # position its neighbours would be whichever upstream imports sort next to its path, lines the mirror does
    # not have, so a runner.go hunk cut against the mirror would not apply to llm-d-router itself.
    if lines and lines[-1].strip():
        lines.append("")
    lines.append("\t" + spec)
    return src[:start] + "\n".join(lines) + "\n" + src[end:]


def _matching_brace(src: str, open_idx: int) -> int:
    """Index of the '}' closing the '{' at open_idx, skipping strings, runes and comments."""
    depth, i, n = 0, open_idx, len(src)
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c in "\"'":
            i += 1
            while i < n and src[i] != c:
                i += 2 if src[i] == "\\" else 1
        elif c == "`":
            j = src.find("`", i + 1)
            i = n if j < 0 else j
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise RegistrationError("registerInTreePlugins() in runner.go has no closing brace; pass a runner.go that compiles")


def insert_registration(runner_go: str, import_line: str, register_line: str) -> str:
    """Add the plugin's import and its Register call at the end of registerInTreePlugins().

    Idempotent: an import or line already present is not added again. An empty
    import_line adds only the call. The import goes into a group of its own at the
    end of the import block (see ``_add_import``).
    """
    line = register_line.strip()
    if not line:
        raise RegistrationError(
            "registration line is empty; pass e.g. 'fwkplugin.Register(pkg.Type, fwkplugin.StabilityAlpha, pkg.Factory)'"
        )
    m = _REGISTER_FUNC.search(runner_go)
    if m is None:
        raise RegistrationError(
            "runner.go has no 'func (r *Runner) registerInTreePlugins()'; pass cmd/epp/runner/runner.go of llm-d-router v0.10.0"
        )
    open_idx = m.end() - 1
    close_idx = _matching_brace(runner_go, open_idx)
    body = runner_go[open_idx + 1 : close_idx]
    wanted = [ln.strip() for ln in line.splitlines() if ln.strip()]
    present = [ln.strip() for ln in body.splitlines()]
    out = runner_go
    if not _contains_run(present, wanted):
        line_start = out.rfind("\n", 0, close_idx) + 1
        before_brace = out[line_start:close_idx]
        indent = before_brace if not before_brace.strip() else ""
        inner = indent + "\t"
        addition = "".join(f"{inner}{ln}\n" for ln in wanted)
        if before_brace.strip():  # "{ ... }" on one line: open it up
            out = out[:close_idx] + "\n" + addition + out[close_idx:]
        else:
            out = out[:line_start] + addition + out[line_start:]
    if import_line.strip():
        out = _add_import(out, _normalize_import(import_line))
    return out


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    k = len(needle)
    return any(haystack[i : i + k] == needle for i in range(len(haystack) - k + 1))
