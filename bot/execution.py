"""The port through which the bot runs evolved or generated code: the one dangerous thing it does.

Every such run is an ``ExecRequest``: pure data (a registered kind, the files
it needs, JSON arguments), named by a content hash. Its answer is JSON. That
shape is what lets the GitHub home split trust: the job that holds write
tokens and the Anthropic key uses a ``RecordedExecutor`` that answers only
from results a sandboxed job without secrets computed, and otherwise raises
``ExecutionNeeded`` carrying the requests (data) for that job to run. Locally,
and inside that sandboxed job, the ``DirectExecutor`` calls the kind's
function, which runs the code inside the sandbox.

A kind is registered here by name, as ``module:function`` (imported lazily, so
the CLI and the event handler start fast). The function takes
``(files, args)`` and returns a JSON-serialisable dict.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot import __version__
from bot.model import RequestError, sha256_text

#: kind -> "module:function". Each function: (files: dict[str, str], args: dict) -> dict.
KINDS: dict[str, str] = {
    "go-check": "bot.golang.toolchain:execute_check",
    "epp-image": "bot.bench.run.image:execute_build",
    "go-harness": "bot.golang.harness_run:execute_harness",
}


class UnknownExecutionKind(RequestError):
    """An execution request names a kind this version of the bot does not run."""


@dataclass(frozen=True)
class ExecRequest:
    kind: str
    files: Mapping[str, str] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """Content hash of everything that decides the answer, the bot's version included."""
        return sha256_text(json.dumps(self.to_json() | {"bot": __version__}, sort_keys=True))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "files": dict(sorted(self.files.items())), "args": dict(self.args)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExecRequest:
        """Read a request back; refuses anything but text files and a known kind (it came from outside)."""
        kind = data.get("kind")
        files = data.get("files", {})
        args = data.get("args", {})
        if kind not in KINDS:
            raise UnknownExecutionKind(f"execution request of unknown kind {kind!r}; known: {sorted(KINDS)}")
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise RequestError("execution request: 'files' must map paths to text")
        if not isinstance(args, dict):
            raise RequestError("execution request: 'args' must be a mapping")
        return cls(kind=kind, files=files, args=args)


class ExecutionFailed(RequestError):
    """The sandboxed job ran the request and it raised: the stage that asked fails with the reason, so the
    promotion says what went wrong instead of asking the sandboxed job again and again."""


#: The key of the answer ``run_all`` records for a request that raised (nothing a kind's function returns).
FAILED = "execution_failed"


class ExecutionNeeded(Exception):
    """The recorded executor has no answer for these requests; a sandboxed job must run them first."""

    def __init__(self, requests: list[ExecRequest]):
        self.requests = requests
        super().__init__(f"{len(requests)} execution(s) must run in the sandboxed job first")


class Executor(Protocol):
    def run(self, request: ExecRequest) -> dict[str, Any]: ...


def _function(kind: str) -> Callable[[dict[str, str], dict[str, Any]], dict[str, Any]]:
    if kind not in KINDS:
        raise UnknownExecutionKind(f"execution request of unknown kind {kind!r}; known: {sorted(KINDS)}")
    module, name = KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)


class DirectExecutor:
    """Runs the request here (the kind's function does so inside the sandbox)."""

    def run(self, request: ExecRequest) -> dict[str, Any]:
        return _function(request.kind)(dict(request.files), dict(request.args))


class RecordedExecutor:
    """Answers only from results computed elsewhere; records and refuses everything else."""

    def __init__(self, results: Mapping[str, dict[str, Any]] | None = None):
        self.results = dict(results or {})
        self.needed: dict[str, ExecRequest] = {}

    def run(self, request: ExecRequest) -> dict[str, Any]:
        key = request.key()
        if key in self.results:
            answer = self.results[key]
            if FAILED in answer:
                raise ExecutionFailed(failed_reason(request.kind, answer[FAILED], answer.get(CAUSE)))
            return answer
        self.needed[key] = request
        raise ExecutionNeeded([request])


#: What each kind runs, in the words of the person reading a failure.
KIND_TITLES = {
    "go-check": "the Go checks (gofmt, build, vet, test)",
    "epp-image": "the EPP image build",
    "go-harness": "the differential check against the BLIS original",
}
#: Why a request raised, as ``run_all`` records it under ``CAUSE``, and what the person reading it does.
_CAUSES = {
    "runner": "the runner's machine refused (a disk, a directory or a limit of the runner, not the evolved program): "
    "fix the runner (free space; a writable home and $XDG_CACHE_HOME), then comment `/retry`",
    "setup": "the message says what to fix on the runner; then comment `/retry`",
    "bug": "this is a bug in the bot, not in the evolved program: report it with this message; `/retry` runs it again",
}
CAUSE = "execution_failed_cause"


def failed_reason(kind: str, recorded: str, cause: str | None = None) -> str:
    """The reason a stage fails with when the sandboxed job's request raised: what failed, why, what to do."""
    return f"the sandboxed job could not run {KIND_TITLES.get(kind, kind)} ({kind}): {recorded}. " + _CAUSES.get(
        cause or "bug", _CAUSES["bug"]
    )


def run_all(requests: list[ExecRequest], executor: Executor | None = None) -> dict[str, dict[str, Any]]:
    """key -> result for each request: what the sandboxed job hands back as data.

    A request that raises is answered with the reason (``FAILED``) and the others still run: the job must
    hand back its results, or the write job never runs and the promotion waits with no reply. The write job's
    ``RecordedExecutor`` then fails the stage with that reason."""
    executor = executor or DirectExecutor()
    return {r.key(): _run_one(executor, r) for r in requests}


def _run_one(executor: Executor, request: ExecRequest) -> dict[str, Any]:
    try:
        return executor.run(request)
    except Exception as exc:  # any bug in a kind's function, any refusal of the runner: recorded, never a dead job
        first = (str(exc).splitlines() or [""])[0][:300]
        cause = "runner" if isinstance(exc, OSError) else "setup" if isinstance(exc, RequestError) else "bug"
        return {FAILED: f"{type(exc).__name__}: {first}" if first else type(exc).__name__, CAUSE: cause}
