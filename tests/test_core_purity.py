"""The core stays pure: importing every core module loads no Textual, Rich or httpx."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import inspector.core


def test_core_imports_no_front_end_or_network_library() -> None:
    modules = [f"inspector.core.{m.name}" for m in pkgutil.iter_modules(inspector.core.__path__)]
    assert len(modules) >= 10
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'httpx', 'websockets'))\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
