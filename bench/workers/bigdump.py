"""Whole-process workers of the big-dump benchmark; each prints one JSON line and PEAK_RSS.

    python bench/workers/bigdump.py floor DUMP         # parse + tokenize each text once
    python bench/workers/bigdump.py parse DUMP         # parse only (memory reference)
    python bench/workers/bigdump.py first-screen DUMP  # header + first rows with today's sources
    python bench/workers/bigdump.py lazy-screen DUMP   # same from a streaming prototype
    python bench/workers/bigdump.py open DUMP [--loader | --streaming | --whole] [--cache DIR] [--workers N]
    python bench/workers/bigdump.py resplit DUMP [--cache DIR]   # Result lines of bench_resplit

`open` is the product path to full cl100k counts: `--loader` goes through
`inspector.sources.loader.load_file` (which also infers the token mode by counting),
otherwise through `parse_dump` + `rebuild_context` + `price_snapshot_cached`, reading the
file with `jsonio.read_json_file` (which streams files of 32 MB and more), with
`--streaming` with `inspector.sources.jsonstream.load_streaming` alone (no depth check),
with `--whole` the way `read_json_file` did before streaming (whole text, `json.loads`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

START = time.perf_counter()


def _peak() -> int:
    """Peak RSS of this process image: VmHWM (ru_maxrss would include the forking parent's)."""
    from bench.common import peak_rss_bytes

    return peak_rss_bytes()


def _emit(result: dict[str, Any]) -> None:
    result["seconds"] = time.perf_counter() - START
    print(json.dumps(result))
    print(f"PEAK_RSS {_peak()}", flush=True)


def _floor_texts(document: dict[str, Any]) -> set[str]:
    """Each text an exact count must tokenize, as the parity floor builds them."""
    request = document["compression_request"]
    system_count = request["system_messages_count"]
    sent = request["messages_sent_to_model"]
    tail_count = document["span"]["protected_tail_count"]
    after = document["context_after"]["messages"]
    messages = (
        sent[:system_count]
        + sent[system_count:-1]
        + (after[len(after) - tail_count :] if tail_count else [])
    )
    texts: set[str] = set()
    for message in messages:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = "\n".join(
                str(b.get("text") or "") for b in content if isinstance(b, dict) and "text" in b
            )
        texts.add(f"<|start|>{message['role']}\n{content}<|end|>")
        if message.get("tool_calls"):
            texts.add(json.dumps(message["tool_calls"], ensure_ascii=False))
    return texts


def floor(path: str, tokenize: bool) -> None:
    """Parse the file; with `tokenize`, count each needed text once with cl100k."""
    from bench.workers.parity_floor import load_encoder

    encoder = load_encoder() if tokenize else None
    document = json.loads(Path(path).read_bytes())
    parsed = time.perf_counter() - START
    tokens = 0
    texts = _floor_texts(document)
    if encoder is not None:
        encode = encoder.encode_ordinary
        tokens = sum(len(encode(text)) for text in texts)
    _emit({"texts": len(texts), "tokens": tokens, "parsed_at": parsed})


def _rebuild(path: str, streaming: bool = False, whole: bool = False) -> tuple[Any, Any]:
    from inspector.sources.dump import parse_dump, rebuild_context
    from inspector.sources.jsonio import read_json_file

    if streaming:
        from inspector.sources.jsonstream import load_streaming

        document = load_streaming(Path(path))
    else:
        read = read_json_file(Path(path), stream_min_bytes=2**62 if whole else 32 * 1024**2)
        if read.problem is not None:
            raise SystemExit(f"cannot read {path}: {read.problem}")
        document = read.documents[0][1]
    dump = parse_dump(document, path)
    return dump, rebuild_context(dump)


def first_screen(path: str) -> None:
    """What the TUI shows first: dump header fields and the first 50 rows, no counting."""
    dump, rebuild = _rebuild(path)
    rows = [(i, m.role, m.text_preview(80)) for i, m in enumerate((rebuild.messages or ())[:50])]
    _emit(
        {
            "processor": dump.processor,
            "session": dump.session_id,
            "rows": len(rows),
            "messages": len(rebuild.messages or ()),
        }
    )


def lazy_screen(path: str) -> None:
    """The same first screen from the streaming prototype (bench/lazy_dump.py)."""
    from bench.lazy_dump import read_head

    head = read_head(Path(path), rows=50)
    _emit(
        {
            "processor": head.header.get("processor_type"),
            "rows": len(head.rows),
            "bytes_read": head.bytes_read,
        }
    )


def open_dump(
    path: str,
    use_loader: bool,
    cache_dir: str | None,
    workers: int | None,
    streaming: bool = False,
    whole: bool = False,
) -> None:
    """Full cl100k counts of the rebuilt context, the way the product gets them."""
    from inspector.core.engine import PricedContext
    from inspector.encoding import make_counters
    from inspector.sources.cache import TokenCache, price_snapshot_cached

    counters = make_counters()
    counter = counters["tiktoken_cl100k"]
    cache = TokenCache(cache_dir) if cache_dir else None
    if use_loader:
        from inspector.sources.loader import load_file

        counter.store = cache
        artifacts = [
            a
            for a in load_file(Path(path), counters=counters)
            if getattr(a, "snapshot", None) is not None
        ]
        snapshot = artifacts[0].snapshot
        loaded = time.perf_counter() - START
        priced = PricedContext.from_snapshot(snapshot, counter)
        if cache is not None:
            cache.flush()
    else:
        from inspector.core.snapshot import ContextSnapshot
        from inspector.core.tuning import Tuning

        _, rebuild = _rebuild(path, streaming, whole)
        snapshot = ContextSnapshot(
            "big", rebuild.system_messages, rebuild.messages or (), rebuild.tools, Tuning()
        )
        loaded = time.perf_counter() - START
        priced = price_snapshot_cached(snapshot, counter, cache, workers)
    _emit(
        {
            "messages": priced.n,
            "messages_tokens": priced.messages_tokens,
            "tools_tokens": priced.tools_tokens,
            "loaded_at": loaded,
            "cache_hits": cache.hits if cache else 0,
        }
    )


def resplit(path: str, cache_dir: str | None) -> None:
    """Re-split benchmark on the dump's rebuilt context; prints one JSON Result per line."""
    import dataclasses

    from bench.bench_resplit import resplit_results
    from inspector.core.snapshot import ContextSnapshot
    from inspector.core.tuning import Tuning
    from inspector.encoding import make_counters
    from inspector.sources.cache import TokenCache, price_snapshot_cached

    _, rebuild = _rebuild(path)
    snapshot = ContextSnapshot(
        "big", rebuild.system_messages, rebuild.messages or (), rebuild.tools, Tuning()
    )
    counters = make_counters()
    price_snapshot_cached(
        snapshot, counters["tiktoken_cl100k"], TokenCache(cache_dir) if cache_dir else None
    )
    for result in resplit_results(snapshot, "big dump", counters=counters):
        print(json.dumps(dataclasses.asdict(result)))


def main(argv: list[str]) -> None:
    """Dispatch on the mode."""
    mode, path = argv[0], argv[1]
    flags = argv[2:]
    cache_dir = flags[flags.index("--cache") + 1] if "--cache" in flags else None
    workers = int(flags[flags.index("--workers") + 1]) if "--workers" in flags else None
    if mode == "floor":
        floor(path, tokenize=True)
    elif mode == "parse":
        floor(path, tokenize=False)
    elif mode == "first-screen":
        first_screen(path)
    elif mode == "lazy-screen":
        lazy_screen(path)
    elif mode == "resplit":
        resplit(path, cache_dir)
    elif mode == "open":
        open_dump(
            path,
            "--loader" in flags,
            cache_dir,
            workers,
            "--streaming" in flags,
            "--whole" in flags,
        )
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
