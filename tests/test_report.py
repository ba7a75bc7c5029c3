"""`inspector report`: Markdown and self-contained HTML for any strategy, secrets masked.

The HTML is parsed with `html.parser` (the structure a browser would see); the browser test
itself (headless Chromium) is `slow_tests/test_report_browser.py` (`make test-browser`).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from inspector.cli import main
from inspector.core.strategy import registry
from tests.conftest import REPO

SAMPLE_DUMP = (
    REPO
    / "sample_dumps/workspace/context/ops-incident-42_context/compression_logs"
    / "1796159289784_CurrentRoundCompressor_ops-incident-42.json"
)
SAMPLE_SNAPSHOTS = (
    REPO / "sample_dumps/workspace/context/ops-incident-42_context/inspector_snapshots.jsonl"
)
SECRET = "sk-live" + "A1b2C3d4E5f6G7h8I9j0K1l2"


def secret_snapshot(tmp_path: Path) -> Path:
    """The first sample snapshot with an API key in a message and in a metadata field."""
    raw = json.loads(SAMPLE_SNAPSHOTS.read_text(encoding="utf-8").splitlines()[0])
    raw["messages"][2]["content"] = f"export OPENAI_API_KEY={SECRET} then run the job"
    raw["messages"][3]["metadata"] = {"api_key": "plain-looking-value"}
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def why_line(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, _ = run(capsys, "why", *args, "--json")
    assert code == 0
    return json.loads(out.splitlines()[0])


class Page(HTMLParser):
    """What a browser would build: tags, attributes, the text of each section by id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.sections: dict[str, list[str]] = {}
        self._open: list[str] = []
        self.rows: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        ident = dict(attrs).get("id")
        if tag == "section" and ident:
            self._open.append(ident)
            self.sections[ident] = []
        if tag == "tr" and self._open:
            self.rows[self._open[-1]] = self.rows.get(self._open[-1], 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "section" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self._open:
            self.sections[ident].append(data)

    def text(self, ident: str) -> str:
        return " ".join(" ".join(self.sections[ident]).split())


def parsed(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_markdown_report_of_a_dump_has_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    why = why_line(capsys, str(SAMPLE_DUMP))
    code, out, _ = run(capsys, "report", str(SAMPLE_DUMP), "--format", "md")
    assert code == 0
    assert out.startswith(f"# dump {why['id']}")
    assert f"**{why['verdict']}** (reason `{why['reason']}`)" in out
    for heading in ("## Regions", "## Checks", "## Findings", "## Messages"):
        assert heading in out
    assert "## Before and after compression" in out
    for finding in why["findings"]:
        assert finding["sentence"] in out
    for region in why["regions"]:
        assert f"| {region['label']} | {region['end'] - region['start']} |" in out
    # one message row per context message, with its token count
    rows = [line for line in out.split("## Messages")[1].split("##")[0].splitlines()]
    body = [line for line in rows if line.startswith("| ") and not line.startswith("| #")]
    assert (
        len(body)
        == why["span"]["preserved_prefix"]
        + why["span"]["messages_to_compress"]
        + (why["span"]["protected_tail"])
    )
    # plain text: no Rich box drawing anywhere
    assert not any("\u2500" <= ch <= "\u257f" for ch in out)


def test_secrets_are_masked_in_both_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = secret_snapshot(tmp_path)
    raw = json.loads(source.read_text(encoding="utf-8"))
    # a key that straddles the preview's cut is masked before the cut
    raw["messages"][4]["content"] = "x" * 150 + " " + SECRET
    source.write_text(json.dumps(raw), encoding="utf-8")
    for fmt in ("md", "html"):
        code, out, _ = run(capsys, "report", str(source), "--format", fmt)
        assert code == 0
        assert SECRET not in out and SECRET[:9] not in out
        assert "export OPENAI_API_KEY=***" in out


def test_html_is_self_contained_and_shows_regions_verdict_findings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    why = why_line(capsys, str(SAMPLE_DUMP))
    code, out, _ = run(capsys, "report", str(SAMPLE_DUMP), "--format", "html")
    assert code == 0
    page = parsed(out)
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "base", "form"}
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert name not in ("src", "href", "srcset", "action", "background"), (tag, name)
            assert not name.startswith("on"), (tag, name)
            assert "url(" not in (value or "")
    style = out.split("<style>")[1].split("</style>")[0]
    assert "url(" not in style and "@import" not in style
    csp = [a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0] or "")
    assert why["verdict"] in page.text("verdict") and why["reason"] in page.text("verdict")
    for region in why["regions"]:
        assert region["label"] in page.text("regions")
    for finding in why["findings"]:
        assert finding["sentence"] in page.text("findings")
    for check in why["checks"]:
        assert check["title"] in page.text("checks")
    count = sum(why["span"].values())
    assert page.rows["messages"] == count + 1  # the header row
    recorded_after = why["recorded"]["messages_after"]
    assert f"{recorded_after}" in page.text("after")


def test_markup_in_messages_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads(SAMPLE_SNAPSHOTS.read_text(encoding="utf-8").splitlines()[0])
    raw["messages"][1]["content"] = '<img src="http://203.0.113.9/x.png"><script>alert(1)</script>'
    source = tmp_path / "markup.json"
    source.write_text(json.dumps(raw), encoding="utf-8")
    _, out, _ = run(capsys, "report", str(source), "--format", "html")
    page = parsed(out)
    assert not [t for t, _ in page.tags if t in ("img", "script")]
    assert "<script>alert(1)</script>" in page.text("messages")


@pytest.mark.parametrize("key", registry.strategy_keys())
def test_every_strategy_reports_its_own_decision(
    key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    why = why_line(capsys, str(SAMPLE_SNAPSHOTS), "--processor", key)
    code, out, _ = run(
        capsys, "report", str(SAMPLE_SNAPSHOTS), "--processor", key, "--format", "html"
    )
    assert code == 0
    page = parsed(out)
    first = page.text("c0-verdict")
    assert why["verdict"] in first and why["reason"] in first
    labels = {r["label"] for r in why["regions"]}
    assert all(label in page.text("c0-regions") for label in labels)


def test_out_writes_a_file_and_never_into_a_source_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in").mkdir()
    source = secret_snapshot(tmp_path / "in")
    code, _, err = run(capsys, "report", str(source), "--out", str(tmp_path / "in" / "r.md"))
    assert code == 2 and "never writes where it reads" in err
    assert not (tmp_path / "in" / "r.md").exists()
    target = tmp_path / "out" / "r.html"
    code, out, err = run(capsys, "report", str(source), "--format", "html", "--out", str(target))
    assert code == 0 and out == "" and str(target) in err
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_id_filter_and_nothing_found(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "report", str(SAMPLE_SNAPSHOTS), "--id", "#2")
    assert code == 0 and out.startswith(
        "# snapshot ops-incident-42/ctx_ops/CurrentRoundCompressor#2"
    )
    code, out, _ = run(capsys, "report", str(SAMPLE_SNAPSHOTS))
    headings = [line.split(" ")[0] for line in out.splitlines() if line.startswith("#")]
    assert headings[0] == "#" and headings.count("#") == 1
    assert headings.count("##") == 5 and set(headings) == {"#", "##", "###"}
    code, out, err = run(capsys, "report", str(SAMPLE_SNAPSHOTS), "--id", "no-such-id")
    assert code == 1 and out == "" and "no context found" in err


def test_copied_message_is_plain_text_without_image_data() -> None:
    from inspector.core.messages import Message
    from inspector.render.message_detail import message_plain_text

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4000}}
    message = Message.from_dict(
        {"role": "user", "content": [{"type": "text", "text": "what is on screen?"}, image]}
    )
    text = message_plain_text(message, 3)
    assert text == "#3 user\nwhat is on screen?\n[image]"
