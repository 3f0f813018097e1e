"""Reading GitHub's error answers (pure): is it a rate limit, how long to wait, what GitHub said."""

from __future__ import annotations

from typing import Any


def is_rate_limit(status: int | None, headers: dict[str, str], data: Any) -> bool:
    if status == 429:
        return True
    if status != 403:
        return False
    return (
        "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message(data).lower()
    )


def rate_limit_wait(headers: dict[str, str], now: float, attempt: int) -> float:
    """GitHub's documented order: retry-after, then x-ratelimit-reset, else at least a minute, growing."""
    if headers.get("retry-after", "").strip().isdigit():
        return float(headers["retry-after"])
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
        return max(1.0, float(headers["x-ratelimit-reset"]) - now + 1)
    return 60.0 * 2**attempt


def message(data: Any) -> str:
    if isinstance(data, dict):
        msg = str(data.get("message", ""))
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            detail = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
            msg = f"{msg} ({detail})" if msg else detail
        return msg or "no message"
    return str(data or "no message")[:300]
