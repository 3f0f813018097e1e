"""Track A describes the plugin as deployed: the values a person re-calibrated at gate 1, beside BLIS's.

Found by a new user: after `param qThreshold: 24` was approved at gate 1, A1 still gave the mechanism as
"when QueueDepth exceeds 3" and its diagnostic still suspected `qThreshold` of being "calibrated to BLIS
scales", although the benchmarked plugin runs at 24; a gate-2 reviewer read a mechanism the plugin does not have.
"""

from __future__ import annotations

from bot.hypotheses import generate_hypotheses
from tests.hypotheses.conftest import make_request


def _track_a(summary, dictionary, deployed=None):
    hyps = generate_hypotheses(make_request(), summary, dictionary, deployed=deployed)
    return [h for h in hyps if h.track.value == "A"]


def test_track_a_names_the_recalibrated_value_with_blis_value_beside_it(summary, dictionary):
    (a1, *_) = _track_a(summary, dictionary, {"kvThreshold": 0.75})
    said = "`kvThreshold` = 0.75 (BLIS: 0.9)"
    assert said in a1.statement and said in a1.mechanism, (a1.statement, a1.mechanism)
    assert "re-calibrated at gate 1" in a1.mechanism and a1.mechanism.startswith("prefix affinity keeps")
    # The diagnostic no longer suspects the re-calibrated value of BLIS scales; the others it still does.
    assert "evolved thresholds (`decay`) are calibrated to BLIS scales" in a1.diagnostic, a1.diagnostic
    assert f"values re-calibrated at gate 1 for this deployment, {said}, do not fit" in a1.diagnostic


def test_without_recalibration_or_with_a_value_set_back_to_blis_the_text_is_blis_own(summary, dictionary):
    plain = _track_a(summary, dictionary)
    assert _track_a(summary, dictionary, {"kvThreshold": 0.9}) == plain  # set back: no re-calibration
    assert all("as deployed" not in h.statement.lower() for h in plain)
    assert "evolved thresholds (`decay`, `kvThreshold`)" in plain[0].diagnostic
