"""`summary_losses` checks each distinct item once, in first-appearance order, against the
probes kept for it: it reports exactly what the item-by-item loop it replaced reported
(written out here), for generated regions, summaries, restored paths and kinds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core import summary_loss as sl
from inspector.core.messages import Message
from inspector.core.summary_loss import ALL_KINDS, LossKind, LostItem

PIECES = [
    "src/tinycal/parse.py",
    "/work/src/tinycal/parse.py",
    "tinycal/parse.py",
    "./a/../b/c.py",
    "~/notes/todo.md",
    "`parse_offset`",
    "def helper_fn(x):",
    "callMe(",
    "snake_call(",
    "ValueError: bad offset +05:45",
    "Traceback (most recent call last):",
    "FAILED tests/test_tz.py::test_half - AssertionError: x",
    "error: cannot open",
    "error=None",
    "AssertionError",
    " ==== 1 failed ====",
    "'file_path': 'src/tinycal/parse.py'",
    "\\n",
    "\n",
    " ",
    "中文",
    "x" * 90,
    "\nERROR: " + "y" * 80 + " one\n",  # two errors alike in their first 80 characters
    "\nERROR: " + "y" * 80 + " two\n",
    " /deep/" + "d" * 80 + "/a.py ",
    " /deep/" + "d" * 80 + "/b.py ",
]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


def _message(role: str, text: str) -> Message:
    if role == "tool":
        content = f"success=True data={ {'file_path': text[:30], 'content': text}!r} error=None"
        return Message(role="tool", content=content, tool_call_id="c1")
    return Message(role=role, content=text)


def reference_losses(
    messages: Sequence[Message],
    summary: str,
    start_index: int,
    restored_paths: Iterable[str],
    kinds: frozenset[LossKind],
) -> list[LostItem]:
    """The loop over every item of every message, as `summary_losses` was written."""
    restored = set(restored_paths)
    seen: set[tuple[str, str]] = set()
    lost: list[LostItem] = []

    def add(kind: LossKind, text: str, index: int, is_restored: bool = False) -> None:
        key = (kind, text[:80])
        if key not in seen:
            seen.add(key)
            lost.append(LostItem(kind, text, index, is_restored))

    for offset, message in enumerate(messages):
        index = start_index + offset
        from_restored = (
            bool(restored)
            and message.role == "tool"
            and not kinds.isdisjoint(("path", "identifier"))
            and sl._parsed_result_path(message) in restored
        )
        for text in sl._candidates(message):
            items: list[tuple[LossKind, str]] = []
            items += [("path", p) for p in (sl._paths(text) if "path" in kinds else ())]
            if "identifier" in kinds:
                items += [("identifier", name) for name in sl._identifiers(text)]
            if "error" in kinds and message.role in ("tool", "assistant", "user"):
                items += [("error", e) for e in sl._errors(text)]
            for kind, item in items:
                if kind == "path":
                    if not sl.path_mentioned(item, summary):
                        add("path", item, index, from_restored or item in restored)
                elif kind == "identifier":
                    if item not in summary:
                        add("identifier", item, index, from_restored)
                elif not sl.error_mentioned(item, summary):
                    add("error", item, index)
    return lost


kinds_ = st.sets(st.sampled_from(sorted(ALL_KINDS))).map(frozenset)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool", "system"]), texts), max_size=8
    ),
    texts,
    st.lists(st.sampled_from(["src/tinycal/parse.py", "~/notes/todo.md", "x.py"]), max_size=2),
    kinds_,
    st.integers(0, 50),
)
def test_the_distinct_item_check_reports_what_the_item_loop_reported(
    region: list[tuple[str, str]],
    summary: str,
    restored: list[str],
    kinds: frozenset[LossKind],
    start: int,
) -> None:
    messages = [_message(role, text) for role, text in region]
    expected = reference_losses(messages, summary, start, restored, kinds)
    assert sl.summary_losses(messages, summary, start, restored, kinds) == expected
    # a second summary over the same messages (a tuning key): memoised scans, same answer
    other = summary[: len(summary) // 2]
    assert sl.summary_losses(messages, other, start, restored, kinds) == reference_losses(
        messages, other, start, restored, kinds
    )
