"""Offline trajectory archives: the zip the trajectory API exports rebuilds the same window."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from inspector.core.artifact import Artifact, LoadError
from inspector.sources.live.archive import load_archive, looks_like_archive, read_archive
from tests.servers.fake_trajectory import SESSION, FakeTrajectory

SLOT = "openjiuwen:request-system-slot:main"


def window_ids(artifact: Artifact) -> list[str]:
    return [m["message_id"] for m in artifact.extra["context_messages"]]


def test_archive_downloaded_from_the_server_rebuilds_the_live_window(tmp_path: Path) -> None:
    with FakeTrajectory() as server:
        response = httpx.get(server.session_url() + "/archive", trust_env=False)
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    assert looks_like_archive(response.content)
    path = tmp_path / "trajectory-retention-single.trajectory.zip"
    path.write_bytes(response.content)
    [artifact] = load_archive(path)
    assert isinstance(artifact, Artifact)
    assert (
        artifact.session_id == SESSION and artifact.extra["live"]["api_generation"] == "archive v3"
    )
    assert window_ids(artifact) == [SLOT, "summary-1", "user-3"]
    assert artifact.extra["live"]["partial"] is False and artifact.recorded["compactions"] == 1


def test_jsonl_text_and_v2_single_object_forms(tmp_path: Path) -> None:
    server = FakeTrajectory()
    lines = server.archive_lines()
    text = "".join(json.dumps(line) + "\n" for line in lines)
    [from_text] = read_archive(text.encode(), "a.jsonl")
    assert isinstance(from_text, Artifact) and window_ids(from_text) == [
        SLOT,
        "summary-1",
        "user-3",
    ]
    records = [
        {**line, "raw_json": None, "otlp": json.loads(line["raw_json"])}
        for line in lines
        if line["type"] == "record"
    ]
    v2 = {
        "format": "openjiuwen.trajectory.archive",
        "archive_version": 2,
        "session_id": SESSION,
        "store_epoch": "e",
        "revision": "19",
        "records": records,
    }
    [from_v2] = read_archive(json.dumps(v2).encode(), "a.json")
    assert isinstance(from_v2, Artifact) and window_ids(from_v2) == [SLOT, "summary-1", "user-3"]


def test_bad_archives_are_errors_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04not really")
    [error] = load_archive(tmp_path / "bad.zip")
    assert isinstance(error, LoadError) and "zip" in error.error
    (tmp_path / "other.jsonl").write_text('{"type": "header", "format": "something else"}\n')
    [error] = load_archive(tmp_path / "other.jsonl")
    assert isinstance(error, LoadError) and "header" in error.error
    server = FakeTrajectory()
    text = "".join(json.dumps(line) + "\n" for line in server.archive_lines()) + "{broken\n"
    results = read_archive(text.encode(), "x")
    assert any(isinstance(r, LoadError) and r.where for r in results)
    assert any(isinstance(r, Artifact) for r in results)
