"""What a stage gets (StageContext) and what it gives back (StageOutput)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.model import PipelineState, PromotionRequest, RequestError, Stage
from bot.stages.paths import PromotionPaths

if TYPE_CHECKING:  # imported lazily: the CLI must start fast
    from bot.agents import Agents
    from bot.dictionary import Dictionary
    from bot.execution import Executor
    from bot.forge.base import Forge


class StageFailed(RequestError):
    """The stage cannot finish: its checks cannot run or its input is gone. The promotion halts, failed at
    this stage, with the message as the reason and ``fix`` as what to change before retrying; ``reports``: the
    benchmark reports on the branch were the problem, so a plain retry would judge them again
    (``StageFailure.reports``)."""

    def __init__(self, reason: str, *, fix: str = "", reports: bool = False):
        super().__init__(reason)
        self.fix = fix
        self.reports = reports

    @property
    def details(self) -> dict:
        """What the failure records besides its reason (``pipeline.stage_failed``'s keywords)."""
        return {"fix": self.fix, "reports": self.reports}


@dataclass
class StageOutput:
    files: dict[str, str | bytes]
    summary: str
    #: What the stage's checks found wrong. The artifacts are still committed (the gate's review and the
    #: author loop need them), but the stage is shown as failing its checks, never as passed.
    problems: list[str] = field(default_factory=list)

    def encoded(self) -> dict[str, bytes]:
        return {p: (c.encode("utf-8") if isinstance(c, str) else c) for p, c in self.files.items()}


@dataclass
class StageContext:
    request: PromotionRequest
    forge: Forge
    state: PipelineState
    feedback: str | None = None  # a person's reason (request changes), recorded in the artifacts
    review: str | None = None  # blocking review findings, for an author that can act on them
    results_dir: Path | None = None
    allow_sample_data: bool = False  # sample/synthetic reports count (rehearsal only; every verdict says so)
    executor: Executor | None = None  # runs evolved/generated code; None = here, in the sandbox
    agents: Agents | None = None  # the Claude author and reviewer; None = deterministic only (--llm offline)
    home: str = "local"  # where people act on the findings: "local" (promote commands) or "github" (comments)
    work: str | None = None  # the local run's --work, which the commands a finding offers carry (None: unknown)

    @property
    def branch(self) -> str:
        return self.request.branch

    @cached_property
    def paths(self) -> PromotionPaths:
        return PromotionPaths(self.request.slug)

    @cached_property
    def dictionary(self) -> Dictionary:
        from bot.dictionary import load_dictionary

        return load_dictionary()

    def read(self, path: str) -> str | None:
        data = self.forge.read_file(self.branch, path)
        return data.decode("utf-8") if data is not None else None

    def read_json(self, path: str) -> Any:
        text = self.read(path)
        if text is None:
            raise FileNotFoundError(f"{path} is missing on {self.branch}; the stage that writes it has not run")
        return json.loads(text)

    def read_model(self, path: str, model: Any, *, written_by: Stage) -> Any:
        """A committed artifact a later stage consumes, read through its model (``model``: a model class or a
        type such as ``list[Verdict]``). Fields added since an older bot wrote it take their defaults; one the
        model cannot read (a newer bot's, or edited) stops the stage with the key named and how to redo
        ``written_by``'s output: a raw dict here used to crash a template on every resume."""
        from pydantic import TypeAdapter, ValidationError

        text = self.read(path)
        if text is None:
            raise FileNotFoundError(f"{path} is missing on {self.branch}; the stage that writes it has not run")
        try:
            return TypeAdapter(model).validate_json(text)
        except ValidationError as exc:
            raise StageFailed(
                f"`{path}` (stage {int(written_by)}'s output on {self.branch}) is not what this bot reads: "
                f"{artifact_problems(exc)}",
                fix=redo_fix(written_by),
            ) from None

    def id_places(self) -> dict[str, str]:
        """What the ids of this promotion's findings call its generated files (``bot.golang.gonames.id_places``),
        so an id is the one `promote translate` showed under another plugin type: the package is where the
        committed translation.json says. Without a readable one (before stage 2, or edited) none: the ids then
        digest the files as they are, and the gate 1 checklist says what is wrong with translation.json."""
        from bot.golang.gonames import id_places

        try:
            summary = json.loads(self.read(self.paths.translation_json) or "{}")
            package_dir, plugin_type = summary["package_dir"], summary["plugin_type"]
        except (ValueError, TypeError, KeyError):
            return {}
        if not (isinstance(package_dir, str) and isinstance(plugin_type, str) and package_dir):
            return {}
        return id_places(package_dir, plugin_type)

    def list(self, prefix: str) -> list[str]:
        return self.forge.list_files(self.branch, prefix)

    def stage_feedback(self, stage: Stage) -> str | None:
        """The feedback a finished stage ran with (stage 4 regenerates tests from stage 2's exact inputs)."""
        record = self.state.stages.get(int(stage))
        return record.feedback if record else None


def artifact_problems(exc) -> str:
    """'it lacks `tests_lost`; it has `speed`, which this bot does not know': a pydantic error in words."""
    missing, unknown, other = [], [], []
    for e in exc.errors():
        where = ".".join(str(x) for x in e["loc"]) or "the file"
        if e["type"] == "json_invalid":
            other.append("it is not valid JSON")
        elif e["type"] == "missing":
            missing.append(f"`{where}`")
        elif e["type"] == "extra_forbidden":
            unknown.append(f"`{where}`")
        else:
            other.append(f"`{where}`: {e['msg']}")
    parts = [f"it lacks {', '.join(missing[:5])}"] if missing else []
    parts += [f"it has {', '.join(unknown[:5])}, which this bot does not know"] if unknown else []
    return "; ".join(parts + other[:3])


#: The gate whose "request changes" reruns each stage (``bot.pipeline.GATE_COVERS``, which sits a layer above;
#: tests/e2e/test_older_artifacts.py checks they agree).
RERUN_AT = {Stage.TRANSLATE: 1, Stage.HYPOTHESIZE: 2, Stage.IMPLEMENT_TESTS: 3, Stage.RUN_VALIDATE: 3}


def redo_fix(stage: Stage) -> str:
    """How a person gets ``stage``'s output written again by this bot."""
    gate = RERUN_AT.get(stage)
    again = f"request changes at gate {gate}, which reruns it" if gate else "start the promotion again"
    return (
        f"the file was written by another version of the promotion bot, or edited: finish this promotion with "
        f"the version that wrote it, or have this one redo stage {int(stage)} ({again})"
    )
