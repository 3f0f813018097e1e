"""``promote bench teardown``: tear down every stack the plan stands up, for a job that was killed outright."""

from __future__ import annotations

import shutil

from bot.bench.run import lock
from bot.bench.run import manifest as mf
from bot.bench.run.runner import BenchRunner, RunConfig
from bot.bench.run.schedule import build_schedule


def teardown_all(cfg: RunConfig) -> list[str]:
    """Tear down every group the plan stands up (idempotent): for a job killed outright.

    Under the namespace lock, taking over this promotion's own (the killed job's): while another promotion
    holds the namespace its stack is up there, and benchmark.yml runs this step even after a refused run."""
    with lock.held(cfg, takeover=True):
        return _teardown_all(cfg)


def _teardown_all(cfg: RunConfig) -> list[str]:
    runner = BenchRunner(cfg)
    runner.manifest = mf.load(cfg.results) or mf.Manifest(
        promotion=cfg.request.id,
        slug=cfg.request.slug,
        commit=cfg.commit,
        planned_gpu_minutes=cfg.plan.total_gpu_minutes,
    )
    image = "r/r:t"
    if runner.manifest.image is not None:
        image = f"{runner.manifest.image.ref}@{runner.manifest.image.digest}"
    done = []
    groups = build_schedule(
        cfg.plan, cfg.request, cfg.epp_configs, image, arm_order=cfg.arm_order, fast_swap=cfg.fast_swap
    )
    if cfg.plan.priority_mix is not None:  # the mix's own stand-ups (bot.bench.run.mix)
        from bot.bench.run.mix import mix_setups

        groups = [g for g, _ in mix_setups(cfg.plan.priority_mix, cfg, image)] + groups
    for group in groups:
        runner._teardown(group, group.setups[0])
        done.append(group.name)
    shutil.rmtree(cfg.target.workspace / "profiles", ignore_errors=True)
    return done
