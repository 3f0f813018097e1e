"""Every command line ``promote bench run`` executes, built in one place.

Pure: each function returns an argv list. The runner logs each one before running it,
and ``--dry-run`` prints them instead. Flags follow llm-d-benchmark's ``llmdbenchmark``
CLI (llm-d.md §B1: ``--spec`` / ``--workspace`` / ``--run-keywords`` before the
subcommand; ``--cluster-config``, ``-p``, ``-t``, ``-s``, ``-l``, ``-e``,
``--workload-file-path``, ``--analyze`` after it), llm-d-router's Makefile
(``make image-build-epp`` / ``image-push-epp`` with ``EPP_IMAGE``), ``kubectl`` (pods, the namespace lock) and
llm-d-benchmark's report converter (``benchmark-report <native> -b 0.2 -w <harness> <out>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Harness pods llm-d-benchmark launches (run step 07): app=llmdbench-harness-launcher,function=load_generator.
HARNESS_SELECTOR = "app=llmdbench-harness-launcher,function=load_generator"
#: Model-server pods of a modelservice stand-up (decode role).
MODEL_SERVER_SELECTOR = "llm-d.ai/role=decode"
#: llm-d-benchmark standup step 08 deploys the router (EPP); re-running it alone swaps the EPP config.
ROUTER_STEP = "8"


@dataclass(frozen=True)
class Target:
    """Where the runner works: the llm-d-benchmark spec, namespace, deploy method and workspace root."""

    spec: str
    namespace: str
    workspace: Path
    method: str = "modelservice"
    harness: str = "inference-perf"
    container_runtime: str = "docker"
    kubectl: str = "kubectl"
    llmdbenchmark: str = "llmdbenchmark"
    converter: str = "benchmark-report"


def _base(t: Target, setup: str, keywords: list[str] | None = None) -> list[str]:
    argv = [t.llmdbenchmark, "--spec", t.spec, "--workspace", str(setup_workspace(t, setup))]
    if keywords:
        argv += ["--run-keywords", ",".join(keywords)]
    return argv


def setup_workspace(t: Target, setup: str) -> Path:
    """llm-d-benchmark's own per-setup-treatment workspace (what ``experiment`` would use)."""
    return t.workspace / f"setup-treatment-{setup}"


def standup(t: Target, setup: str, overrides: Path) -> list[str]:
    return [*_base(t, setup), "standup", "--cluster-config", str(overrides), "-p", t.namespace, "-t", t.method]


def swap_epp(t: Target, setup: str, overrides: Path) -> list[str]:
    """Re-run only the router step with the next arm's EPP settings; model servers stay up."""
    return [*standup(t, setup, overrides), "-s", ROUTER_STEP]


def run_cell(t: Target, setup: str, overrides: Path, profile: Path, treatments: Path, keywords: list[str]) -> list[str]:
    """One run treatment (a ``-e`` file with exactly one) against the standing stack."""
    return [
        *_base(t, setup, keywords),
        "run",
        "--cluster-config",
        str(overrides),
        "-p",
        t.namespace,
        "-t",
        t.method,
        "-l",
        t.harness,
        "--workload-file-path",
        str(profile),
        "-e",
        str(treatments),
        "-j",
        "1",
        "--analyze",
    ]


def teardown(t: Target, setup: str, overrides: Path) -> list[str]:
    return [*_base(t, setup), "teardown", "--cluster-config", str(overrides), "-p", t.namespace, "-t", t.method]


def convert(t: Target, native: Path, out: Path) -> list[str]:
    return [t.converter, str(native), "-b", "0.2", "-w", t.harness, str(out)]


def pods(t: Target, selector: str) -> list[str]:
    return [
        t.kubectl,
        "get",
        "pods",
        "-n",
        t.namespace,
        "-l",
        selector,
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.startTime}{'\\n'}{end}",
    ]


def delete_pod(t: Target, name: str) -> list[str]:
    return [t.kubectl, "delete", "pod", name, "-n", t.namespace, "--wait=false"]


def rollout_status(t: Target, deployment: str, timeout_s: int = 600) -> list[str]:
    return [t.kubectl, "rollout", "status", f"deployment/{deployment}", "-n", t.namespace, f"--timeout={timeout_s}s"]


def lock_create(t: Target, name: str, data: dict[str, str]) -> list[str]:
    """Create the namespace's lock ConfigMap; kubectl refuses (AlreadyExists) when it is there: one atomic call."""
    return [
        t.kubectl,
        "create",
        "configmap",
        name,
        "-n",
        t.namespace,
        *(f"--from-literal={k}={v}" for k, v in data.items()),
    ]


def lock_get(t: Target, name: str) -> list[str]:
    return [t.kubectl, "get", "configmap", name, "-n", t.namespace, "-o", "json"]


def lock_delete(t: Target, name: str) -> list[str]:
    return [t.kubectl, "delete", "configmap", name, "-n", t.namespace, "--ignore-not-found"]


def image_build(fork: Path, image: str, runtime: str) -> list[str]:
    return ["make", "-C", str(fork), "image-build-epp", f"EPP_IMAGE={image}", f"CONTAINER_RUNTIME={runtime}"]


def image_push(fork: Path, image: str, runtime: str) -> list[str]:
    return ["make", "-C", str(fork), "image-push-epp", f"EPP_IMAGE={image}", f"CONTAINER_RUNTIME={runtime}"]


def image_digest(image: str, runtime: str) -> list[str]:
    return [runtime, "image", "inspect", "--format", "{{index .RepoDigests 0}}", image]
