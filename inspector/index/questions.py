"""Five fleet questions over the decision index, as DuckDB SQL (the README shows the same text).

Each query reads the view `decisions`, which `VIEW_SQL` defines over an index folder:
`CREATE VIEW decisions AS SELECT * FROM read_parquet('DIR/**/*.parquet', hive_partitioning = true)`.
The tests run every query on the sample dumps and a generated 5,000-file fleet and check
the answers against facts computed another way; a test also checks that the README holds
each query verbatim. Plain strings only: must not import anything (DuckDB is the caller's).
"""

from __future__ import annotations

VIEW_SQL = (
    "CREATE VIEW decisions AS SELECT * FROM read_parquet('{folder}/**/*.parquet', "
    "hive_partitioning = true)"
)

#: name -> (the question, its SQL)
QUESTIONS: dict[str, tuple[str, str]] = {
    "stalled_sessions": (
        "Which sessions never compressed although they hit 90 % of their window?",
        """SELECT session_id, processor, count(*) AS evaluations,
       max(total_tokens / context_max) AS peak_share
FROM decisions
WHERE kind IN ('dump', 'debug')
GROUP BY session_id, processor
HAVING bool_or(hit AND total_tokens >= 0.9 * context_max)
   AND NOT bool_or(outcome = 'compressed')
ORDER BY session_id""",
    ),
    "reinjection_cancels": (
        "How often does re-injection cancel the saving, per processor and release?",
        """SELECT processor, release_profile, count(*) AS compressions,
       count(*) FILTER (WHERE reinjected_tokens >= reduction) AS cancelled,
       round(100.0 * count(*) FILTER (WHERE reinjected_tokens >= reduction) / count(*), 1)
           AS cancelled_pct
FROM decisions
WHERE kind = 'dump'
GROUP BY processor, release_profile
ORDER BY processor, release_profile""",
    ),
    "retries_by_error": (
        "Which model errors make the compressor retry, per processor?",
        """SELECT processor, error_kind, count(*) AS retries
FROM (SELECT processor, unnest(error_kinds) AS error_kind FROM decisions)
GROUP BY processor, error_kind
ORDER BY processor, error_kind""",
    ),
    "reasons_per_day": (
        "Why did evaluations not compress, day by day?",
        """SELECT date, reason, count(*) AS evaluations
FROM decisions
WHERE kind = 'debug' AND NOT hit
GROUP BY date, reason
ORDER BY date, reason""",
    ),
    "top_savers": (
        "Which sessions saved the most tokens by compressing?",
        """SELECT session_id, count(*) AS compressions, sum(reduction) AS tokens_saved
FROM decisions
WHERE kind = 'dump'
GROUP BY session_id
ORDER BY tokens_saved DESC, session_id
LIMIT 5""",
    ),
}
