"""Review anchors: the RIGHT-side lines of a unified diff, and the split of comments into anchored and not."""

from __future__ import annotations

from bot.forge.base import ReviewComment
from bot.forge.diff import commentable_lines, split_anchored

DIFF = "\n".join(
    [
        "diff --git a/pkg/a.go b/pkg/a.go",
        "index 1111111..2222222 100644",
        "--- a/pkg/a.go",
        "+++ b/pkg/a.go",
        "@@ -1,4 +1,5 @@",
        " package a",
        "-var x = 1",
        "+var x = 2",
        "+var y = 3",
        " ",
        " func f() {}",
        "@@ -20,2 +21,3 @@ func g() {",
        " \ta()",
        "+\tb()",
        " }",
        "diff --git a/pkg/new.go b/pkg/new.go",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/pkg/new.go",
        "@@ -0,0 +1,2 @@",
        "+package a",
        "+// new",
        "diff --git a/old.go b/old.go",
        "deleted file mode 100644",
        "--- a/old.go",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-package gone",
        "",
    ]
)


def test_right_side_lines_are_added_and_context_lines_of_each_hunk():
    lines = commentable_lines(DIFF)
    assert lines == {"pkg/a.go": {1, 2, 3, 4, 5, 21, 22, 23}, "pkg/new.go": {1, 2}}


def test_comments_outside_the_diff_are_split_off():
    comments = [
        ReviewComment("pkg/a.go", 3, "in"),
        ReviewComment("pkg/a.go", 10, "out"),
        ReviewComment("x.go", 1, "no"),
    ]
    inside, outside = split_anchored(comments, commentable_lines(DIFF))
    assert [c.body for c in inside] == ["in"] and [c.body for c in outside] == ["out", "no"]
