"""The HTML report in a real browser: Debian's headless Chromium loads it, the regions,
verdict and findings are on the rendered page, and the page makes no network request.

Requests are caught by pointing Chromium at a recording proxy on 127.0.0.1 (every http and
https fetch goes through it, whatever the host) and by mapping every host name to nowhere;
a control page with one remote image proves the proxy sees what a page fetches. Run by
`make test-browser` (which installs chromium when missing); skipped nowhere: without
Chromium this test fails.
"""

from __future__ import annotations

import http.server
import json
import shutil
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli import main
from tests.test_report import SAMPLE_DUMP, parsed

REPO = Path(__file__).resolve().parents[1]
SCREENSHOT = REPO / "bench" / "out" / "report.png"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-default-browser-check",
    "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
)
#: Chromium's own service hosts (updates, clock, sign-in): traffic of the browser, not of a
#: page; the report holds no address at all, so none of these can come from it.
BROWSER_HOSTS = ("google.com", "googleapis.com", "gstatic.com", "gvt1.com")


def page_requests(seen: list[str]) -> list[str]:
    """The recorded requests that are not Chromium's own service traffic."""
    out = []
    for line in seen:
        target = line.split(" ", 1)[1]
        host = target.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        if not any(host == h or host.endswith("." + h) for h in BROWSER_HOSTS):
            out.append(line)
    return out


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def _record(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_CONNECT = _record  # noqa: N815

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def proxy() -> Iterator[tuple[int, list[str]]]:
    """A proxy on 127.0.0.1 that records every request and answers 404."""
    _Recorder.seen = []
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


def chromium(page: Path, port: int, profile: Path, *extra: str) -> str:
    """Load `page` in headless Chromium through the recording proxy; the DOM or output."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "chromium is not installed (make test-browser installs it)"
    command = [
        binary,
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--proxy-server=http://127.0.0.1:{port}",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--virtual-time-budget=3000",
        *extra,
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_report_renders_in_chromium_without_requests(
    tmp_path: Path, proxy: tuple[int, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    port, seen = proxy
    assert main(["why", str(SAMPLE_DUMP), "--json"]) == 0
    why = json.loads(capsys.readouterr().out.splitlines()[0])
    page = tmp_path / "report.html"
    assert main(["report", str(SAMPLE_DUMP), "--format", "html", "--out", str(page)]) == 0
    # the control: a page with one remote image is seen by the proxy
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://example.com/x.png"></body></html>')
    chromium(control, port, tmp_path / "profile-control", "--dump-dom")
    assert any("example.com" in line for line in page_requests(seen)), seen
    seen.clear()
    text = page.read_text(encoding="utf-8")
    assert not any(host in text for host in BROWSER_HOSTS)
    dom = chromium(page, port, tmp_path / "profile", "--dump-dom")
    assert page_requests(seen) == [], seen
    rendered = parsed(dom)
    assert why["verdict"] in rendered.text("verdict")
    for region in why["regions"]:
        assert region["label"] in rendered.text("regions")
    for finding in why["findings"]:
        assert finding["sentence"] in rendered.text("findings")
    assert rendered.rows["messages"] == sum(why["span"].values()) + 1
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    chromium(
        page,
        port,
        tmp_path / "profile-shot",
        f"--screenshot={SCREENSHOT}",
        "--window-size=1280,1800",
    )
    assert page_requests(seen) == [], seen
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
