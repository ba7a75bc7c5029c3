"""Run INSIDE a release's own venv: a ReActAgent whose context engine writes its debug folder.

argv: base_url of a fake OpenAI-compatible server on 127.0.0.1, output folder, the model's
context window (tokens). The agent (model `fake-model`, provider OpenAI, one system
prompt, a CurrentRoundCompressor at ratio 0.6 with `enable_compression_dump` into the same
folder) answers four growing questions in one session, so the library writes
`llm_request.jsonl` (one `pre_call` record per model call, 0.1.18+) beside the
compressor's `CurrentRoundCompressor.jsonl`. Standard library + openJiuwen only; never
imports `inspector`.
"""

from __future__ import annotations

import asyncio
import sys

from openjiuwen.core.context_engine import ContextEngineConfig
from openjiuwen.core.context_engine.processor import forked
from openjiuwen.core.foundation.llm import ModelClientConfig, ModelRequestConfig
from openjiuwen.core.session.agent import Session
from openjiuwen.core.single_agent.agents.react_agent import ReActAgent, ReActAgentConfig
from openjiuwen.core.single_agent.schema.agent_card import AgentCard

forked.activate()

QUERIES = [
    "Summarise the repository layout please: which folders hold the sources, the tests and the docs, "
    * 3,
    "And now the tests: which of them are slow, which need the network, and which can run offline? "
    * 3,
    "Finally the docs: what is missing from the README about configuration and the debug folder? "
    * 3,
    "One more: which configuration keys does the debug folder need, and where are they read? " * 3,
]


async def main(base_url: str, out: str, window: int) -> None:
    """Four turns of one session; the library writes the debug folder `out`."""
    agent = ReActAgent(AgentCard(id="ctx-agent", name="ctx_agent", description="test agent"))
    config = ReActAgentConfig()
    config.configure_model_client("OpenAI", "sk-fake", base_url, "fake-model")
    config.configure_prompt_template(
        [{"role": "system", "content": "You are a careful coding assistant."}]
    )
    config.context_engine_config = ContextEngineConfig(
        enable_context_debug=True, context_debug_dir=out, context_window_tokens=window
    )
    compressor = forked.CurrentRoundCompressorConfig(
        trigger_context_ratio=0.6,
        model=ModelRequestConfig(model="fake-model"),
        model_client=ModelClientConfig(
            client_provider="OpenAI", api_key="sk-fake", api_base=base_url, max_retries=0
        ),
        enable_compression_dump=True,
        compression_dump_dir=out,
    )
    config.configure_context_processors([("CurrentRoundCompressor", compressor)])
    agent.configure(config)
    session = Session(session_id="ojw-llmreq")
    for query in QUERIES:
        await agent.invoke({"query": query, "conversation_id": "conv-1"}, session=session)


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
