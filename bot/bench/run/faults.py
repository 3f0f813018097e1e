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
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def _kubectl(self, argv: list[str]) -> subprocess.CompletedProcess:
        self.log(f"$ {shlex.join(argv)}")
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False, timeout=60)

    def _running(self, selector: str) -> list[str]:
        out = self._kubectl(commands.pods(self.target, selector)).stdout
        return sorted(line.split()[0] for line in out.splitlines() if line.split()[1:2] == ["Running"])

    def run(self) -> None:
        deadline = time.monotonic() + self.wait_s
        while not self._running(commands.HARNESS_SELECTOR):
            if self._stop.wait(self.poll_s) or time.monotonic() > deadline:
                self.record.detail = "the harness pod never ran; no pod was deleted"
                return
        started = time.monotonic()
        if self._stop.wait(self.duration_s / 2):
            self.record.detail = "the run ended before t = duration/2; no pod was deleted"
            return
        pods = self._running(commands.MODEL_SERVER_SELECTOR)
        if not pods:
            self.record.detail = "no Running model-server pod to delete"
            return
        proc = self._kubectl(commands.delete_pod(self.target, pods[0]))
        self.record.issued_at_s = round(time.monotonic() - started, 3)
        self.record.target = pods[0]
        self.record.ok = proc.returncode == 0
        self.record.detail = (proc.stdout + proc.stderr).strip()[-300:]
