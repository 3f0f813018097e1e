"""The stage 4 experiment as upstream reads it (llm-d.md §D): the stack is pinned, upstream profile settings kept."""

from __future__ import annotations

import yaml

from bot.bench.experiment import PROFILE_DIR, render_experiment, upstream_profile
from bot.bench.plan import make_plan
from bot.model import PromotionRequest
from tests.bench.test_bench_plan import EPP_BASELINE, EPP_EVOLVED, _example_hypotheses, _request

ROOT = "benchmarks/promotion/evolved-adaptive-scorer"


def _files(req: PromotionRequest | None = None) -> dict[str, str]:
    req = req or _request()
    return render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)


def test_the_experiment_pins_model_replicas_parallelism_and_accelerator():
    """--spec guides/optimized-baseline alone deploys Qwen3-32B on 2 pods: the plan's stack must be pinned."""
    req = _request(
        stack={
            "model": "Qwen/Qwen3-8B",
            "replicas": 6,
            "tensor_parallelism": 2,
            "accelerator": "NVIDIA-A100-SXM4-80GB",
        }
    )
    doc = yaml.safe_load(_files(req)[f"{ROOT}/experiment.yaml"])
    constants = doc["setup"]["constants"]
    assert constants["model.name"] == "Qwen/Qwen3-8B"
    assert constants["model.huggingfaceId"] == "Qwen/Qwen3-8B"
    assert constants["decode.replicas"] == 6
    assert constants["decode.parallelism.tensor"] == 2
    assert constants["decode.acceleratorType.labelValue"] == "NVIDIA-A100-SXM4-80GB"
    # The GPU-minutes are those of that stack: 6 pods x 2 GPUs.
    assert make_plan(req, _example_hypotheses()).parameters.gpus_per_stack == 12


def test_the_bundled_example_says_its_stack():
    req = PromotionRequest.load("examples/weighted-adaptive/promotion.yaml")
    assert "stack" in req.model_fields_set
    assert (req.stack.model, req.stack.replicas, req.stack.tensor_parallelism) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        4,
        1,
    )


def test_profiles_keep_every_upstream_setting_they_do_not_change():
    files = _files()
    for name, upstream_name in (
        ("sanity-random", "sanity_random"),
        ("optimized-baseline", "guide_optimized-baseline_1"),
        ("cache-warmup", "shared_prefix_synthetic"),
    ):
        text = files[f"{ROOT}/workloads/{name}.yaml"]
        got, up = yaml.safe_load(text), upstream_profile(upstream_name)
        changed = [line.removeprefix("#   - ") for line in text.splitlines() if line.startswith("#   - ")]
        assert changed[0].startswith("load.stages:"), changed

        def leaves(d, prefix=""):
            for k, v in d.items():
                if isinstance(v, dict):
                    yield from leaves(v, f"{prefix}{k}.")
                elif k != "stages":
                    yield f"{prefix}{k}", v

        got_leaves = dict(leaves(got))
        for key, value in leaves(up):
            if any(c.startswith(f"{key}:") for c in changed):
                continue
            assert got_leaves.get(key) == value, (name, key)
    sanity = yaml.safe_load(files[f"{ROOT}/workloads/sanity-random.yaml"])
    # inference-perf names the spread std_dev and ignores `std` (llm-d.md §D).
    assert sanity["data"]["input_distribution"] == {
        "min": 256,
        "max": 512,
        "mean": 384,
        "std_dev": 10,
        "total_count": 100,
    }
    assert sanity["load"]["request_timeout"] == 30 and sanity["load"]["num_workers"] == 1
    guide = yaml.safe_load(files[f"{ROOT}/workloads/optimized-baseline.yaml"])
    assert guide["load"]["request_timeout"] == 300.0 and guide["load"]["interval"] == 30.0


def test_copied_profiles_are_the_upstream_files():
    assert sorted(p.name for p in PROFILE_DIR.glob("*.yaml.in")) == [
        "guide_optimized-baseline_1.yaml.in",
        "sanity_random.yaml.in",
        "shared_prefix_synthetic.yaml.in",
    ]


def test_the_gpu_jobs_time_limit_covers_the_sequential_designs_longest_run():
    import json

    req = _request()
    plan = make_plan(req, _example_hypotheses())
    limits = json.loads(next(v for k, v in _files(req).items() if k.endswith("run-limits.json")))
    assert plan.sequential is not None
    longest = max(plan.cost.gpu_minutes, plan.sequential.max_gpu_minutes)
    assert limits["timeout_minutes"] >= longest / plan.parameters.gpus_per_stack + 60


def test_run_limits_carry_the_cap_the_runner_applies_beside_the_fixed_plan():
    """Consistency finding 9: run-limits.json said only the fixed plan (3040) while the README, gate 2 and the
    runner's default cap say 3120; stage 5 reads both figures from it for gpu-time.json."""
    import json

    from bot.bench.units import gpu_minutes

    req = _request()
    plan = make_plan(req, _example_hypotheses())
    files = _files(req)
    limits = json.loads(next(v for k, v in files.items() if k.endswith("run-limits.json")))
    assert limits["planned_gpu_minutes"] == plan.total_gpu_minutes
    assert limits["budget_gpu_minutes"] == plan.most_gpu_minutes > plan.total_gpu_minutes
    readme = next(v for k, v in files.items() if k.endswith("/README.md"))
    assert f"At most **{gpu_minutes(plan.most_gpu_minutes)} GPU-minutes**" in readme


def test_a_profile_is_parsed_once_and_every_caller_gets_its_own_copy(monkeypatch, tmp_path):
    """The plan prices every cell from its profile (``stage_seconds``), 78 times for the bundled example: the
    text is parsed once, and a caller changing what it got (``profile_with_changes`` does) changes nothing
    for the next one."""
    import bot.bench.experiment as experiment

    monkeypatch.setattr(experiment, "PROFILE_DIR", tmp_path)
    (tmp_path / "once.yaml.in").write_text(f"# {tmp_path}\nload:\n  stages: [{{rate: 3, duration: 60}}]\n")
    parsed = []
    real = experiment.load_yaml
    monkeypatch.setattr(experiment, "load_yaml", lambda text: parsed.append(text) or real(text))
    first = upstream_profile("once")
    first["load"]["stages"][0]["rate"] = 99
    second = upstream_profile("once")
    assert len(parsed) == 1 and second == {"load": {"stages": [{"rate": 3, "duration": 60}]}}


def test_the_parsed_profile_is_keyed_on_the_files_text(monkeypatch, tmp_path):
    """A profile whose file changed is parsed again: the memo is keyed on the text, not on the name."""
    import bot.bench.experiment as experiment

    monkeypatch.setattr(experiment, "PROFILE_DIR", tmp_path)
    (tmp_path / "p.yaml.in").write_text("load:\n  stages: [{rate: 1, duration: 10}]\n", encoding="utf-8")
    assert upstream_profile("p")["load"]["stages"] == [{"rate": 1, "duration": 10}]
    (tmp_path / "p.yaml.in").write_text("load:\n  stages: [{rate: 2, duration: 30}]\n", encoding="utf-8")
    assert upstream_profile("p")["load"]["stages"] == [{"rate": 2, "duration": 30}]
    assert upstream_profile("missing") is None
