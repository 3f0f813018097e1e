"""One benchmark at a time per namespace: a ConfigMap in it names the promotion, commit and run that holds it.

Two promotions whose benchmark jobs land on two runners of one cluster would otherwise share the namespace:
each stands up over, swaps and tears down the other's stack, and both keep what they measured (at double load,
or under the other arm's EPP) as evidence. ``kubectl create`` fails when the object exists, so taking the lock
is one atomic call. The run releases it at its end whatever the outcome (finished, failed, budget, cancelled);
a job killed outright leaves it behind for ``promote bench teardown`` (benchmark.yml's always-step) or the next
``--resume`` of the same promotion and commit, which may take over their own lock, and for nobody else.

A takeover needs more than the same promotion and commit: the holder's run must be gone. The run id tells
(``run_id``): the same GitHub run is this job (an earlier step or attempt, whose steps end before the next
starts), and a ``<host>-<pid>`` on this host is gone when that process is. Any other holder (another GitHub run,
another host) may still be measuring, so it is not taken over: the refusal says how to check it is gone before
clearing its lock by hand. A run that did not take the lock never deletes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.bench.run import commands
from bot.model import RequestError

if TYPE_CHECKING:
    from bot.bench.run.runner import RunConfig

#: The lock's name in the namespace (the namespace itself is --namespace).
LOCK_NAME = "promotion-bench-lock"


class NamespaceBusy(RequestError):
    """The namespace is locked by another benchmark, or the lock cannot be read or written (exit 2)."""


@dataclass(frozen=True)
class Holder:
    """Who holds the lock: ``owner`` is ``<promotion id>/<commit>/<run id>``."""

    promotion: str
    commit: str
    run: str
    since: str

    @property
    def owner(self) -> str:
        return f"{self.promotion}/{self.commit}/{self.run}"

    def same_promotion(self, other: Holder) -> bool:
        return (self.promotion, self.commit) == (other.promotion, other.commit)


def holder_of(data: dict) -> Holder:
    """The holder a lock ConfigMap's ``data`` names (a lock someone wrote by hand still blocks, as ``?``)."""
    parts = str(data.get("owner", "")).split("/", 2)
    promotion, commit, run = parts if len(parts) == 3 else ("?", "?", "?")
    return Holder(promotion=promotion, commit=commit, run=run, since=str(data.get("since", "an unknown time")))


def clear_command(target: commands.Target) -> str:
    return shlex.join(commands.lock_delete(target, LOCK_NAME))


#: Whether the holder's run is over: ``GONE`` may be taken over, ``RUNNING`` never, ``UNKNOWN`` only by hand.
GONE, RUNNING, UNKNOWN = "gone", "running", "unknown"


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (one of another user's counts: it may be the holder)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


def this_host() -> str:
    return socket.gethostname().replace("/", "-")


def local_pid(run: str, host: str) -> int | None:
    """The process id of a run id ``<host>-<pid>`` recorded on ``host``; None for any other run id."""
    rest = run.removeprefix(f"{host}-") if run.startswith(f"{host}-") else ""
    return int(rest) if rest.isdigit() else None


def holder_state(holder: Holder, me: Holder, host: str, alive: Callable[[int], bool] = pid_alive) -> str:
    """``GONE``, ``RUNNING`` or ``UNKNOWN``: whether the run that holds the lock is over, as far as this run can tell.

    The same run id is this very run (a GitHub job's earlier step or attempt: they end before the next starts);
    a process of this host is looked up; a run of another host or GitHub run cannot be seen from here."""
    if holder.run == me.run:
        return GONE
    pid = local_pid(holder.run, host)
    if pid is None:
        return UNKNOWN
    return RUNNING if alive(pid) else GONE


def how_to_check(run: str) -> str:
    """How to see whether the run ``run`` (a GitHub run id, or ``<host>-<pid>``) is still going."""
    if run.isdigit():
        return f"GitHub Actions run {run} (`gh run view {run}` shows whether it is still in progress)"
    host, _, pid = run.rpartition("-")
    if host and pid.isdigit():
        return f"process {pid} on host {host} (`ps -p {pid}` there)"
    return f"run {run!r}"


def _ours(holder: Holder, state: str, host: str) -> str:
    """The sentence for a lock of this promotion's own commit: taken over only when its run is gone."""
    if state == GONE:
        return " That is this promotion's own commit, and its run is gone: pass --resume to take it over."
    if state == RUNNING:
        return (
            f" That is this promotion's own commit, and its run (process {local_pid(holder.run, host)} on this host) "
            "is still going: it is not taken over, even with --resume; wait for it to end or stop it first."
        )
    return (
        f" That is this promotion's own commit, run by {how_to_check(holder.run)}: this run cannot tell whether it "
        "is still going, so it is not taken over, even with --resume. Check that it is gone first, then clear its "
        "lock (below) and resume."
    )


def refusal(target: commands.Target, holder: Holder, me: Holder, state: str = UNKNOWN, host: str = "") -> str:
    """Why this run does not start, and the three ways on: wait, another namespace, or clear a stale lock."""
    ours = _ours(holder, state, host) if holder.same_promotion(me) else ""
    return (
        f"namespace {target.namespace} is in use by promotion #{holder.promotion} (commit {holder.commit[:12]}, run "
        f"{holder.run}, since {holder.since}); nothing was stood up or torn down.{ours} Wait for that benchmark to "
        "end, or give this runner its own namespace (PROMOTION_BENCH_NAMESPACE in the runner's environment, or "
        f"--namespace). If no benchmark is running there (a job killed outright leaves its lock), clear the stale "
        f"lock with `{clear_command(target)}`"
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id(env: dict[str, str] | None) -> str:
    """The GitHub run that holds the lock, or this host and process outside Actions."""
    env = os.environ if env is None else env
    return env.get("GITHUB_RUN_ID") or f"{this_host()}-{os.getpid()}"


class NamespaceLock:
    """Take and release ``LOCK_NAME`` in the target's namespace with kubectl."""

    def __init__(
        self,
        target: commands.Target,
        promotion: str,
        commit: str,
        *,
        log: Callable[[str], None],
        env: dict[str, str] | None = None,
    ):
        self.target, self.log, self.env = target, log, env
        self.me = Holder(promotion=promotion, commit=commit, run=run_id(env).replace("/", "-"), since=_now())
        self.held = False
        self.host = this_host()

    def _kubectl(self, argv: list[str]) -> tuple[int, str]:
        self.log(f"$ {shlex.join(argv)}")
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False, timeout=120)
        except FileNotFoundError:
            raise NamespaceBusy(
                f"{argv[0]} not found on PATH: the run locks namespace {self.target.namespace} with it before "
                "standing anything up; install kubectl with a context on the GPU cluster"
            ) from None
        except subprocess.TimeoutExpired:
            return 124, "timed out after 120 s"
        return proc.returncode, (proc.stdout + proc.stderr).strip()

    def _failed(self, what: str, code: int, output: str) -> NamespaceBusy:
        said = output.splitlines()[-1] if output else "no output"
        return NamespaceBusy(
            f"could not {what} the lock {LOCK_NAME} in namespace {self.target.namespace}: kubectl exited {code} "
            f"({said}); check the runner's kube context and that it may create, get and delete ConfigMaps there"
        )

    def holder(self) -> Holder | None:
        """Who holds the lock now, or None when nobody does."""
        code, out = self._kubectl(commands.lock_get(self.target, LOCK_NAME))
        if code != 0:
            if "NotFound" in out or "not found" in out:
                return None
            raise self._failed("read", code, out)
        try:
            return holder_of(json.loads(out).get("data") or {})
        except (ValueError, AttributeError):
            return holder_of({})

    def take(self, *, takeover: bool) -> None:
        """Create the lock; with ``takeover``, one left by this promotion and commit whose run is gone
        (``holder_state``) is replaced; a holder still running, or one this run cannot see, is refused."""
        data = {"owner": self.me.owner, "since": self.me.since}
        for _ in range(3):  # a lock released or taken over between two calls: look again
            code, out = self._kubectl(commands.lock_create(self.target, LOCK_NAME, data))
            if code == 0:
                self.held = True
                self.log(f"locked namespace {self.target.namespace} for promotion #{self.me.promotion}")
                return
            if "AlreadyExists" not in out and "already exists" not in out:
                raise self._failed("create", code, out)
            holder = self.holder()
            if holder is None:
                continue
            state = holder_state(holder, self.me, self.host) if holder.same_promotion(self.me) else UNKNOWN
            if not (takeover and holder.same_promotion(self.me) and state == GONE):
                raise NamespaceBusy(refusal(self.target, holder, self.me, state, self.host))
            self.log(
                f"taking over this promotion's own lock on {self.target.namespace} (run {holder.run}, since {holder.since})"
            )
            code, out = self._kubectl(commands.lock_delete(self.target, LOCK_NAME))
            if code != 0:
                raise self._failed("take over", code, out)
        raise NamespaceBusy(
            f"could not take the lock {LOCK_NAME} in namespace {self.target.namespace}: it kept changing hands"
        )

    def release(self) -> None:
        """Delete the lock if it is still this run's; never raises (the run's own outcome is what to report)."""
        if not self.held:
            return
        self.held = False
        try:
            holder = self.holder()
            if holder is not None and holder.owner != self.me.owner:
                self.log(f"the lock on {self.target.namespace} is now {holder.owner}'s; left in place")
                return
            code, out = self._kubectl(commands.lock_delete(self.target, LOCK_NAME))
        except NamespaceBusy as exc:
            code, out = 1, str(exc)
        if code != 0:
            self.log(
                f"could not release the lock on namespace {self.target.namespace} ({out.splitlines()[-1] if out else code}); "
                f"clear it with `{clear_command(self.target)}`"
            )


@contextlib.contextmanager
def held(cfg: RunConfig, *, takeover: bool | None = None) -> Iterator[None]:
    """The namespace locked for the duration of a run (``takeover``: its own lock, default ``--resume``); a dry
    run touches no cluster, it only shows the call."""
    target, promotion = cfg.target, cfg.request.id
    if cfg.dry_run:
        owner = {"owner": f"{promotion}/{cfg.commit}/RUN", "since": "NOW"}
        cfg.log(f"$ {shlex.join(commands.lock_create(target, LOCK_NAME, owner))}")
        yield
        return
    lock = NamespaceLock(target, promotion, cfg.commit, log=cfg.log, env=cfg.env)
    lock.take(takeover=cfg.resume if takeover is None else takeover)
    try:
        yield
    finally:
        lock.release()
