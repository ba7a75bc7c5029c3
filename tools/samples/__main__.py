"""`python -m tools.samples [FOLDER]`: regenerate the sample dumps (default `sample_dumps`)."""

from __future__ import annotations

from tools.samples.generate import main

raise SystemExit(main())
