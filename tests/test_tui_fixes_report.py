"""Report fixes found by hand (docs/tui-captures/08-report-cli-md.txt): the numbers table
gives the minimum target the checks compared with."""

from __future__ import annotations

import re

import pytest

from tests.test_report import SAMPLE_DUMP, run, why_line


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_report_numbers_give_the_minimum_target_of_the_check(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table said "minimum target —" while its check said "the minimum 450"."""
    why = why_line(capsys, str(SAMPLE_DUMP))
    check = next(c for c in why["checks"] if c["key"] == "min_target")
    minimum = check["numbers"]["min_target_tokens"]
    assert f"the minimum {minimum:,}" in check["sentence"]
    code, out, _ = run(capsys, "report", str(SAMPLE_DUMP), "--format", fmt)
    assert code == 0
    if fmt == "md":
        assert f"| minimum target | {minimum:,} |" in out
    else:
        found = re.search(r"minimum target</td><td[^>]*>([^<]*)<", out)
        assert found is not None and found.group(1) == f"{minimum:,}"
