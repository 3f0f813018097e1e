"""The files the write job and the sandboxed job hand each other: requests out, results back.

Both are untrusted data on the way in (the sandboxed job ran evolved code): each request is checked as it is
read, and the results are data only, keyed by the request they answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.execution import ExecRequest
from bot.model import RequestError


def load_results(path: Path | None) -> dict:
    """Results the sandboxed job handed back: data only, each keyed by the request it answers."""
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise RequestError(f"{path}: the sandboxed job's results are unreadable; comment /retry") from None
    results = data.get("results", {}) if isinstance(data, dict) else {}
    return {str(k): v for k, v in results.items() if isinstance(v, dict)}


def requests_from_file(path: Path) -> list[ExecRequest]:
    """Execution requests handed over by the write job (untrusted data: every one is checked on the way in)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    raw = data.get("requests", []) if isinstance(data, dict) else []
    return [ExecRequest.from_json(r) for r in raw if isinstance(r, dict)]
