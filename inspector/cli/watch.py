"""`inspector watch SOURCE ... [--json]`: print live events and new artifacts as they arrive.

A SOURCE is a folder or log file (followed as it grows), a jiuwenswarm gateway URL
`ws://127.0.0.1:19000/ws?session_id=…` (compression events, usage, pokes), or a trajectory
URL `http://127.0.0.1:19002/api/trajectory/sessions/<id>` (the rebuilt context window and
each new revision). Several sources are merged into one stream; a gateway and a trajectory
URL of the same session are paired, the gateway's `trace.updated` waking the trajectory
follower. `--json` prints JSON Lines (one object per event, `"event"` names its type,
`"at"` the UTC time it arrived). Ctrl-C / SIGINT / SIGTERM stop cleanly with exit 0;
`--once`, `--count` and `--timeout` end a watch for scripts. Exit 1 when a source could not
be watched at all (refused, unknown session) or, with `--once`, a file was unreadable; 2 on
bad usage. Never imports Textual.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from inspector.cli.common import UsageError, print_json_line
from inspector.core.live_events import (
    CompressionState,
    ContextUsage,
    GatewayEvent,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceState,
    TraceUpdated,
)
from inspector.core.live_tracker import LiveTracker
from inspector.core.redact import mask_secrets, mask_text
from inspector.sources.connect import (
    ConnectError,
    ConnectRequest,
    LiveStream,
    build_request,
    classify_source,
)

EXIT_OK, EXIT_FAILED = 0, 1
#: Gateway events after which the trajectory is worth re-reading (spec 7.2).
POKE_EVENTS = frozenset(
    {"chat.final", "chat.error", "chat.processing_status", "harness.session_finished"}
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Sources, output format, and the flags that end a watch for scripts."""
    parser.description = (
        "Watch live sources: growing folders and logs, a jiuwenswarm gateway, a trajectory API."
    )
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="folder or log file, ws://host:port/ws?session_id=ID, or http://host:port/api/trajectory/sessions/ID",
    )
    parser.add_argument("--json", action="store_true", help="JSON Lines, one object per event")
    parser.add_argument(
        "--snapshots",
        action="store_true",
        help="with --json: add each new context as a snapshot object (input for `inspector why`)",
    )
    parser.add_argument("--session", metavar="ID", help="session id for URLs that do not name one")
    parser.add_argument(
        "--subject",
        default="main",
        metavar="ID",
        help="trajectory subject whose window is rebuilt (default main)",
    )
    parser.add_argument(
        "--once",
        action="store_true",
        help="print what is there now and exit (files: one scan; trajectory: the current window; gateway: the first event)",
    )
    parser.add_argument(
        "--count", type=int, metavar="N", help="exit after N events other than state changes"
    )
    parser.add_argument("--timeout", type=float, metavar="S", help="exit after S seconds (exit 0)")
    parser.add_argument(
        "--interval",
        type=float,
        metavar="S",
        help="poll interval in seconds (files 0.5, trajectory 1.5)",
    )
    parser.add_argument(
        "--new-only",
        action="store_true",
        help="files: report only what appears after the watch starts",
    )
    parser.add_argument(
        "--no-state", action="store_true", help="do not print connection-state changes"
    )
    parser.add_argument(
        "--trigger-ratio",
        type=float,
        default=None,
        metavar="F",
        help="also draw this ratio on the usage gauge (the agent's own trigger points are "
        "drawn from its config and from where its frames show it compressed)",
    )
    parser.add_argument(
        "--home",
        metavar="DIR",
        help="gateway: jiuwenswarm's home folder, for its thresholds and the session's "
        "transcript (default: $JIUWENSWARM_DATA_DIR or ~/.jiuwenswarm for a loopback gateway)",
    )
    parser.add_argument(
        "--probe-timeout",
        type=float,
        default=5.0,
        metavar="S",
        help="gateway: seconds to wait for the first answer before giving up (default 5)",
    )
    parser.add_argument(
        "--list-sessions",
        action="store_true",
        help="gateway: print the sessions it knows (session.list) and exit",
    )
    parser.add_argument(
        "--trajectory",
        metavar="URL|auto",
        help="gateway: also follow the session's context window from this trajectory API "
        "(auto: look next to the gateway; PyPI 0.2.3 has none)",
    )


@dataclass(slots=True)
class _Stream:
    """One opened source and how far its watch got."""

    live: LiveStream
    done: bool = False
    failed: bool = False

    @property
    def kind(self) -> str:
        """gateway, trajectory or files."""
        return self.live.kind


def _check(args: argparse.Namespace) -> None:
    if args.count is not None and args.count < 1:
        raise UsageError("inspector watch: --count must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("inspector watch: --timeout must be positive")
    if args.interval is not None and args.interval <= 0:
        raise UsageError("inspector watch: --interval must be positive")
    if args.probe_timeout <= 0:
        raise UsageError("inspector watch: --probe-timeout must be positive")
    if args.trigger_ratio is not None and not 0 < args.trigger_ratio < 1:
        raise UsageError("inspector watch: --trigger-ratio must be between 0 and 1")


def _request(source: str, args: argparse.Namespace) -> ConnectRequest:
    """The checked live request for a gateway or trajectory URL; UsageError saying why not."""
    try:
        request = build_request(source, args.session or "", _trajectory(source, args), args.subject)
    except ConnectError as error:
        if error.field != "session":
            raise UsageError(f"inspector watch: {error}") from None
        if classify_source(source) == "gateway":
            raise UsageError(
                f"inspector watch: {source} names no session; add ?session_id=ID or --session ID "
                "(--list-sessions shows them)"
            ) from None
        raise UsageError(
            f"inspector watch: {source} names no session; use …/api/trajectory/sessions/ID or --session ID"
        ) from None
    if request.kind == "trajectory":
        interval = args.interval or 1.5
        idle = max(interval, 1.5) if args.interval is None else interval
        request = dataclasses.replace(request, poll_interval=interval, idle_interval=idle)
    return request


def _trajectory(source: str, args: argparse.Namespace) -> str:
    """--trajectory; else `auto` for a gateway: a trajectory API when the agent has one, else
    the context rebuilt from the agent's home folder (when on this machine) or from its
    transcript over the gateway (`history.get`), which stand in for the trajectory API that
    jiuwenswarm 0.2.3 lacks."""
    if args.trajectory:
        return str(args.trajectory)
    return "auto" if classify_source(source) == "gateway" else ""


def _build_streams(args: argparse.Namespace) -> list[_Stream]:
    streams: list[_Stream] = []
    files = [s for s in args.sources if classify_source(s) == "files"]
    paths = [s for s in files if not _is_archive(s)]
    archives = [s for s in files if _is_archive(s)]
    for source in args.sources:
        if classify_source(source) != "files":
            streams.append(_Stream(_request(source, args).open_stream()))
    if paths:
        streams.append(_Stream(_file_stream(paths, args)))
    streams.extend(_Stream(_archive_stream(path)) for path in archives)
    return streams


def _is_archive(source: str) -> bool:
    """True for a trajectory archive file (zip or JSON Lines export): read once, not followed."""
    from pathlib import Path

    from inspector.sources.live.archive import looks_like_archive

    path = Path(source)
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            return looks_like_archive(handle.read(4096))
    except OSError:
        return False


def _archive_stream(path: str) -> LiveStream:
    from inspector.core.artifact import Artifact
    from inspector.sources.live.archive import load_archive

    async def read() -> AsyncIterator[LiveEvent]:
        results = await asyncio.to_thread(load_archive, path)
        yield SourceState(path, "loaded", "trajectory archive")
        for result in results:
            yield NewArtifact(result) if isinstance(result, Artifact) else SourceProblem(result)

    iterator = read()

    async def close() -> None:
        with contextlib.suppress(Exception):
            await iterator.aclose()  # type: ignore[attr-defined]

    return LiveStream(path, "files", iterator, close)


def _file_stream(paths: list[str], args: argparse.Namespace) -> LiveStream:
    from inspector.sources.follow import FileFollower, follow_paths

    label = ", ".join(paths)
    if args.once:

        async def once() -> AsyncIterator[LiveEvent]:
            follower = FileFollower(paths, settle=0.0)
            events = await asyncio.to_thread(follower.poll)
            yield SourceState(label, "following", follower.files_text)
            for event in events:
                yield event

        iterator = once()
    else:
        iterator = follow_paths(
            paths, interval=args.interval or 0.5, include_existing=not args.new_only
        )

    async def close() -> None:
        with contextlib.suppress(Exception):
            await iterator.aclose()  # type: ignore[attr-defined]

    return LiveStream(label, "files", iterator, close)


@dataclass(slots=True)
class _View:
    """What the printer learned so far: the agent's trigger points and the frames' scale."""

    tracker: LiveTracker = field(default_factory=LiveTracker)
    noted: bool = False

    def threshold(self, args: argparse.Namespace) -> float | None:
        """The user's own --trigger-ratio mark, in percent."""
        return None if args.trigger_ratio is None else args.trigger_ratio * 100


def _print(event: LiveEvent, args: argparse.Namespace, console: Any, view: _View) -> None:
    view.tracker.apply(event)
    note = None
    if isinstance(event, CompressionState) and not view.noted:
        note = view.tracker.scale_note()
        view.noted = note is not None
    if args.json:
        line = {**event.to_dict(), "at": datetime.now(UTC).isoformat(timespec="milliseconds")}
        if (
            args.snapshots
            and isinstance(event, NewArtifact)
            and event.artifact.snapshot is not None
        ):
            line["snapshot"] = event.artifact.snapshot.to_dict()
        if isinstance(event, ContextUsage):
            line["trigger_marks"] = [m.to_dict() for m in view.tracker.trigger_marks()]
        if note is not None:
            line["scale_note"] = note
        print_json_line(mask_secrets(line))
        return
    from inspector.render.live_report import event_line

    console.print(
        event_line(
            event, threshold_percent=view.threshold(args), marks=view.tracker.trigger_marks()
        )
    )
    if note is not None:
        console.print(f"         ⓘ {note}", style="dim", markup=False)


def _print_sessions(sessions: Any, args: argparse.Namespace) -> None:
    """One line per session, its metadata masked (it may carry the web UI's API key)."""
    for meta in sessions:
        safe = mask_secrets(meta)
        if args.json:
            print_json_line(safe)
        else:
            print(f"{safe.get('session_id')}\t{safe.get('mode', '')}\t{safe.get('title', '')}")


async def _list_sessions(args: argparse.Namespace) -> int:
    from inspector.sources.live.gateway import GatewayRefused, probe_gateway

    url = next((s for s in args.sources if classify_source(s) == "gateway"), None)
    if url is None:
        raise UsageError("inspector watch: --list-sessions needs a ws:// gateway URL")
    try:
        probe = await probe_gateway(url, None, timeout=_probe_timeout(args))
    except GatewayRefused as error:
        print(f"inspector watch: {mask_text(str(error))}", file=sys.stderr)
        return EXIT_FAILED
    _print_sessions(probe.sessions, args)
    return EXIT_OK


def _probe_timeout(args: argparse.Namespace) -> float:
    """The first answer must come within --probe-timeout, and within --timeout if shorter."""
    if args.timeout is not None:
        return min(args.probe_timeout, args.timeout)
    return float(args.probe_timeout)


async def _probe_all(args: argparse.Namespace, console: Any, view: _View) -> list[Any] | None:
    """Check every gateway source first; None (after saying why on stderr) when one fails."""
    from inspector.sources.live.gateway import GatewayRefused, probe_gateway

    probes = []
    for source in args.sources:
        if classify_source(source) != "gateway":
            continue
        request = _request(source, args)
        try:
            probe = await probe_gateway(source, request.session_id, timeout=_probe_timeout(args))
        except GatewayRefused as error:
            print(f"inspector watch: {mask_text(str(error))}", file=sys.stderr)
            return None
        view.tracker.config_triggers = _config_triggers(args, source)
        probes.append(probe)
    return probes


def _config_triggers(args: argparse.Namespace, url: str) -> dict[str, int]:
    """The agent's own thresholds from its home folder, when one is given or found."""
    from inspector.sources.jiuwenswarm import home_for_gateway, read_config

    home = home_for_gateway(url, args.home)
    if home is None:
        return {}
    try:
        return read_config(home).trigger_tokens()
    except (OSError, ValueError) as error:
        print(f"inspector watch: {home}: cannot read config.yaml ({error})", file=sys.stderr)
        return {}


def _use_home(given: str) -> None:
    """Point the live sessions at this home folder (jiuwenswarm's own variable says where)."""
    from pathlib import Path

    from inspector.sources.jiuwenswarm import find_home

    target = find_home(Path(given))
    if target is None:
        raise UsageError(f"inspector watch: {given} is not a jiuwenswarm home folder")
    os.environ["JIUWENSWARM_DATA_DIR"] = str(target.home)


def _print_probe(probe: Any, args: argparse.Namespace, console: Any) -> None:
    """`--once` on a gateway: the session as it is now (metadata masked)."""
    session = mask_secrets(probe.session) if probe.session is not None else None
    line = {
        "event": "session",
        "source": probe.url,
        "backend_ready": probe.backend_ready,
        "sessions": len(probe.sessions),
        "session": session,
    }
    if args.json:
        print_json_line({**line, "at": datetime.now(UTC).isoformat(timespec="milliseconds")})
        return
    state = "ready" if probe.backend_ready else "connected (backend not ready)"
    console.print(f"● {state}  {probe.url}  ({len(probe.sessions)} sessions)", markup=False)
    if session:
        console.print(
            f"  session {session.get('session_id')}: {session.get('title') or '(untitled)'}, "
            f"{session.get('message_count', '?')} messages, mode {session.get('mode', '?')}",
            markup=False,
        )


STOP = -1
_SIGNALS = (signal.SIGINT, signal.SIGTERM)
Queue = asyncio.Queue[tuple[int, LiveEvent | None]]


@dataclass(slots=True)
class _Tally:
    """Events seen so far that count towards --count, and problems for --once's exit status."""

    data_events: int = 0
    problems: int = 0


async def _pump(index: int, stream: _Stream, queue: Queue) -> None:
    """Forward one stream's events to the queue; a failure becomes a SourceProblem; None ends."""
    try:
        async for event in stream.live.events:
            await queue.put((index, event))
    except Exception as error:  # noqa: BLE001 - one broken source must not end the others
        from inspector.core.artifact import LoadError

        problem = LoadError(stream.live.label, f"{type(error).__name__}: {error}")
        await queue.put((index, SourceProblem(problem)))
    finally:
        await queue.put((index, None))


def _signal_handlers(loop: asyncio.AbstractEventLoop, queue: Queue | None) -> None:
    """SIGINT and SIGTERM end the watch (put a stop mark); None removes the handlers again."""
    for signum in _SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            if queue is None:
                loop.remove_signal_handler(signum)
            else:
                loop.add_signal_handler(signum, queue.put_nowait, (STOP, None))


async def _handle(
    event: LiveEvent,
    stream: _Stream,
    out: tuple[argparse.Namespace, Any, _View],
    followers: list[Any],
    tally: _Tally,
) -> bool:
    """Print one event, poke followers, count it; True when --count is reached."""
    args, console, view = out
    if isinstance(event, SourceState):
        if event.state == "closed" and event.detail != "stopped":
            stream.failed = True
        if not args.no_state:
            _print(event, args, console, view)
        return False
    _print(event, args, console, view)
    if isinstance(event, GatewayEvent) and event.name == "connection.ack":
        return False  # shown, but part of connecting rather than data
    if isinstance(event, SourceProblem):
        tally.problems += 1
    if stream.kind == "gateway":
        _poke(event, followers)
    tally.data_events += 1
    if (
        args.once
        and not stream.done
        and (
            stream.kind == "gateway"
            or (stream.kind == "trajectory" and isinstance(event, NewArtifact))
        )
    ):
        stream.done = True
        await stream.live.close()
    return args.count is not None and tally.data_events >= args.count


async def _drain(
    streams: list[_Stream],
    queue: Queue,
    args: argparse.Namespace,
    console: Any,
    tally: _Tally,
    view: _View,
) -> None:
    """Take events off the queue until every stream is done, a stop, the timeout or --count."""
    loop = asyncio.get_running_loop()
    followers = [s.live.follower for s in streams if s.live.follower is not None]
    deadline = None if args.timeout is None else loop.time() + args.timeout
    while not all(s.done for s in streams):
        remaining = None if deadline is None else deadline - loop.time()
        if remaining is not None and remaining <= 0:
            return
        try:
            index, event = await asyncio.wait_for(queue.get(), remaining)
        except TimeoutError:
            return
        if index == STOP:
            return
        stream = streams[index]
        if event is None:
            stream.done = True
        elif await _handle(event, stream, (args, console, view), followers, tally):
            return


async def _watch(args: argparse.Namespace) -> int:
    if args.list_sessions:
        return await _list_sessions(args)
    console = None
    if not args.json:
        from inspector.render.plain import TerminalSafeConsole

        console = TerminalSafeConsole(highlight=False, soft_wrap=True)
    if args.home:
        _use_home(args.home)
    view = _View()
    probes = await _probe_all(args, console, view)
    if probes is None:
        return EXIT_FAILED
    if args.once and probes:
        for probe in probes:
            _print_probe(probe, args, console)
        if all(classify_source(s) == "gateway" for s in args.sources):
            return EXIT_OK
        args.sources = [s for s in args.sources if classify_source(s) != "gateway"]
    streams = _build_streams(args)
    queue: Queue = asyncio.Queue()
    loop = asyncio.get_running_loop()
    _signal_handlers(loop, queue)
    tasks = [asyncio.create_task(_pump(i, s, queue)) for i, s in enumerate(streams)]
    tally = _Tally()
    try:
        await _drain(streams, queue, args, console, tally, view)
    finally:
        for stream in streams:
            with contextlib.suppress(Exception):
                await stream.live.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        _signal_handlers(loop, None)
    if any(s.failed for s in streams):
        return EXIT_FAILED
    if args.once and tally.problems:
        return EXIT_FAILED
    return EXIT_OK


def _poke(event: LiveEvent, followers: list[Any]) -> None:
    """Wake the trajectory follower of the event's session on a change hint."""
    session = getattr(event, "session_id", None)
    hint = isinstance(event, TraceUpdated) or (
        isinstance(event, GatewayEvent) and event.name in POKE_EVENTS
    )
    if not hint:
        return
    for follower in followers:
        if session is None or follower.client.session_id == session:
            follower.poke()


def run(args: argparse.Namespace) -> int:
    """Watch until stopped; exit 0 on Ctrl-C, timeout, --once or --count."""
    _check(args)
    try:
        return asyncio.run(_watch(args))
    except KeyboardInterrupt:  # platforms without loop signal handlers
        return EXIT_OK
