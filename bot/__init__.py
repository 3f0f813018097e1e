"""The promotion bot: BLIS evolved policies → llm-d-router plugins, behind three human gates."""

from pathlib import Path

__version__ = "0.1.0"

#: The checkout the bot runs from. Data that sits beside the code (dictionary/,
#: prompts/, gomirror/, examples/) is found from here; the package is installed
#: editable (`pip install -e .`), as the README says.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
