"""The dictionary says one thing per signal, and its version changes whenever its content does.

The rendered dictionary is the document a fork's reviewers read; its "What changed since the design
doc" notes and Map B sit in one file, so a formula quoted in a note must be the one Map B uses. The
version is the only provenance stamped into generated code and reports, so two different contents
must never share a version number (dictionary/VERSIONS records the content digest of each version).
"""

from __future__ import annotations

import re

import pytest

from bot import PROJECT_ROOT
from bot.dictionary import Dictionary, content_digest, load_dictionary, load_raw
from bot.dictionary_doc import render_markdown

VERSIONS = PROJECT_ROOT / "dictionary" / "VERSIONS"


@pytest.fixture(scope="module")
def d() -> Dictionary:
    return load_dictionary()


def _norm(text: str) -> str:
    """A formula without spacing, Go receivers (`m.`, `Metrics.`, `fwkdl.Metrics.`) or `·`/`×` spelled differently."""
    text = re.sub(r"\b(?:fwkdl\.)?(?:Metrics|m)\.", "", text)
    return re.sub(r"\s+", "", text.replace("·", "*").replace("×", "*"))


def _what_changed(md: str) -> list[str]:
    """The bullets of the rendered "What changed since the design doc" section."""
    section = md.split("## What changed since the design doc", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


def _metric_fields(d: Dictionary) -> set[str]:
    """llm-d endpoint metric fields Map B reads (`m.WaitingQueueSize`, ...): a code span naming one is a formula."""
    return {f for s in d.signals if s.llmd for f in re.findall(r"\bm\.(\w+)", s.llmd.expr)}


def test_formulas_quoted_in_the_notes_are_the_ones_map_b_uses(d):
    fields = _metric_fields(d)
    assert {"WaitingQueueSize", "RunningRequestsSize", "KVCacheUsagePercent"} <= fields
    names = {n: s for s in d.signals for n in (s.name, *s.aliases)}
    wrong = []
    for note in _what_changed(render_markdown(d)):
        spans = re.findall(r"`([^`]+)`", note)
        about = [
            names[m.group(1)] for sp in spans if (m := re.fullmatch(r"(\w+)(?:\(\))?", sp)) and m.group(1) in names
        ]
        for span in spans:
            if not any(re.search(rf"\b{f}\b", span) for f in fields):
                continue  # not a formula over llm-d metrics
            candidates = about or [s for s in d.signals if s.llmd]
            if not any(_norm(span) in _norm(s.llmd.expr) + "\n" + _norm(s.llmd.source) for s in candidates):
                wrong.append(f"`{span}` (about {', '.join(s.name for s in about) or 'any signal'}) in: {note[:90]}…")
    assert wrong == [], (
        "a 'What changed' note in dictionary/dictionary.yaml (seed_corrections) quotes a formula its Map B entry "
        "(dictionary/map-b-signals.yaml) does not use; make the note agree with Map B:\n" + "\n".join(wrong)
    )


def test_effective_load_note_does_not_restate_the_old_mapping(d):
    note = next(n for n in _what_changed(render_markdown(d)) if n.startswith("`EffectiveLoad()`"))
    assert "InFlightLoad.Requests" in note
    assert "2*RunningRequestsSize" not in note.replace(" ", "")
    assert "no router-side in-flight count in Metrics, so" not in note


def _recorded() -> dict[str, str]:
    pairs = [line.split() for line in VERSIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(len(p) == 2 for p in pairs), "dictionary/VERSIONS: each line is `<version> <sha256>`"
    versions = [p[0] for p in pairs]
    assert len(set(versions)) == len(versions), "dictionary/VERSIONS: a version is recorded once; never edit a line"
    return dict(pairs)


def _bumped(version: str) -> str:
    major, minor, patch = version.split(".")
    return f"{major}.{minor}.{int(patch) + 1}"


def test_version_is_bumped_whenever_the_content_changes():
    raw = load_raw()
    version, digest = raw["version"], content_digest(raw)
    recorded = _recorded()
    if version not in recorded:
        pytest.fail(
            f"dictionary version {version} has no recorded digest: add the line `{version} {digest}` "
            "to the end of dictionary/VERSIONS"
        )
    assert recorded[version] == digest, (
        f"the dictionary's content changed but its version is still {version} (recorded digest "
        f"{recorded[version][:12]}…, content now {digest[:12]}…): bump `version` in dictionary/dictionary.yaml "
        f"(e.g. to {_bumped(version)}) and add the line `{_bumped(version)} {digest}` to the end of dictionary/VERSIONS; "
        "leave the existing lines as they are"
    )
    assert list(recorded)[-1] == version, "dictionary/VERSIONS: the current version is the last line"


def test_content_digest_ignores_the_version_and_sees_every_file():
    raw = load_raw()
    same = {**raw, "version": "9.9.9"}
    assert content_digest(same) == content_digest(raw)
    for key in ("pins", "seed_corrections", "interfaces", "signals", "gaps"):
        assert key in raw
        changed = {**raw, key: [*raw[key], "x"] if isinstance(raw[key], list) else {**raw[key], "x": "y"}}
        assert content_digest(changed) != content_digest(raw), key
