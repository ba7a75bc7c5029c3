"""A folder scan skips unrelated JSON quietly but reports malformed attempts at our formats."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.artifact import LoadError
from inspector.sources.loader import load_paths


def test_malformed_format_is_an_error_but_unrelated_json_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        json.dumps({"name": "x", "version": "1"}), encoding="utf-8"
    )
    (tmp_path / "numbers.json").write_text("[1, 2, 3]", encoding="utf-8")
    (tmp_path / "wrong_messages.json").write_text(json.dumps({"messages": 5}), encoding="utf-8")
    (tmp_path / "dump_like.json").write_text(json.dumps({"processor_type": 7}), encoding="utf-8")
    (tmp_path / "roles.json").write_text(json.dumps([{"role": 3}]), encoding="utf-8")
    results = list(load_paths([tmp_path]))
    errors = {Path(r.source).name for r in results if isinstance(r, LoadError)}
    assert errors == {"wrong_messages.json", "dump_like.json", "roles.json"}
    assert not [r for r in results if not isinstance(r, LoadError)]
