"""A fake Anthropic Messages API on 127.0.0.1, for the real ``anthropic`` client (``base_url``).

Stateful where it matters for the bot:

- **Prompt caching.** Usage is computed from the request's ``cache_control``
  breakpoints the way the API documents it: each breakpoint closes a prefix
  (output schema, system blocks, message blocks, in order); the longest prefix
  seen before is a cache read, the rest up to the last breakpoint a cache
  write, everything after it plain input. A prefix shorter than
  ``min_cache_tokens`` is not cached (silently, like the API), entries expire
  after their TTL. A prompt layout that breaks caching therefore shows up as a
  low share of cache reads.
- **Scripting.** Each test gives a responder (``Call -> Reply``) and/or a list
  of replies consumed in order: valid structured output, raw text (invalid JSON,
  schema violations), an HTTP status (429, 529, 500) with the API's error body,
  a delay longer than the client's timeout, a refusal.
- **Recording.** Every answered request is kept (``calls``) so tests can assert
  what reached the model, e.g. that no author reasoning reaches a reviewer.

Error replies carry ``retry-after-ms`` (default 10 ms), which the SDK honours,
so retry tests take milliseconds instead of the SDK's seconds-long backoff.

Run standalone (``python tests/agents/fake_anthropic.py``) to serve the
default responder for a manual ``promote run --llm anthropic`` with
``ANTHROPIC_BASE_URL`` pointing at the printed address.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def count_tokens(text: str) -> int:
    """About four bytes per token, like English text and code in Claude's tokenizer."""
    return (len(text.encode("utf-8")) + 3) // 4


# --------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------


@dataclass
class Reply:
    text: str | None = None
    status: int = 200
    error_type: str = ""
    delay: float = 0.0
    stop_reason: str = "end_turn"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, obj: Any) -> Reply:
        return cls(text=json.dumps(obj))

    @classmethod
    def raw(cls, text: str, stop_reason: str = "end_turn") -> Reply:
        return cls(text=text, stop_reason=stop_reason)

    @classmethod
    def error(cls, status: int, retry_after_ms: int | None = 10) -> Reply:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            404: "not_found_error",
            429: "rate_limit_error",
            500: "api_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
        return cls(status=status, error_type=kind, headers=headers)

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        r = then or cls.json({})
        return cls(text=r.text, status=r.status, error_type=r.error_type, delay=seconds)

    @classmethod
    def refusal(cls) -> Reply:
        return cls(text="", stop_reason="refusal")


@dataclass
class Call:
    """One request as the fake received it, with helpers for responders and assertions."""

    body: dict[str, Any]
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def schema_name(self) -> str:
        fmt = (self.body.get("output_config") or {}).get("format") or {}
        return str((fmt.get("schema") or {}).get("title", ""))

    @property
    def system_texts(self) -> list[str]:
        system = self.body.get("system") or []
        return [system] if isinstance(system, str) else [b.get("text", "") for b in system]

    @property
    def user_texts(self) -> list[str]:
        out = []
        for m in self.body.get("messages", []):
            content = m.get("content")
            if isinstance(content, str):
                out.append(content)
            else:
                out.extend(b.get("text", "") for b in content)
        return out

    @property
    def text(self) -> str:
        """Everything the model would read."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def task(self) -> str:
        """The last text block of the first user message (the uncached task)."""
        first = self.body["messages"][0]["content"]
        return first[-1]["text"] if isinstance(first, list) else first

    @property
    def is_reask(self) -> bool:
        return len(self.body.get("messages", [])) > 1

    @property
    def role(self) -> str:
        return "reviewer" if self.schema_name == "ReviewReport" else "author"

    def json_after(self, heading: str) -> Any:
        """The JSON value printed after ``heading`` in the task."""
        i = self.task.find(heading)
        if i < 0:
            return None
        rest = self.task[i + len(heading) :].lstrip()
        if rest.startswith("<untrusted-"):  # the data delimiter's opening line (bot.agents.untrusted.delimit)
            rest = rest.split("\n", 1)[1]
        return json.JSONDecoder().raw_decode(rest)[0]


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class FakeAnthropic:
    def __init__(
        self,
        responder: Callable[[Call], Reply] | None = None,
        *,
        min_cache_tokens: int = 1024,
    ):
        self.responder = responder or default_responder
        self.script: list[Reply] = []
        self.min_cache_tokens = min_cache_tokens
        self.calls: list[Call] = []
        self.http_requests = 0  # including retried ones
        self._cache: dict[str, float] = {}  # prefix hash -> expiry (monotonic)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -------------------------------------------------------------- control
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def then(self, *replies: Reply) -> FakeAnthropic:
        self.script.extend(replies)
        return self

    def totals(self) -> dict[str, int]:
        t = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        for c in self.calls:
            for k in t:
                t[k] += c.usage.get(k, 0)
        return t

    # ---------------------------------------------------------------- usage
    def _segments(self, body: dict[str, Any]) -> list[tuple[str, bool, str]]:
        """(canonical text, is a breakpoint, ttl) for every cacheable position, in prefix order."""
        segs: list[tuple[str, bool, str]] = []
        head = {
            "model": body.get("model"),
            "tools": body.get("tools"),
            "format": (body.get("output_config") or {}).get("format"),
        }
        segs.append((json.dumps(head, sort_keys=True), False, "5m"))
        system = body.get("system") or []
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        blocks = list(system)
        for m in body.get("messages", []):
            content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            blocks.extend({**b, "_role": m["role"]} for b in content)
        for b in blocks:
            cc = b.get("cache_control")
            segs.append(
                (b.get("_role", "system") + ":" + b.get("text", ""), cc is not None, (cc or {}).get("ttl", "5m"))
            )
        return segs

    def _usage(self, body: dict[str, Any], output_text: str) -> dict[str, int]:
        segs = self._segments(body)
        now = time.monotonic()
        digest = hashlib.sha256()
        cum = 0
        prefixes = []  # (cumulative tokens, hash, is breakpoint, ttl)
        for text, bp, ttl in segs:
            digest.update(text.encode("utf-8") + b"\0")
            cum += count_tokens(text)
            prefixes.append((cum, digest.hexdigest(), bp, ttl))
        total = cum
        read = 0
        with self._lock:
            for tokens, h, bp, _ttl in prefixes:
                if bp and self._cache.get(h, 0) > now:
                    read = max(read, tokens)
            breakpoints = [p for p in prefixes if p[2] and p[0] >= self.min_cache_tokens]
            write = 0
            if breakpoints and breakpoints[-1][0] > read:
                write = breakpoints[-1][0] - read
            for _tokens, h, _bp, ttl in breakpoints:
                self._cache[h] = now + (3600 if ttl == "1h" else 300)
        return {
            "input_tokens": total - read - write,
            "output_tokens": count_tokens(output_text) if output_text else 1,
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
        }

    # -------------------------------------------------------------- handler
    def _next_reply(self, call: Call) -> Reply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        return self.responder(call)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> bool:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("request-id", f"req_fake_{len(fake.calls)}")
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return False
                return True

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.http_requests += 1
                if self.path.rstrip("/") != "/v1/messages":
                    return self._send(
                        404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
                    )
                call = Call(body)
                reply = fake._next_reply(call)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    message = {529: "Overloaded", 429: "Rate limited"}.get(reply.status, "Internal server error")
                    return self._send(
                        reply.status,
                        {"type": "error", "error": {"type": reply.error_type, "message": message}},
                        reply.headers,
                    )
                text = reply.text or ""
                call.usage = fake._usage(body, text)
                with fake._lock:
                    fake.calls.append(call)  # before the reply, so the client never sees an unrecorded answer
                content = [{"type": "text", "text": text}] if text else []
                return self._send(
                    200,
                    {
                        "id": f"msg_fake_{len(fake.calls)}",
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model", ""),
                        "content": content,
                        "stop_reason": reply.stop_reason,
                        "stop_sequence": None,
                        "usage": call.usage,
                    },
                )

        return Handler


# --------------------------------------------------------------------------
# A reasonable default: an author that answers every finding and a reviewer that weighs the answers
# --------------------------------------------------------------------------


def file_from_context(call: Call, path: str) -> str | None:
    """A committed file's text as shown to the model (numbered lines), un-numbered."""
    context = call.user_texts[0]
    m = re.search(rf"^## `{re.escape(path)}`\n\n(.*?)(?=\n\n## |\Z)", context, re.S | re.M)
    if not m:
        return None
    lines = m.group(1).splitlines()
    if lines and lines[0].startswith("<untrusted-"):  # inside the data delimiter: drop its lines
        lines = lines[1:-2]
    return "\n".join(re.sub(r"^\s*\d+\| ?", "", line) for line in lines)


def default_responder(call: Call) -> Reply:
    name = call.schema_name
    if name == "ReviewReport":
        responses = call.json_after("Author responses to weigh (committed on the branch):") or []
        return Reply.json(
            {
                "rationale": "checked the artifacts against the item",
                "findings": [],
                "responses": [
                    {
                        "response_id": r["id"],
                        "accepted": True,
                        "reason": "the note names the parameter and the Track B hypothesis that cover it",
                    }
                    for r in responses
                ],
                "summary": "No further problems found from this perspective.",
            }
        )
    if name == "TranslationPatch":
        findings = call.json_after("Findings to answer (one response per id):") or []
        edits = []
        readme = next(
            (p for p in re.findall(r"^## `([^`]+/README\.md)`", call.user_texts[0], re.M) if p.startswith("pkg/")), None
        )
        text = file_from_context(call, readme) if readme else None
        if text and "## Calibration on real pods" not in text:
            last = text.rstrip("\n").splitlines()[-1]
            edits.append(
                {
                    "path": readme,
                    "find": last,
                    "replace": last
                    + "\n\n## Calibration on real pods\n\nThe load thresholds were tuned on simulated instances; "
                    "set them from a baseline run's per-pod waiting and running gauges before relying on them.",
                }
            )
        return Reply.json(
            {
                "rationale": "hazards inherent in the evolved program are covered by parameters and Track B",
                "edits": edits,
                "responses": [
                    {
                        "finding_id": f["id"],
                        "action": "justified",
                        "note": "The value is a plugin parameter a deployment tunes from a baseline run; the Track B "
                        "hypothesis on this gap measures the effect, and the README says how to calibrate it.",
                    }
                    for f in findings
                ],
                "report_notes": ["Documented how to calibrate the simulation-tuned thresholds on real pods."]
                if edits
                else [],
            }
        )
    if name == "HypothesisSet":
        findings = call.json_after("Findings to answer (one response per id; an empty list means none):") or []
        return Reply.json(
            {
                "rationale": "wording already follows the family patterns",
                "hypotheses": [],
                "responses": [
                    {
                        "finding_id": f["id"],
                        "action": "justified",
                        "note": "The wording states the mechanism and what a failure would indicate.",
                    }
                    for f in findings
                ],
            }
        )
    if name == "Narrative":
        return Reply.json(
            {
                "rationale": "explain the verdict from the numbers",
                "root_cause": "The measured change is smaller than BLIS predicted: the evolved thresholds act on "
                "scraped gauges that lag the simulator's per-step snapshot, so the policy reacts later.",
                "devils_advocate": "The cells that did not confirm sit within the noise floor; more repetitions "
                "could move them either way, so the weaker effect may be noise rather than attenuation.",
                "scope_and_limitations": "Only the workloads and rates in the plan were measured.",
            }
        )
    return Reply.error(400, retry_after_ms=None)


if __name__ == "__main__":  # pragma: no cover
    with FakeAnthropic() as fake:
        print(f"export ANTHROPIC_BASE_URL={fake.url} ANTHROPIC_API_KEY=fake-key", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
