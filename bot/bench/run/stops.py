"""Why a benchmark run stops early, shared by the runner and its sequential rounds.

They are exceptions rather than return values because a stop can come from deep inside a cell (a
step that failed, a budget that ran out) and must unwind to the one place that writes the manifest.
"""

from __future__ import annotations


class BudgetStop(Exception):
    """The budget stops the run; its text (when given) says what remains instead of the budget's list."""


class StepFailed(Exception):
    """A step of the run (stand-up, swap, a harness run) failed; its text says which and why."""
