"""House limits (issue 11): no module over 700 lines, no function over 80 lines, no
parameter list over 7 (self and cls not counted) anywhere in the runtime package."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "inspector"


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    return len([a for a in args if a.arg not in ("self", "cls")])


def test_modules_functions_and_parameter_lists_stay_small() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent)
        if text.count("\n") > 700:
            problems.append(f"{name}: {text.count(chr(10))} lines")
        for node in _functions(ast.parse(text)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > 80:
                problems.append(f"{name}:{node.lineno} {node.name}: {length} lines")
            if _parameters(node) > 7:
                problems.append(f"{name}:{node.lineno} {node.name}: {_parameters(node)} parameters")
    assert problems == []


def test_the_check_sees_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(90))
    tree = ast.parse(f"def long(a, b, c, d, e, f, g, h):\n{body}\n")
    (node,) = _functions(tree)
    assert (node.end_lineno or 0) - node.lineno + 1 > 80 and _parameters(node) == 8
