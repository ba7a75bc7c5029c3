"""Findings about the files openJiuwen's `read_file` re-injection puts back after a summary.

The builder (`core.reinjection.build_read_file_section`) copies the newest `read_file`
result of each file as it was read; it never looks at later writes, moves or at files an
earlier `<recovered_context>` restored. Three findings name what that costs: a stale copy,
a copy under a path that is gone, and files an earlier compression restored that the new
one drops. Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from inspector.core.checks import Finding
from inspector.core.findings.base import RECOVERED_PREFIX, FileEvent, FindingInput, same_path
from inspector.core.reinjection import extract_argument_value, parse_tool_arguments


def _last_read(events: tuple[FileEvent, ...], path: str, before: int) -> FileEvent | None:
    reads = [
        e for e in events if e.action == "read" and e.index < before and same_path(e.path, path)
    ]
    return reads[-1] if reads else None


def _later(
    events: tuple[FileEvent, ...], read: FileEvent, actions: tuple[str, ...]
) -> list[FileEvent]:
    return [
        e
        for e in events
        if e.action in actions and e.index > read.index and same_path(e.path, read.path)
    ]


def _where(inp: FindingInput, index: int) -> str:
    replaced = inp.replaced()
    if replaced is not None and replaced[0] <= index < replaced[1]:
        return "in the summarised region"
    return "in the kept messages"


def _tense(inp: FindingInput) -> tuple[str, str]:
    """("puts back", "carries") for a recorded compression, future tense for a decision."""
    if inp.after is not None:
        return "put back", "carries"
    return "would put back", "would carry"


def _still_holds(inp: FindingInput, path: str, write: FileEvent) -> bool:
    """True when the recorded re-injected copy of `path` still holds the edit's old text."""
    if inp.after is None:
        return False
    call = next(
        (c for c in inp.messages[write.index].tool_calls if (c.id or "") == write.call_id), None
    )
    if call is None:
        return False
    old = extract_argument_value(
        parse_tool_arguments(call.arguments), call.arguments, ("old_string", "old_str")
    )
    if len(old) < 8:
        return False
    for message in inp.after:
        text = message.content if isinstance(message.content, str) else ""
        if text.lstrip().startswith(RECOVERED_PREFIX) and f"Recently read file: {path}" in text:
            return old in text
    return False


def stale_reinjected_file(inp: FindingInput) -> list[Finding]:
    """A re-injected file that a later write or edit replaced."""
    files = inp.reinjected_files()
    if not files:
        return []
    events = inp.facts.events
    out: list[Finding] = []
    verb, carry = _tense(inp)
    for path in files:
        read = _last_read(events, path, len(inp.messages))
        if read is None:
            continue
        writes = _later(events, read, ("write",))
        if not writes:
            continue
        last = writes[-1]
        held = _still_holds(inp, path, last)
        out.append(
            Finding(
                "stale_reinjected_file",
                "problem",
                f"the read_file re-injection {verb} {path} as read at #{read.index} (call "
                f"{read.call_id!r}), but {last.tool} at #{last.index} (call {last.call_id!r}, "
                f"{_where(inp, last.index)}) changed it later: the new context {carry} an "
                "outdated copy the model will trust"
                + ("; the re-injected copy still holds the text the edit replaced" if held else ""),
                {
                    "path": path,
                    "read_index": read.index,
                    "read_call_id": read.call_id,
                    "write_index": last.index,
                    "write_call_id": last.call_id,
                    "writes": len(writes),
                },
                fix="re-read the file after the last edit (so the newest read_file result is "
                "current), or keep the edit in the protected tail (raise keep_recent_messages)",
            )
        )
    return out


def reinjected_path_gone(inp: FindingInput) -> list[Finding]:
    """A re-injected file that was moved, renamed or removed after it was read."""
    files = inp.reinjected_files()
    if not files:
        return []
    events = inp.facts.events
    out: list[Finding] = []
    verb, _ = _tense(inp)
    for path in files:
        read = _last_read(events, path, len(inp.messages))
        if read is None:
            continue
        gone = _later(events, read, ("move", "remove"))
        if not gone:
            continue
        event = gone[-1]
        what = (
            f"moved it to {event.target}"
            if event.action == "move" and event.target
            else "removed it"
        )
        out.append(
            Finding(
                "reinjected_path_gone",
                "problem",
                f"the read_file re-injection {verb} the content of {path} (read at #{read.index}, "
                f"call {read.call_id!r}) under that path, but {event.tool} at #{event.index} "
                f"(call {event.call_id!r}) {what}: the path no longer exists",
                {
                    "path": path,
                    "read_index": read.index,
                    "read_call_id": read.call_id,
                    "moved_index": event.index,
                    "moved_call_id": event.call_id,
                    "target": event.target,
                },
                fix="read the file again under its new path before the compression, or keep the "
                "move in the protected tail",
            )
        )
    return out


def earlier_restore_dropped(inp: FindingInput) -> list[Finding]:
    """Files an earlier `<recovered_context>` restored that this compression does not restore."""
    replaced = inp.replaced()
    files = inp.reinjected_files()
    if replaced is None or files is None:
        return []
    start, end = replaced
    facts = inp.facts
    kept_paths = [p for i, p in facts.result_paths.items() if not start <= i < end]
    out: list[Finding] = []
    for recovered in facts.recovered:
        if not start <= recovered.index < end:
            continue
        dropped = [
            path
            for path in recovered.files
            if not any(same_path(path, f) for f in files)
            and not any(same_path(path, k) for k in kept_paths)
        ]
        if not dropped:
            continue
        shown = ", ".join(dropped[:5]) + (
            f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        )
        verb = "drops" if inp.after is not None else "would drop"
        out.append(
            Finding(
                "earlier_restore_dropped",
                "warning",
                f"this compression summarises the earlier <recovered_context> at #{recovered.index} "
                f"and {verb} the {len(dropped)} file(s) it restored ({shown}): the read_file "
                "builder only looks at read_file calls, not at an earlier re-injection",
                {"recovered_index": recovered.index, "dropped": dropped},
                fix="re-read the files still needed before the next compression, or put their "
                "paths in the task description so the summary keeps them",
            )
        )
    return out
