"""The local rehearsal's state store: ``<work>/state.json``, and the status comment in the issue thread file."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from bot.forge import markers
from bot.forge.base import Forge
from bot.model import PipelineState, RequestError

STATE_FILE = "state.json"


class StateError(RequestError):
    """The saved state cannot be used as asked."""


def read_state(path: Path) -> PipelineState | None:
    """The state saved at ``path``; None if there is none; StateError (one line) if it is unreadable."""
    if not path.exists():
        return None
    try:
        return PipelineState.model_validate_json(path.read_bytes())
    except (ValueError, ValidationError, UnicodeDecodeError):
        raise StateError(f"{path}: saved state is unreadable; move it away and start again") from None


class FileStateStore:
    def __init__(self, work_dir: Path, forge: Forge):
        self.work = Path(work_dir)
        self.forge = forge

    @property
    def path(self) -> Path:
        return self.work / STATE_FILE

    def load(self) -> PipelineState | None:
        return read_state(self.path)

    def save(self, state: PipelineState, status: str) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(state.model_dump_json(indent=2))
        tmp.replace(self.path)  # atomic: a killed run leaves the last complete state
        self.forge.upsert_comment(markers.STATUS, status)
