"""The compaction call over httpx: request, retries, error classes, dump writing.

Public API (what the CLI and the TUI call):

- `rerun_compaction(snapshot, tuning, endpoint, options=RerunOptions(...), hooks=RerunHooks(...))
  -> RerunResult` (async); the retry rules are `inspector.core.retry_policy`
- `EndpointConfig(base_url, model, api_key_env="OPENAI_API_KEY", timeout_s, extra_headers, sampling)`
- `rerun_inputs(artifact, tuning, *, prompt_file=None, use_builtin=False) -> RerunInputs`
- `write_rerun(result, out_dir) -> WrittenFiles`, `default_out_dir()`, `check_out_dir(out, sources)`
- errors: `LLMError` > `MissingApiKey`, `NothingToCompress`, `ModelCallFailed`, `OutputDirError`

May import `inspector.core` and httpx; never Textual or Rich.
"""

from __future__ import annotations

from inspector.llm.client import DEFAULT_API_KEY_ENV, ChatClient, EndpointConfig
from inspector.llm.dump_writer import (
    OutputDirError,
    WrittenFiles,
    check_out_dir,
    default_out_dir,
    write_rerun,
)
from inspector.llm.errors import LLMError, MissingApiKey, ModelCallFailed, NothingToCompress
from inspector.llm.inputs import RerunInputs, rerun_inputs
from inspector.llm.prompts import builtin_prompt, read_prompt_file
from inspector.llm.runner import RerunHooks, RerunOptions, rerun_compaction, resolve_api_key

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "ChatClient",
    "EndpointConfig",
    "LLMError",
    "MissingApiKey",
    "ModelCallFailed",
    "NothingToCompress",
    "OutputDirError",
    "RerunHooks",
    "RerunInputs",
    "RerunOptions",
    "WrittenFiles",
    "builtin_prompt",
    "check_out_dir",
    "default_out_dir",
    "read_prompt_file",
    "rerun_compaction",
    "rerun_inputs",
    "resolve_api_key",
    "write_rerun",
]
