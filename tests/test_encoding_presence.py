"""Whether exact cl100k counting is available is decided without importing tiktoken:
the package and its compiled core are looked up on the path (`encoding.load_cl100k`)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector import encoding


@pytest.fixture(autouse=True)
def _fresh_status() -> Iterator[None]:
    encoding.load_cl100k.cache_clear()
    yield
    encoding.load_cl100k.cache_clear()


def test_available_without_importing_tiktoken() -> None:
    code = (
        "import sys\n"
        "from inspector.encoding import load_cl100k\n"
        "status = load_cl100k()\n"
        "print(status.encode_len is not None, 'tiktoken' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


def test_missing_package_is_not_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # type: ignore[arg-type]
    status = encoding.load_cl100k()
    assert status.encode_len is None
    assert "tiktoken is not installed" in status.note


def test_package_without_its_compiled_core_is_not_exact(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "__init__.py").write_text("")
    spec = importlib.machinery.ModuleSpec("tiktoken", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path)]
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: spec if name == "tiktoken" else real(name, *a)
    )
    status = encoding.load_cl100k()
    assert status.encode_len is None
    assert "compiled core" in status.note
    (tmp_path / "_tiktoken.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    encoding.load_cl100k.cache_clear()
    assert encoding.load_cl100k().encode_len is not None
