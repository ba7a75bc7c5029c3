"""Let real releases write `llm_request.jsonl` (0.1.18+): a ReActAgent against a fake server.

`python -m parity_live.llm_requests [RELEASE ...]` runs `react_runner.py` inside each
release's cached venv (`parity_live.venvs`) against one `tests/servers/fake_openai`
server on 127.0.0.1 and keeps what the library wrote (its `llm_request.jsonl` and the
compressor's debug log) under `tests/data/llm_request/<release>/`, which
`tests/test_sources_llm_request.py` reads. Default releases: 0.1.18 and 0.1.19.post2.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from parity_live.venvs import ensure_venv, release_env
from tests.servers.fake_openai import FakeOpenAI, Reply

RUNNER = Path(__file__).with_name("react_runner.py")
TARGET = Path(__file__).resolve().parents[1] / "tests" / "data" / "llm_request"
REPLY = "<state_snapshot>Sources in src/, tests in tests/, docs in docs/.</state_snapshot>"
#: The model window: small enough that the last turns reach the compressor's threshold.
WINDOW = 500


def record(release: str, target: Path) -> list[str]:
    """Run the agent under `release`; the names of the files it wrote into `target`."""
    python = ensure_venv(release)
    server = FakeOpenAI([Reply(content=REPLY)] * 16).start()
    try:
        with tempfile.TemporaryDirectory(prefix="llmreq-") as work:
            out = Path(work) / "context_debug"
            done = subprocess.run(
                [str(python), str(RUNNER), server.base_url, str(out), str(WINDOW)],
                env=release_env(release),
                cwd=work,  # the library writes its own logs/ into the working directory
                capture_output=True,
                text=True,
                check=False,
                timeout=600,
            )
            if done.returncode != 0:
                raise SystemExit(f"openjiuwen {release} agent failed:\n{done.stderr[-3000:]}")
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(out, target)
    finally:
        server.stop()
    return sorted(p.name for p in target.iterdir())


def main(argv: list[str]) -> int:
    """Record each release named (default 0.1.18 and 0.1.19.post2)."""
    for release in argv or ["0.1.18", "0.1.19.post2"]:
        print(release, record(release, TARGET / release), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
