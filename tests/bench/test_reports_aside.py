"""How `promote evaluate`'s summary line counts the reports it did not use: valid ones are never called rejected."""

from __future__ import annotations

from bot.bench.mix_only import MIX_ONLY, NO_CELLS
from bot.bench.reports_aside import NOT_IN_PLAN, not_used_said
from bot.stats.judged import PAST_LAST_LOOK


def test_valid_reports_of_cells_the_plan_does_not_read_are_not_used_and_never_rejected():
    """A mix-only plan has no cells, so its cell reports are valid reports of cells not in the plan (gate 3 counts
    them so: ``G3.report-unused``); once they were counted as rejected in the CLI's summary line."""
    said = not_used_said(
        [
            ("baseline/spikes/rate-10/rep-1/r.yaml", f"{NO_CELLS} ({MIX_ONLY})"),
            ("evolved/spikes/rate-30/rep-1/r.yaml", f"{NOT_IN_PLAN}: no hypothesis reads its workload and rate"),
            ("evolved/spikes/rate-10/rep-9/r.yaml", f"{PAST_LAST_LOOK}: ..."),
            ("evolved/spikes/rate-10/rep-2/r.yaml", "cut short: it recorded 6 requests"),
        ]
    )
    assert said == (
        "; 1 report(s) rejected (listed in verdicts.md)"
        f"; 2 valid report(s) of a {NOT_IN_PLAN}, not used (listed in verdicts.md)"
        "; 1 valid report(s) past the last look of their cell, not used (listed in verdicts.md)"
    )
    assert not_used_said([]) == ""


def test_gate_3_and_the_cli_agree_on_which_reports_are_valid_and_not_used():
    """One list: each reason gate 3 passes over as valid and unused is one `promote evaluate` never calls rejected."""
    from bot.bench.reports_aside import valid_not_used_reasons

    for reason in valid_not_used_reasons():
        assert "rejected" not in not_used_said([("baseline/spikes/rate-10/rep-1/r.yaml", f"{reason}: why")])
    assert "rejected" in not_used_said([("baseline/spikes/rate-10/rep-1/r.yaml", "cut short: it recorded 6")])
