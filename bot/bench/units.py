"""GPU-minutes written one way on every page, so the same figure reads the same wherever it is quoted.

The plan README, run-limits.json, the runner's log and the validation page wrote ``3040``; the status
comment and the gate 2 review wrote ``3,040``: a reader comparing pages saw two styles of one number
(consistency finding 9). The style most places used wins: no thousands separator.
"""

from __future__ import annotations


def gpu_minutes(value: float) -> str:
    """``3040``, ``3042.5``, ``0.13``: no thousands separator, at most two decimals, no trailing zeros.

    Not ``:g``, which turns a million into ``1e+06``.
    """
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text
