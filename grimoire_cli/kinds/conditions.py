"""Condition triggers of prospective tasks (SABRE's `condition:<expr>`),
checked against a context the caller passes, never run as code.

The grammar is small (docs/agent-personas.md): a context key (an identifier,
dots allowed: `db.rows`) compared with a number or a string literal by ==,
!=, <, <=, > or >=; `and`, `or`, `not`, parentheses; a bare key is true when
its value is truthy. Python's `ast` parses the text and only an allow-list
of node types is walked: anything else (a call, an attribute of a literal,
a subscript, a lambda...) is refused when the task is scheduled. A key the
context lacks makes its comparison false, never an error.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from ..core.errors import BadInput

MAX_CONDITION = 200
HINT = "write key == 'text', key > 3, not key, a and (b or c): context keys compared with literals"
_FALSE_WORDS = {"", "0", "false", "no", "off", "none", "null"}
_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_MISSING = object()


def check_condition(text: object) -> str:
    """The condition, once it parses to the allowed grammar; else bad input."""
    _parsed(text)
    return str(text).strip()


def holds(text: str, context: Mapping[str, Any]) -> bool:
    """Whether the condition is true for `context`; a condition that does not
    parse (a hand edit) never holds."""
    try:
        tree = _parsed(text)
    except BadInput:
        return False
    return _truth(tree.body, context)


def _parsed(text: object) -> ast.Expression:
    if not isinstance(text, str) or not text.strip():
        raise BadInput("a condition is empty", HINT)
    if len(text) > MAX_CONDITION or any(ord(c) < 32 for c in text):
        raise BadInput(f"a condition is one line of at most {MAX_CONDITION} characters", HINT)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise BadInput(f"cannot read the condition {text!r}", HINT) from None
    _allowed(tree.body, text)
    return tree


def _allowed(node: ast.AST, text: str) -> None:
    """Refuse every node outside the grammar (walked before anything is evaluated)."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _allowed(value, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _allowed(node.operand, text)
    elif isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            raise BadInput(f"{text!r}: one comparison (==, !=, <, <=, >, >=) at a time", "join them with and / or")
        sides = (node.left, node.comparators[0])
        keys = [side for side in sides if _key(side) is not None]
        literals = [side for side in sides if _literal(side) is not _MISSING]
        if len(keys) != 1 or len(literals) != 1:
            raise BadInput(f"{text!r}: a comparison is a context key and a number or a string", HINT)
    elif _key(node) is None:
        raise BadInput(f"{text!r} is not a condition mem reads ({type(node).__name__} is not allowed)", HINT)


def _key(node: ast.AST) -> str | None:
    """`name` or `a.b.c` (names only) as a context key; else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _key(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _literal(node: ast.AST) -> Any:
    """A number (signed) or a string literal; else _MISSING (booleans and None are not literals here)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand)
        if isinstance(inner, (int, float)):
            return -inner if isinstance(node.op, ast.USub) else inner
        return _MISSING
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
        return node.value
    return _MISSING


def _truth(node: ast.AST, context: Mapping[str, Any]) -> bool:
    if isinstance(node, ast.BoolOp):
        parts = (_truth(value, context) for value in node.values)
        return all(parts) if isinstance(node.op, ast.And) else any(parts)
    if isinstance(node, ast.UnaryOp):
        return not _truth(node.operand, context)
    if isinstance(node, ast.Compare):
        return _compared(node, context)
    return _truthy(_value(node, context))


def _value(node: ast.AST, context: Mapping[str, Any]) -> Any:
    key = _key(node)
    return context.get(key, _MISSING) if key is not None else _MISSING


def _truthy(value: Any) -> bool:
    """Missing, empty, zero, false, and the words a `--context k=v` says false with are false."""
    if value is _MISSING or value is None:
        return False
    if isinstance(value, str):
        return value.strip().lower() not in _FALSE_WORDS
    return bool(value)


def _compared(node: ast.Compare, context: Mapping[str, Any]) -> bool:
    """Key against literal: numbers compare as numbers (a text value that
    reads as one counts), text as text; a missing or mismatched value is false."""
    left, right = node.left, node.comparators[0]
    key_first = _key(left) is not None
    value = _value(left if key_first else right, context)
    literal = _literal(right if key_first else left)
    operand = _number(value) if isinstance(literal, (int, float)) else _text(value)
    if operand is None:
        return False
    pair = (operand, literal) if key_first else (literal, operand)
    return bool(_COMPARE[type(node.ops[0])](*pair))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is _MISSING or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None
