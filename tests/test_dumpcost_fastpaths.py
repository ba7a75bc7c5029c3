"""The shortcuts a dump's artifact takes in a folder's full load, each against the path it
skips, on the corpora and on generated odd shapes:

* `collect_evidence` skips lists' plain objects of scalars (span_built entries): the same
  evidence as the full walk (`_reference_evidence`, the walk as it was);
* `PricedContext`'s tool-boundary index (one pass, results listed on demand): the same
  keep windows and causes as the index made the plain way (`_reference_boundary`);
* `TokenCounter.pieces` remembers the tuple counted last: the same counts as a counter
  that remembers nothing, also after `remember` changed a count;
* `dump_infer.tuning_with` shares the tunings it made: equal to `Tuning.with_`, never
  another tuning's result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.engine import _NO_CALL, PricedContext
from inspector.core.messages import Message
from inspector.core.releases.detect import ArtifactEvidence, collect_evidence
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.sources.dump_infer import tuning_with
from inspector.sources.loader import load_paths

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [ROOT / "sample_dumps", ROOT / "tests" / "data"]
REFERENCE = Path("/work/shared/reference")

# --- the reference walk (the evidence walk before it skipped anything) -----------------

_MAX = 64


def _reference_walk(value: Any, evidence: ArtifactEvidence, depth: int = 0) -> None:
    if depth > 12:
        return
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, str | int | float | bool | type(None)):
                _reference_walk(item, evidence, depth + 1)
        return
    if not isinstance(value, Mapping):
        return
    _reference_facts(value, evidence)
    for key, item in value.items():
        if key == "usage_metadata" and isinstance(item, Mapping):
            if len(evidence.usage_records) < _MAX:
                evidence.usage_records.append(item)
        elif key == "compression_response" and isinstance(item, Mapping):
            usage = item.get("usage")
            details = usage.get("details") if isinstance(usage, Mapping) else None
            if isinstance(details, list):
                evidence.usage_details.extend(d for d in details[:_MAX] if isinstance(d, Mapping))
        elif isinstance(item, list | Mapping) and key not in ("content", "parameters"):
            _reference_walk(item, evidence, depth + 1)


def _reference_facts(record: Mapping[str, Any], evidence: ArtifactEvidence) -> None:
    if record.get("processor") == "llm_request":
        evidence.has_llm_request_log = True
    event = record.get("event")
    if event == "span_built":
        for name in ("preserved_prefix", "messages_to_compress", "protected_tail"):
            entries = record.get(name)
            if not isinstance(entries, list):
                continue
            for entry in entries:
                if not isinstance(entry, Mapping):
                    continue
                preview, tokens = entry.get("preview"), entry.get("tokens")
                if isinstance(preview, str) and isinstance(tokens, int):
                    if len(evidence.span_previews) < _MAX:
                        evidence.span_previews.append((preview, tokens))
    elif event == "compression_retry":
        message = record.get("error_message")
        if isinstance(message, str) and message and len(evidence.error_messages) < _MAX:
            evidence.error_messages.append(message)


def _reference_evidence(objects: Iterable[Any]) -> ArtifactEvidence:
    evidence = ArtifactEvidence()
    for value in objects:
        _reference_walk(value, evidence)
    return evidence


def _documents(roots: list[Path]) -> Iterator[Any]:
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".json", ".jsonl") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = [text] if path.suffix == ".json" else text.splitlines()
            for line in lines:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def _same_evidence(objects: list[Any]) -> None:
    got, want = collect_evidence(objects), _reference_evidence(objects)
    assert got == want
    # the records themselves, not copies: a reader may tell them apart by identity
    assert all(a is b for a, b in zip(got.usage_records, want.usage_records, strict=True))


def test_the_evidence_of_every_corpus_document_is_the_full_walks() -> None:
    documents = list(_documents(CORPORA))
    assert len(documents) > 100
    for document in documents:
        _same_evidence([document])
    _same_evidence(documents)  # all at once: the 64-item bounds are reached
    assert collect_evidence(documents).span_previews  # span_built entries were read


def test_the_evidence_of_every_reference_document_is_the_full_walks() -> None:
    if not REFERENCE.is_dir():
        pytest.skip("the shared reference corpus is not on this machine")
    for document in _documents([REFERENCE]):
        _same_evidence([document])


_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=False), st.text(max_size=4)
)
_keys = st.sampled_from(
    [
        "processor",
        "event",
        "preview",
        "tokens",
        "error_message",
        "usage_metadata",
        "compression_response",
        "usage",
        "details",
        "content",
        "parameters",
        "preserved_prefix",
        "messages_to_compress",
        "protected_tail",
        "x",
    ]
)
_values = st.one_of(
    _scalar,
    st.sampled_from(["span_built", "compression_retry", "llm_request", "Error code: 429"]),
)
_json = st.recursive(
    _values,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_json, max_size=4))
def test_generated_objects_give_the_full_walks_evidence(objects: list[Any]) -> None:
    _same_evidence(objects)


def test_many_span_entries_stop_at_the_bound_as_before() -> None:
    entry = {"idx": 0, "role": "user", "tokens": 3, "preview": "abc"}
    record = {"event": "span_built", "messages_to_compress": [entry] * 100, "protected_tail": []}
    retry = {"event": "compression_retry", "error_message": "Error code: 429"}
    nested = {"processor": "llm_request"}
    objects = [record, [retry, nested, entry], {"a": [[entry, retry]]}]
    _same_evidence(objects)
    found = collect_evidence(objects)
    assert len(found.span_previews) == 64 and found.error_messages and found.has_llm_request_log


# --- the tool-boundary index -----------------------------------------------------------


def _reference_boundary(messages: tuple[Message, ...]) -> tuple[dict[str, int], list[int]]:
    earliest: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant":
            for call_id in message.call_ids:
                earliest.setdefault(call_id, index)
    pull = [_NO_CALL] * (len(messages) + 1)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        here = _NO_CALL
        if message.role == "tool" and message.tool_call_id:
            here = earliest.get(message.tool_call_id, _NO_CALL)
        pull[index] = min(here, pull[index + 1])
    return earliest, pull


def _reference_causes(messages: tuple[Message, ...], keep: int) -> list[tuple[str, int, int]]:
    """`boundary_cause` from the plain index (results scanned from the split each round)."""
    earliest, _ = _reference_boundary(messages)
    n = len(messages)
    if keep <= 0 or n == 0:
        return []
    start, causes = max(n - keep, 0), []
    while True:
        moved = start
        for index in range(start, n):
            message = messages[index]
            call_id = message.tool_call_id
            if message.role == "tool" and call_id and call_id in earliest:
                if earliest[call_id] < start:
                    causes.append((call_id, index, earliest[call_id]))
                    moved = min(moved, earliest[call_id])
        if moved == start:
            return causes
        start = moved


def _same_boundary(messages: tuple[Message, ...]) -> None:
    priced = PricedContext((), messages, (), TokenCounter("len_div_4"))
    earliest, pull = _reference_boundary(messages)
    assert priced._earliest_call == earliest
    assert priced._pull_suffix_min == pull
    for keep in range(len(messages) + 2):
        assert priced.boundary_cause(keep) == _reference_causes(messages, keep), keep
        start = max(len(messages) - keep, 0)
        while keep > 0 and messages and pull[start] < start:
            start = pull[start]
        wanted = len(messages) - start if keep > 0 and messages else max(keep, 0)
        assert priced.adjust_keep(keep) == wanted


def _corpus_contexts() -> list[tuple[Message, ...]]:
    found = []
    for root in CORPORA:
        for result in load_paths([root]):
            snapshot = getattr(result, "snapshot", None)
            if snapshot is not None:
                found.append(snapshot.messages)
    return found


def test_the_boundary_index_of_every_corpus_context_is_the_plain_ones() -> None:
    contexts = _corpus_contexts()
    assert len(contexts) > 20
    assert any(PricedContext((), c, (), TokenCounter("len_div_4"))._earliest_call for c in contexts)
    for messages in contexts:
        _same_boundary(messages)


_ids = st.sampled_from(["a", "b", "c", ""]) | st.none()
_generated_message = st.one_of(
    st.builds(
        lambda ids: Message.from_dict(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": i, "function": {"name": "f"}} for i in ids],
            }
        ),
        st.lists(_ids, max_size=3),
    ),
    st.builds(
        lambda i: Message.from_dict({"role": "tool", "content": "r", "tool_call_id": i}), _ids
    ),
    st.builds(lambda r: Message.from_dict({"role": r, "content": "u"}), st.sampled_from(["user"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_generated_message, max_size=10))
def test_generated_contexts_have_the_plain_boundary_index(messages: list[Message]) -> None:
    _same_boundary(tuple(messages))


# --- the pieces of the tuple counted last ------------------------------------------------


def _messages(*texts: str) -> tuple[Message, ...]:
    return tuple(Message.from_dict({"role": "user", "content": t}) for t in texts)


def test_pieces_of_a_tuple_counted_just_before_are_those_a_fresh_counter_gives() -> None:
    counter, fresh = TokenCounter("len_div_4"), TokenCounter("len_div_4")
    first, other = _messages("a" * 40, "b" * 80), _messages("c" * 400, "d" * 8)
    assert counter.count_messages(first) == fresh.count_messages(first)
    # an equal-length tuple that is not the one counted is counted itself
    assert counter.pieces(other) == fresh.pieces(other) == [100, 2]
    assert counter.count_messages(first) == fresh.count_messages(first)
    assert PricedContext((), first, (), counter).pieces == [10, 20]
    # a count changed since (a store's, a worker's) is what the next read gives
    counter.count_messages(first)
    counter.remember(first[0], 7)
    assert counter.pieces(first) == [7, 20]


def test_pieces_are_a_new_list_each_time() -> None:
    counter = TokenCounter("len_div_4")
    messages = _messages("a" * 40)
    counter.count_messages(messages)
    got = counter.pieces(messages)
    got.append(99)
    assert counter.pieces(messages) == [10]


# --- the tunings a folder's ratios make ------------------------------------------------


def test_tuning_with_equals_with_and_keeps_tunings_apart() -> None:
    base = Tuning(processor="dialogue", context_max=12_000)
    other = Tuning(processor="dialogue", context_max=12_000, min_target_ratio=0.0)
    negative = Tuning(processor="dialogue", context_max=12_000, min_target_ratio=-0.0)
    for tuning in (base, other, negative, base):
        for name, value in (("trigger_ratio", 0.5), ("min_target_ratio", 0.0)):
            made = tuning_with(tuning, name, value)
            assert made == tuning.with_(**{name: value})
            assert repr(made) == repr(tuning.with_(**{name: value}))
    assert tuning_with(base, "trigger_ratio", 0.5) is tuning_with(base, "trigger_ratio", 0.5)
    # equal tunings that are other objects, and -0.0 beside 0.0, are not confused
    assert repr(tuning_with(negative, "trigger_ratio", 0.5).min_target_ratio) == "-0.0"
    assert repr(tuning_with(other, "trigger_ratio", 0.5).min_target_ratio) == "0.0"
    assert repr(tuning_with(base, "min_target_ratio", -0.0).min_target_ratio) == "-0.0"


def test_tuning_with_is_not_fooled_by_a_reused_object_id() -> None:
    # tunings made and dropped one after another often get the same id: the memory of a
    # dropped one must not answer for the next
    for context_max in range(1_000, 1_200):
        tuning = Tuning(processor="round_level", context_max=context_max)
        assert tuning_with(tuning, "trigger_ratio", 0.5).context_max == context_max
        del tuning
