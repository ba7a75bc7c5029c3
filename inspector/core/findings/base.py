"""What every finding function reads: one context, its decision and what was recorded.

`FindingInput` is built once per decision (from a forked diagnosis, or from any strategy's
`Decision`); the finding functions are pure and read only it. `ContextFacts` are the
per-context scans (file reads, writes, moves, recovered-context messages) that do not
depend on the tuning: they are computed once per snapshot and reused by every decision on
it, so a re-split in the TUI costs only the filters.
Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.artifact import Artifact
from inspector.core.checks import Finding
from inspector.core.messages import Message
from inspector.core.reinjection import (
    extract_argument_value,
    message_to_text,
    parse_jsonish_tool_result,
    parse_tool_arguments,
)
from inspector.core.snapshot import ContextSnapshot
from inspector.core.tokens import TokenCounter

#: Tool names that replace a file's content (openJiuwen's harness and common agents).
WRITE_TOOLS = frozenset(
    {
        "write_file",
        "edit_file",
        "str_replace",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "apply_patch",
        "create_file",
        "multi_edit",
        "multiedit",
        "edit",
        "write",
    }
)
#: Tool names that move or rename a file.
MOVE_TOOLS = frozenset({"move_file", "rename_file", "mv", "move", "rename"})
SHELL_TOOLS = frozenset({"bash", "shell", "run_command", "execute_command", "terminal", "exec"})

RECOVERED_PREFIX = "<recovered_context>"
_RECENT_FILE_RE = re.compile(r"^Recently read file: (.+)$", re.MULTILINE)
_SHELL_WRITE_RE = re.compile(
    r"(?:sed\s+-i\S*|>>?|\btee\b(?:\s+-a)?|\bpatch\b)\s*['\"]?([^\s'\";|&]+)"
)


_CACHE_KEYS = (
    ("cache_tokens",),
    ("cache_read_input_tokens",),
    ("prompt_cache_hit_tokens",),
    ("cached_tokens",),
    ("input_token_details", "cache_read"),
    ("prompt_tokens_details", "cached_tokens"),
    ("input_tokens_details", "cached_tokens"),
)
_INPUT_KEYS = ("input_tokens", "prompt_tokens")


def as_int(value: Any) -> int | None:
    """An int from a JSON number (None for booleans and anything else)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def cached_tokens(usage: Mapping[str, Any]) -> int:
    """The cache-read tokens of a usage record (0 when it reports none)."""
    for path in _CACHE_KEYS:
        value: Any = usage
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        number = as_int(value)
        if number:
            return number
    return 0


def _largest_prompt(messages: Sequence[Message]) -> tuple[int, int] | None:
    """(index, prompt tokens) of the usage record with the largest prompt, cached included."""
    best: tuple[int, int] | None = None
    for index, message in enumerate(messages):
        usage = message.usage_metadata
        if message.role != "assistant" or not usage:
            continue
        prompt = next((as_int(usage.get(k)) for k in _INPUT_KEYS if as_int(usage.get(k))), None)
        if prompt is None:
            continue
        cached = cached_tokens(usage)
        if cached > prompt:  # the provider counts the cached prompt apart (Anthropic style)
            prompt += cached
        if best is None or prompt > best[1]:
            best = (index, prompt)
    return best


def _usage_model(messages: Sequence[Message]) -> tuple[str, int] | None:
    """The model name of the newest usage record that has one, and its message index."""
    for index in range(len(messages) - 1, -1, -1):
        usage = messages[index].usage_metadata
        if usage and isinstance(usage.get("model_name"), str) and usage["model_name"]:
            return usage["model_name"], index
    return None


def n(value: int | float) -> str:
    """A number with thousands separators."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


@dataclass(frozen=True, slots=True)
class FileEvent:
    """One tool call touching a file: a read, a write or edit, a move or a removal."""

    index: int
    call_id: str
    tool: str
    action: str  # "read", "write", "move", "remove"
    path: str
    #: For a move: where the file went.
    target: str | None = None
    #: For a read with a result: characters of the content it returned.
    size: int = 0
    #: For a read: the index of its tool result (-1: none).
    result_index: int = -1


@dataclass(frozen=True, slots=True)
class Recovered:
    """A `<recovered_context>` message and the files it restores."""

    index: int
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContextFacts:
    """The tuning-independent scans of one context."""

    events: tuple[FileEvent, ...]
    recovered: tuple[Recovered, ...]
    #: Index of the tool result of each call id (the last one when reused).
    result_index: Mapping[str, int]
    #: Paths named by each tool result (`file_path` of the result), by message index.
    result_paths: Mapping[int, str]
    #: (index, prompt tokens) of the usage record with the largest prompt.
    largest_prompt: tuple[int, int] | None = None
    #: (model name, index) of the newest usage record naming its model.
    usage_model: tuple[str, int] | None = None


def same_path(a: str, b: str) -> bool:
    """True when two spellings name the same file (`./src/x.py` and `/w/src/x.py`)."""
    if a == b:
        return True
    x, y = a.lstrip("./"), b.lstrip("./")
    if not x or not y:
        return False
    return x == y or x.endswith("/" + y) or y.endswith("/" + x)


def restored_files(content: Any) -> tuple[str, ...]:
    """The `Recently read file:` paths of a recovered-context message's text."""
    if not isinstance(content, str) or not content.lstrip().startswith(RECOVERED_PREFIX):
        return ()
    return tuple(m.strip() for m in _RECENT_FILE_RE.findall(content))


def _shell_events(index: int, call_id: str, tool: str, command: str) -> list[FileEvent]:
    """Moves, removals and in-place writes of one shell command (each `&&`/`;` part)."""
    out: list[FileEvent] = []
    for part in re.split(r"&&|\|\||;|\n", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        if words[:2] == ["git", "mv"] or words[:2] == ["git", "rm"]:
            words = words[1:]
        if not words:
            continue
        args = [w for w in words[1:] if not w.startswith("-")]
        if words[0] == "mv" and len(args) == 2:
            out.append(FileEvent(index, call_id, tool, "move", args[0], args[1]))
        elif words[0] == "rm" and args:
            out.extend(FileEvent(index, call_id, tool, "remove", a) for a in args)
        else:
            out.extend(
                FileEvent(index, call_id, tool, "write", m.group(1))
                for m in _SHELL_WRITE_RE.finditer(part)
                if "/" in m.group(1) or "." in m.group(1)
            )
    return out


def _call_events(index: int, message: Message) -> list[FileEvent]:
    out: list[FileEvent] = []
    for call in message.tool_calls:
        name = (call.name or "").lower()
        args = parse_tool_arguments(call.arguments)
        call_id = call.id or ""
        if name in SHELL_TOOLS:
            command = extract_argument_value(args, call.arguments, ("command", "cmd", "script"))
            out.extend(_shell_events(index, call_id, name, command))
            continue
        path = extract_argument_value(
            args, call.arguments, ("file_path", "path", "source", "src", "old_path")
        )
        if not path:
            continue
        if name == "read_file":
            out.append(FileEvent(index, call_id, name, "read", path))
        elif name in WRITE_TOOLS:
            out.append(FileEvent(index, call_id, name, "write", path))
        elif name in MOVE_TOOLS:
            target = extract_argument_value(
                args, call.arguments, ("destination", "dest", "target", "new_path", "to")
            )
            out.append(FileEvent(index, call_id, name, "move", path, target or None))
    return out


def _read_sizes(
    messages: Sequence[Message], events: list[FileEvent], results: Mapping[str, int]
) -> list[FileEvent]:
    """Reads with the size of what they returned; reads without a result are dropped (the
    builder only looks at completed rounds)."""
    out: list[FileEvent] = []
    for event in events:
        if event.action != "read":
            out.append(event)
            continue
        index = results.get(event.call_id)
        if index is None or index < event.index:
            continue
        text = message_to_text(messages[index])
        result = parse_jsonish_tool_result(text)
        content = result.get("content") if isinstance(result, dict) else None
        size = len(content) if isinstance(content, str) else len(text)
        path = result.get("file_path") if isinstance(result, dict) else None
        out.append(
            FileEvent(
                event.index,
                event.call_id,
                event.tool,
                "read",
                path if isinstance(path, str) and path else event.path,
                size=size,
                result_index=index,
            )
        )
    return out


def scan_context(messages: Sequence[Message]) -> ContextFacts:
    """File events, recovered-context messages and tool-result positions of a context."""
    events: list[FileEvent] = []
    recovered: list[Recovered] = []
    result_index: dict[str, int] = {}
    result_paths: dict[int, str] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            events.extend(_call_events(index, message))
        elif message.role == "tool":
            if message.tool_call_id:
                result_index[message.tool_call_id] = index
            text = message_to_text(message)
            if "file_path" in text:
                result = parse_jsonish_tool_result(text)
                path = result.get("file_path") if isinstance(result, dict) else None
                if isinstance(path, str):
                    result_paths[index] = path
        elif message.role == "user":
            files = restored_files(message.content)
            if files or (
                isinstance(message.content, str)
                and message.content.lstrip().startswith(RECOVERED_PREFIX)
            ):
                recovered.append(Recovered(index, files))
    events = _read_sizes(messages, events, result_index)
    return ContextFacts(
        tuple(events),
        tuple(recovered),
        result_index,
        result_paths,
        _largest_prompt(messages),
        _usage_model(messages),
    )


#: openJiuwen's read_file builder limits (`core.reinjection`).
_MAX_FILES, _MAX_CHARS_PER_FILE, _TOTAL_CHARS = 5, 15_000, 50_000


def predict_reinjected(
    facts: ContextFacts, compress: tuple[int, int], result_tokens: Sequence[int] = ()
) -> tuple[tuple[str, ...], int]:
    """The files the read_file builder would restore for this region, and their tokens (each
    read result's tokens, cut like the builder cuts its content; 0 without `result_tokens`).

    The builder's rule on the cached facts: newest read first, paths named by a kept tool
    result skipped, at most 5 files or 50,000 characters (`core.reinjection`)."""
    start, end = compress
    kept = {p for i, p in facts.result_paths.items() if not start <= i < end}
    chosen: list[str] = []
    chars = 0
    remaining = _TOTAL_CHARS
    for event in reversed(facts.events):
        if event.action != "read" or event.path in kept or event.path in chosen:
            continue
        lowered = event.path.replace("\\", "/").lower()
        if any(part in lowered for part in ("/.git/", "/node_modules/", "/__pycache__/")):
            continue
        chosen.append(event.path)
        size = min(event.size, _MAX_CHARS_PER_FILE)
        if 0 <= event.result_index < len(result_tokens):
            chars += result_tokens[event.result_index] * size // max(event.size, 1)
        remaining -= size
        if len(chosen) >= _MAX_FILES or remaining <= 0:
            break
    return tuple(reversed(chosen)), chars


class _FactsCache:
    """The facts of the last few snapshots, by identity (a snapshot is not hashable)."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._items: list[tuple[ContextSnapshot, ContextFacts]] = []

    def get(self, snapshot: ContextSnapshot) -> ContextFacts:
        for held, facts in self._items:
            if held is snapshot:
                return facts
        facts = scan_context(snapshot.messages)
        self._items = [(snapshot, facts), *self._items[: self._size - 1]]
        return facts


_FACTS = _FactsCache()


def facts_of(snapshot: ContextSnapshot) -> ContextFacts:
    """The (cached) facts of a snapshot's context messages."""
    return _FACTS.get(snapshot)


@dataclass(frozen=True)
class FindingInput:
    """One context, its decision and what was recorded: all a finding function reads.

    Indices are context-message indices. `compress` is the region the decision summarises
    (None when it does not compress); for a dump the recorded span is used instead
    (`replaced`), since that is what openJiuwen did.
    """

    snapshot: ContextSnapshot | None
    artifact: Artifact | None = None
    family: str = "forked"
    #: The strategy key ("current_round", "dialogue", "hybrid", ...).
    processor: str = "current_round"
    hit: bool | None = None
    reason: str | None = None
    compress: tuple[int, int] | None = None
    total_tokens: int | None = None
    threshold: int | None = None
    context_max: int | None = None
    counter: TokenCounter | None = None
    #: The tokenizer's total (messages + tools, no usage baseline), when known.
    counted_total: int | None = None
    #: Index (in system + context messages) of the usage record the total used, if any.
    usage_index: int | None = None
    usage_total: int | None = None
    #: Index of the last real user message (openJiuwen's rule), when known.
    last_real_user: int | None = None
    #: Predicted `<recovered_context>` files when the decision compresses (forked only).
    predicted_files: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> tuple[Message, ...]:
        """The context messages (empty without a snapshot)."""
        return self.snapshot.messages if self.snapshot is not None else ()

    @property
    def facts(self) -> ContextFacts:
        """The tuning-independent scans of the context."""
        if self.snapshot is None:
            return ContextFacts((), (), {}, {})
        return facts_of(self.snapshot)

    @property
    def after(self) -> tuple[Message, ...] | None:
        """The context after compression, for a dump."""
        return self.artifact.after if self.artifact is not None else None

    @property
    def recorded(self) -> Mapping[str, Any]:
        """What the artifact recorded ({} without one)."""
        return self.artifact.recorded if self.artifact is not None else {}

    def replaced(self) -> tuple[int, int] | None:
        """The region openJiuwen summarised: the dump's recorded span, else the decision's;
        always within the context (a recorded span that does not fit it is ignored)."""
        count = len(self.messages)
        if self.after is not None:
            span = self.recorded.get("span")
            if isinstance(span, Mapping):
                prefix, size = span.get("preserved_prefix"), span.get("messages_to_compress")
                if (
                    isinstance(prefix, int)
                    and isinstance(size, int)
                    and size > 0
                    and prefix >= 0
                    and prefix + size <= count
                ):
                    return (prefix, prefix + size)
            return None
        if self.hit and self.compress is not None and self.compress[1] > self.compress[0]:
            start, end = self.compress
            if start >= 0 and end <= count:
                return self.compress
        return None

    def reinjected_files(self) -> tuple[str, ...] | None:
        """Files the new context's `<recovered_context>` restores (recorded, else predicted)."""
        if self.after is not None:
            for message in self.after:
                if message.role == "user" and isinstance(message.content, str):
                    if message.content.lstrip().startswith(RECOVERED_PREFIX):
                        return restored_files(message.content)
            return ()
        if self.replaced() is None:
            return None
        return self.predicted_files


FindingFunction = Callable[[FindingInput], list[Finding]]


@dataclass(frozen=True, slots=True)
class FindingSpec:
    """One registered finding function: the kinds it can raise and where it applies."""

    name: str
    function: FindingFunction
    kinds: tuple[str, ...]
    #: Strategy families it runs for (the others never see it).
    families: frozenset[str] = frozenset({"forked", "standard", "hybrid"})
