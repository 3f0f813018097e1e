"""Stage 3: Track A/B/C hypotheses for a promotion, and the documents that carry them.

- ``generate`` — the hypotheses (rules, operating-point rule and feedback directives in its docstring)
- ``openevolve`` — OpenEvolve hypothesis-mode comments in the evolved program
- ``metrics`` — BLIS / OpenEvolve metric names → llm-d-benchmark short names
- ``document`` — markdown with YAML front matter, and back
"""

from bot.hypotheses.document import (
    hypothesis_order,
    is_hypothesis_file,
    load_hypotheses,
    parse_excluded,
    parse_hypothesis,
    render_hypotheses,
    render_hypothesis,
    render_index,
)
from bot.hypotheses.errors import HypothesisError
from bot.hypotheses.feedback import feedback_notes, parse_feedback
from bot.hypotheses.generate import generate_hypotheses, generate_with_excluded, openevolve_findings
from bot.hypotheses.metrics import blis_metric_to_short, translate_metric
from bot.hypotheses.openevolve import parse_openevolve
from bot.hypotheses.operating_points import claim_rates

__all__ = [
    "HypothesisError",
    "blis_metric_to_short",
    "claim_rates",
    "feedback_notes",
    "generate_hypotheses",
    "generate_with_excluded",
    "hypothesis_order",
    "is_hypothesis_file",
    "load_hypotheses",
    "openevolve_findings",
    "parse_excluded",
    "parse_feedback",
    "parse_hypothesis",
    "parse_openevolve",
    "render_hypotheses",
    "render_hypothesis",
    "render_index",
    "translate_metric",
]
