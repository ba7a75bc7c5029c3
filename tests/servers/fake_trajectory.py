"""A fake jiuwenswarm trajectory HTTP API (`http://127.0.0.1:<port>/api/trajectory/…`) for tests.

Built to spec/jiuwenswarm-live.md section 8 and 5.3-5.5: gen-3 routes (subjects, records,
sequences, checkpoints, usage, raw span), gen-2 (no checkpoints) and gen-1 (traces only)
modes, strict integer parsing, error JSON `{error, code}`, `Cache-Control: no-store`, an
ordered record store per session with increasing change_seq, per-subject paging with
`limit`, `reset` rules, a byte budget with oversize stubs, blob omission by
`since_revision`, a `store_epoch` rotation hook, disabled mode (503), unknown session
(404), unsupported mode (403) and an optional Origin check. Seeded with the
retention-single sample. Runs `ThreadingHTTPServer` in a thread on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import re
import socket
import threading
import zipfile
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "jiuwenswarm"
SESSION = "retention-single"
_DIGITS = re.compile(r"^[0-9]{1,19}$")


def _load(name: str) -> dict[str, Any]:
    data = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    data.pop("_sample_note", None)
    return data


class ApiError(Exception):
    def __init__(self, status: int, error: str, code: str) -> None:
        super().__init__(error)
        self.status, self.error, self.code = status, error, code


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def event_record(
    session_id: str,
    kind: str,
    payload: Mapping[str, Any],
    *,
    epoch: str,
    sequence: int,
    subject_id: str = "main",
    recorded_at: int = 1760000040000000000,
    event_id: str | None = None,
) -> dict[str, Any]:
    """A record holding one v2 event span (as the sample records are built); change_seq unset."""
    span_id = hashlib.sha256(f"{session_id}:{epoch}:{sequence}:{kind}".encode()).hexdigest()[:16]
    trace_id = hashlib.sha256(f"trace:{session_id}:{epoch}:{sequence}".encode()).hexdigest()[:32]
    attrs = [
        _attr("gen_ai.conversation.id", session_id),
        _attr("openjiuwen.agent.mode", "agent.work.normal"),
        _attr("openjiuwen.execution.subject.id", subject_id),
        _attr("openjiuwen.trajectory.schema_version", "2"),
        _attr("openjiuwen.trajectory.event_id", event_id or f"{subject_id}:{epoch}:{sequence}"),
        _attr("openjiuwen.trajectory.event_kind", kind),
        _attr("openjiuwen.trajectory.subject_id", subject_id),
        _attr("openjiuwen.trajectory.sequence_epoch", epoch),
        _attr("openjiuwen.trajectory.subject_sequence", sequence),
        _attr("openjiuwen.trajectory.recorded_at_unix_nano", recorded_at),
        _attr("openjiuwen.trajectory.payload", json.dumps(payload)),
        _attr("openjiuwen.trajectory.record.kind", "event"),
    ]
    otlp = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "jiuwenswarm")]},
                "scopeSpans": [
                    {
                        "scope": {},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": span_id,
                                "name": kind,
                                "kind": 1,
                                "startTimeUnixNano": str(recorded_at),
                                "endTimeUnixNano": str(recorded_at),
                                "attributes": attrs,
                                "status": {"code": 1},
                                "flags": 256,
                            }
                        ],
                    }
                ],
            }
        ]
    }
    return {
        "record_id": f"{trace_id}:{span_id}",
        "trace_id": trace_id,
        "span_id": span_id,
        "record_revision": 1,
        "lifecycle": "final",
        "operation": "upsert",
        "observed_time_unix_nano": str(recorded_at),
        "raw_size_bytes": len(json.dumps(otlp)),
        "otlp": otlp,
        "raw_valid": True,
    }


def _subject_of(record: Mapping[str, Any]) -> str:
    otlp = record.get("otlp") or {}
    for resource in otlp.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for item in span.get("attributes", []):
                    if item["key"] in (
                        "openjiuwen.trajectory.subject_id",
                        "openjiuwen.execution.subject.id",
                    ):
                        return str(item["value"].get("stringValue"))
    return str(record.get("_subject", "main"))


class SessionStore:
    """Records, checkpoint and content of one session."""

    def __init__(self, mode: str = "agent.work.normal", team_name: str | None = None) -> None:
        self.mode = mode
        self.team_name = team_name
        self.records: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.sequences: dict[str, list[str]] = {}
        self.blobs: dict[str, str] = {}
        self.blob_first_seen: dict[str, int] = {}
        self.retained_from: dict[str, int] = {}
        #: `sequences` and `blobs` of the /checkpoints response.
        self.checkpoint_content: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        self.change_seq = 0
        self.store_epoch = "fixture"


class FakeTrajectory:
    """The fake server; `start()`, then `base_url` / `session_url(sid)`; `stop()`."""

    def __init__(
        self,
        *,
        generation: int = 3,
        enabled: bool = True,
        origin_check: bool = False,
        allowed_hosts: Iterable[str] = ("127.0.0.1", "localhost"),
        detail_max_bytes: int = 4 * 1024 * 1024,
        seed_samples: bool = True,
    ) -> None:
        self.generation = generation
        self.enabled = enabled
        self.origin_check = origin_check
        self.allowed_hosts = set(allowed_hosts)
        self.detail_max_bytes = detail_max_bytes
        self.sessions: dict[str, SessionStore] = {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        if seed_samples:
            self.seed_samples()

    # ---- store -----------------------------------------------------------------------

    def seed_samples(self) -> None:
        """The retention-single session: checkpoint at 8, event records 10-19 of the sample."""
        store = SessionStore()
        checkpoints = _load("trajectory-checkpoints.json")
        page = _load("trajectory-subject-records.main.json")
        store.store_epoch = checkpoints["store_epoch"]
        store.checkpoints = checkpoints["checkpoints"]
        store.checkpoint_content = (checkpoints["sequences"], checkpoints["blobs"])
        store.sequences.update(checkpoints["sequences"])
        store.blobs.update(checkpoints["blobs"])
        for blob in checkpoints["blobs"]:
            store.blob_first_seen[blob] = 8
        store.sequences.update(page["sequences"])
        for record in page["records"]:
            store.records.append(record)
            for ref in (record.get("sequences") or {}).values():
                for blob in page["sequences"].get(ref["hash"], []):
                    if blob in page["blobs"] and blob not in store.blob_first_seen:
                        store.blobs[blob] = page["blobs"][blob]
                        store.blob_first_seen[blob] = record["change_seq"]
        store.change_seq = max(r["change_seq"] for r in store.records)
        store.retained_from["main"] = 9
        self.sessions[SESSION] = store

    def add_session(
        self, session_id: str, mode: str = "agent.work.normal", team_name: str | None = None
    ) -> SessionStore:
        """An empty session (no database yet)."""
        with self.lock:
            store = self.sessions[session_id] = SessionStore(mode, team_name)
            store.store_epoch = "absent"
            return store

    def append(self, session_id: str, record: Mapping[str, Any]) -> int:
        """Store a record at the next change_seq (an upsert of a known record_id moves it)."""
        with self.lock:
            store = self.sessions[session_id]
            store.change_seq += 1
            new = copy.deepcopy(dict(record))
            new["change_seq"] = new["ingest_seq"] = store.change_seq
            store.records = [r for r in store.records if r["record_id"] != new["record_id"]]
            store.records.append(new)
            if store.store_epoch == "absent":
                store.store_epoch = "fixture"
            return store.change_seq

    def append_event(
        self, session_id: str, kind: str, payload: Mapping[str, Any], **kwargs: Any
    ) -> int:
        """Store a v2 event record (see `event_record`)."""
        return self.append(session_id, event_record(session_id, kind, payload, **kwargs))

    def rotate_epoch(self, session_id: str, new_epoch: str) -> None:
        """Simulate a rebuilt store: new store_epoch (clients must start again)."""
        with self.lock:
            self.sessions[session_id].store_epoch = new_epoch

    def archive_lines(self, session_id: str = SESSION) -> list[dict[str, Any]]:
        """The archive v3 JSON Lines of a session (spec 5.4 g), chains as linked nodes."""
        store = self.sessions[session_id]
        lines: list[dict[str, Any]] = [
            {
                "type": "header",
                "format": "openjiuwen.trajectory.archive",
                "archive_version": 3,
                "session_id": session_id,
                "exported_at": "2026-01-01T00:00:00Z",
                "store_epoch": store.store_epoch,
                "revision": str(store.change_seq),
                "stream_frames": False,
            }
        ]
        emitted: set[str] = set()

        def chain(blob_hashes: list[str], blobs: Mapping[str, str]) -> None:
            prev: str | None = None
            for depth, blob in enumerate(blob_hashes, start=1):
                node = hashlib.sha256(
                    (prev or "").encode("ascii") + b"\x00" + blob.encode("ascii")
                ).hexdigest()
                if blob not in emitted and blob in blobs:
                    lines.append({"type": "blob", "hash": blob, "text": blobs[blob]})
                    emitted.add(blob)
                if node not in emitted:
                    lines.append(
                        {
                            "type": "sequence",
                            "hash": node,
                            "prev": prev,
                            "blob": blob,
                            "depth": depth,
                        }
                    )
                    emitted.add(node)
                prev = node

        sequences, blobs = store.checkpoint_content
        for checkpoint in store.checkpoints:
            for blob_hashes in sequences.values():
                chain(blob_hashes, blobs)
            lines.append({"type": "checkpoint", **checkpoint})
        for record in sorted(store.records, key=lambda r: r["change_seq"]):
            for ref in (record.get("sequences") or {}).values():
                chain(store.sequences.get(ref["hash"], []), store.blobs)
            lines.append(
                {
                    "type": "record",
                    "record_id": record["record_id"],
                    "trace_id": record["trace_id"],
                    "span_id": record["span_id"],
                    "subject_id": _subject_of(record),
                    "record_revision": record["record_revision"],
                    "lifecycle": record["lifecycle"],
                    "operation": "upsert",
                    "change_seq": str(record["change_seq"]),
                    "observed_time_unix_nano": record["observed_time_unix_nano"],
                    "raw_size_bytes": record["raw_size_bytes"],
                    "raw_valid": True,
                    "raw_json": json.dumps(record["otlp"]),
                    **({"sequences": record["sequences"]} if record.get("sequences") else {}),
                }
            )
        lines.append({"type": "end", "records": len(store.records), "lines": len(lines)})
        return lines

    def archive_zip(self, session_id: str = SESSION) -> bytes:
        """The zip `GET …/archive` downloads: one `trajectory.jsonl` entry."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            text = "".join(
                json.dumps(line, ensure_ascii=False) + "\n"
                for line in self.archive_lines(session_id)
            )
            archive.writestr("trajectory.jsonl", text)
        return buffer.getvalue()

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeTrajectory:
        """Listen on 127.0.0.1 (the same port again after a stop)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                fake._connections.add(self.connection)

            def finish(self) -> None:
                fake._connections.discard(self.connection)
                super().finish()

            def do_GET(self) -> None:
                fake._serve(self)

            def do_POST(self) -> None:
                fake._send(
                    self,
                    405,
                    {"error": "trajectory method not allowed", "code": "METHOD_NOT_ALLOWED"},
                    {"Allow": "GET"},
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for connection in list(self._connections):  # keep-alive sockets die with the server
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._connections.clear()

    def __enter__(self) -> FakeTrajectory:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    def session_url(self, session_id: str = SESSION) -> str:
        """`<base>/api/trajectory/sessions/<sid>`."""
        return f"{self.base_url}/api/trajectory/sessions/{session_id}"

    # ---- HTTP ------------------------------------------------------------------------

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: Any,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Cache-Control", "no-store")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.requests.append(
            {"path": parts.path, "query": query, "origin": handler.headers.get("Origin")}
        )
        try:
            body = self._route(parts.path, query, handler.headers.get("Origin"))
            if isinstance(body, bytes):
                handler.send_response(200)
                handler.send_header("Content-Type", "application/zip")
                handler.send_header("Cache-Control", "no-store")
                handler.send_header("Content-Length", str(len(body)))
                handler.send_header(
                    "Content-Disposition", 'attachment; filename="trajectory.trajectory.zip"'
                )
                handler.end_headers()
                handler.wfile.write(body)
                return
        except ApiError as error:
            self._send(handler, error.status, {"error": error.error, "code": error.code})
            return
        self._send(handler, 200, body)

    @staticmethod
    def _int(
        query: Mapping[str, str], name: str, default: int, low: int = 0, high: int | None = None
    ) -> int:
        raw = query.get(name)
        if raw is None:
            return default
        if not _DIGITS.match(raw) or int(raw) > 2**63 - 1:
            raise ApiError(400, f"{name} must be an integer", "BAD_REQUEST")
        value = int(raw)
        if value < low or (high is not None and value > high):
            raise ApiError(400, f"{name} is out of range", "BAD_REQUEST")
        return value

    def _route(self, path: str, query: Mapping[str, str], origin: str | None) -> Any:
        segments = [unquote(s) for s in path.split("/") if s]
        if segments[:2] != ["api", "trajectory"] or len(segments) < 5 or segments[2] != "sessions":
            raise ApiError(404, "trajectory route not found", "NOT_FOUND")
        if self.origin_check:
            host = urlsplit(origin).hostname if origin else None
            if host not in self.allowed_hosts:
                raise ApiError(403, "origin not allowed", "FORBIDDEN_ORIGIN")
        if not self.enabled:
            raise ApiError(503, "trajectory UI is disabled", "TRAJECTORY_DISABLED")
        session_id, rest = segments[3], segments[4:]
        with self.lock:
            store = self.sessions.get(session_id)
            if store is None:
                raise ApiError(404, "session not found", "NOT_FOUND")
            if not store.mode:
                raise ApiError(
                    403,
                    "trajectory UI supports known Agent sessions only",
                    "UNSUPPORTED_SESSION_MODE",
                )
            if store.mode.startswith("team") != bool(store.team_name):
                raise ApiError(
                    403,
                    "trajectory UI supports Agent and Team sessions only",
                    "UNSUPPORTED_SESSION_MODE",
                )
            return self._dispatch(session_id, store, rest, query)

    def _dispatch(
        self, sid: str, store: SessionStore, rest: list[str], query: Mapping[str, str]
    ) -> Any:
        if self.generation == 1:
            if rest == ["traces"]:
                return {
                    "schema_version": 1,
                    "session_id": sid,
                    "items": [],
                    "next_cursor": None,
                    "revision_cursor": None,
                    "store_epoch": store.store_epoch,
                }
            raise ApiError(404, "trajectory route not found", "NOT_FOUND")
        if rest == ["subjects"]:
            return self._subjects(sid, store, self._int(query, "after_revision", 0))
        if len(rest) == 3 and rest[0] == "subjects" and rest[2] == "records":
            return self._records(
                sid,
                store,
                rest[1],
                self._int(query, "since_revision", 0),
                self._int(query, "limit", 1000, 1, 1000),
            )
        if rest == ["checkpoints"] and self.generation >= 3:
            return {
                "schema_version": 1,
                "session_id": sid,
                "store_epoch": store.store_epoch,
                "checkpoints": store.checkpoints,
                "sequences": store.checkpoint_content[0],
                "blobs": store.checkpoint_content[1],
            }
        if rest == ["sequences"]:
            hashes = [h for h in query.get("hashes", "").split(",") if h]
            if not 1 <= len(hashes) <= 200 or not all(
                re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes
            ):
                raise ApiError(400, "hashes must be 1..200 chain hashes", "BAD_REQUEST")
            since = self._int(query, "since_revision", 0)
            sequences = {h: store.sequences[h] for h in hashes if h in store.sequences}
            blobs = {
                b: store.blobs[b]
                for chain in sequences.values()
                for b in chain
                if b in store.blobs and store.blob_first_seen.get(b, 0) > since
            }
            return {"schema_version": 1, "session_id": sid, "sequences": sequences, "blobs": blobs}
        if rest == ["archive"] and self.generation >= 3:
            return self.archive_zip(sid)
        if rest == ["usage"]:
            usage = _load("trajectory-misc-responses.json")[
                f"GET /api/trajectory/sessions/{SESSION}/usage"
            ]
            return {**usage, "session_id": sid}
        if len(rest) == 5 and rest[0] == "traces" and rest[2] == "spans" and rest[4] == "raw":
            for record in store.records:
                if (
                    record["trace_id"] == rest[1]
                    and record["span_id"] == rest[3]
                    and record.get("otlp")
                ):
                    return record["otlp"]
            raise ApiError(404, "span not found", "NOT_FOUND")
        raise ApiError(404, "trajectory route not found", "NOT_FOUND")

    def _subjects(self, sid: str, store: SessionStore, after: int) -> Any:
        by_subject: dict[str, list[dict[str, Any]]] = {}
        for record in store.records:
            by_subject.setdefault(_subject_of(record), []).append(record)
        items = []
        for subject, records in by_subject.items():
            top = max(r["change_seq"] for r in records)
            if top <= after:
                continue
            items.append(
                {
                    "subject_id": subject,
                    "display_name": "Main Agent" if subject == "main" else subject,
                    "kind": "main_agent" if subject == "main" else "subagent",
                    "parent_id": None if subject == "main" else "main",
                    "record_count": len(records),
                    "trace_count": len({r["trace_id"] for r in records}),
                    "first_start_time_unix_nano": records[0]["observed_time_unix_nano"],
                    "last_observed_time_unix_nano": records[-1]["observed_time_unix_nano"],
                    "first_revision": min(r["change_seq"] for r in records),
                    "revision": top,
                    "has_error": False,
                    "running": any(r.get("lifecycle") == "running" for r in records),
                }
            )
        return {
            "schema_version": 1,
            "session_id": sid,
            "items": items,
            "watermark": store.change_seq if store.records else 0,
            "store_epoch": store.store_epoch,
        }

    def _records(self, sid: str, store: SessionStore, subject: str, since: int, limit: int) -> Any:
        records = sorted(
            (r for r in store.records if _subject_of(r) == subject), key=lambda r: r["change_seq"]
        )
        if not records:
            raise ApiError(404, "subject not found", "NOT_FOUND")
        top = records[-1]["change_seq"]
        first = store.retained_from.get(subject, records[0]["change_seq"])
        reset = since > top or (since > 0 and since < first - 1)
        if reset:
            since = 0
        pending = [r for r in records if r["change_seq"] > since]
        page: list[dict[str, Any]] = []
        used = 0
        for record in pending[:limit]:
            size = int(record.get("raw_size_bytes") or 0)
            if not page and size > self.detail_max_bytes:
                stub = {
                    k: v for k, v in record.items() if k not in ("otlp", "raw_valid", "sequences")
                }
                page.append(
                    {
                        **stub,
                        "otlp": None,
                        "raw_valid": None,
                        "projection_omitted": "record_too_large",
                    }
                )
                used = size
                break
            if used + size > self.detail_max_bytes:
                break
            page.append(record)
            used += size
        sequences: dict[str, list[str]] = {}
        for record in page:
            for ref in (record.get("sequences") or {}).values():
                if ref["hash"] in store.sequences:
                    sequences[ref["hash"]] = store.sequences[ref["hash"]]
        blobs = {
            b: store.blobs[b]
            for chain in sequences.values()
            for b in chain
            if b in store.blobs and store.blob_first_seen.get(b, 0) > since
        }
        last = page[-1]["change_seq"] if page else since
        return {
            "schema_version": 1,
            "session_id": sid,
            "subject_id": subject,
            "revision": top,
            "reset": reset,
            "records": page,
            "has_more": len(pending) > len(page),
            "next_since_revision": last,
            "projected_raw_bytes": used,
            "max_projected_raw_bytes": self.detail_max_bytes,
            "sequences": sequences,
            "blobs": blobs,
        }
