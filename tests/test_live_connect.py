"""One classifier and opener for source strings (sources.connect), shared by watch and the TUI."""

from __future__ import annotations

import pytest

from inspector.sources.connect import (
    ConnectError,
    ConnectRequest,
    build_request,
    classify_source,
    is_live_url,
)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("ws://127.0.0.1:19000/ws", "gateway"),
        ("WSS://host/ws?session_id=a", "gateway"),
        ("  ws://padded/ws", "gateway"),
        ("http://127.0.0.1:19002/api/trajectory/sessions/s", "trajectory"),
        ("HTTPS://host", "trajectory"),
        ("/tmp/dumps", "files"),
        ("sample_dumps/demo.json", "files"),
        ("wsx://not-a-gateway", "files"),
    ],
)
def test_classify_source(source: str, kind: str) -> None:
    assert classify_source(source) == kind
    assert is_live_url(source) == (kind != "files")


def test_build_request_fields_and_refusals() -> None:
    gateway = build_request("ws://h:1/ws?session_id=q")
    assert (gateway.kind, gateway.session_id, gateway.trajectory) == ("gateway", "q", "auto")
    assert build_request("ws://h:1/ws", "s1", "", "").trajectory is None
    assert build_request("http://h:2/api/trajectory/sessions/x").session_id == "x"
    assert build_request("/tmp/d") == ConnectRequest("files", "/tmp/d", None, None, "main")
    for args, field in [
        (("",), "source"),
        (("ws://h:1/ws",), "session"),
        (("ws://h:1/ws", "s", "ftp://x"), "trajectory"),
        (("http://h:2",), "session"),
    ]:
        with pytest.raises(ConnectError) as caught:
            build_request(*args)
        assert caught.value.field == field and str(caught.value)


async def test_opening_a_gateway_without_trajectory_observes_the_gateway_only() -> None:
    stream = build_request("ws://127.0.0.1:9/ws?session_id=q", "", "").open_stream()
    assert stream.kind == "gateway" and stream.follower is None
    assert "session_id=q" in stream.label
    await stream.close()


async def test_opening_a_trajectory_keeps_its_follower_and_intervals() -> None:
    import dataclasses

    request = dataclasses.replace(
        build_request("http://127.0.0.1:9/api/trajectory/sessions/s"),
        poll_interval=0.2,
        idle_interval=0.4,
    )
    stream = request.open_stream()
    assert stream.kind == "trajectory" and stream.follower is not None
    assert (stream.follower.poll_interval, stream.follower.idle_interval) == (0.2, 0.4)
    assert stream.label.endswith("/sessions/s")
    await stream.close()
