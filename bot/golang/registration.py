"""Adding a plugin's registration to llm-d-router's ``cmd/epp/runner/runner.go`` (pure text editing).

``insert_registration`` adds the plugin's import, sorted by path into the import group of its module (what
goimports would do; an alias equal to the package's directory is dropped), and its ``plugin.Register(...)``
line in the section of ``registerInTreePlugins()`` that registers plugins of its kind (a scorer with the other
scheduling scorers, an admitter beside the other admitters: the first blank-line-separated section whose
registrations all come from the plugin's parent directory), under that section's ``// Alpha`` (or ``// Beta``)
heading; with no such section, at the function's end. Idempotent. Upstream patches are cut against
llm-d-router v0.10.0's own runner.go (``bot.upstream``), so the lines around both places are upstream's.
Split from ``bot.golang.toolchain`` (which re-exports it).
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
_IMPORT_PATH = re.compile(r'^\s*(?:[\w.]+\s+)?"([^"]+)"')
_REGISTERS = re.compile(r"^\s*\w+\.Register\w*\(\s*(\w+)\.")
_STABILITY = re.compile(r"\bStability(Alpha|Beta|Stable)\b")


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


def _spec_path(spec: str) -> str:
    return spec[spec.index('"') + 1 : spec.rindex('"')]


def _without_redundant_alias(spec: str) -> str:
    """``pkg "a/b/pkg"`` is ``"a/b/pkg"``: upstream writes no alias equal to the package's directory."""
    alias, _, rest = spec.partition(" ")
    return rest if rest and alias == _spec_path(spec).rsplit("/", 1)[-1] else spec


def _common_segments(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


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
    path = _spec_path(spec)
    paths = [_IMPORT_PATH.search(ln) for ln in lines]
    if any(m is not None and m.group(1) == path for m in paths):
        return src
    # Into the group sharing most of the path (llm-d-router's own packages), at its sorted place, as goimports puts it.
    best, at = 0, None
    for i, m in enumerate(paths):
        if m is not None and _common_segments(m.group(1), path) > best:
            best = _common_segments(m.group(1), path)
            at = i
    if at is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines.append("\t" + spec)
        return src[:start] + "\n".join(lines) + "\n" + src[end:]
    first = at
    while first > 0 and lines[first - 1].strip():
        first -= 1
    last = at
    while last + 1 < len(lines) and lines[last + 1].strip():
        last += 1
    pos = next(
        (i for i in range(first, last + 1) if paths[i] is not None and paths[i].group(1) > path),  # type: ignore[union-attr]
        last + 1,
    )
    lines.insert(pos, "\t" + spec)
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
    """Add the plugin's import and its Register call in the section of registerInTreePlugins() of its kind.

    Idempotent: an import or line already present is not added again. An empty
    import_line adds only the call, at the function's end. The import goes, sorted,
    into the group of llm-d-router's packages (see ``_add_import``).
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
    spec = _without_redundant_alias(_normalize_import(import_line)) if import_line.strip() else ""
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
        placed = _in_section(body, _packages(runner_go), _spec_path(spec) if spec else "", wanted) if spec else None
        if placed is not None:
            out = out[: open_idx + 1] + placed + out[close_idx:]
        elif before_brace.strip():  # "{ ... }" on one line: open it up
            out = out[:close_idx] + "\n" + "".join(f"{inner}{ln}\n" for ln in wanted) + out[close_idx:]
        else:
            out = out[:line_start] + "".join(f"{inner}{ln}\n" for ln in wanted) + out[line_start:]
    if spec:
        out = _add_import(out, spec)
    return out


def _packages(src: str) -> dict[str, str]:
    """Import name -> path, from the import block (the name is the alias, else the path's last element)."""
    block = _IMPORT_BLOCK.search(src)
    if block is None:
        return {}
    out = {}
    for ln in src[block.end() : src.find("\n)", block.end())].splitlines():
        m = _IMPORT_PATH.search(ln)
        if m is not None:
            alias = ln.strip().split()[0] if not ln.strip().startswith('"') else m.group(1).rsplit("/", 1)[-1]
            out[alias] = m.group(1)
    return out


def _in_section(body: str, packages: dict[str, str], path: str, wanted: list[str]) -> str | None:
    """``body`` with ``wanted`` added to the first section (lines between blank lines) whose registrations all come
    from ``path``'s parent directory, at the end of its heading of the same stability (``// Alpha``), or at the
    section's end under a new such heading; None when no section registers plugins of that kind."""
    parent = path.rsplit("/", 1)[0]
    lines = body.split("\n")
    stability = _STABILITY.search(" ".join(wanted))
    heading = f"// {stability.group(1)}" if stability else ""
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        section = range(i, j)
        kinds = [_REGISTERS.match(lines[k]) for k in section]
        dirs = {packages.get(r.group(1), "").rsplit("/", 1)[0] for r in kinds if r is not None}
        if dirs == {parent}:
            indent = re.match(r"\s*", lines[i]).group(0)  # type: ignore[union-attr]
            under = [k for k in section if heading and lines[k].strip() == heading]
            if under:  # the end of that heading's run of registrations
                at = under[-1] + 1
                while at < j and not lines[at].strip().startswith("//"):
                    at += 1
                add = wanted
            else:
                at, add = j, ([heading] if heading else []) + wanted
            lines[at:at] = [indent + ln for ln in add]
            return "\n".join(lines)
        i = j
    return None


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    k = len(needle)
    return any(haystack[i : i + k] == needle for i in range(len(haystack) - k + 1))
