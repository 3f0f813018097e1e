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
    this stage, with the message as the reason and ``fix`` as what to change before retrying."""

    def __init__(self, reason: str, *, fix: str = ""):
        super().__init__(reason)
        self.fix = fix


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

    def list(self, prefix: str) -> list[str]:
        return self.forge.list_files(self.branch, prefix)

    def stage_feedback(self, stage: Stage) -> str | None:
        """The feedback a finished stage ran with (stage 4 regenerates tests from stage 2's exact inputs)."""
        record = self.state.stages.get(int(stage))
        return record.feedback if record else None
