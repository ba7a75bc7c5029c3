"""The inspector deciding every case of a case file, as one whole process.

Reads each snapshot, prices it in its token mode and prints one JSON line per case with
the decision (id, hit, reason, total_tokens, span counts), the way `why --json` would.
Usage: python bench/workers/parity_decide.py CASES.jsonl
"""

from __future__ import annotations

import json
import sys

from inspector.core.engine import PricedContext
from inspector.core.snapshot import snapshot_from_dict
from inspector.encoding import make_counters


def main(path: str) -> None:
    """Decide each case; one JSON line out per case."""
    counters = make_counters()
    out = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            snapshot = snapshot_from_dict(json.loads(line))
            priced = PricedContext.from_snapshot(snapshot, counters[snapshot.tuning.token_mode])
            verdict = priced.evaluate(snapshot.tuning)
            out.append(
                json.dumps(
                    {
                        "id": snapshot.id,
                        "hit": verdict.hit,
                        "reason": verdict.reason,
                        "total_tokens": verdict.total_tokens,
                        "span": verdict.span.counts,
                    }
                )
            )
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
