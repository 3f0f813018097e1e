"""The local rehearsal's state store: ``<work>/state.json``, and the status comment in the issue thread file."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from bot.forge import markers
from bot.forge.base import Forge
from bot.model import PipelineState, RequestError
from bot.model.state import SCHEMA_VERSION

STATE_FILE = "state.json"


class StateError(RequestError):
    """The saved state cannot be used as asked."""


class NewerState(StateError):
    """The state was saved by a newer promotion bot (a higher ``schema_version``, or fields this one does not
    know): not damaged, so nothing is deleted; only that version or a newer one may continue it. ``issue`` is
    set by the GitHub store, whose event handler says so on the issue once."""

    def __init__(self, where: str, fields: list[str]):
        super().__init__(
            f"{where} was saved by a newer promotion bot (fields: {', '.join(fields)}); run that version or newer "
            "to continue this promotion (this one changed nothing)"
        )
        self.fields = fields
        self.issue: int | None = None


def newer_fields(exc: ValidationError) -> list[str] | None:
    """The fields that show a newer bot saved the state, when every error is one (an unknown field, or a
    ``schema_version`` above this bot's); None when anything else is wrong (damaged)."""
    fields = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e["loc"])
        if e["type"] == "extra_forbidden":
            fields.append(where)
        elif e["loc"] == ("schema_version",) and isinstance(e.get("input"), int) and e["input"] > SCHEMA_VERSION:
            fields.append(f"schema_version {e['input']}")
        else:
            return None
    return fields or None


def parse_state(data: bytes | str, where: str, damaged: str) -> PipelineState:
    """``data`` as a state; NewerState when a newer bot saved it, else StateError(``damaged``) if unreadable."""
    try:
        return PipelineState.model_validate_json(data)
    except ValidationError as exc:
        fields = newer_fields(exc)
        if fields is not None:
            raise NewerState(where, fields) from None
        raise StateError(damaged) from None
    except (ValueError, UnicodeDecodeError):
        raise StateError(damaged) from None


def read_state(path: Path) -> PipelineState | None:
    """The state saved at ``path``; None if there is none; StateError (one line) if it is unreadable."""
    if not path.exists():
        return None
    return parse_state(path.read_bytes(), str(path), f"{path}: saved state is unreadable; move it away and start again")


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
