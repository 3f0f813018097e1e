"""The promotion bot's shared vocabulary.

Every layer (CLI, engine, stages, capabilities, forges) speaks these pydantic
types, so a promotion request built from a local ``promotion.yaml`` and one
built from a GitHub issue form are the same object, and state written by one
run can be read back by a resumed run or by the GitHub handler.

Nothing here does I/O except ``PromotionRequest.load`` (which reads the
request file and the evolved source it points at), kept here so that every
entry point validates a request the same way.
"""

from __future__ import annotations

from bot.model.base import (
    VVUQ,
    DecidedVia,
    Decision,
    Direction,
    Family,
    HypothesisType,
    PolicyKind,
    Rate,
    RequestError,
    RequestPart,
    Severity,
    Stage,
    Strict,
    Track,
    VerdictStatus,
    describe_error,
    describe_validation_error,
    read_yaml_mapping,
    sha256_text,
    slugify,
    status_counts,
)
from bot.model.evidence import (
    AdmissionRow,
    Effect,
    Fidelity,
    FidelityCause,
    FidelityFailure,
    Finding,
    Hypothesis,
    Prediction,
    ReviewRound,
    TranslationSummary,
    Verdict,
)
from bot.model.request import (
    BaselineScenario,
    BlisClaim,
    ClusterSupport,
    ForkTarget,
    LoraSupport,
    Origin,
    PDSplit,
    PromotionRequest,
    StackSpec,
    Workload,
)
from bot.model.state import (
    Artifact,
    AuditEntry,
    GateDecision,
    LLMCall,
    LLMTotals,
    LLMUsage,
    PipelineState,
    StageFailure,
    StageRecord,
    Status,
)

__all__ = [
    "VVUQ",
    "AdmissionRow",
    "Artifact",
    "AuditEntry",
    "BaselineScenario",
    "BlisClaim",
    "ClusterSupport",
    "DecidedVia",
    "Decision",
    "Direction",
    "Effect",
    "Family",
    "Fidelity",
    "FidelityCause",
    "FidelityFailure",
    "Finding",
    "ForkTarget",
    "GateDecision",
    "Hypothesis",
    "HypothesisType",
    "LLMCall",
    "LLMTotals",
    "LLMUsage",
    "LoraSupport",
    "Origin",
    "PDSplit",
    "PipelineState",
    "PolicyKind",
    "Prediction",
    "PromotionRequest",
    "Rate",
    "RequestError",
    "RequestPart",
    "ReviewRound",
    "Severity",
    "StackSpec",
    "Stage",
    "StageFailure",
    "StageRecord",
    "Status",
    "Strict",
    "Track",
    "TranslationSummary",
    "Verdict",
    "VerdictStatus",
    "Workload",
    "describe_error",
    "describe_validation_error",
    "read_yaml_mapping",
    "sha256_text",
    "slugify",
    "status_counts",
]
