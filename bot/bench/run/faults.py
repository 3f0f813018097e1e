"""Track B fault treatments carried out during a run: one model-server pod deleted at t = duration/2.

The clock starts when llm-d-benchmark's harness pod is Running (load starts then, not
when ``llmdbenchmark run`` starts: namespace checks, profile upload and pod scheduling
come first). The pod deleted is the first Running model-server pod by name, so both arms
lose the same replica slot. Kubernetes recreates it; what the hypothesis measures is how
the EPP routes around the hole and the restarted pod's reset metrics, under the same fault
in both arms.

When kubectl cannot do its part (not on PATH, no reachable API server, RBAC forbidding ``get pods``) the fault
is recorded as not happened with that reason, in words naming no host or account (the manifest is committed);
kubectl's own line goes to the console and the step log. The thread never dies with a traceback: whatever goes
wrong becomes the fault's reason, so stage 5 and the operator are told why.
"""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
from collections.abc import Callable

from bot.bench.run import commands
from bot.bench.run.manifest import FaultRecord

#: ``kubectl get pods`` failing this many times in a row ends the wait (one failure may be a blip of the API).
GET_FAILURES = 3


#: What a failing kubectl's first stderr line says, in words that name no host, user or context (the manifest,
#: which holds the fault's reason, is committed; the line itself goes to the console and the step log).
CAUSES = (
    ("connection refused", "connection refused: no API server is reachable from the runner's kube context"),
    ("was refused", "connection refused: no API server is reachable from the runner's kube context"),
    ("forbidden", "forbidden: the runner's account may not list pods in the namespace (RBAC)"),
    ("unauthorized", "unauthorized: the runner's credentials were refused"),
    ("no such host", "the API server's host name does not resolve"),
    ("timed out", "timed out"),
    ("i/o timeout", "timed out"),
)


def _cause(line: str) -> str:
    low = line.lower()
    return next((why for key, why in CAUSES if key in low), "its first line is in the step log")


class KubectlFailed(Exception):
    """``kubectl`` could not do what the fault needs; the message is the fault's reason (no pod was deleted)."""


def _timestamp(text: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class PodDeletion(threading.Thread):
    def __init__(
        self,
        target: commands.Target,
        duration_s: float,
        log: Callable[[str], None],
        *,
        env: dict[str, str] | None = None,
        poll_s: float = 0.2,
        wait_s: float = 900.0,
    ):
        super().__init__(daemon=True)
        self.target, self.duration_s, self.log, self.env = target, duration_s, log, env
        self.poll_s, self.wait_s = poll_s, wait_s
        self.record = FaultRecord(kind="pod-failure", planned_at_s=duration_s / 2)
        self.failed_gets = 0  # consecutive failed `kubectl get pods` while waiting for the harness pod
        self.failed_get: KubectlFailed | None = None  # the last of them
        self.notes: list[str] = []  # kubectl's failures in its own words: for the step log, never the manifest
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def _kubectl(self, argv: list[str]) -> subprocess.CompletedProcess:
        self.log(f"$ {shlex.join(argv)}")
        try:
            return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False, timeout=60)
        except FileNotFoundError:
            self.notes.append(f"{argv[0]}: not found on PATH")
            raise KubectlFailed(f"{argv[0]} not found on PATH") from None
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, 124, "", f"{shlex.join(argv[:3])} timed out after 60 s")

    def _pods(self, selector: str) -> list[tuple[str, float | None]]:
        """(name, start time as a UNIX timestamp or None) of the Running pods, by name.

        A failing ``kubectl get pods`` (no reachable API server, RBAC forbidding list) raises ``KubectlFailed``
        saying so, never reads as "no pod": the fix is the runner's kube context or RBAC, not the harness."""
        proc = self._kubectl(commands.pods(self.target, selector))
        if proc.returncode != 0:
            first = next((line.strip() for line in proc.stderr.splitlines() if line.strip()), "no output")
            said = f"kubectl get pods failed (exit {proc.returncode}): {first}"
            self.log(said)
            self.notes.append(said)
            raise KubectlFailed(f"kubectl get pods failed (exit {proc.returncode}, {_cause(first)})")
        pods = []
        for line in proc.stdout.splitlines():
            parts = line.split()
            if parts[1:2] == ["Running"]:
                pods.append((parts[0], _timestamp(parts[2]) if len(parts) > 2 else None))
        return sorted(pods)

    def _harness(self) -> list[tuple[str, float | None]]:
        """The harness pod once it runs ([] until then); ``GET_FAILURES`` failed lookups in a row end the wait
        (one may be a blip of the API server)."""
        try:
            pods = self._pods(commands.HARNESS_SELECTOR)
        except KubectlFailed as exc:
            self.failed_get = exc
            self.failed_gets += 1
            if self.failed_gets >= GET_FAILURES:
                raise
            return []
        self.failed_get, self.failed_gets = None, 0
        return pods

    def _running(self, selector: str) -> list[str]:
        return [name for name, _ in self._pods(selector)]

    def run(self) -> None:
        """The fault, its outcome always in ``record`` with a reason: a failure ends the thread, never the run."""
        try:
            self._fault()
        except KubectlFailed as exc:
            self.record.detail = f"{exc}; no pod was deleted (kubectl's own words are in the step log)"
        except Exception as exc:
            self.record.detail = f"the fault failed ({type(exc).__name__}: {exc}); no pod was deleted"
        if not self.record.ok:
            self.log(f"pod-failure: {self.record.detail}")

    def _fault(self) -> None:
        deadline = time.monotonic() + self.wait_s
        while not (harness := self._harness()):
            if self._halt.wait(self.poll_s) or time.monotonic() > deadline:
                if self.failed_get is not None:  # the last look failed: whether it ran is unknown
                    raise self.failed_get
                self.record.detail = "the harness pod never ran; no pod was deleted"
                return
        # The harness pod's own start time (status.startTime), not when we noticed it.
        since = harness[0][1]
        started = time.monotonic() - (max(0.0, time.time() - since) if since is not None else 0.0)
        pods = self._running(commands.MODEL_SERVER_SELECTOR)  # chosen now, so the deletion itself is on time
        if not pods:
            self.record.detail = "no Running model-server pod to delete"
            return
        if self._halt.wait(max(0.0, self.duration_s / 2 - (time.monotonic() - started))):
            self.record.detail = "the run ended before t = duration/2; no pod was deleted"
            return
        self.record.issued_at_s = round(time.monotonic() - started, 3)
        proc = self._kubectl(commands.delete_pod(self.target, pods[0]))
        self.record.target = pods[0]
        self.record.ok = proc.returncode == 0
        output = (proc.stdout + proc.stderr).strip()
        self.log(output)  # kubectl's own words (an API server address, a service account) stay in the log
        self.record.detail = (
            f"pod {pods[0]} deleted"
            if self.record.ok
            else f"kubectl delete pod exited {proc.returncode}; no pod was deleted (its output is in the runner's log)"
        )
