"""One rule for BLIS's magnitude: the verdict's detail, the report's "Feedback for BLIS" and the PR's line agree.

Found by a researcher rehearsing a promotion: A1's detail said "Note: attenuated: observed -5.2% is 0.26x BLIS's
-20.0%" (the point estimate's ratio) while the report's feedback section and the PR body said there was no
magnitude flag (the interval widened by the noise floor reached past 0.3x). The verdicts here are judged from
synthetic reports by ``evaluate``; the three texts are rendered from the templates the report and the PR use.
"""

from __future__ import annotations

import pytest

from bot import PROJECT_ROOT
from bot.hypotheses.blis_feedback import recommendations
from bot.model import Hypothesis, Verdict
from bot.render import environment
from bot.render.outcome import detail_markdown
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import build, hypothesis, with_sample_cv

MARKDOWN_TEMPLATES = PROJECT_ROOT / "bot" / "render" / "templates"

#: How each of the three texts says a magnitude gap.
_DETAIL = ("- Note: attenuated", "- Note: amplified", "- Note: opposite to BLIS")
_NO_FLAG_PR = "nothing to feed back: no refuted hypothesis and no magnitude flag"
_NO_FLAG_REPORT = "No refuted hypothesis or magnitude flag"


def _between(template: str, start: str, end: str) -> str:
    text = (MARKDOWN_TEMPLATES / template).read_text(encoding="utf-8")
    return text[text.index(start) : text.index(end)]


def _judged(blis: float, change: float) -> tuple[Hypothesis, Verdict]:
    """A1 (ttft_mean decrease, BLIS predicted ``blis``) judged on 7 runs per arm with a 2% CV (noise floor 5%)."""
    reports = build(
        [
            {
                "workload": "chat",
                "rate": 15,
                "metric": "ttft_mean",
                "baseline": with_sample_cv(0.02, n=7),
                "evolved": with_sample_cv(0.02, n=7, mean=100.0 * (1 + change)),
            }
        ]
    )
    h = hypothesis("A1", rates=[15], blis_magnitude=blis)
    return h, evaluate([h], reports)[0]


def _three_texts(h: Hypothesis, v: Verdict) -> tuple[str, str, str]:
    recs = recommendations([(h, v)])
    env = environment()
    report = env.from_string(_between("report.md.j2", "## Feedback for BLIS", "## GPU time")).render(recs=recs)
    pr = env.from_string(_between("pr_body.md.j2", "- **Feedback for BLIS:**", "- **Origin:**")).render(recs=recs)
    return detail_markdown(h, v, findings_link="findings/A1.md"), report, pr


@pytest.mark.parametrize(
    ("blis", "change", "flagged"),
    [
        # the researcher's A1: -5.2% [-7.0%, -3.4%] against -20% is 0.26x, yet widened by the 5% floor it reaches 0.6x
        (-0.20, -0.052, False),
        # the band's edge: widened, the same cell reaches 0.33x of -36% (inside) and 0.27x of -45% (attenuated)
        (-0.36, -0.052, False),
        (-0.45, -0.052, True),
        (-0.60, -0.052, True),
        # 3x BLIS's -1.7% on the point estimate, but the widened interval reaches the other sign: inside the band
        (-0.017, -0.052, False),
        # -20% [-21.5%, -18.5%] against -5%: beyond 2x over the whole widened interval
        (-0.05, -0.20, True),
    ],
)
def test_detail_feedback_and_pr_line_apply_one_magnitude_rule(blis, change, flagged):
    h, v = _judged(blis, change)
    assert v.effects and abs(v.effects[0].t_eff - 0.05) < 1e-9, v.effects
    detail, report, pr = _three_texts(h, v)
    in_detail = any(line.startswith(_DETAIL) for line in detail.splitlines())
    in_report = _NO_FLAG_REPORT not in report and "(structural-model hypothesis, from A1)" in report
    in_pr = _NO_FLAG_PR not in pr and "(structural-model hypothesis, from A1)" in pr
    assert (in_detail, in_report, in_pr) == (flagged, flagged, flagged), (detail, report, pr)
