"""Fake llmdbenchmark, kubectl, make, docker and benchmark-report: one script, dispatched on its name.

Installed on PATH by tests/bench/fakes/__init__.py (symlinks). It checks each call's
arguments against the real tools' flags (llm-d.md §B1-B4: argparse mirrors of
llmdbenchmark's parsers, llm-d-router's Makefile targets, kubectl's verbs), keeps a
simulated cluster in $FAKE_CLUSTER/state.json (stack, pods, images, ConfigMaps by
namespace), records every call in calls.jsonl, and writes llm-d-benchmark's results
layout with v0.2 reports (or native inference-perf output for benchmark-report to
convert) from a configurable true effect and noise.
Behaviour is set by $FAKE_CLUSTER/config.json:

    effect      {arm: relative latency change}        (baseline 0)
    fault       {arm: relative e2e change under a pod deletion}
    noise       relative sd of run-to-run noise
    carry_over  latency change of the first run after an EPP swap without a warm-up run
    mode        "v02" (reports) or "native" (stage_0_lifecycle_metrics.json)
    fail        {"standup": true, "swap": true, "run": "<run treatment>", "teardown": true}
    hang        "<run treatment>" (the run never ends; a priority-mix run: "<arm>/<run treatment>")
    seconds_per_run_second   wall seconds per second of load duration (default 1)
    slow        {"<run treatment>": wall seconds} (these runs take this long instead, in every arm)
    bad         {"<arm>/<run treatment> substring": how} the report of each matching run is unusable: "corrupt"
                (does not parse: the runner sets it aside), "wrong-rate" (records another rate than its
                directory: evidence rejects it) or "no-ttft" (no time_to_first_token: it lacks ttft_mean)
    chatty      print what the real tool prints that must never be committed: a stand-up ends with the
                cluster's inference route (step_11_inference_test.py's "To reproduce or demo, run: curl ...
                https://<route>/<model>/v1/completions"), a run with its results path in the workspace
    forbid_delete   kubectl delete pod exits 1, Forbidden (a cluster whose RBAC does not allow it)
    forbid_configmaps   kubectl create/get/delete configmap exit 1, Forbidden (the namespace lock cannot be taken)
    mix         {arm: {class: [sent, admitted]}} what the priority-mix harness (``-l priority-mix``) records per
                class; a class is shed only when the stand-up declared its InferenceObjective at a negative
                priority (router.inferenceObjectives), otherwise its header resolves to priority 0 and every
                request is admitted. Default: every class admitted
    mix_bad     {"<arm>/<run treatment> substring": "corrupt" | "missing"} a priority-mix run's results.json
                does not parse, or is not written
    no_results  ["<arm>/<run treatment> substring", ...] the run exits 0 without writing any results directory
                (a harness pod that died without collecting results), for cells and priority-mix runs alike
    kubectl_get_fails   "refused" | "forbidden": ``kubectl get pods`` exits 1 as with no reachable API server
                (no kubeconfig) or a service account without list rights

The priority-mix harness writes upstream's results.json + run_metadata.yaml (workload/harnesses/priority_mix.py)
into ``<workspace>/results/priority-mix-<treatment>-<ts>-<rand>_1/``, from tests/bench/priority_mix_data.py.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import math
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

# PyYAML is imported by the calls that read or write YAML only (a run, a stand-up's overrides, a report): the
# script starts hundreds of times per benchmark test and most calls (kubectl, make, docker, a teardown) need none.


def _yaml(text: str):
    """libyaml's safe loader where PyYAML has it, else the pure-Python one."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _yaml_dump(doc) -> str:
    import yaml

    return yaml.safe_dump(doc, sort_keys=False)


ROOT = Path(os.environ["FAKE_CLUSTER"])
NAME = globals().get("TOOL") or Path(sys.argv[0]).name
#: The inference route a chatty stand-up prints (a cluster's external endpoint; tests look for it).
ROUTE = "https://llmd-inference-gateway-route-bench.apps.gpu-prod.corp.example.com"


def config() -> dict:
    p = ROOT / "config.json"
    return json.loads(p.read_text()) if p.is_file() else {}


@contextlib.contextmanager
def state():
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / "state.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = ROOT / "state.json"
        s = json.loads(p.read_text()) if p.is_file() else {}
        yield s
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(s, indent=1, sort_keys=True))
        tmp.replace(p)


def record(event: str, **extra) -> None:
    line = json.dumps(
        {"tool": NAME, "event": event, "argv": sys.argv[1:], "t": time.time(), "pid": os.getpid(), **extra}
    )
    with open(ROOT / "calls.jsonl", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(line + "\n")


def die(msg: str, code: int = 2) -> None:
    print(f"{NAME}: {msg}", file=sys.stderr)
    record("error", message=msg)
    sys.exit(code)


# ----------------------------------------------------------------- llmdbenchmark
def llmdbenchmark_parser() -> argparse.ArgumentParser:
    """The flags of llmdbenchmark's cli.py and interface/{standup,run,teardown,experiment}.py (llm-d-benchmark 8bc9f1d)."""
    p = argparse.ArgumentParser(prog="llmdbenchmark")
    for a in (("--specification_file", "--spec"), ("--workspace", "--ws"), ("--base-dir", "--bd")):
        p.add_argument(*a)
    p.add_argument("--dry-run", "-n", action="store_true")
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument("--non-admin", "-i", action="store_true")
    p.add_argument("--run-description")
    p.add_argument("--run-keywords")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cluster-config", "--cc")
    common.add_argument("--set", dest="set_overrides", action="append")
    sub = p.add_subparsers(dest="command", required=True)
    st = sub.add_parser("standup", parents=[common])
    for f in (
        "-s/--step",
        "-c/--scenario",
        "-m/--models",
        "-p/--namespace",
        "-t/--methods",
        "-r/--release",
        "-k/--kubeconfig",
    ):
        st.add_argument(*f.split("/"))
    st.add_argument("--gateway-class")
    st.add_argument("--skip-smoketest", action="store_true")
    run = sub.add_parser("run", parents=[common])
    for f in (
        "-s/--step",
        "-p/--namespace",
        "-t/--methods",
        "-k/--kubeconfig",
        "-m/--model",
        "-l/--harness",
        "-w/--workload",
        "-e/--experiments",
        "-o/--overrides",
        "-r/--output",
        "-U/--endpoint-url",
    ):
        run.add_argument(*f.split("/"))
    run.add_argument("--workload-file-path")
    run.add_argument("-j", "--parallelism", type=int)
    run.add_argument("--wait-timeout", type=int)
    run.add_argument("--analyze", action="store_true")
    run.add_argument("--monitoring", action="store_true")
    td = sub.add_parser("teardown", parents=[common])
    for f in ("-s/--step", "-m/--models", "-t/--methods", "-r/--release", "-p/--namespace", "-k/--kubeconfig"):
        td.add_argument(*f.split("/"))
    td.add_argument("-d", "--deep", action="store_true")
    return p


def _overrides(path: str | None) -> dict:
    if not path or not Path(path).is_file():
        die(f"--cluster-config {path!r}: no such file")
    doc = _yaml(Path(path).read_text())
    for dotted in (
        "model.name",
        "decode.replicas",
        "decode.parallelism.tensor",
        "decode.acceleratorType.labelValue",
        "router.epp.pluginsConfigFile",
        "router.epp.pluginsCustomConfig",
        "router.epp.image.tag",
        "router.epp.flags.allow-experimental-plugins",
    ):
        node = doc
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                die(f"--cluster-config {path}: {dotted} is not set (the experiment must pin it)")
            node = node[part]
    return doc


def _epp(doc: dict) -> dict:
    epp = doc["router"]["epp"]
    custom = epp["pluginsCustomConfig"]
    if epp["pluginsConfigFile"] not in custom:
        die(f"router.epp.pluginsConfigFile {epp['pluginsConfigFile']!r} is not in pluginsCustomConfig")
    return {
        "config": _yaml(custom[epp["pluginsConfigFile"]]),
        "image": f"{epp['image']['registry']}/{epp['image']['repository']}:{epp['image']['tag']}",
        "flags": epp.get("flags", {}),
    }


def cmd_standup(a) -> None:
    doc = _overrides(a.cluster_config)
    if not a.namespace or a.methods != "modelservice":
        die("standup needs -p NAMESPACE and -t modelservice")
    cfg = config()
    with state() as s:
        if a.step:
            if a.step != "8":
                die(f"-s {a.step}: the runner only re-runs step 8 (deploy_router)")
            if not s.get("up"):
                die("swap on a stack that is not up", 1)
            s["epp"] = _epp(doc)
            s["dirty"] = True
            s["swaps"] = s.get("swaps", 0) + 1
            record("swap", setup=Path(a.workspace).name)
            if cfg.get("fail", {}).get("swap"):
                die("router step failed (fake)", 1)
            return
        s["up"] = True
        s["standups"] = s.get("standups", 0) + 1
        s["model"] = doc["model"]["name"]
        s["replicas"] = int(doc["decode"]["replicas"])
        s["tp"] = int(doc["decode"]["parallelism"]["tensor"])
        s["epp"] = _epp(doc)
        s["objectives"] = {o["name"]: int(o["priority"]) for o in doc["router"].get("inferenceObjectives") or []}
        s["dirty"] = False
        s["pods"] = {f"ms-decode-{i}": "Running" for i in range(s["replicas"])}
    record("standup", setup=Path(a.workspace).name)
    if cfg.get("chatty"):
        print(
            f"workspace {a.workspace}\n==> To reproduce or demo, run:\n curl -sk -X POST \\\n {ROUTE}/{doc['model']['name']}/v1/completions"
        )
    if cfg.get("fail", {}).get("standup"):
        die("model servers did not become ready (fake)", 1)


def cmd_teardown(a) -> None:
    _overrides(a.cluster_config)
    with state() as s:
        s["up"] = False
        s["pods"] = {}
        s["teardowns"] = s.get("teardowns", 0) + 1
    record("teardown", setup=Path(a.workspace).name)
    if config().get("fail", {}).get("teardown"):
        die("teardown left resources behind (fake)", 1)


def _seed(*parts) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def _stat(units: str, value: float, spread: float = 0.15) -> dict:
    return {
        "units": units,
        "mean": round(value, 9),
        "p50": round(value * 0.95, 9),
        "p90": round(value * (1 + spread), 9),
        "p95": round(value * (1 + 2 * spread), 9),
        "p99": round(value * (1 + 4 * spread), 9),
    }


def make_report(name: str, arm: str, rate: float, keywords: list[str], st: dict, fault_hit: bool, carry: bool) -> dict:
    """A v0.2 report whose numbers depend only on (arm, run treatment) and the config: reruns are identical.

    Shaped as llm-d-benchmark's ``run --analyze`` leaves it (the driver's conversion overwrites the pod's): no
    ``scenario.stack`` (no EPP config, model or replicas), only ``run.keywords`` from ``--run-keywords``."""
    cfg = config()
    rng = random.Random(_seed(arm, name, cfg.get("seed", 1)))
    workload = name.split("-rate-")[0]
    factor = 1 + cfg.get("effect", {}).get(arm, 0.0)
    factor *= math.exp(rng.gauss(0, cfg.get("noise", 0.02)))
    if fault_hit:
        factor *= 1 + cfg.get("fault", {}).get(arm, 0.1)
    if carry:
        factor *= 1 + cfg.get("carry_over", 0.0)
    base = 0.05 * (1 + rate / 50)
    uid = hashlib.sha256(f"{arm}|{name}|{cfg.get('seed', 1)}".encode()).hexdigest()[:32]
    return {
        "version": "0.2",
        "run": {
            "uid": uid,
            "eid": hashlib.sha256(name.encode()).hexdigest()[:32],
            "description": f"fake cluster run {name}",
            "keywords": keywords,
        },
        "scenario": {
            "load": {
                "metadata": {"cfg_id": workload},
                "standardized": {
                    "tool": "inference-perf",
                    "tool_version": "0.7.0",
                    "source": "random",
                    "stage": 0,
                    "input_seq_len": {"distribution": "fixed", "value": 512},
                    "rate_qps": rate,
                },
                "native": {"config": {"workload": workload}},
            },
        },
        "results": {
            "request_performance": {
                "aggregate": {
                    "requests": {"total": int(rate * 100), "failures": 0, "incomplete": 0},
                    "latency": {
                        "time_to_first_token": _stat("s", base * factor),
                        "time_per_output_token": _stat("s/token", 0.01 * factor),
                        "inter_token_latency": _stat("s/token", 0.01 * factor),
                        "request_latency": _stat("s", 20 * base * factor),
                    },
                    "throughput": {
                        "output_token_rate": {"units": "tokens/s", "mean": round(rate * 100 / factor, 6)},
                        "request_rate": {"units": "queries/s", "mean": round(rate * 0.99, 6)},
                    },
                }
            }
        },
    }


def _deployed_config_is_the_recorded_one(keywords: list[str], st: dict) -> None:
    """The report keeps only the keywords, so a run whose epp-config keyword is not the EPP config deployed
    (a swap that did not happen, the other arm's digest) would bind the wrong arm's measurement: refuse it here,
    where the cluster knows what is deployed. Warm-up runs record no arm."""
    recorded = [k.removeprefix("epp-config:") for k in keywords if k.startswith("epp-config:")]
    if not recorded and any(k.startswith("warmup:") for k in keywords):
        return
    text = json.dumps(st["epp"]["config"], sort_keys=True, separators=(",", ":"), default=str)
    deployed = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    if recorded != [deployed]:
        die(f"--run-keywords epp-config {recorded} is not the deployed EPP config ({deployed})", 1)


def cmd_run(a) -> None:
    _overrides(a.cluster_config)
    if a.harness == "priority-mix" and a.parallelism == 1 and a.analyze:
        cmd_run_priority_mix(a)
        return
    if a.harness != "inference-perf" or a.parallelism != 1 or not a.analyze:
        die("run needs -l inference-perf (or priority-mix) -j 1 --analyze")
    profile = _yaml(Path(a.workload_file_path).read_text())
    duration = float(profile["load"]["stages"][0]["duration"])
    exp = _yaml(Path(a.experiments).read_text())
    [treatment] = exp["treatments"]
    name, rate = treatment["name"], float(treatment["load.stages.0.rate"])
    keywords = [k for k in (a.run_keywords or "").split(",") if k]
    cfg = config()
    setup = Path(a.workspace).name.removeprefix("setup-treatment-")
    arm = setup.split("+")[0]
    with state() as s:
        if not s.get("up"):
            die("no stack is up", 1)
        s["harness"] = {"since": time.time(), "name": name}
        s.pop("deleted", None)
        warm = name.startswith("warmup-")
        carry = bool(s.get("dirty")) and not warm
        if warm or s.get("dirty"):
            s["dirty"] = False
    record("run-start", name=name, setup=setup)
    if cfg.get("hang") == name:
        while True:
            time.sleep(1)
    time.sleep(cfg.get("slow", {}).get(name, duration * cfg.get("seconds_per_run_second", 1.0)))
    if cfg.get("fail", {}).get("run") == name:
        with state() as s:
            s.pop("harness", None)
        die(f"treatment {name} failed (fake)", 1)
    if _no_results(cfg, f"{arm}/{name}"):
        return
    with state() as s:
        fault_hit = bool(s.get("deleted"))
        s.pop("harness", None)
        s["pods"] = dict.fromkeys(s.get("pods") or {}, "Running")  # the deleted pod was recreated and is ready again
        st = dict(s)
    _deployed_config_is_the_recorded_one(keywords, st)
    doc = make_report(name, arm, rate, keywords, st, fault_hit, carry)
    bad = next((how for sub, how in cfg.get("bad", {}).items() if sub in f"{arm}/{name}"), None)
    if bad == "wrong-rate":
        doc["scenario"]["load"]["standardized"]["rate_qps"] = rate + 5
    elif bad == "no-ttft":
        del doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
    out = Path(a.workspace) / "results" / f"inference-perf-{name}-{int(time.time())}-{os.getpid() % 100000:05d}_1"
    out.mkdir(parents=True, exist_ok=True)
    if cfg.get("mode", "v02") == "native":
        (out / "stage_0_lifecycle_metrics.json").write_text(json.dumps(doc))
    else:
        tmp = out / ".report.tmp"
        tmp.write_text("version: '0.2'\nrun: {uid: [broken\n" if bad == "corrupt" else _yaml_dump(doc))
        tmp.replace(out / "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml")
    record("run-finished", name=name, setup=setup, fault_hit=fault_hit, carry=carry)
    if cfg.get("chatty"):
        print(f"run {name} done -> {out}")


def _no_results(cfg: dict, run: str) -> bool:
    """The harness pod died without collecting results: the run ends (exit 0) and writes nothing."""
    if not any(sub in run for sub in cfg.get("no_results", [])):
        return False
    with state() as s:
        s.pop("harness", None)
    record("run-finished", name=run.split("/", 1)[1], no_results=True)
    print("harness pod failed; no results collected")
    return True


def cmd_run_priority_mix(a) -> None:
    """upstream's priority_mix.py: the profile's classes at the treatment's rate, per-class results + metadata."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from tests.bench.priority_mix_data import ADMITS_ALL, FIXTURES, results_doc

    profile = _yaml(Path(a.workload_file_path).read_text())
    classes = {c["name"]: c for c in profile.get("trafficClasses") or []}
    if set(classes) != set(ADMITS_ALL):
        die(f"--workload-file-path {a.workload_file_path}: trafficClasses {sorted(classes)} are not upstream's")
    [treatment] = _yaml(Path(a.experiments).read_text())["treatments"]
    name, rate = treatment["name"], float(treatment["load.rate_per_second"])
    if f"-rate-{rate:g}-" not in name:
        die(f"treatment {name}: load.rate_per_second is {rate:g}, not the rate its name files the results under")
    keywords = ",".join(k for k in (a.run_keywords or "").split(",") if k)
    cfg = config()
    arm = Path(a.workspace).name.removeprefix("setup-treatment-").split("+")[0]
    with state() as s:
        if not s.get("up"):
            die("no stack is up", 1)
        declared = dict(s.get("objectives") or {})
        model = s.get("model")
    record("run-start", name=name, setup=Path(a.workspace).name, harness="priority-mix")
    while cfg.get("hang") == f"{arm}/{name}":
        time.sleep(1)
    time.sleep(float(profile["load"]["duration_seconds"]) * cfg.get("seconds_per_run_second", 1.0))
    if _no_results(cfg, f"{arm}/{name}"):
        return
    counts = {}
    for cls, (sent, admitted) in {
        **ADMITS_ALL,
        **{k: tuple(v) for k, v in cfg.get("mix", {}).get(arm, {}).items()},
    }.items():
        sheddable = declared.get(classes[cls]["objective"], 0) < 0  # an undeclared objective resolves to 0
        counts[cls] = (sent, admitted if sheddable else sent)
    n = int(name.rsplit("-rep-", 1)[1])
    doc = results_doc(arm, counts, n)
    if cfg.get("chatty"):  # a refused request's error names the route it was sent to
        for r in doc["requests"]:
            if r["status_code"] == 429:
                r["error"] = f"429 Too Many Requests from {ROUTE}/v1/chat/completions"
    exp_id = f"priority-mix-{name}-{int(time.time())}-{os.getpid() % 100000:05d}"
    out = Path(a.workspace) / "results" / f"{exp_id}_1"
    out.mkdir(parents=True, exist_ok=True)
    bad = next((how for sub, how in cfg.get("mix_bad", {}).items() if sub in f"{arm}/{name}"), None)
    if bad == "corrupt":
        (out / "results.json").write_text('{"summary": {"traffic_classes": ')
    elif bad != "missing":
        (out / "results.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    meta = _yaml((FIXTURES / arm / "run_metadata.yaml").read_text())
    meta.update(
        model=model,  # upstream records the model the stack serves
        experiment_id=exp_id,
        description_keywords=keywords,
        endpoint_url=f"{ROUTE}/v1",
        namespace=a.namespace,
        harness_workload=Path(a.workload_file_path).name,
    )
    (out / "run_metadata.yaml").write_text(_yaml_dump(meta))
    record(
        "run-finished", name=name, setup=Path(a.workspace).name, harness="priority-mix", fault_hit=False, carry=False
    )
    if cfg.get("chatty"):
        print(f"run {name} done -> {out}")


def llmdbenchmark() -> None:
    a = llmdbenchmark_parser().parse_args()
    if not a.specification_file or not a.workspace:
        die("--spec and --workspace are required")
    record("call", command=a.command)
    {"standup": cmd_standup, "run": cmd_run, "teardown": cmd_teardown}[a.command](a)


# ------------------------------------------------------------------ kubectl
def kubectl() -> None:
    argv = sys.argv[1:]
    record("call")
    if argv[:2] == ["get", "pods"]:
        ap = argparse.ArgumentParser()
        ap.add_argument("-n", required=True)
        ap.add_argument("-l", required=True)
        ap.add_argument("-o", required=True)
        a = ap.parse_args(argv[2:])
        fails = config().get("kubectl_get_fails")
        if fails == "refused":
            die("The connection to the server 127.0.0.1:8080 was refused - did you specify the right host or port?", 1)
        if fails == "forbidden":
            die(
                f'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:{a.n}:runner" '
                f'cannot list resource "pods" in API group "" in the namespace "{a.n}"',
                1,
            )
        with state() as s:
            if a.l == "app=llmdbench-harness-launcher,function=load_generator":
                if s.get("harness"):
                    since = datetime.fromtimestamp(s["harness"]["since"], UTC).isoformat(timespec="microseconds")
                    print(
                        f"inference-perf-{_seed(s['harness']['name']) % 10000} Running {since.replace('+00:00', 'Z')}"
                    )
            elif a.l == "llm-d.ai/role=decode":
                for name, phase in sorted((s.get("pods") or {}).items()):
                    print(f"{name} {phase} 2026-01-01T00:00:00Z")
            else:
                die(f"-l {a.l}: no such selector in the fake cluster")
        return
    if argv[:2] == ["delete", "pod"]:
        ap = argparse.ArgumentParser()
        ap.add_argument("name")
        ap.add_argument("-n", required=True)
        ap.add_argument("--wait", choices=["false", "true"])
        a = ap.parse_args(argv[2:])
        if config().get("forbid_delete"):
            die(
                f'Error from server (Forbidden): pods "{a.name}" is forbidden: User "system:serviceaccount:{a.n}:runner" '
                f'cannot delete resource "pods" in API group "" in the namespace "{a.n}"',
                1,
            )
        with state() as s:
            if a.name not in (s.get("pods") or {}):
                die(f'pods "{a.name}" not found', 1)
            s["pods"][a.name] = "Pending"
            since = (s.get("harness") or {}).get("since")
            s["deleted"] = a.name
        record("delete-pod", pod=a.name, at=time.time() - since if since else None)
        print(f'pod "{a.name}" deleted')
        return
    if argv[:2] in (["create", "configmap"], ["get", "configmap"], ["delete", "configmap"]):
        configmap(argv[0], argv[2:])
        return
    if argv[:2] == ["rollout", "status"]:
        print("deployment successfully rolled out")
        return
    die(f"unsupported kubectl call {argv}")


def configmap(verb: str, rest: list[str]) -> None:
    """kubectl create | get | delete configmap, as the real one answers: create of an existing object fails
    (AlreadyExists), get and delete of a missing one fail (NotFound) unless --ignore-not-found."""
    ap = argparse.ArgumentParser(prog=f"kubectl {verb} configmap")
    ap.add_argument("name")
    ap.add_argument("-n", "--namespace", dest="n", required=True)
    if verb == "create":
        ap.add_argument("--from-literal", action="append", default=[])
    elif verb == "get":
        ap.add_argument("-o", "--output", dest="o", choices=["json"], required=True)
    else:
        ap.add_argument("--ignore-not-found", action="store_true")
    a = ap.parse_args(rest)
    if config().get("forbid_configmaps"):
        die(
            f'Error from server (Forbidden): configmaps is forbidden: User "system:serviceaccount:{a.n}:runner" '
            f'cannot {verb} resource "configmaps" in API group "" in the namespace "{a.n}"',
            1,
        )
    with state() as s:
        maps = s.setdefault("configmaps", {}).setdefault(a.n, {})
        obj = maps.get(a.name)
        if verb == "create":
            if obj is not None:
                record("configmap", verb=verb, name=a.name, namespace=a.n, ok=False)
                die(f'Error from server (AlreadyExists): configmaps "{a.name}" already exists', 1)
            if any("=" not in lit for lit in a.from_literal):
                die(f"error: invalid literal source {a.from_literal}, expected key=value", 1)
            data = dict(lit.split("=", 1) for lit in a.from_literal)
            created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            maps[a.name] = obj = {"data": data, "creationTimestamp": created}
        elif obj is None:
            if verb == "delete" and a.ignore_not_found:
                return
            die(f'Error from server (NotFound): configmaps "{a.name}" not found', 1)
        elif verb == "delete":
            del maps[a.name]
    record("configmap", verb=verb, name=a.name, namespace=a.n, ok=True, data=obj["data"])
    if verb == "create":
        print(f"configmap/{a.name} created")
    elif verb == "delete":
        print(f'configmap "{a.name}" deleted')
    else:
        meta = {"name": a.name, "namespace": a.n, "creationTimestamp": obj["creationTimestamp"]}
        print(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": obj["data"]}, indent=4))


# ------------------------------------------------------- make / docker / converter
def make() -> None:
    ap = argparse.ArgumentParser(prog="make")
    ap.add_argument("-C", required=True)
    ap.add_argument("target", choices=["image-build-epp", "image-push-epp"])
    ap.add_argument("assignments", nargs="*")
    a = ap.parse_args()
    env = dict(x.split("=", 1) for x in a.assignments)
    if "EPP_IMAGE" not in env:
        die("EPP_IMAGE=... is required (llm-d-router Makefile)")
    if not (Path(a.C) / "cmd" / "epp" / "runner" / "runner.go").is_file():
        die(f"{a.C} is not an llm-d-router tree")
    import subprocess

    head = subprocess.run(
        ["git", "-C", a.C, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    record("call", target=a.target, commit=head, image=env["EPP_IMAGE"])
    with state() as s:
        images = s.setdefault("images", {})
        if a.target == "image-build-epp":
            images[env["EPP_IMAGE"]] = {"commit": head, "pushed": False}
        else:
            if env["EPP_IMAGE"] not in images:
                die("image-push-epp of an image that was not built", 1)
            images[env["EPP_IMAGE"]]["pushed"] = True
            images[env["EPP_IMAGE"]]["digest"] = (
                "sha256:" + hashlib.sha256((head + env["EPP_IMAGE"]).encode()).hexdigest()
            )


def docker() -> None:
    argv = sys.argv[1:]
    record("call")
    if argv[:2] != ["image", "inspect"] or argv[2:4] != ["--format", "{{index .RepoDigests 0}}"]:
        die(f"unsupported docker call {argv}")
    image = argv[4]
    with state() as s:
        img = (s.get("images") or {}).get(image)
    if not img or not img.get("pushed"):
        die(f"no such image: {image}", 1)
    print(f"{image.rsplit(':', 1)[0]}@{img['digest']}")


def benchmark_report() -> None:
    ap = argparse.ArgumentParser(prog="benchmark-report")
    ap.add_argument("native")
    ap.add_argument("-b", required=True, choices=["0.1", "0.2"])
    ap.add_argument("-w", required=True)
    ap.add_argument("out")
    a = ap.parse_args()
    record("call")
    doc = json.loads(Path(a.native).read_text())
    Path(a.out).write_text(_yaml_dump(doc))


def main() -> None:
    {
        "llmdbenchmark": llmdbenchmark,
        "kubectl": kubectl,
        "make": make,
        "docker": docker,
        "benchmark-report": benchmark_report,
    }[NAME]()


if __name__ == "__main__":
    main()
