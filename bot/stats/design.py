"""The decision rule stage 4 promises and stage 5 applies, as data.

Stage 4's plan decides, before any GPU is spent, how alpha is shared among the
promotion's hypotheses (``bot.stats.multiplicity``). It writes that choice into
the evaluation spec (``bot.bench.evaluation_spec``) as a ``DecisionRule``; stage
5 passes the same object to ``bot.stats.verdicts.evaluate``, so the verdicts
are computed under the rule the plan sized for, not a default.
"""

from __future__ import annotations

import itertools
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.stats import StatsError

PROCEDURE = "weighted-holm"
PROCEDURE_TEXT = (
    "weighted Holm over every benchmarked hypothesis of the promotion (family-wise error <= alpha for the "
    "whole promotion); a hypothesis's cells must all confirm (intersection-union), a single refuting cell "
    "refutes (Bonferroni over its cells); confirmations and refutations are two families"
)


class SequentialRule(BaseModel):
    """The group-sequential design (``bot.stats.sequential``): when each cell is looked at, how alpha is spent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spending: Literal["pocock", "obrien-fleming"] = Field(
        default="pocock", description="alpha-spending function (Lan-DeMets type), per claim and cell"
    )
    looks: dict[str, list[int]] = Field(
        description="cell label (workload@rate) -> cumulative runs per arm at each look; the last is its horizon"
    )
    decidable: list[str] = Field(
        default_factory=list,
        description="hypotheses whose cells keep running until they are decided; a cell serving none of them "
        "runs its looks to the horizon unless every hypothesis on it is decided",
    )

    @field_validator("looks")
    @classmethod
    def _looks(cls, looks: dict[str, list[int]]) -> dict[str, list[int]]:
        for label, ns in looks.items():
            if not ns or ns[0] < 2 or any(b <= a for a, b in itertools.pairwise(ns)):
                raise ValueError(f"looks of {label}: {ns}; expected increasing run counts, the first >= 2")
        return looks


class DecisionRule(BaseModel):
    """How the verdicts share alpha: weighted Holm with these initial weights (empty: equal, i.e. Holm)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(default=0.05, gt=0, lt=0.5, description="one-sided level of every test")
    procedure: Literal["weighted-holm"] = PROCEDURE
    weights: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "hypothesis id -> initial share of alpha for confirmations; ids not listed get 0 and are tested with "
            "alpha passed on from confirmed hypotheses; empty: equal weights (Holm over the whole family)"
        ),
    )
    description: str = PROCEDURE_TEXT
    sequential: SequentialRule | None = Field(
        default=None, description="the group-sequential design the runs follow; None: a fixed number of runs"
    )

    @field_validator("weights")
    @classmethod
    def _weights(cls, w: dict[str, float]) -> dict[str, float]:
        for hid, x in w.items():
            if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
                raise ValueError(f"weight of {hid} is {x!r}; weights are finite shares >= 0")
        total = sum(w.values())
        if w and not (total > 0 and abs(total - 1.0) <= 1e-6):
            raise ValueError(f"weights sum to {total:g}; they are shares of alpha and must sum to 1")
        return w


def default_rule(alpha: float = 0.05) -> DecisionRule:
    """Holm over the whole family: what ``evaluate`` uses when no plan says otherwise."""
    try:
        return DecisionRule(alpha=alpha)
    except ValueError as exc:
        raise StatsError(f"alpha={alpha!r}; pass a one-sided significance level between 0 and 0.5, e.g. 0.05") from exc
