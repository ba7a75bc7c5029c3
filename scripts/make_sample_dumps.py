"""Regenerate sample_dumps/ (deterministic): `python scripts/make_sample_dumps.py [FOLDER]`.

The generator is the `tools.samples` package (outside the runtime package), so `make samples`
and the tests share it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.samples import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(
        main(sys.argv[1:] or [str(Path(__file__).resolve().parents[1] / "sample_dumps")])
    )
