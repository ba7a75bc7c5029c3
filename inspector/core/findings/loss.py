"""What the summary lost, raised when it matters: the active task's files, the last error,
the user's constraints.

`core.summary_loss` lists the paths, identifiers and errors of the replaced region that the
summary does not mention; this module keeps the ones the agent still needs: files written
or edited in the session, or named by the latest real user message; the newest error of the
region; and instructions a user gave ("do not ...", "always ...", "must ...") in it.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re

from inspector.core.checks import Finding
from inspector.core.findings.base import FindingInput, same_path
from inspector.core.messages import Message
from inspector.core.reinjection import message_to_text
from inspector.core.summary_loss import LossKind, errors_in, summary_losses

_SUMMARY_RE = re.compile(r"<summary>\n(.*)\n</summary>", re.DOTALL)
_CONSTRAINT_RE = re.compile(
    r"(?i)\b(?:do not|don't|never|must(?: not)?|always|only|without|avoid|keep)\b|不要|必须|禁止|只能|不能"
)
_WORD_RE = re.compile(r"[A-Za-z_][\w.-]{3,}|[\u4e00-\u9fff]{2,}")


def _file_like(path: str) -> bool:
    """A file path, not a closing tag or a bare directory word (`</summary>` gives `/summary`)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return "." in name and path.count("/") >= 1


def summary_of(after: tuple[Message, ...]) -> str | None:
    """The summary inside the first memory block of a context after compression."""
    for message in after:
        if message.role == "user" and isinstance(message.content, str):
            text = message.content.lstrip()
            if text.startswith("<memory_block"):
                match = _SUMMARY_RE.search(text)
                return match.group(1) if match else text
    return None


def _constraints(messages: tuple[Message, ...], start: int, summary: str) -> list[tuple[int, str]]:
    """Sentences with an instruction word in the region's real user messages, not kept."""
    out: list[tuple[int, str]] = []
    lowered = summary.lower()
    for offset, message in enumerate(messages):
        if not message.is_real_user:
            continue
        for sentence in re.split(r"(?<=[.!?。！？])\s*|\n", message_to_text(message)):
            if not _CONSTRAINT_RE.search(sentence):
                continue
            words = {w.lower() for w in _WORD_RE.findall(sentence)}
            if len(words) < 2:
                continue
            kept = sum(1 for w in words if w in lowered)
            if kept * 2 < len(words):
                out.append((start + offset, " ".join(sentence.split())[:120]))
    return out


_PASSED_RE = re.compile(r"\b\d+ passed\b|\bPASSED\b|\bOK\b")


def _last_open_error(
    messages: tuple[Message, ...], start: int, end: int, task_start: int
) -> int | None:
    """Offset in the region of the newest error of the current task that no later passing
    tool result (tests passed) settled, or None."""
    for index in range(end - 1, max(start, task_start) - 1, -1):
        if not errors_in(messages[index]):
            continue
        settled = any(
            m.role == "tool" and _PASSED_RE.search(message_to_text(m)) and not errors_in(m)
            for m in messages[index + 1 :]
        )
        return None if settled else index - start
    return None


def summary_lost_active(inp: FindingInput) -> list[Finding]:
    """Lost items that are the active task's files, the last error, or a user's constraint."""
    replaced = inp.replaced()
    after = inp.after
    if replaced is None or after is None:
        return []
    summary = summary_of(after)
    if summary is None:
        return []
    start, end = replaced
    region = inp.messages[start:end]
    restored = inp.reinjected_files() or ()
    messages = inp.messages
    task_start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].is_real_user), -1)
    written = [e.path for e in inp.facts.events if e.action == "write" and e.index >= task_start]
    asked = message_to_text(messages[task_start]) if task_start >= 0 else ""
    task_start = max(task_start, 0)
    last_error = _last_open_error(messages, start, end, task_start)
    # only what this finding can raise is scanned for: paths when a file was written or
    # asked for, errors when an error is still open (each kind is a scan of every text)
    kinds: set[LossKind] = {"path"} if written or asked else set()
    if last_error is not None:
        kinds.add("error")
    lost = [
        item
        for item in summary_losses(region, summary, start, restored, frozenset(kinds))
        if not item.restored
    ]
    kept = {e.path for e in inp.facts.events if not start <= e.index < end}
    kept.update(p for i, p in inp.facts.result_paths.items() if not start <= i < end)
    files = [
        item
        for item in lost
        if item.kind == "path"
        and _file_like(item.text)
        and (any(same_path(item.text, w) for w in written) or item.text in asked)
        and not any(same_path(item.text, r) for r in restored)
        and not any(same_path(item.text, k) for k in kept)
    ]
    errors = [
        item
        for item in lost
        if item.kind == "error"
        and last_error is not None
        and item.message_index == start + last_error
    ]
    constraints = _constraints(region, start, summary)
    parts: list[str] = []
    if files:
        parts.append(
            "the active task's file(s) "
            + ", ".join(f"{i.text} (#{i.message_index})" for i in files[:4])
        )
    if errors:
        parts.append(f"the last error {errors[0].text[:100]!r} (#{errors[0].message_index})")
    if constraints:
        parts.append(
            "the user's instruction(s) " + "; ".join(f"{t!r} (#{i})" for i, t in constraints[:2])
        )
    if not parts:
        return []
    return [
        Finding(
            "summary_lost_active",
            "warning",
            "the summary does not mention " + ", ".join(parts),
            {
                "files": [i.text for i in files],
                "errors": [i.text for i in errors],
                "constraints": [t for _, t in constraints],
            },
            fix="pass a preserve_instruction naming what to keep, or keep the latest round in the "
            "protected tail (raise keep_recent_messages)",
        )
    ]
