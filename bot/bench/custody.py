"""A run manifest is the reports' chain of custody: a report counts only as the bytes the run recorded.

``promote bench run`` writes each report, then records it in ``manifest.json`` with the SHA-256 of its
bytes (``bot.bench.run.manifest``), and the manifest's ``plugin_files`` vouch that those runs measured this
branch's plugin code. A report whose bytes differ from its record was edited after the run, and one the
manifest does not list was added after it: neither is what was measured, so when a manifest is present
stage 5 leaves them out with the reason (gate 3 raises every report left out), and the GPU time is
credited only to the runs whose report is still the one recorded. A priority-mix run's ``results.json`` is
held to the same record (``MixRunRecord.sha256``): its per-class counts decide the shedding order, as a
report's metrics decide a claim. Without a manifest (hand-run results,
an llm-d-benchmark workspace, the bundled sample data) there is no record to hold a report to.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from bot.bench.run import manifest as mf

NOT_LISTED = (
    f"not listed in the run's {mf.MANIFEST}, which records every report the run wrote: it was added after the "
    "run, so nothing vouches for what it measured; take it out, or benchmark the cell again"
)
EDITED = (
    f"its bytes differ from the SHA-256 the run's {mf.MANIFEST} recorded for it: it was changed after the run, "
    "so it is not what was measured; put back the report the run wrote, or benchmark the cell again"
)


@dataclass(frozen=True)
class Custody:
    """The reports a run manifest recorded (results-relative path -> SHA-256), or why it cannot vouch for any."""

    recorded: dict[str, str] = field(default_factory=dict)
    unreadable: str | None = None

    def problem(self, rel: str, sha256: str) -> str | None:
        """Why the report at ``rel`` with these bytes is not the one the run recorded (None: it is)."""
        if self.unreadable is not None:
            return self.unreadable
        want = self.recorded.get(rel)
        if want is None:
            return NOT_LISTED
        return None if want == sha256 else EDITED


def read(results: Path) -> Custody | None:
    """The custody record of the reports under ``results``; None when there is no manifest to hold them to.

    A manifest that exists but cannot be read vouches for nothing: ignoring it would let an edit pass by
    breaking the file that would have caught it.
    """
    if not (results / mf.MANIFEST).exists() and not (results / mf.MANIFEST).is_symlink():
        return None
    try:
        manifest = mf.load(results)
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return Custody(
            unreadable=f"the run's {mf.MANIFEST} is unreadable ({first}), so no report can be matched to the bytes "
            "the run recorded; restore the manifest the run wrote"
        )
    if manifest is None:
        return None
    return Custody(recorded=recorded(manifest))


def recorded(manifest: mf.Manifest) -> dict[str, str]:
    """Results-relative path -> SHA-256 of every report the run wrote: each cell's v0.2 report and each kept
    priority-mix run's results.json (a set-aside run wrote none into the layout)."""
    out = {c.report: c.sha256 for c in manifest.cells}
    out.update({r.results: r.sha256 for r in kept_mix(manifest) if r.sha256})
    return out


def kept_mix(manifest: mf.Manifest) -> list[mf.MixRunRecord]:
    """The priority-mix runs whose results the run copied into the layout."""
    return [r for r in manifest.priority_mix if r.ok and r.results]


def in_place(results: Path, rel: str, sha256: str | None) -> bool:
    """Whether the report the run recorded at ``rel`` is still there, a regular file inside ``results``, with
    the bytes whose SHA-256 it recorded."""
    path = results / rel
    try:
        root = results.resolve()
        if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(root):
            return False
        return sha256 is not None and hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False
