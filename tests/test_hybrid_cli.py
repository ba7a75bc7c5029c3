"""`why` and `sweep` with `--processor hybrid`: the HybridCompressor replay in both output forms."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

from inspector.cli import main
from tests.conftest import REFERENCE

K_INPUT = REFERENCE / "k_long_coding_session" / "input.json"
E_INPUT = REFERENCE / "e_target_below_min" / "input.json"


def run_main(*args: str) -> tuple[int, list[dict]]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(list(args))
    return status, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def test_why_hybrid_json_follows_the_contract() -> None:
    status, (record,) = run_main("why", str(K_INPUT), "--processor", "hybrid", "--json")
    assert status == 0
    for key in ("source", "id", "kind", "processor", "hit", "reason", "total_tokens", "threshold",
                "target_tokens", "min_target_tokens", "effective_keep", "span", "checks", "findings",
                "recorded"):  # fmt: skip
        assert key in record
    assert record["processor"] == "HybridCompressor" and record["kind"] == "snapshot"
    assert (record["reason"], record["total_tokens"], record["threshold"]) == (
        "below_threshold",
        16659,
        21677,
    )
    assert record["hybrid"]["stopped_at"] == 1 and record["hybrid"]["truncated"] == 14
    assert [c["key"] for c in record["checks"]][:3] == [
        "hybrid_estimator",
        "hybrid_raw",
        "hybrid_level_1",
    ]


def test_why_hybrid_keep_recent_counts_turns() -> None:
    status, (record,) = run_main(
        "why",
        str(K_INPUT),
        "--processor",
        "hybrid",
        "--json",
        "--context-max",
        "12000",
        "--keep-recent",
        "3",
    )
    assert status == 0
    assert record["reason"] == "compressed_at_level_2"
    assert record["hybrid"]["config"]["preserve_recent_turns"] == 3
    assert record["span"] == {
        "preserved_prefix": 1,
        "messages_to_compress": 86,
        "protected_tail": 7,
    }
    assert record["tuning"]["context_max"] == 12000


def test_why_without_hybrid_is_unchanged() -> None:
    status, (record,) = run_main("why", str(E_INPUT), "--json")
    assert status == 0 and record["processor"] == "CurrentRoundCompressor"
    assert record["reason"] == "target_below_min"


def test_sweep_hybrid_marks_where_the_stopping_level_changes() -> None:
    status, points = run_main(
        "sweep", str(K_INPUT), "--processor", "hybrid", "--param", "context_max",
        "--values", "6000,20322,27097", "--json",
    )  # fmt: skip
    assert status == 0
    assert [p["reason"] for p in points] == [
        "compressed_at_level_2",
        "compressed_at_level_1",
        "below_threshold",
    ]
    assert [p["flip"] for p in points] == [False, True, True]
    assert [p["stopped_at"] for p in points] == [2, 1, 1]


def test_sweep_hybrid_rejects_a_parameter_it_does_not_have(capsys) -> None:
    status = main(["sweep", str(K_INPUT), "--processor", "hybrid", "--param", "min_target_ratio"])
    assert status == 2
    assert "does not apply to hybrid" in capsys.readouterr().err


def test_why_hybrid_text_report() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["why", str(K_INPUT), "--processor", "hybrid"])
    assert status == 0
    text = out.getvalue()
    assert "HybridCompressor" in text and "ToolOutputTruncator" in text and "file_read" in text
