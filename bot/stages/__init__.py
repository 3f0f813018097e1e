"""The seven stages. Each module has ``run(ctx) -> StageOutput``: inputs in, artifacts out.

Stages read the request, the dictionary and earlier artifacts (from the
promotion branch, through the forge) and return the files they produce; the
runner commits them, one commit per stage. A stage never commits, comments
or decides on its own.
"""

from bot.model import Stage

STAGE_MODULES: dict[Stage, str] = {
    Stage.ANALYZE: "bot.stages.analyze",
    Stage.TRANSLATE: "bot.stages.translate",
    Stage.HYPOTHESIZE: "bot.stages.hypothesize",
    Stage.IMPLEMENT_TESTS: "bot.stages.implement_tests",
    Stage.RUN_VALIDATE: "bot.stages.run_validate",
    Stage.DOCUMENT: "bot.stages.document",
    Stage.PR: "bot.stages.pull_request",
}
