"""The five sample sessions, built message by message (content and scripted model failures).

Part of the sample-dump generator (`tools.samples`), not of the runtime package."""

from inspector.core.messages import Message
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from tools.samples.common import BASE_TIME, data_url
from tools.samples.session import Session

# --- content ------------------------------------------------------------------------------

SYSTEM = (
    Message(
        role="system",
        content="You are a careful coding agent working in /workspace. Use the tools to read before you edit; run the tests after every change.",
    ),
    Message(
        role="system",
        content="# AGENTS.md\n- Python 3.11, pytest.\n- Naive datetimes are UTC.\n- Keep functions small; no new dependencies.",
    ),
)


def _code(name: str, lines: int, seed: int) -> str:
    body = [
        f'"""{name}: helpers for the sample project."""',
        "from __future__ import annotations",
        "",
    ]
    for i in range(lines):
        body.append(f"def helper_{seed}_{i}(value: int) -> int:")
        body.append(f"    return value * {i + seed} + {seed % 7}  # step {i}")
    return "\n".join(body)


def session_bugfix(counter: TokenCounter) -> Session:
    """CurrentRound, keep 2, cl100k: parallel calls; an overflow shrink, then a second compression later."""
    s = Session(
        "demo/bugfix-tinycal",
        "ctx_main",
        Tuning(
            processor="current_round",
            keep_recent=2,
            context_max=6000,
            trigger_ratio=0.6,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME,
        with_usage=True,
    )
    s.user(
        "Negative half-hour offsets like -05:30 are parsed as -05:00 in tinycal. Please fix parse() and add a test."
    )
    s.check()
    s.assistant(
        "I'll read the parser, the tz helpers and the tests together.",
        [
            ("call_1", "read_file", {"path": "src/tinycal/parse.py"}),
            ("call_2", "read_file", {"path": "src/tinycal/tz.py"}),
            ("call_3", "read_file", {"path": "tests/test_parse.py"}),
        ],
    )
    for cid, name, lines in (
        ("call_1", "parse.py", 40),
        ("call_2", "tz.py", 25),
        ("call_3", "test_parse.py", 30),
    ):
        s.tool(cid, {"path": f"src/tinycal/{name}", "content": _code(name, lines, len(name))})
    s.check()
    s.assistant(
        "The offset is built from hours only. Let me grep for other callers.",
        [("call_4", "grep", {"pattern": "_parse_tz", "path": "src"})],
    )
    s.tool("call_4", {"matches": ["src/tinycal/parse.py:41", "src/tinycal/tz.py:12"]})
    s.check()
    s.assistant(
        "Running the focused test first to confirm the failure.",
        [("call_5", "bash", {"command": "pytest tests/test_parse.py -k offset -q"})],
    )
    s.tool(
        "call_5",
        {
            "exit_code": 1,
            "stdout": "F\nFAILED tests/test_parse.py::test_offset_half_hour - AssertionError: -5:00 != -5:30\n"
            * 6,
        },
    )
    s.check(
        ["overflow", "ok"],
        summary="### Active Task\n- Fix negative half-hour offsets in parse().\n### Completed Work\n- Read parse.py, tz.py, tests; the bug is in helper_8_3.\n- Focused test fails: -5:00 != -5:30.\n### Immediate Resume Point\n- Use _parse_tz(tz) for the offset and rerun the test.",
        reinject="Recently read file: /workspace/src/tinycal/tz.py\n" + _code("tz.py", 8, 5),
    )
    _bugfix_second_compression(s)
    return s


def _bugfix_second_compression(s: Session) -> None:
    """The fix, the suite, a new request, and a second compression after a timeout retry."""
    s.assistant(
        "Applying the fix: use _parse_tz for the whole offset.",
        [
            (
                "call_6",
                "edit_file",
                {"path": "src/tinycal/parse.py", "old": "hours_only", "new": "_parse_tz(tz)"},
            )
        ],
    )
    s.tool(
        "call_6",
        {"path": "src/tinycal/parse.py", "file_path": "src/tinycal/parse.py", "replaced": 1},
    )
    s.check()
    s.assistant("Now the whole suite.", [("call_7", "bash", {"command": "pytest -q"})])
    s.tool(
        "call_7",
        {
            "exit_code": 0,
            "stdout": "." * 120
            + "\n120 passed in 0.84s\n"
            + "tests/test_parse.py::test_offset ok\n" * 40,
        },
    )
    s.check()
    s.user("Great. Also make sure +05:45 (Nepal) works and update the changelog.")
    s.check()
    for step in range(4):
        cid = f"call_{8 + step}"
        s.assistant(
            f"Checking case {step}: reading the changelog and the relevant tests.",
            [(cid, "read_file", {"path": f"docs/CHANGELOG_{step}.md"})],
        )
        s.tool(
            cid,
            {
                "path": f"docs/CHANGELOG_{step}.md",
                "content": "\n".join(
                    f"- 0.{step}.{i}: fixed offset case {i} for zone {i * 15} minutes"
                    for i in range(35)
                ),
            },
        )
        outcome = s.check(
            ["timeout", "ok"],
            summary="### Active Task\n- +05:45 support and changelog.\n### Completed Work\n- Half-hour fix merged; suite green (120 passed).\n- Read CHANGELOG parts 0-3.\n### Immediate Resume Point\n- Add the +05:45 test, then write the changelog entry.",
        )
        if outcome.startswith("compressed"):
            break


CHINESE = [
    "请帮我把这个模块重构一下，保持接口不变。",
    "我们先看看现有的目录结构和依赖关系。",
    "这里的缓存逻辑有点复杂，需要拆成两个函数。",
    "测试全部通过了，但是覆盖率下降了百分之三。",
    "日志里出现了超时错误，可能和数据库连接池有关。",
    "好的，接下来处理配置文件的迁移。",
]


def session_long(counter: TokenCounter) -> Session:
    """Dialogue, cl100k, 300+ messages in Chinese and English, usage on every reply; checks as it grows."""
    s = Session(
        "long-refactor-zh",
        "ctx_long",
        Tuning(
            processor="dialogue", context_max=42000, trigger_ratio=0.8, token_mode="tiktoken_cl100k"
        ),
        counter,
        SYSTEM,
        BASE_TIME + 86_400,
        with_usage=True,
    )
    turn = 0
    while len(s.messages) < 318:
        zh = CHINESE[turn % len(CHINESE)]
        s.user(f"{zh} (step {turn}) Please continue with module_{turn % 9}.py.")
        if turn % 6 == 0:
            s.check()
        for k in range(3):
            cid = f"call_{turn}_{k}"
            s.assistant(
                f"第{turn}轮：正在检查 module_{turn % 9}.py 的第 {k} 部分。",
                [
                    (
                        cid,
                        ["read_file", "grep", "bash"][k],
                        {"path": f"pkg/module_{turn % 9}.py", "part": k},
                    )
                ],
            )
            s.tool(
                cid,
                {
                    "path": f"pkg/module_{turn % 9}.py",
                    "lines": [
                        f"{i}: value_{turn}_{k}_{i} = compute({i}, '数据{i}')"
                        for i in range(6 + (turn + k) % 5)
                    ],
                },
            )
        s.assistant(
            f"完成第{turn}步：module_{turn % 9}.py 已重构，测试通过。Next I will look at module_{(turn + 1) % 9}.py."
        )
        turn += 1
    s.user("总结一下目前的进度，然后继续处理剩下的模块。")
    s.check(
        summary="### Active Task\n- 重构 pkg/ 下的模块，保持接口不变。\n### Completed Work\n- 已完成 module_0 到 module_8 的多轮重构，测试全部通过。\n### Immediate Resume Point\n- 总结进度并继续剩余模块。"
    )
    return s


def session_multimodal(counter: TokenCounter) -> Session:
    """RoundLevel, keep 4, cl100k: screenshots as PNG data URLs; target_below_min before the compression."""
    s = Session(
        "ui-review-images",
        "ctx_ui",
        Tuning(
            processor="round_level",
            keep_recent=4,
            context_max=4800,
            trigger_ratio=0.5,
            min_target_ratio=0.1,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 2 * 86_400,
    )
    s.user(
        [
            {"type": "text", "text": "这个设置页面的布局在窄屏上错位了，截图如下。"},
            {"type": "image_url", "image_url": {"url": data_url(320, 200, 1)}},
        ]
    )
    s.check()
    s.assistant(
        "I see the sidebar overlapping the form. Let me read the stylesheet.",
        [("ui_1", "read_file", {"path": "web/settings.css"})],
    )
    s.tool(
        "ui_1",
        {
            "path": "web/settings.css",
            "content": "\n".join(
                f".col-{i} {{ width: {10 + i}%; float: left; }}" for i in range(60)
            ),
        },
    )
    s.check()
    s.assistant("The columns use floats with fixed percentages; switching to a grid will fix it.")
    s.user(
        [
            {"type": "text", "text": "Here is the narrow layout after your first change."},
            {"type": "image_url", "image_url": {"url": data_url(64, 48, 2), "detail": "high"}},
            {"type": "image_url", "image_url": {"url": data_url(640, 400, 3)}},
        ]
    )
    s.check()
    for i in range(5):
        cid = f"ui_{2 + i}"
        s.assistant(
            f"Adjusting breakpoint {i}.",
            [
                (
                    cid,
                    "edit_file",
                    {"path": "web/settings.css", "old": f".col-{i}", "new": f".grid-{i}"},
                )
            ],
        )
        s.tool(
            cid,
            {
                "path": "web/settings.css",
                "file_path": "web/settings.css",
                "replaced": 1,
                "diff": "\n".join(f"-.col-{i}-{j}\n+.grid-{i}-{j}" for j in range(25)),
            },
        )
        s.check(
            summary="### Active Task\n- 修复设置页面在窄屏上的布局。\n### Completed Work\n- Replaced float columns by a CSS grid; breakpoints 0-4 adjusted.\n### Immediate Resume Point\n- Ask for a new screenshot at 360px."
        )
    return s


def session_failures(counter: TokenCounter) -> Session:
    """CurrentRound, len//4 counting: every way a compression can fail or end silently."""
    s = Session(
        "ops-incident-42",
        "ctx_ops",
        Tuning(
            processor="current_round",
            keep_recent=0,
            context_max=4500,
            trigger_ratio=0.8,
            token_mode="len_div_4",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 3 * 86_400,
    )
    s.user("The nightly export job failed with a timeout. Investigate the logs and find the cause.")
    log = "\n".join(
        f"2026-11-0{i % 9 + 1}T02:{i % 60:02d}:00Z export worker={i % 4} batch={i} rows=5000 status=ok"
        for i in range(70)
    )
    scripts: list[tuple[list[str], str]] = [
        (["overflow", "overflow", "overflow", "overflow"], "four 413s: retry budget exhausted"),
        (
            ["rate_limit", "rate_limit", "rate_limit"],
            "three 429s: transient retries used up (silent)",
        ),
        (["auth"], "401: never retried, no record"),
        (["empty"], "the model answered with a tool call only"),
        (["rate_limit_413", "ok"], "a 429 taken for an overflow, then success"),
        (["server", "unknown", "ok"], "503 and a dropped connection, then success"),
    ]
    for round_index, (script, _) in enumerate(scripts):
        for k in range(3):
            cid = f"ops_{round_index}_{k}"
            s.assistant(
                f"Reading log part {k} of round {round_index}.",
                [
                    (
                        cid,
                        "bash",
                        {"command": f"sed -n '{k * 70},{k * 70 + 69}p' /var/log/export.log"},
                    )
                ],
            )
            s.tool(cid, {"stdout": log, "exit_code": 0})
        outcome = s.check(
            script,
            summary=f"### Active Task\n- Find why the nightly export timed out.\n### Completed Work\n- Read log parts 0-2 in round {round_index}; all batches ok so far.\n### Immediate Resume Point\n- Check the database pool metrics.",
        )
        if outcome.startswith("compressed"):
            s.user("Keep going, and check the database connection pool next.")
    s.assistant(
        "One last look at the pool metrics.",
        [("ops_last", "bash", {"command": "cat /var/log/pool.log | tail -n 5"})],
    )
    s.tool("ops_last", {"stdout": log.replace("status=ok", "pool=exhausted"), "exit_code": 0})
    s.check(["overflow", "overflow"], summary="unused")
    return s


def session_no_benefit(counter: TokenCounter) -> Session:
    """CurrentRound, cl100k: below threshold, nothing to compress, too little to compress, and a no-benefit drop."""
    s = Session(
        "docs-rewrite",
        "ctx_docs",
        Tuning(
            processor="current_round",
            keep_recent=0,
            context_max=3000,
            trigger_ratio=0.6,
            token_mode="tiktoken_cl100k",
        ),
        counter,
        SYSTEM,
        BASE_TIME + 4 * 86_400,
    )
    s.user("Rewrite the README introduction so it explains the three compressors.")
    s.check()
    s.assistant("Reading the current README.", [("d_1", "read_file", {"path": "README.md"})])
    readme = "\n".join(
        f"## Section {i}\nThe compressor keeps the prefix, compresses the middle and protects the tail ({i})."
        for i in range(48)
    )
    s.tool("d_1", {"path": "README.md", "content": readme})
    s.check()
    s.assistant(
        "Here is a draft of the new introduction:\n"
        + "The inspector shows what each compressor keeps. " * 20
    )
    s.user("Good, but shorter please, and mention RoundLevel.")
    s.check()
    s.assistant(
        "Checking the RoundLevel docs quickly.",
        [("d_2", "grep", {"pattern": "RoundLevel", "path": "docs"})],
    )
    s.tool("d_2", {"matches": ["docs/compressors.md:12"]})
    s.check()
    s.assistant(
        "Reading the compressor docs.", [("d_3", "read_file", {"path": "docs/compressors.md"})]
    )
    s.tool(
        "d_3",
        {
            "path": "docs/compressors.md",
            "content": "\n".join(
                f"- RoundLevel note {i}: compresses whole rounds and keeps the last four messages."
                for i in range(40)
            ),
        },
    )
    s.check(
        summary="### Active Task\n- Shorter README intro mentioning RoundLevel.\n"
        + "### Notes\n"
        + "- keep every sentence of the old README for reference\n" * 160
    )
    return s


SESSIONS = (session_bugfix, session_long, session_multimodal, session_failures, session_no_benefit)
