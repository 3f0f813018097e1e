"""Track B fault treatments carried out during a run: one model-server pod deleted at t = duration/2.

The clock starts when llm-d-benchmark's harness pod is Running (load starts then, not
when ``llmdbenchmark run`` starts: namespace checks, profile upload and pod scheduling
come first). The pod deleted is the first Running model-server pod by name, so both arms
lose the same replica slot. Kubernetes recreates it; what the hypothesis measures is how
the EPP routes around the hole and the restarted pod's reset metrics, under the same fault
in both arms.
"""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
from collections.abc import Callable

from bot.bench.run import commands
from bot.bench.run.manifest import FaultRecord


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
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def _kubectl(self, argv: list[str]) -> subprocess.CompletedProcess:
        self.log(f"$ {shlex.join(argv)}")
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False, timeout=60)

    def _pods(self, selector: str) -> list[tuple[str, float | None]]:
        """(name, start time as a UNIX timestamp or None) of the Running pods, by name."""
        out = self._kubectl(commands.pods(self.target, selector)).stdout
        pods = []
        for line in out.splitlines():
            parts = line.split()
            if parts[1:2] == ["Running"]:
                pods.append((parts[0], _timestamp(parts[2]) if len(parts) > 2 else None))
        return sorted(pods)

    def _running(self, selector: str) -> list[str]:
        return [name for name, _ in self._pods(selector)]

    def run(self) -> None:
        deadline = time.monotonic() + self.wait_s
        while not (harness := self._pods(commands.HARNESS_SELECTOR)):
            if self._halt.wait(self.poll_s) or time.monotonic() > deadline:
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
