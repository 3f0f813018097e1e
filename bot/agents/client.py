"""One structured call to Claude: cache breakpoints, validation, one re-ask, budget, usage, clear failures.

The ``anthropic`` SDK does the transport: ``base_url`` (``ANTHROPIC_BASE_URL``),
retries with exponential backoff and jitter on 408/409/429/5xx (529
overloaded included), connection errors and timeouts, honouring
``retry-after``. Its policy is right, so it is used as is, with
``max_retries`` from the settings. What it cannot know is ours:

- the reply must validate against the output model and the caller's own
  checks; a reply that does not is asked for again once, with the errors, on
  the same cached prefix; a second failure ends the step with a message that
  names the schema error;
- every response's usage (input, output, cache writes, cache reads) is
  recorded with its dollar estimate, including replies that did not validate;
- a call that could push the promotion past its token budget is not made;
- SDK errors become one-line ``LLMError``s that say what happened and how to
  retry, raised before anything is committed; the runner then saves the calls
  the step already paid for (``Runner._keep_paid_calls``), nothing else.

``messages.parse`` is not used on purpose: it raises on an invalid reply and
the usage of that reply would be lost; the same JSON schema is sent through
``output_config`` instead and the reply validated here.

A ``replies`` store (any mutable mapping; ``FileReplies`` keeps one in a JSON
file) makes a step replayable: a reply is kept under the hash of its exact
request and served again for the same request. The GitHub home needs this
when a step stops for a sandboxed execution (``ExecutionNeeded``) and runs
again: the author's patch must be the same patch the sandbox checked. A
replayed reply records its original usage, because the step that first paid
for it was never saved; clear the store once the step's state is saved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, MutableMapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bot.agents.prompts import PromptRequest
from bot.model import LLMCall, RequestError
from bot.model.llm import LLMConfigError, LLMSettings

T = TypeVar("T", bound=BaseModel)

RETRY_HINT = (
    "nothing was committed, and the saved state changed only by the calls already paid for (they count against "
    "the token budget); run the same command again later, or `promote resume`"
)


class LLMError(RequestError):
    """A Claude call could not produce a usable answer; the step did not happen."""


class LLMSchemaError(LLMError):
    pass


class LLMOverloaded(LLMError):
    pass


class LLMUnavailable(LLMError):
    pass


class LLMBudgetExceeded(LLMError):
    pass


class LLMRefused(LLMError):
    pass


def describe(exc: ValidationError, limit: int = 6) -> str:
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    more = f" (and {len(exc.errors()) - limit} more)" if len(exc.errors()) > limit else ""
    return "; ".join(parts) + more


def estimate_tokens(text: str) -> int:
    """A deliberately generous estimate (3 characters per token) for the budget check before a call."""
    return len(text) // 3 + 1


class LLMClient:
    """Structured calls for one promotion step; ``take_calls`` hands their usage to the state."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        client: Any = None,
        log: Callable[[str], None] = lambda s: None,
        replies: MutableMapping[str, dict] | None = None,
    ):
        self.settings = settings
        self._client = client
        self.log = log
        self.replies = replies
        self.spent_before = 0
        self._calls: list[LLMCall] = []

    # ------------------------------------------------------------ lifecycle
    def begin_step(self, spent_before: int) -> None:
        """Start a step: tokens the promotion has used so far (for the budget), no calls yet."""
        self.spent_before = spent_before
        self._calls = []

    def take_calls(self) -> list[LLMCall]:
        calls, self._calls = self._calls, []
        return calls

    @property
    def step_tokens(self) -> int:
        return sum(c.total_input + c.output_tokens for c in self._calls)

    @property
    def client(self) -> Any:
        if self._client is None:
            import os

            import anthropic

            if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
                raise LLMConfigError(
                    "--llm anthropic needs ANTHROPIC_API_KEY in the environment; set it, or run with --llm offline"
                )
            self._client = anthropic.Anthropic(max_retries=self.settings.max_retries, timeout=self.settings.timeout_s)
        return self._client

    # ----------------------------------------------------------------- call
    def ask(self, req: PromptRequest, validate: Callable[[T], list[str]] | None = None) -> T:
        """The validated answer to ``req``; one re-ask on an invalid reply, then LLMSchemaError."""
        cc = {"type": "ephemeral", "ttl": self.settings.cache_ttl}
        system = [{"type": "text", "text": text, "cache_control": cc} for text in req.system_blocks()]
        messages: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": req.context, "cache_control": cc},
                    {"type": "text", "text": req.task},
                ],
            }
        ]
        from anthropic.lib._parse._transform import to_json_output_format

        output_config = {"format": to_json_output_format(req.output)}
        first_error = ""
        for attempt in (1, 2):
            self._check_budget(system, messages)
            response = self._create(req, system, messages, output_config)
            text = "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text")
            parsed, errors = self._check(req, response, text, validate)
            self._record(req, response, attempt, valid=not errors)
            if parsed is not None and not errors:
                return parsed
            first_error = first_error or errors[0]
            self.log(f"{req.label or req.prompt}: reply {attempt} did not validate: {errors[0]}")
            if attempt == 2:
                raise LLMSchemaError(
                    f"{req.label or req.prompt}: Claude's reply did not match the {req.output.__name__} schema twice "
                    f"({self.settings.model}, prompt {req.prompt}): {errors[0]}"
                    + (f" (first reply: {first_error})" if first_error != errors[0] else "")
                    + f"; {RETRY_HINT}, or use --llm offline"
                )
            messages = [
                *messages,
                {"role": "assistant", "content": [{"type": "text", "text": text or "(empty reply)"}]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "Your reply could not be used:\n- "
                            + "\n- ".join(errors)
                            + "\nAnswer again with one complete JSON object that fixes these errors.",
                        }
                    ],
                },
            ]
        raise AssertionError("unreachable")  # pragma: no cover

    def _check(self, req: PromptRequest, response: Any, text: str, validate) -> tuple[Any, list[str]]:
        """(the parsed reply, why it cannot be used); refusals end the step at once."""
        stop = getattr(response, "stop_reason", None)
        if stop == "refusal":
            raise LLMRefused(
                f"{req.label or req.prompt}: Claude declined to answer (stop_reason refusal); {RETRY_HINT}, "
                "or use --llm offline"
            )
        if not text.strip():
            return None, [f"the reply had no text (stop_reason {stop})"]
        try:
            parsed = req.output.model_validate_json(text)
        except ValidationError as exc:
            if stop == "max_tokens":
                return None, [f"the reply was cut off at max_tokens ({self.settings.max_tokens}); answer more briefly"]
            if any(e["type"] == "json_invalid" for e in exc.errors()):
                return None, [f"not valid JSON: {exc.errors()[0]['msg']}"]
            return None, [f"schema: {describe(exc)}"]
        return parsed, (list(validate(parsed)) if validate else [])

    def _create(self, req: PromptRequest, system, messages, output_config) -> Any:
        params = {
            "model": self.settings.model,
            "max_tokens": self.settings.max_tokens,
            "system": system,
            "messages": messages,
            "output_config": output_config,
        }
        key = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()
        if self.replies is not None and key in self.replies:
            return _replayed(self.replies[key])
        response = self._send(req, params)
        if self.replies is not None:
            usage = getattr(response, "usage", None)
            self.replies[key] = {
                "text": "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text"),
                "stop_reason": getattr(response, "stop_reason", None),
                "usage": {
                    k: int(getattr(usage, k, 0) or 0)
                    for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                },
            }
        return response

    def _send(self, req: PromptRequest, params: dict[str, Any]) -> Any:
        import anthropic

        try:
            return self.client.messages.create(**params)
        except anthropic.OverloadedError:
            raise LLMOverloaded(
                f"{req.label or req.prompt}: the Anthropic API is overloaded (HTTP 529) and stayed overloaded "
                f"through {self.settings.max_retries} retries with backoff; {RETRY_HINT}"
            ) from None
        except anthropic.RateLimitError as exc:
            raise LLMUnavailable(
                f"{req.label or req.prompt}: rate-limited by the Anthropic API (HTTP 429) through "
                f"{self.settings.max_retries} retries: {_api_message(exc)}; {RETRY_HINT}"
            ) from None
        except anthropic.APITimeoutError:
            raise LLMUnavailable(
                f"{req.label or req.prompt}: the Anthropic API did not answer within {self.settings.timeout_s:g} s "
                f"({self.settings.max_retries} retries); {RETRY_HINT}"
            ) from None
        except anthropic.APIConnectionError:
            raise LLMUnavailable(
                f"{req.label or req.prompt}: cannot reach the Anthropic API at {self.client.base_url}; check the "
                f"network or ANTHROPIC_BASE_URL; {RETRY_HINT}"
            ) from None
        except anthropic.InternalServerError as exc:
            raise LLMUnavailable(
                f"{req.label or req.prompt}: the Anthropic API failed (HTTP {exc.status_code}) through "
                f"{self.settings.max_retries} retries; {RETRY_HINT}"
            ) from None
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise LLMConfigError(
                f"the Anthropic API refused the credentials (HTTP {exc.status_code}): {_api_message(exc)}; "
                "check ANTHROPIC_API_KEY"
            ) from None
        except anthropic.NotFoundError as exc:
            raise LLMConfigError(
                f"the Anthropic API does not know model {self.settings.model!r}: {_api_message(exc)}; pass --model"
            ) from None
        except anthropic.APIStatusError as exc:
            raise LLMError(
                f"{req.label or req.prompt}: the Anthropic API rejected the request (HTTP {exc.status_code}): "
                f"{_api_message(exc)}; {RETRY_HINT}"
            ) from None

    def _record(self, req: PromptRequest, response: Any, attempt: int, *, valid: bool) -> None:
        usage = getattr(response, "usage", None)
        inp = int(getattr(usage, "input_tokens", 0) or 0)
        out = int(getattr(usage, "output_tokens", 0) or 0)
        write = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        read = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        self._calls.append(
            LLMCall(
                role=req.role,
                prompt=req.prompt,
                model=self.settings.model,
                stage=req.stage,
                gate=req.gate,
                round=req.round,
                attempt=attempt,
                input_tokens=inp,
                output_tokens=out,
                cache_write_tokens=write,
                cache_read_tokens=read,
                usd=self.settings.dollars(input_tokens=inp, output_tokens=out, cache_write=write, cache_read=read),
                valid=valid,
            )
        )

    def _check_budget(self, system, messages) -> None:
        text = json.dumps(system) + json.dumps(messages)
        need = estimate_tokens(text) + self.settings.max_tokens
        used = self.spent_before + self.step_tokens
        if used + need > self.settings.token_budget:
            raise LLMBudgetExceeded(
                f"the promotion's token budget ({self.settings.token_budget:,}) would be exceeded: {used:,} used, the "
                f"next call may take up to {need:,}; raise it with --token-budget N, or continue with --llm offline "
                "(either is saved with the promotion for its later commands; on GitHub set `llm.token_budget` or "
                "`llm.engine` in the config); nothing was committed, and the saved state changed only by the calls "
                "already paid for"
            )


def _replayed(entry: dict) -> Any:
    """A stored reply in the shape of the SDK's Message (content, stop_reason, usage)."""
    from types import SimpleNamespace

    content = [SimpleNamespace(type="text", text=entry["text"])] if entry.get("text") else []
    return SimpleNamespace(
        content=content, stop_reason=entry.get("stop_reason"), usage=SimpleNamespace(**entry["usage"])
    )


class FileReplies(MutableMapping):
    """A replies store in one JSON file, written through on every change."""

    def __init__(self, path):
        from pathlib import Path

        self.path = Path(path)
        self._data: dict[str, dict] = json.loads(self.path.read_text()) if self.path.is_file() else {}

    def __getitem__(self, key: str) -> dict:
        return self._data[key]

    def __setitem__(self, key: str, value: dict) -> None:
        self._data[key] = value
        self._save()

    def __delitem__(self, key: str) -> None:
        del self._data[key]
        self._save()

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def _save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._data, sort_keys=True))
        tmp.replace(self.path)


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:200]
    return str(getattr(exc, "message", exc))[:200]
