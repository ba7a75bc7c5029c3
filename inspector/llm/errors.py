"""Typed errors of the compaction call; all derive from `InspectorError`.

A failed model call inside a re-run is not raised: it is recorded in the run's timeline
and the result's outcome is "failed". These errors are for what stops a run before or
outside the retry loop. Messages never contain the API key.
"""

from __future__ import annotations

from inspector.core.errors import InspectorError
from inspector.core.model_errors import HttpFailure, describe_failure


class LLMError(InspectorError):
    """Base of the llm package's errors."""


class MissingApiKey(LLMError):
    """The environment variable that should hold the API key is not set or empty."""

    def __init__(self, variable: str) -> None:
        self.variable = variable
        super().__init__(
            f"the environment variable {variable} is not set: put the API key there "
            "(or name another variable with --api-key-env)"
        )


class NothingToCompress(LLMError):
    """The span has no messages to compress under this tuning, so no call is made."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        super().__init__(f"nothing to compress ({reason}): {detail}")


class ModelCallFailed(LLMError):
    """One HTTP call failed; carries what came back."""

    def __init__(self, failure: HttpFailure) -> None:
        self.failure = failure
        super().__init__(describe_failure(failure))
