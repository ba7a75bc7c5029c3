"""A session's transcript over the gateway WebSocket: jiuwenswarm's read-only `history.get`.

The web UI restores a conversation with `{"type":"req","method":"history.get","params":
{"session_id","page_idx"}}`: the gateway answers `res` (accepted), forwards the request to
the agent, and the agent streams one `history.message` event per record of the session's
`history.jsonl` (records the UI can restore: user turns, answers, tool calls and results,
usage summaries; long strings cut to 16 KB, records over 64 KB collapsed), newest first,
20 a page, then one `history.message` with `status: "done"` and `total_pages`; an unknown
session or page ends with `chat.error`. `fetch_history` reads every page on its own
socket (registered for the session like any web client, so nothing else is sent on the
watching socket) and returns the records oldest first. It never sends anything but
`history.get`. Imports `inspector.core` and `inspector.sources.live`; never Textual or Rich.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from inspector.sources.live.gateway import GatewayObserver, GatewayOptions

#: Pages read at most (20 records each: 20,000 records).
MAX_PAGES = 1000
#: The user id of the history socket beside a watching observer (the gateway routes the
#: answer by user and session: sharing the watcher's id sends the pages to the watcher).
HISTORY_USER = "inspector-history"
#: Request ids of our `history.get` (the gateway puts them into the `chat.error` it answers
#: with, which may reach the watching socket too: the live session drops those).
HISTORY_REQUEST_PREFIX = "inspector_history_"


class HistoryUnavailable(Exception):
    """The gateway gave no history for the session (unknown session, refused, timed out)."""


async def _page(
    connection: Any, session_id: str, page: int, deadline: float
) -> tuple[list[dict[str, Any]], int]:
    """One page's records (newest first) and the total page count."""
    request_id = f"{HISTORY_REQUEST_PREFIX}{page}_{time.monotonic_ns()}"
    await connection.send(
        json.dumps(
            {
                "type": "req",
                "id": request_id,
                "method": "history.get",
                "params": {"session_id": session_id, "page_idx": page},
            }
        )
    )
    records: list[dict[str, Any]] = []
    #: The gateway may route the events of another client's history.get of the same
    #: session to this socket too (0.2.3 falls back to the session's sockets): only this
    #: page's events count, each record once.
    seen: set[str] = set()
    loop = asyncio.get_running_loop()
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise HistoryUnavailable(f"no complete history page {page} in time")
        frame = json.loads(await asyncio.wait_for(connection.recv(), remaining))
        if not isinstance(frame, dict):
            continue
        raw = frame.get("payload")
        payload: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if frame.get("type") == "res" and frame.get("id") == request_id and not frame.get("ok"):
            raise HistoryUnavailable(f"history.get refused: {frame.get('error') or payload}")
        if frame.get("type") != "event" or payload.get("session_id") not in (None, session_id):
            continue
        if frame.get("event") == "chat.error":
            raise HistoryUnavailable(str(payload.get("error") or payload.get("content") or "error"))
        if frame.get("event") != "history.message" or payload.get("page_idx") not in (None, page):
            continue
        if payload.get("status") == "done":
            total = payload.get("total_pages")
            return records, total if isinstance(total, int) and total > 0 else page
        message = payload.get("message")
        if not isinstance(message, dict):
            continue
        key = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
        if key not in seen:  # record ids repeat within a turn; whole records do not
            records.append(message)
            seen.add(key)


async def fetch_history(
    target: str | GatewayObserver,
    session_id: str,
    *,
    timeout: float = 10.0,
    options: GatewayOptions | None = None,
) -> list[dict[str, Any]]:
    """Every transcript record of the session, oldest first (HistoryUnavailable if none).

    `target` is the gateway URL, or the watching observer (its session, origin and token are
    used for a socket of its own, under `HISTORY_USER`); `timeout` bounds the whole read."""
    if isinstance(target, GatewayObserver):
        observer = target.side_observer(HISTORY_USER)
    else:
        base = options or GatewayOptions()
        observer = GatewayObserver(
            target,
            session_id=session_id,
            options=dataclasses.replace(
                base, reconnect=False, open_timeout=min(base.open_timeout, timeout)
            ),
        )
    deadline = asyncio.get_running_loop().time() + timeout
    pages: list[list[dict[str, Any]]] = []
    try:
        async with observer.open() as connection:
            records, total = await _page(connection, session_id, 1, deadline)
            pages.append(records)
            for page in range(2, min(total, MAX_PAGES) + 1):
                records, _ = await _page(connection, session_id, page, deadline)
                pages.append(records)
    except (
        OSError,
        TimeoutError,
        ValueError,
        InvalidHandshake,
        InvalidURI,
        ConnectionClosed,
    ) as error:
        detail = f"{type(error).__name__}: {error}".rstrip(": ")
        raise HistoryUnavailable(f"cannot read the history: {detail}") from None
    newest_first = [record for page in pages for record in page]
    return list(reversed(newest_first))
