"""Client of the jiuwenswarm trajectory HTTP API (GitHub main builds; not in PyPI 0.2.3).

Probes the API generation (spec/jiuwenswarm-live.md 5.5: `/subjects` then `/checkpoints`,
falling back to gen-1 `/traces`), rebuilds the latest context window of a session subject
(section 7.1, via `WindowRebuilder`), and follows new revisions (7.2): woken by a
`trace.updated` poke when a gateway socket supplies one, else polling `/subjects` with
`after_revision`. A changed `store_epoch` or a `reset` page rebuilds from scratch. Large
bodies are decoded and windows rebuilt off the event loop so a UI never stalls.

Uses httpx (transport injectable for tests). Imports `inspector.core` and
`inspector.sources.live`; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from inspector.core.artifact import Artifact, LoadError
from inspector.core.live_events import (
    CompressionState,
    LiveEvent,
    NewArtifact,
    SourceProblem,
    SourceState,
)
from inspector.core.tuning import Tuning
from inspector.sources.live.gateway import Backoff
from inspector.sources.live.window import WindowRebuilder, WindowState, window_artifact

API_PREFIX = "/api/trajectory"
#: Bodies above this size are decoded in a worker thread.
THREAD_DECODE_BYTES = 256 * 1024


class TrajectoryError(Exception):
    """A trajectory request failed: HTTP status, the server's error code and text."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    @property
    def retryable(self) -> bool:
        """False for answers that will not change by asking again (404, 403, 400, gen-1 API)."""
        if self.code == "UNSUPPORTED_GENERATION":
            return False
        return self.status is None or self.status >= 500 or self.status == 429


def parse_trajectory_url(url: str, session_id: str | None = None) -> tuple[str, str | None]:
    """Split `http://host:port[/api/trajectory/sessions/SID[/...]][?session_id=SID]`.

    Returns the server base URL (`http://host:port`) and the session id, if any.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http:// trajectory URL: {url}")
    found = session_id
    segments = [s for s in parts.path.split("/") if s]
    if "sessions" in segments:
        at = segments.index("sessions")
        if at + 1 < len(segments) and not found:
            found = segments[at + 1]
    if not found:
        found = dict(parse_qsl(parts.query)).get("session_id")
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), found


class TrajectoryClient:
    """GET requests to `/api/trajectory/sessions/{session_id}/…` with the spec's headers."""

    def __init__(
        self,
        base_url: str,
        session_id: str,
        *,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        origin: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.base_url, parsed_session = parse_trajectory_url(base_url, session_id)
        self.session_id = parsed_session or session_id
        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        self.origin = origin or f"{parts.scheme}://{parts.hostname}:{port}"
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(
            transport=transport, timeout=timeout, trust_env=False, follow_redirects=False
        )
        self.generation: str | None = None

    @property
    def session_url(self) -> str:
        """`<base>/api/trajectory/sessions/<session_id>`."""
        return f"{self.base_url}{API_PREFIX}/sessions/{self.session_id}"

    async def aclose(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> TrajectoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET one session route; the decoded JSON body, or TrajectoryError with the server's words."""
        try:
            response = await self._client.get(
                self.session_url + path,
                params={k: str(v) for k, v in (params or {}).items()},
                headers={"Origin": self.origin, "Accept": "application/json"},
            )
        except httpx.HTTPError as error:
            raise TrajectoryError(f"{type(error).__name__}: {error}".rstrip(": ")) from None
        content = response.content
        try:
            if len(content) > THREAD_DECODE_BYTES:
                body = await asyncio.to_thread(json.loads, content)
            else:
                body = json.loads(content) if content else None
        except ValueError:
            body = None
        if response.status_code != 200:
            code = body.get("code") if isinstance(body, Mapping) else None
            text = body.get("error") if isinstance(body, Mapping) else None
            raise TrajectoryError(
                f"HTTP {response.status_code} {text or response.reason_phrase}",
                response.status_code,
                code,
            )
        if body is None and path.endswith("/raw"):
            raise TrajectoryError("raw span is not JSON", response.status_code)
        if body is None:
            raise TrajectoryError("response is not JSON", response.status_code)
        return body

    async def probe(self) -> str:
        """The API generation: `gen3` (checkpoints), `gen2` (subjects) or `gen1` (traces)."""
        try:
            await self.get("/subjects", {"after_revision": 0})
        except TrajectoryError as error:
            if error.status != 404 or "route" not in error.message:
                raise
            await self.get("/traces", {"limit": 1})
            self.generation = "gen1"
            return self.generation
        try:
            await self.get("/checkpoints")
            self.generation = "gen3"
        except TrajectoryError as error:
            if error.status != 404 or "route" not in error.message:
                raise
            self.generation = "gen2"
        return self.generation

    async def subjects(self, after_revision: int = 0) -> Mapping[str, Any]:
        """`GET /subjects?after_revision=N`: subjects changed after N, watermark, store_epoch."""
        return await self.get("/subjects", {"after_revision": after_revision})

    async def checkpoints(self) -> Mapping[str, Any]:
        """`GET /checkpoints` (gen 3)."""
        return await self.get("/checkpoints")

    async def records(
        self, subject_id: str, since_revision: int, limit: int = 1000
    ) -> Mapping[str, Any]:
        """`GET /subjects/{s}/records?since_revision=N&limit=L`: one page."""
        return await self.get(
            f"/subjects/{subject_id}/records", {"since_revision": since_revision, "limit": limit}
        )

    async def sequences(self, hashes: list[str]) -> Mapping[str, Any]:
        """`GET /sequences?hashes=…&since_revision=0`: resolve chains (200 hashes at most)."""
        return await self.get("/sequences", {"hashes": ",".join(hashes[:200]), "since_revision": 0})

    async def raw_span(self, trace_id: str, span_id: str) -> Any:
        """`GET /traces/{t}/spans/{s}/raw`: the stored OTLP body of a record too large to page."""
        return await self.get(f"/traces/{trace_id}/spans/{span_id}/raw")


class TrajectoryWindow:
    """The latest context window of one session subject, loaded and kept up to date."""

    def __init__(
        self,
        client: TrajectoryClient,
        *,
        subject_id: str = "main",
        tuning: Tuning | None = None,
        page_limit: int = 1000,
    ) -> None:
        self.client = client
        self.subject_id = subject_id
        self.tuning = tuning
        self.page_limit = page_limit
        self.rebuilder = WindowRebuilder(subject_id)
        self.cursor = 0
        self.watermark = 0
        self.store_epoch: str | None = None
        self.running = False
        self.state: WindowState | None = None
        self.artifact: Artifact | None = None
        self._reported_compactions: set[str] = set()

    async def load(self) -> Artifact:
        """Probe, seed from a checkpoint, page every record, rebuild: the latest window.

        A `reset` page (retention ran while reading) starts again, up to three times.
        """
        for _ in range(3):
            try:
                return await self._load_once()
            except _ResetNeeded:
                self.watermark = 0
                continue
        raise TrajectoryError(
            "the trajectory store kept resetting while it was read", None, "RESET"
        )

    async def _load_once(self) -> Artifact:
        if self.client.generation is None:
            await self.client.probe()
        if self.client.generation == "gen1":
            raise TrajectoryError(
                "this server has the gen-1 trajectory API (/traces); windows need gen 2 or 3",
                501,
                "UNSUPPORTED_GENERATION",
            )
        self.rebuilder.reset()
        self.cursor = 0
        listing = await self.client.subjects(0)
        self._note_listing(listing)
        ids = [
            str(s.get("subject_id")) for s in listing.get("items") or [] if isinstance(s, Mapping)
        ]
        if ids and self.subject_id not in ids:
            raise TrajectoryError(
                f"subject {self.subject_id!r} not found; subjects: {', '.join(ids)}",
                404,
                "NOT_FOUND",
            )
        if self.client.generation == "gen3":
            checkpoints = await self.client.checkpoints()
            if self.rebuilder.seed_checkpoint(checkpoints):
                missing = self.rebuilder.missing_chains()
                if missing:
                    self.rebuilder.merge_content(await self.client.sequences(missing))
                    self.rebuilder.diagnostics_seed.clear()
                    self.rebuilder.seed_checkpoint(checkpoints)
                for checkpoint in checkpoints.get("checkpoints") or []:
                    if (
                        isinstance(checkpoint, Mapping)
                        and checkpoint.get("subject_id") == self.subject_id
                    ):
                        self.cursor = _int(checkpoint.get("boundary_change_seq"))
        if ids:
            await self._page_records()
        return await self._rebuild()

    def _note_listing(self, listing: Mapping[str, Any]) -> None:
        self.watermark = max(self.watermark, _int(listing.get("watermark")))
        epoch = listing.get("store_epoch")
        self.store_epoch = None if epoch is None else str(epoch)
        self.running = any(
            isinstance(s, Mapping) and s.get("running") for s in listing.get("items") or []
        )

    async def _page_records(self) -> int:
        """Fetch pages from the cursor until `has_more` is false; new events count."""
        added = 0
        for _ in range(100_000):
            page = await self.client.records(self.subject_id, self.cursor, self.page_limit)
            if page.get("reset"):
                raise _ResetNeeded
            for record in page.get("records") or []:
                if (
                    isinstance(record, dict)
                    and record.get("otlp") is None
                    and record.get("projection_omitted")
                ):
                    with contextlib.suppress(TrajectoryError):
                        record["otlp"] = await self.client.raw_span(
                            str(record.get("trace_id")), str(record.get("span_id"))
                        )
            added += self.rebuilder.add_records(page)
            next_cursor = _int(page.get("next_since_revision"), self.cursor)
            progressed = next_cursor > self.cursor
            self.cursor = max(self.cursor, next_cursor)
            if not page.get("has_more") or not progressed:
                break
        return added

    async def _rebuild(self) -> Artifact:
        self.state = await asyncio.to_thread(self.rebuilder.rebuild)
        self.artifact = window_artifact(
            self.state,
            source=self.client.session_url,
            session_id=self.client.session_id,
            revision=self.watermark,
            store_epoch=self.store_epoch,
            api_generation=self.client.generation,
            tuning=self.tuning,
        )
        return self.artifact

    async def refresh(self) -> bool:
        """Read what changed after the watermark; True when the window was rebuilt."""
        try:
            listing = await self.client.subjects(self.watermark)
            epoch = listing.get("store_epoch")
            if (
                self.store_epoch is not None
                and epoch is not None
                and str(epoch) != self.store_epoch
            ):
                raise _ResetNeeded
            self._note_listing(listing)
            ids = {
                str(s.get("subject_id"))
                for s in listing.get("items") or []
                if isinstance(s, Mapping)
            }
            if self.subject_id not in ids:
                return False
            added = await self._page_records()
        except _ResetNeeded:
            self.store_epoch = None
            self.watermark = 0
            await self.load()
            return True
        if not added:
            return False
        await self._rebuild()
        return True

    def new_compactions(self) -> list[CompressionState]:
        """Compactions of the current state not reported before, as CompressionState events."""
        out: list[CompressionState] = []
        for payload in self.state.compactions if self.state else []:
            key = str(payload.get("event_id") or payload.get("operation_id"))
            if key in self._reported_compactions:
                continue
            self._reported_compactions.add(key)
            body = {k: v for k, v in payload.items() if k != "event_id"}
            body.setdefault("session_id", self.client.session_id)
            out.append(CompressionState.parse(body, self.client.session_url))
        return out


class _ResetNeeded(Exception):
    """The store was rebuilt or retention removed our cursor: start again."""


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


async def load_trajectory_window(
    base_url: str,
    session_id: str | None = None,
    *,
    subject_id: str = "main",
    tuning: Tuning | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float = 10.0,
) -> Artifact:
    """Rebuild the latest context window of a session once (raises TrajectoryError)."""
    base, sid = parse_trajectory_url(base_url, session_id)
    if not sid:
        raise TrajectoryError(
            "no session id: give it in the URL (…/sessions/<id>) or as session_id",
            None,
            "BAD_REQUEST",
        )
    async with TrajectoryClient(base, sid, transport=transport, timeout=timeout) as client:
        return await TrajectoryWindow(client, subject_id=subject_id, tuning=tuning).load()


@dataclass(frozen=True, slots=True)
class Polling:
    """How a trajectory follower polls: seconds between reads, and per HTTP request."""

    #: Between reads while the agent is running (the window changes).
    poll_interval: float = 1.5
    #: Between reads while it is idle.
    idle_interval: float = 5.0
    #: Wait after a gateway hint before reading (hints come in bursts).
    debounce: float = 0.1
    #: Seconds per HTTP request.
    timeout: float = 10.0


class TrajectoryFollower:
    """Follow a session's window: yields the first window, then each new revision.

    Call `poke()` on a gateway `trace.updated` (or `chat.final`/`chat.error`/
    `chat.processing_status`) for that session; without pokes it polls `/subjects`.
    """

    def __init__(
        self,
        base_url: str,
        session_id: str | None = None,
        *,
        subject_id: str = "main",
        tuning: Tuning | None = None,
        polling: Polling | None = None,
        backoff: Backoff | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base, sid = parse_trajectory_url(base_url, session_id)
        if not sid:
            raise ValueError("no session id: give it in the URL (…/sessions/<id>) or as session_id")
        polling = polling or Polling()
        self.client = TrajectoryClient(base, sid, transport=transport, timeout=polling.timeout)
        self.window = TrajectoryWindow(self.client, subject_id=subject_id, tuning=tuning)
        self.poll_interval = polling.poll_interval
        self.idle_interval = polling.idle_interval
        self.debounce = polling.debounce
        self.backoff = backoff or Backoff()
        self._wake = asyncio.Event()
        self._closing = False
        self.state = SourceState(self.client.session_url, "connecting")

    def poke(self) -> None:
        """Something changed upstream (a gateway hint): refresh soon."""
        self._wake.set()

    async def close(self) -> None:
        """Stop following; the event iterator ends with state `closed`."""
        self._closing = True
        self._wake.set()

    def __aiter__(self) -> AsyncIterator[LiveEvent]:
        return self.events()

    def _set(
        self, state: str, detail: str = "", retry_in: float | None = None, attempt: int = 0
    ) -> SourceState:
        self.state = SourceState(self.client.session_url, state, detail, retry_in, attempt)
        return self.state

    async def _wait(self, seconds: float) -> bool:
        """Sleep up to `seconds` or until poked; True when poked."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        poked = self._wake.is_set()
        self._wake.clear()
        return poked

    async def events(self) -> AsyncIterator[LiveEvent]:
        """State changes, the first window, then a `NewArtifact` (updated) per new revision."""
        delays = self.backoff.delays()
        attempt = 0
        loaded = False
        last_problem = ""
        try:
            while not self._closing:
                try:
                    if not loaded:
                        yield self._set("connecting", attempt=attempt)
                        artifact = await self.window.load()
                        loaded = True
                        yield self._set(
                            "polling",
                            f"{self.client.generation} API, revision {self.window.watermark}",
                        )
                        yield NewArtifact(artifact, "added")
                        for event in self.window.new_compactions():
                            yield event
                    else:
                        changed = await self.window.refresh()
                        if self.state.state != "polling":
                            yield self._set(
                                "polling",
                                f"{self.client.generation} API, revision {self.window.watermark}",
                            )
                        if changed and self.window.artifact is not None:
                            for event in self.window.new_compactions():
                                yield event
                            yield NewArtifact(self.window.artifact, "updated")
                    attempt = 0
                    delays = self.backoff.delays()
                except (TypeError, KeyError, AttributeError, IndexError, ValueError) as error:
                    # an answer of the wrong shape: said once per kind of trouble, then retried
                    message = f"unexpected answer ({type(error).__name__}: {error})"
                    if message != last_problem:
                        last_problem = message
                        yield SourceProblem(LoadError(self.client.session_url, message))
                    delay = next(delays)
                    attempt += 1
                    yield self._set("reconnecting", message, delay, attempt)
                    await self._wait(delay)
                    continue
                except TrajectoryError as error:
                    if not error.retryable and not loaded:
                        yield SourceProblem(
                            LoadError(self.client.session_url, error.message, error.code)
                        )
                        yield self._set("closed", error.message)
                        return
                    delay = next(delays)
                    attempt += 1
                    yield self._set("reconnecting", error.message, delay, attempt)
                    await self._wait(delay)
                    continue
                interval = self.poll_interval if self.window.running else self.idle_interval
                if await self._wait(interval) and not self._closing:
                    await asyncio.sleep(self.debounce)
                    self._wake.clear()
            yield self._set("closed", "stopped")
        finally:
            await self.client.aclose()


def load_trajectory_source(
    url: str,
    session_id: str | None = None,
    *,
    subject_id: str = "main",
    timeout: float = 10.0,
) -> list[Artifact | LoadError]:
    """Blocking helper for front ends that load sources synchronously (why, snapshot, TUI).

    Returns `[Artifact]` with the rebuilt window, or `[LoadError]` saying why not; never
    raises for server or network trouble. Must not be called from a running event loop.
    """
    try:
        artifact = asyncio.run(
            load_trajectory_window(url, session_id, subject_id=subject_id, timeout=timeout)
        )
    except TrajectoryError as error:
        where = error.code if error.code else None
        return [LoadError(url, error.message, where)]
    except ValueError as error:
        return [LoadError(url, str(error))]
    return [artifact]
