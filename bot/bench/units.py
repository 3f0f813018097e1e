"""GPU-minutes written one way on every page, so the same figure reads the same wherever it is quoted.

The plan README, run-limits.json, the runner's log and the validation page wrote ``3040``; the status
comment and the gate 2 review wrote ``3,040``: a reader comparing pages saw two styles of one number
(consistency finding 9). The style most places used wins: no thousands separator.
"""

from __future__ import annotations


def gpu_minutes(value: float) -> str:
    """``3040``, ``3042.5``, ``240.667``: ``:g`` (what most places wrote), without a thousands separator, and a
    whole number, never ``1e+06``, from a million up."""
    return f"{value:.0f}" if abs(value) >= 1e6 else f"{value:g}"
