"""0.1.19's `llm_request.jsonl` record: the exact window of one model call of a ReActAgent.

Spec: `spec/openjiuwen-versions.md` section 3 (`processor: "llm_request"`, `event:
"pre_call"`). Must not import anything outside pydantic and `inspector.core`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from inspector.formats.base import Count, FormatModel, Int, MessageList, Number, ToolList


class LlmRequestRecord(FormatModel):
    """One line of `llm_request.jsonl`."""

    event: Literal["pre_call"]
    processor: Literal["llm_request"] = "llm_request"
    timestamp: Number | None = None
    session_id: str | None = None
    context_id: str | None = None
    request_id: str | None = None
    sequence: Int | None = Field(None, description="the call's number in the session")
    model: str | None = None
    provider: str | None = None
    context_window_tokens: Count | None = None
    message_count: Count | None = None
    system_message_count: Count | None = None
    context_message_count: Count | None = None
    tool_count: Count | None = None
    messages: MessageList | None = Field(
        None, description="the final window sent to the model (model_dump(mode='json'))"
    )
    tools: ToolList | None = None
    statistic: dict[str, Any] | None = None
    usage_report: dict[str, Any] | list[Any] | None = None
