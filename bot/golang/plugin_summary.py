"""The plugin in a few plain sentences: what it does in llm-d terms, how faithfully it decides, what it must not hide.

One source for every text that summarises a translated plugin away from its translation report: the fork PR's
body (stage 7), the upstream commit message (``bot.upstream``), the sample EndpointPickerConfig and the plugin
README's Caveats (``ship_findings``, stage 2). An upstream maintainer reads only the patch, so what the fork PR
says of fidelity and of the translator's open findings has to travel with the code, in the same words.
Pure; plain text out (callers escape for their format).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.escape import md
from bot.golang import dead_code, fidelity_admit
from bot.golang.admission_docs import FAIL_OPEN, REJECTION, upstream_alternative
from bot.golang.gonames import comment_lines
from bot.model import Fidelity, Finding, PolicyKind, Severity

_DOES = {
    PolicyKind.ROUTING: "scores each request's candidate endpoints the way the evolved BLIS routing policy scored instances",
    PolicyKind.ADMISSION: "admits or rejects each request the way the evolved BLIS admission policy did",
    # An OrderQueue becomes a placement scorer (bot/golang/plugin_docs.py): vLLM still serves in its own order.
    PolicyKind.SCHEDULING: (
        "prefers endpoints where the evolved BLIS scheduling policy's queue order would serve the request earlier "
        "(it does not reorder vLLM's queue)"
    ),
}


def what_it_does(
    kind: PolicyKind,
    plugin_type: str,
    request_title: str,
    signals: Sequence[str],
    thresholds: Mapping[str, float] | None = None,
    unreadable: Sequence[str] = (),
) -> str:
    """One sentence for the top of the PR: what the plugin does, in llm-d terms (plain text, not escaped), from
    the signals it reads; the ones the evolved logic reads but llm-d has no source for (``unreadable``: the
    summary's ``untranslatable``) are named apart, since the plugin holds them at zero. An admitter's adds what
    a maintainer asks first: how its rejection reaches clients on v0.10.0 (a 500), the in-tree admitter that
    computes the same saturation, when it reads the same gauges, and how it treats an endpoint not scraped yet
    (fail open) beside upstream's fail-closed."""
    read = [s for s in signals if s not in unreadable]
    reads = ""
    if read:
        shown = ", ".join(read[:6]) + (f" and {len(read) - 6} more" if len(read) > 6 else "")
        reads = f", from {len(read)} signal{'' if len(read) == 1 else 's'} ({shown})"
    missing = [s for s in signals if s in unreadable]
    if missing:
        one = len(missing) == 1
        reads += (
            f"; the evolved logic also reads {', '.join(missing)}, which {'has' if one else 'have'} no llm-d "
            f"source, so the plugin holds {'it' if one else 'them'} at zero"
        )
    title = f": {request_title}" if request_title else ""
    out = f"`{plugin_type}` {_DOES[kind]}{title}{reads}."
    if kind is PolicyKind.ADMISSION:
        out = " ".join(filter(None, [out, REJECTION, upstream_alternative(signals, thresholds), FAIL_OPEN]))
    return out


def fidelity_line(f: Fidelity | None) -> str:
    """The differential check in one sentence (the translation report has the details)."""
    if f is None:
        return "Not measured."
    if not f.measured:
        return f"Not measured: {f.reason}"
    causes = ", ".join(f"{c.mapping} ({c.states})" for c in f.causes[:3])
    return (
        f"On {f.states} sampled states the plugin, as llm-d runs it, decides like the BLIS original ({f.decision}) "
        f"in {f.agreement:.1%} of them (floor {f.floor_pct})"
        + (f"; the differences come from {causes}" if causes else "")
        + ". Details and example states: the translation report's Fidelity section."
    )


def below_reference(f: Fidelity | None) -> bool:
    """Whether a plain in-tree scorer (queue-scorer, for a scheduling plugin) decides like the BLIS original more
    often than the plugin: the translator's ``translate.fidelity-below-reference`` finding."""
    return (
        f is not None
        and f.measured
        and not fidelity_admit.is_admitters(f)  # an admitter's always-admit: ``fidelity_admit`` words it
        and f.reference_agreement is not None
        and f.agreement + 0.005 < f.reference_agreement
    )


def reference_sentence(f: Fidelity) -> str:
    """The figure the plugin's must beat (a scheduling plugin's: queue-scorer alone; an admitter's: always-admit,
    with how often the original rejects), and whether it does."""
    if f.reference_agreement is None:
        return ""
    if fidelity_admit.is_admitters(f):
        return fidelity_admit.sentence(f)
    out = f" For comparison, {f.reference} decides like the BLIS original in {f.reference_agreement:.1%} of the same states"
    if below_reference(f):
        return out + (
            ": the plugin does worse, so the ordering it carries does not reach placement (its pseudo-queue of "
            "identical incumbents hides what the queue lengths alone tell)."
        )
    return out + "."


#: What a below-reference scheduling plugin computes on llm-d's default traffic, said where its weight is decided.
DEFAULT_TRAFFIC = (
    "With traffic at one priority (llm-d's default: priority 0, no InferenceObjective) it scores like queue-scorer, "
    "so its weight adds weight to queue length"
)


def scores_like_reference(f: Fidelity, plugin_type: str) -> str:
    """What a maintainer weighing the plugin in a profile must know when it is below its reference: on traffic
    where a request differs from the modelled waiting ones only by arriving last (llm-d's default, priority 0
    with no InferenceObjective), it computes the reference's score, so its weight re-weights queue length."""
    return (
        f"{plugin_type} decides like the BLIS original in {f.agreement:.1%} of the translation's {f.states} sampled "
        f"states, {f.reference} in {f.reference_agreement:.1%}. {DEFAULT_TRAFFIC}; compare against queue-scorer at "
        "the summed weight before keeping it."
    )


#: The severities a shipped README must carry when the translator left them open: they change what the code does.
SHIPPED_SEVERITIES = (Severity.CRITICAL, Severity.IMPORTANT)


def shipped_findings(findings: Sequence[Finding], shipped: Sequence[str]) -> list[Finding]:
    """The CRITICAL and IMPORTANT findings anchored in a file that ships (``shipped``: the package directory and
    the sample config), one per check and message: the ones an upstream reviewer must read beside the code."""
    seen, out = set(), []
    for f in findings:
        key = (f.check, f.message)
        if f.severity in SHIPPED_SEVERITIES and f.file and f.file.startswith(tuple(shipped)) and key not in seen:
            seen.add(key)
            out.append(f)
    return out


#: A finding's other lines of the evolved program, as its message names them (``bot.golang.hazards``).
_ALSO = re.compile(r" \(also (written on )?lines? (\d+(?:, \d+)*)\)")


def caveat_of(f: Finding, carried: Mapping[int, tuple[str, int]] | None = None) -> str:
    """A finding as one README caveat in words, for a reader with only the llm-d-router repository: the shipped
    file and line, then what it says; no check id or severity (they name the translator's checklist). The
    evolved program's lines a message names besides its own ("also line 195") are said as the shipped lines that
    carry them (``carried``: evolved line -> (path, line)), or left out when one has none."""
    where = f" ({f.file.rsplit('/', 1)[-1]} line {f.line})" if f.file and f.line else ""
    message = _ALSO.sub(lambda m: _also_shipped(m, carried or {}), " ".join(f.message.split()))
    return f"Known limitation{where}: {message.rstrip('.')}."


def _also_shipped(m: re.Match, carried: Mapping[int, tuple[str, int]]) -> str:
    """ "(also line 195)" of the evolved program as "(also evolved.go line 140)"; "" when a line is not carried."""
    lines = [int(n) for n in m.group(2).split(", ")]
    if not all(n in carried for n in lines):
        return ""
    said = ", ".join(f"{carried[n][0].rsplit('/', 1)[-1]} line {carried[n][1]}" for n in lines)
    return f" (also {m.group(1) or ''}{said})"


def carried_lines(line_map: Mapping[str, Mapping[int, int]]) -> dict[int, tuple[str, int]]:
    """Each evolved line's first shipped line (evolved.go's before any other file's): where a reader finds it."""
    out: dict[int, tuple[str, int]] = {}
    for path in sorted(line_map, key=lambda p: (not p.endswith("evolved.go"), p)):
        for shipped_line, evolved_line in sorted(line_map[path].items()):
            out.setdefault(evolved_line, (path, shipped_line))
    return out


def with_caveats(readme: str, caveats: Sequence[str]) -> str:
    """The README with ``caveats`` (plain text, escaped here) appended to its Caveats section; unchanged when it
    has none, or when a caveat is already there word for word (the section says nothing twice)."""
    head, sep, rest = readme.partition("\n## Caveats\n")
    if not sep:
        return readme
    section, nxt, tail = rest.partition("\n## ")
    flat = " ".join(section.split())
    new = [f"- {md(c)}" for c in caveats if md(c) not in flat]
    if not new:
        return readme
    body = section.rstrip("\n") + "\n" + "\n".join(new) + "\n"
    return head + sep + body + (("\n" + nxt + tail) if nxt else "")


def with_profile_note(epp_config: str, plugin_type: str, note: str) -> tuple[str, int, int]:
    """The config with ``note`` as a YAML comment above the plugin's line in the scheduling profile (where its
    weight is decided), the 1-based line it went in at and how many lines it took; unchanged (0 lines) when the
    profile does not name the plugin (an admitter)."""
    lines = epp_config.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if ln.rstrip() == f"  - pluginRef: {plugin_type}"), None)
    if at is None:
        return epp_config, 0, 0
    comment = [f"  # {c}\n" for c in comment_lines(note, indent=0)]
    return "".join([*lines[:at], *comment, *lines[at:]]), at + 1, len(comment)


def ship(
    files: dict[str, str],
    findings: list[Finding],
    fidelity: Fidelity | None,
    plugin_type: str,
    gen,
) -> tuple[dict[str, str], list[Finding]]:
    """The shipped files once the translation is measured: the sample config says at the plugin's weight when
    the plugin is below its reference, and the README's Caveats (which embed that config) name every CRITICAL or
    IMPORTANT finding on shipped code, and in one line the dead code evolved.go carries (``gen``: the Generated
    plugin). Findings anchored in the config below the note move down with their lines.
    An upstream maintainer sees only these files: the translation report stays on the fork."""
    out, package_dir, config_path = dict(files), gen.package_dir, gen.config_path
    readme_path = f"{package_dir}/README.md"
    config = out.get(config_path, "")
    moved = list(findings)
    if config and below_reference(fidelity):
        new, at, n = with_profile_note(config, plugin_type, scores_like_reference(fidelity, plugin_type))
        out[config_path] = new
        if readme_path in out:
            out[readme_path] = out[readme_path].replace(config, new, 1)
        moved = [
            f.model_copy(update={"line": f.line + n}) if f.file == config_path and f.line and f.line >= at else f
            for f in findings
        ]
    if readme_path in out:
        carried = carried_lines(getattr(gen, "line_map", {}))
        caveats = [caveat_of(f, carried) for f in shipped_findings(moved, [package_dir + "/", config_path])]
        dead = dead_code.caveat([f for f in moved if (f.file or "").startswith(package_dir + "/")])
        caveats += [dead] if dead else []  # a SUGGESTION, but code that looks live must not surprise a maintainer
        out[readme_path] = with_caveats(out[readme_path], caveats)
    return out, moved
