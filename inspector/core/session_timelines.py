"""A session's timeline: its evaluation runs, model calls and unlinked dumps, oldest first.

The timeline of every session at once (`session_timelines`) walks every run of a load; a
browser that opens one dump of a 50,000-dump folder needs one session's. `LazyTimelines`
sorts the members by session once, on its first read, and makes each session's timeline
when it is read (the same entries, in the same order). Pure: no I/O. Must not import
outside `inspector.core`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from inspector.core.timeline import (
    DumpRef,
    EvaluationRun,
    ModelCall,
    RunKey,
    call_evaluations,
    safe_name,
)

Timeline = list[dict[str, Any]]
#: One session's runs, model calls and unlinked dumps.
Members = tuple[list[EvaluationRun], list[ModelCall], list[DumpRef]]


class _Members:
    """The runs, model calls and unlinked dumps of each session, keyed by the safe() form of
    its id, in the order the sessions first appear (runs, then calls, then dumps), with
    each call's evaluations."""

    def __init__(
        self, runs: Sequence[EvaluationRun], dumps: Sequence[DumpRef], calls: Sequence[ModelCall]
    ) -> None:
        names: dict[str, str] = {}

        def norm(session: str | None) -> str | None:
            if session is None:
                return None
            if session not in names:
                names[session] = safe_name(session)
            return names[session]

        self.of_call = call_evaluations(runs, calls) if calls else {}
        self.call_of: dict[tuple[RunKey, int], ModelCall] = {}
        for call in calls:
            for run in self.of_call.get(call.id, ()):
                self.call_of[(run.key, run.index)] = call
        self.sessions: dict[str | None, Members] = {}

        def of(session: str | None) -> Members:
            """The session's lists, made at its first member (not one set per member)."""
            key = norm(session)
            found = self.sessions.get(key)
            if found is None:
                found = self.sessions[key] = ([], [], [])
            return found

        for run in runs:
            of(run.session_id)[0].append(run)
        for call in calls:
            of(call.session_id)[1].append(call)
        linked_ids = {run.dump_id for run in runs if run.dump_id}
        for dump in dumps:
            if dump.id not in linked_ids:
                of(dump.session_id)[2].append(dump)

    def timeline(self, key: str | None) -> Timeline:
        """One session's entries (KeyError for a session with none).

        An evaluation of a model call carries `model_call` (the call's id, sequence and
        request_id); the call's entry lists its evaluations.
        """
        runs, calls, dumps = self.sessions[key]
        entries: Timeline = []
        for run in runs:
            entry = run.to_dict()
            owner = self.call_of.get((run.key, run.index))
            if owner is not None:
                entry["model_call"] = {
                    "id": owner.id,
                    "sequence": owner.sequence,
                    "request_id": owner.request_id,
                }
            entries.append(entry)
        entries.extend(call.to_dict(self.of_call.get(call.id, ())) for call in calls)
        entries.extend(
            {
                "kind": "dump",
                "timestamp": dump.timestamp,
                "processor": dump.processor,
                "session_id": dump.session_id,
                "context_id": dump.context_id,
                "outcome": "compressed",
                "dump": dump.id,
            }
            for dump in dumps
        )
        entries.sort(key=lambda e: e["timestamp"] if e["timestamp"] is not None else float("-inf"))
        return entries


def session_timelines(
    runs: Sequence[EvaluationRun], dumps: Sequence[DumpRef], calls: Sequence[ModelCall] = ()
) -> dict[str | None, Timeline]:
    """The timeline of every session at once, keyed by the safe() form of the session id."""
    members = _Members(runs, dumps, calls)
    return {key: members.timeline(key) for key in members.sessions}


def session_timeline(
    runs: Sequence[EvaluationRun],
    dumps: Sequence[DumpRef],
    session_id: str | None,
    calls: Sequence[ModelCall] = (),
) -> Timeline:
    """Every run, unlinked dump and model call of one session (all processors and contexts),
    oldest first."""
    key = None if session_id is None else safe_name(session_id)
    members = _Members(runs, dumps, calls)
    return members.timeline(key) if key in members.sessions else []


class LazyTimelines(Mapping[str | None, Timeline]):
    """`session_timelines(runs, dumps, calls)`, made when first read: a load whose artifacts
    never show a timeline makes none. With `each`, each session's is made when it is read:
    a browser that opens one dump makes its session's alone. Without, every session's is
    made at the first read: a full load reads them all, and made one by one over the load
    they cost the collector ~0.2 s more over 5,000 dumps (`stats --json`)."""

    def __init__(
        self,
        runs: Sequence[EvaluationRun],
        dumps: Sequence[DumpRef],
        calls: Sequence[ModelCall] = (),
        *,
        each: bool = True,
    ) -> None:
        self._args: tuple[Any, ...] | None = (runs, dumps, calls)
        self._members: _Members | None = None
        self._made: dict[str | None, Timeline] = {}
        self._each = each

    def _sessions(self) -> _Members:
        if self._members is None:
            assert self._args is not None
            self._members, self._args = _Members(*self._args), None
        return self._members

    def __getitem__(self, session: str | None) -> Timeline:
        made = self._made.get(session)
        if made is None:
            members = self._sessions()
            if self._each:
                made = self._made[session] = members.timeline(session)
            else:
                if not self._made:  # all made once: a session with none is not made again
                    self._made = {key: members.timeline(key) for key in members.sessions}
                made = self._made[session]
        return made

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._sessions().sessions)

    def __len__(self) -> int:
        return len(self._sessions().sessions)
