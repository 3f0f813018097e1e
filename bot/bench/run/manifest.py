"""The results directory's manifest: what finished, with what, and what was set aside.

A cell counts as finished only when its report file is in place *and* the manifest
lists it with the report's sha256; both are written atomically (temporary file, then
``os.replace``), the report first. So a job killed at any moment leaves either a
finished cell or a directory the next ``--resume`` discards, never a half-read one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MANIFEST = "manifest.json"
REJECTED_DIR = "rejected"
MANIFEST_VERSION = 1


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageRecord(_M):
    ref: str = Field(description="registry/repository:tag the EPP was deployed from")
    digest: str | None = Field(default=None, description="sha256:... of the pushed image")
    commit: str | None = Field(
        default=None,
        description="fork commit the runner built the image from; None for an image given with --image, which "
        "the runner did not build, so nothing here shows what it holds",
    )
    built: bool = Field(
        default=True,
        description="False: given with --image, not built from the approved commit; stage 5 then binds the "
        "evolved reports to the image the plan pins (experiment.yaml), never to this record",
    )


class FaultRecord(_M):
    kind: str
    planned_at_s: float
    issued_at_s: float | None = None
    target: str | None = None
    ok: bool = False
    detail: str = ""


class CellRecord(_M):
    treatment: str
    workload: str
    rate: float
    repetition: int
    run_treatment: str
    setup_treatment: str
    commit: str
    image_digest: str | None = None
    start: str
    end: str
    gpu_minutes: float
    exit_status: int
    report: str = Field(description="results-relative path of the v0.2 report")
    sha256: str
    fault: FaultRecord | None = None


class RejectedRecord(_M):
    cell: str
    path: str = Field(description="results-relative path where the report was set aside")
    reason: str


class EventRecord(_M):
    kind: Literal["image", "standup", "swap", "warmup", "teardown", "stop"]
    what: str
    start: str
    end: str
    gpu_minutes: float = 0.0
    ok: bool = True
    detail: str = ""


class MixRunRecord(_M):
    """One run of the plan's priority mix (``bot.bench.run.mix``): what ran, when, what it cost, and where its
    results.json + run_metadata.yaml went (None when it was set aside, with the bot's reason; never the tool's
    output)."""

    kind: Literal["priority-mix"] = "priority-mix"
    arm: str
    run_treatment: str
    repetition: int
    setup_treatment: str
    start: str
    end: str
    gpu_minutes: float
    ok: bool
    results: str | None = Field(default=None, description="results-relative path of its results.json")
    metadata: str | None = Field(default=None, description="results-relative path of its run_metadata.yaml")
    sha256: str | None = None
    reason: str = ""


class RoundRun(_M):
    arm: str
    workload: str
    rate: float
    repetition: int


class RoundRecord(_M):
    """One round of a sequential run, written before its first run: ``--resume`` finishes this round as planned
    instead of judging a look the design never scheduled."""

    number: int
    targets: dict[str, int] = Field(description="cell label -> runs per arm this round brings it to")
    runs: list[RoundRun]
    deferred: list[str] = Field(default_factory=list, description="cells the budget left out of this round")
    budget_left: float | None = Field(default=None, description="GPU-minutes the round was planned against")
    complete: bool = False


class CellStopRecord(_M):
    """Where a cell ended in a sequential run, and why it was not run to its horizon (or the fixed plan's count)."""

    cell: str
    runs: dict[str, int] = Field(description="arm -> usable runs")
    looks: list[int]
    horizon: int
    fixed_plan: int = Field(description="runs per arm the fixed plan would have made")
    reason: str
    pending: list[str] = Field(default_factory=list, description="hypotheses on it still undecided")


class SequentialRecord(_M):
    spending: str
    expected_gpu_minutes: float | None = None
    max_gpu_minutes: float | None = None
    rounds: list[RoundRecord] = Field(default_factory=list)
    hypotheses: dict[str, str] = Field(default_factory=dict, description="id -> confirmed / refuted / undecided")
    cells: list[CellStopRecord] = Field(default_factory=list, description="filled when the run ends")
    dropped: dict[str, str] = Field(
        default_factory=dict,
        description="cell label -> why the rounds stopped running it (its runs added no usable report, or its "
        "horizon left no run for its next look); the other cells went on",
    )


class Manifest(_M):
    version: Literal[1] = MANIFEST_VERSION
    promotion: str
    slug: str
    commit: str
    image: ImageRecord | None = None
    budget_gpu_minutes: float | None = None
    planned_gpu_minutes: float
    cells: list[CellRecord] = Field(default_factory=list)
    rejected: list[RejectedRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)
    sequential: SequentialRecord | None = Field(default=None, description="rounds of a sequential run")
    priority_mix: list[MixRunRecord] = Field(
        default_factory=list, description="runs of the plan's priority mix, kept or set aside"
    )
    runs: list[int] = Field(
        default_factory=list,
        description="the GitHub Actions runs that made these results, oldest first: the one that started them and "
        "each that resumed them (benchmark.yml passes its run id); stage 5 on GitHub judges them only as the answer "
        "of a run named here, so an old run that could not be cancelled is never taken for the one `/retry 5` "
        "dispatched; empty outside Actions",
    )
    plugin_files: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of the plugin's Go files (tests excluded) at the benchmarked commit: stage 5 counts "
        "the reports only for a branch whose plugin code is the same",
    )

    @property
    def spent_gpu_minutes(self) -> float:
        runs = sum(c.gpu_minutes for c in self.cells) + sum(r.gpu_minutes for r in self.priority_mix)
        return round(runs + sum(e.gpu_minutes for e in self.events), 3)

    def recorded_files(self) -> set[str]:
        """Results-relative files a finished run put in the layout (reports, priority-mix results and metadata)."""
        mix = {p for r in self.priority_mix for p in (r.results, r.metadata) if p}
        return {c.report for c in self.cells} | mix

    def published_files(self) -> list[str]:
        """Every results-relative file the run recorded, the manifest first: what benchmark.yml's publish job
        commits to the branch (``promote bench files``), so stage 5 there reads what the run wrote, and a file a
        new run writes reaches the branch without a hand-kept pattern in the workflow."""
        aside = [r.path for r in self.rejected]
        return [MANIFEST, *sorted(self.recorded_files() | set(aside))]

    def finished(self, run_treatment: str, treatment: str) -> CellRecord | None:
        return next((c for c in self.cells if c.run_treatment == run_treatment and c.treatment == treatment), None)


def without_local_paths(text: str, paths: dict[str, Path]) -> str:
    """``text`` with each local directory in ``paths`` (option name -> path) replaced by the option's name.

    The manifest is committed to a branch that may be public: a message that names the runner's results
    directory or workspace (an error from a loader, a tool's complaint) must not carry the machine's paths.
    Longer paths first, so a workspace inside the results directory is named as the workspace; only absolute
    forms are replaced (a relative ``results`` would match words of the message).
    """
    for name, path in sorted(paths.items(), key=lambda kv: -len(str(kv[1]))):
        for form in sorted({str(p) for p in (path, path.resolve()) if p.is_absolute()} - {"/"}, key=len, reverse=True):
            text = text.replace(form, name)
    return text


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never part of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(results: Path, manifest: Manifest) -> None:
    atomic_write(results / MANIFEST, (manifest.model_dump_json(indent=2) + "\n").encode("utf-8"))


def load(results: Path) -> Manifest | None:
    path = results / MANIFEST
    if path.is_symlink():  # nothing under --results is read through a link (bot.bench.layout.results_files)
        raise ValueError(f"{MANIFEST} is a symbolic link: copy the manifest the run wrote in its place")
    if not path.is_file():
        return None
    return Manifest.model_validate_json(path.read_text(encoding="utf-8"))


def results_problem(results: Path, existing: Manifest | None, *, resume: bool, commit: str) -> str | None:
    """Why ``--results`` (holding ``existing``) cannot take this run, or None.

    Checked before the namespace lock is taken (bot.bench.run.lock): a ``--resume`` with nothing to resume takes
    over nobody's lock, so a mistyped ``--results`` cannot remove the lock of a run that is still going."""
    if existing is None and resume:  # starting over would spend the GPU time again, unasked
        return f"nothing to resume in {results} (no {MANIFEST}); run without --resume to start over"
    if existing is not None and not resume:
        return (
            f"{results} already holds a benchmark run ({len(existing.cells)} finished cells); "
            "pass --resume to continue it, or choose another --results"
        )
    if existing is not None and existing.commit != commit:
        return (
            f"{results} holds a run of commit {existing.commit[:12]}, not {commit[:12]}; "
            "results of two commits cannot be mixed: choose another --results"
        )
    return None


def _recorded_image(results: Path) -> ImageRecord | None:
    try:
        manifest = load(Path(results))
    except (OSError, ValueError):
        return None
    return None if manifest is None else manifest.image


def recorded_image_digest(results: Path) -> str | None:
    """The EPP image digest the runner recorded for these results (None without a manifest or a digest)."""
    image = _recorded_image(results)
    return image.digest if image is not None and image.digest else None


def recorded_image_ref(results: Path) -> str | None:
    """The EPP image (registry/repository:tag) the runner ran these results on (None without a manifest)."""
    image = _recorded_image(results)
    return image.ref if image is not None and image.ref else None


def recorded_image_built(results: Path) -> bool:
    """Whether the runner built the EPP image from the approved commit (False for one given with --image)."""
    return image_built(_recorded_image(results))


def image_built(image: ImageRecord | None) -> bool:
    """Whether ``image`` (a manifest's) was built from the approved commit; True without a record to doubt."""
    return image is None or (image.built and image.commit is not None)


def as_json(manifest: Manifest) -> dict[str, Any]:
    return json.loads(manifest.model_dump_json())


def plugin_code(files: dict[str, str | bytes]) -> dict[str, str]:
    """The fingerprint of plugin code the reports belong to: sha256 of each non-test Go file, by path."""
    return {p: sha256_bytes(t.encode() if isinstance(t, str) else t) for p, t in sorted(files.items()) if _is_code(p)}


def _is_code(path: str) -> bool:
    return path.endswith(".go") and not path.endswith("_test.go")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
