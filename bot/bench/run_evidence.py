"""The evidence rules for results a run manifest describes: one function for stage 5, `promote evaluate` and the
runner's rounds.

``promote bench run`` records in ``manifest.json`` what no report says about itself: the EPP image it built
(its tag is the runner's ``promotion-<id>-<commit>``, not the tag experiment.yaml pins), which runs' Track B
fault never happened, and the SHA-256 of every report it wrote. Each reader of those results must hold the
reports to the same record, or the same results give different verdicts: ``promote evaluate --spec`` once
called the runner's own image "another build", and the rounds counted runs whose pod deletion never happened
that stage 5 then left out. So the rules are built here, once, from the spec and the manifest. Results that lost
their manifest bind a report of the runner's image by its tag and ``commit:`` keyword (``no_manifest``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.bench import custody
from bot.bench.evidence import EvidencePolicy, policy_from_spec
from bot.bench.fault_runs import missed
from bot.bench.load_binding import planned_loads
from bot.bench.run import manifest as mf


def load_manifest(results: Path) -> mf.Manifest | None:
    """The run manifest under ``results``; None without one, or when it cannot be read (``custody`` says so)."""
    try:
        return mf.load(Path(results))
    except (OSError, ValueError):
        return None


def policy_for(
    spec: Any,
    manifest: mf.Manifest | None,
    *,
    allow_sample_data: bool,
    request: Any = None,
    promotion: str | None = None,
) -> EvidencePolicy:
    """The evidence rules of an evaluation spec (None: promotion, sample data and loads only) for results that
    ``manifest`` describes: the image the runner built or was given, and the runs whose fault never happened.

    ``promotion`` binds the reports to a promotion id when there is no spec (the spec names its own).
    """
    image = manifest.image if manifest is not None else None
    digest = image.digest if image is not None and image.digest else None
    if spec is None:
        policy = EvidencePolicy(
            promotion=promotion,
            allow_sample_data=allow_sample_data,
            image_digest=digest,
            workloads=planned_loads(request) if request is not None else {},
        )
    else:
        policy = policy_from_spec(
            spec,
            allow_sample_data=allow_sample_data,
            image_digest=digest,
            image_ref=image.ref if image is not None and image.ref else None,
            image_built=mf.image_built(image),
            request=request,
        )
    policy.not_evidence = missed(manifest)  # runs whose fault never happened
    policy.no_manifest = manifest is None  # then a report names the runner's build by its tag (runner_build_problem)
    return policy


def policy_for_results(
    spec: Any, results: Path, *, allow_sample_data: bool, request: Any = None, promotion: str | None = None
) -> EvidencePolicy:
    """``policy_for`` the manifest under ``results``, holding each report to the bytes it recorded (custody).

    A new policy per set of results: it counts the sample data it lets through.
    """
    policy = policy_for(
        spec, load_manifest(results), allow_sample_data=allow_sample_data, request=request, promotion=promotion
    )
    policy.custody = custody.read(Path(results))  # reports edited or added after the run
    return policy
