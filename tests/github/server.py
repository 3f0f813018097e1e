"""HTTP for the fake GitHub: the REST API (+ GraphQL) on one port, git smart HTTP on another.

Like GitHub, the API lives apart from the web host (api.github.com vs github.com); here both are 127.0.0.1 with
their own ports. Every REST request is authenticated, subjected to the scripted faults and rate limits, checked
against GitHub's REST description, answered by tests.github.rest, and recorded. Git requests are handed to
`git http-backend` (CGI) after the same token check, so fetches and compare-and-swap pushes are real git.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tests.github import rest
from tests.github.state import ApiError

if TYPE_CHECKING:
    from tests.github.fake_github import FakeGitHub

WRITE_METHODS = ("POST", "PATCH", "PUT", "DELETE")


@dataclass
class Call:
    """One request the fake received (what `fake.calls` holds)."""

    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    login: str | None
    operation: str | None  # GitHub's operationId, "graphql", "git-upload-pack" or "git-receive-pack"
    body: Any = None
    api_version: str | None = None


@dataclass
class Fault:
    """A scripted answer: `status` for the next `times` requests matching method and path glob."""

    method: str
    path: str
    status: int
    times: int
    after_write: bool = False
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    reset_in: float | None = None  # primary rate limit: seconds until x-ratelimit-reset

    def matches(self, method: str, path: str) -> bool:
        from fnmatch import fnmatchcase

        return self.times > 0 and self.method in ("*", method) and fnmatchcase(path, self.path)


@dataclass
class Push:
    """Refs a git push over smart HTTP changed (ref -> (old sha, new sha)); empty when refused."""

    repo: str
    login: str
    updates: dict[str, tuple[str | None, str | None]]


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline().strip():
                    pass
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def token_of(header: str | None) -> str | None:
    """The token of an Authorization header: `token X`, `Bearer X`, or Basic with the token as password."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    scheme = scheme.lower()
    if scheme in ("token", "bearer"):
        return value.strip()
    if scheme == "basic":
        try:
            user, _, password = base64.b64decode(value.strip()).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return password or user
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    fake: FakeGitHub
    web: bool

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the fake records calls itself
        return

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = do_GET

    def _handle(self) -> None:
        try:
            body = read_body(self)
            if self.web:
                serve_git(self.fake, self, body)
            else:
                serve_api(self.fake, self, body)
        except (BrokenPipeError, ConnectionResetError):
            return

    def send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class Servers:
    """The two listening sockets and their threads."""

    def __init__(self, fake: FakeGitHub, host: str = "127.0.0.1"):
        api_handler = type("ApiHandler", (_Handler,), {"fake": fake, "web": False})
        web_handler = type("WebHandler", (_Handler,), {"fake": fake, "web": True})
        self.api = ThreadingHTTPServer((host, 0), api_handler)
        self.web = ThreadingHTTPServer((host, 0), web_handler)
        for server in (self.api, self.web):
            server.daemon_threads = True
            server.block_on_close = False
        self.threads = [
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for server in (self.api, self.web)
        ]
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        for server in (self.api, self.web):
            server.shutdown()
            server.server_close()
        for thread in self.threads:
            thread.join(timeout=5)


def serve_api(fake: FakeGitHub, handler: _Handler, raw_body: bytes) -> None:
    url = urlsplit(handler.path)
    path = url.path or "/"
    query = parse_qs(url.query, keep_blank_values=True)
    method = handler.command
    api_version = handler.headers.get("X-GitHub-Api-Version")
    login = fake.state.tokens.get(token_of(handler.headers.get("Authorization")) or "")
    request_id = uuid.uuid4().hex[:16].upper()
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-GitHub-Request-Id": request_id,
        "X-GitHub-Media-Type": "github.v3; format=json",
        "x-github-api-version-selected": api_version or "2022-11-28",
    }

    def answer(status: int, body: Any, operation: str | None, extra: dict[str, str] | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        out = {**headers, **(extra or {})}
        if body is None:
            out.pop("Content-Type")
        fake.calls.append(Call(method, path, query, status, login, operation, parsed, api_version))
        handler.send(status, data, out)

    parsed: Any = None
    if login is None:
        message = "Requires authentication" if not handler.headers.get("Authorization") else "Bad credentials"
        return answer(
            401, {"message": message, "documentation_url": "https://docs.github.com/rest", "status": "401"}, None
        )
    headers.update(rate_headers(fake, login))
    if int(headers["x-ratelimit-remaining"]) < 0:
        headers["x-ratelimit-remaining"] = "0"
        return answer(403, primary_body(fake, login), None)
    fault = take_fault(fake, method, path, after_write=False)
    if fault is not None:
        return answer(fault.status, fault.body, None, fault_headers(fault))
    if path == "/graphql" and method == "POST":
        from tests.github.graphql import execute

        try:
            parsed = json.loads(raw_body or b"{}")
        except ValueError:
            return answer(400, {"message": "Problems parsing JSON"}, "graphql")
        with fake.state.lock:
            status, body = execute(fake, login, parsed)
        return answer(status, body, "graphql")

    check = fake.contract.check_request(method, path, query, raw_body, api_version)
    parsed = check.body
    operation = check.operation
    op_id = operation.operation_id if operation else None
    if check.violations:
        fake.violations.extend(check.violations)
        if operation is None:
            return answer(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, None)
        message = "Invalid request.\n\n" + "\n".join(check.violations)
        return answer(422, {"message": message, "documentation_url": "https://docs.github.com/rest"}, op_id)
    ctx = rest.Ctx(fake.state, fake.render, login, check.path_params, query, parsed, api_version, path)
    unmodelled = set(query) - rest.MODELLED_QUERY.get(op_id or "", set())
    ctx.notes += [f"{op_id}: the fake does not model the query parameter {name!r}" for name in sorted(unmodelled)]
    try:
        with fake.state.lock:
            reply = rest.HANDLERS[op_id or ""](ctx)
            defects = fake.contract.check_response(operation, reply.status, reply.body, api_version)
    except ApiError as error:
        reply, defects = rest.Reply(error.status, error.body()), []
    except Exception as exc:  # a defect of the fake: answer 500 and fail the test at teardown, never hang
        reply = rest.Reply(500, {"message": f"fake GitHub crashed: {type(exc).__name__}: {exc}"})
        defects = [f"{op_id}: the fake crashed: {type(exc).__name__}: {exc}"]
    fake.violations.extend(f"fake GitHub: {note} (extend tests/github/rest.py)" for note in ctx.notes)
    fake.response_defects.extend(defects)
    fault = take_fault(fake, method, path, after_write=True) if reply.status < 400 else None
    if fault is not None:
        return answer(fault.status, fault.body, op_id, fault_headers(fault))
    return answer(reply.status, reply.body, op_id, reply.headers)


# --- limits ---------------------------------------------------------------------------------
def rate_headers(fake: FakeGitHub, login: str) -> dict[str, str]:
    limit = 1000 if fake.state.users[login].type == "Bot" else 5000
    with fake.state.lock:
        used = fake.rate_used[login] = fake.rate_used.get(login, 0) + 1
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(limit - used),
        "x-ratelimit-used": str(used),
        "x-ratelimit-reset": str(fake.rate_reset_at),
        "x-ratelimit-resource": "core",
    }


def primary_body(fake: FakeGitHub, login: str) -> dict[str, str]:
    return {
        "message": f"API rate limit exceeded for user ID {fake.state.users[login].id}. If you reach out to "
        "GitHub Support for help, please include the request ID.",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        "status": "403",
    }


def take_fault(fake: FakeGitHub, method: str, path: str, *, after_write: bool) -> Fault | None:
    with fake.state.lock:
        for fault in fake.faults:
            if fault.after_write == after_write and fault.matches(method, path):
                fault.times -= 1
                return fault
    return None


def fault_headers(fault: Fault) -> dict[str, str]:
    headers = dict(fault.headers)
    if fault.reset_in is not None:
        headers["x-ratelimit-remaining"] = "0"
        headers["x-ratelimit-reset"] = str(int(time.time() + fault.reset_in + 0.999))
    return headers


# --- git smart HTTP -------------------------------------------------------------------------
def serve_git(fake: FakeGitHub, handler: _Handler, body: bytes) -> None:
    url = urlsplit(handler.path)
    parts = url.path.lstrip("/").split("/", 2)
    plain = {"Content-Type": "text/plain; charset=utf-8"}
    if len(parts) < 3 or not parts[1].endswith(".git"):
        handler.send(404, b"Not Found\n", plain)
        return
    push = "git-receive-pack" in (url.query + url.path)
    operation = "git-receive-pack" if push else "git-upload-pack"
    login = fake.state.tokens.get(token_of(handler.headers.get("Authorization")) or "")

    def refuse(status: int, message: str, extra: dict[str, str] | None = None) -> None:
        fake.calls.append(Call(handler.command, url.path, parse_qs(url.query), status, login, operation))
        handler.send(status, message.encode(), {**plain, **(extra or {})})

    if login is None:
        refuse(401, "Authentication required\n", {"WWW-Authenticate": 'Basic realm="GitHub"'})
        return
    try:
        repo = fake.state.repo(parts[0], parts[1].removesuffix(".git"))
        fake.state.require(repo, login, "write" if push else "read")
    except ApiError:
        if fake.state.repos.get(f"{parts[0]}/{parts[1].removesuffix('.git')}") is None:
            refuse(404, "Repository not found.\n")
        else:
            refuse(403, f"Permission to {parts[0]}/{parts[1]} denied to {login}.\n")
        return
    before = refs_of(repo) if push else {}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(fake.state.root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PROJECT_ROOT": str(fake.state.root / "git"),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": f"/{repo.owner}/{repo.name}.git/{parts[2]}",
        "QUERY_STRING": url.query,
        "REQUEST_METHOD": handler.command,
        "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": login,
        "REMOTE_ADDR": "127.0.0.1",
        "GIT_PROTOCOL": handler.headers.get("Git-Protocol", ""),
    }
    if handler.headers.get("Content-Encoding", "").lower() in ("gzip", "x-gzip"):
        body = gzip.decompress(body)
        env["CONTENT_LENGTH"] = str(len(body))
    proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
    head, _, payload = proc.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = proc.stdout.partition(b"\n\n")
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers[key.strip()] = value.strip()
    if proc.returncode != 0 and not proc.stdout:
        status, payload, headers = 500, proc.stderr, plain
    if push and handler.command == "POST":
        after = refs_of(repo)
        changed = {
            ref: (before.get(ref), after.get(ref)) for ref in {*before, *after} if before.get(ref) != after.get(ref)
        }
        fake.pushes.append(Push(repo.full_name, login, changed))
    fake.calls.append(Call(handler.command, url.path, parse_qs(url.query), status, login, operation))
    handler.send(status, payload, headers)


def refs_of(repo: Any) -> dict[str, str]:
    from tests.github.gitrepo import git

    out = git(repo.git_dir, "for-each-ref", "--format=%(refname) %(objectname)").decode()
    return dict(line.split(" ", 1) for line in out.splitlines() if line)
