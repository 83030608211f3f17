"""Typer's parameter coercion for mem's plain parameters, without pydantic.

Typer 0.2x turns every parameter value into its Python type through a
pydantic `TypeAdapter` it builds on first use
(`typer._coercion.build_runtime_param`). Importing pydantic and building the
adapters costs more than the whole work of a warm `mem query`, and mem
declares only `str`, `int`, `float`, `bool` and `list[str]` parameters
without constraints. For those, a well-formed value needs no pydantic:
`Plain` answers it and hands everything else (a malformed number, a bound,
a path, a choice, any other type) to Typer's own coercion, so values and
error messages stay exactly Typer's. tests/test_coercion.py compares the
two on generated input.

`install()` is a no-op on a Typer without this runtime layer (older
versions coerce through click and never import pydantic) and on one whose
internals have another shape; mem then runs at Typer's own speed.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # ASCII digits, no sign or space games: int() and pydantic agree
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")
_MISS = object()


def plain_value(annotation: Any, value: Any) -> Any:
    """`value` coerced to `annotation` when the answer is beyond doubt, else `_MISS`."""
    kind = type(value)
    if annotation is str:
        return value if kind is str else _MISS
    if annotation is int:
        if kind is int:
            return value
        return int(value) if kind is str and _INT.fullmatch(value) else _MISS
    if annotation is float:
        if kind is float:
            return value
        if kind is int and abs(value) < 2**53:
            return float(value)
        return float(value) if kind is str and _FLOAT.fullmatch(value) else _MISS
    if annotation is bool:
        return value if kind is bool else _MISS
    if annotation == list[str] or annotation == list[str]:
        if kind in (list, tuple) and all(type(item) is str for item in value):
            return list(value)
        return _MISS
    return _MISS


def _unconstrained(info: Any) -> bool:
    """No bound, parser or path flag that Typer's adapter would apply."""
    return (
        getattr(info, "min", None) is None
        and getattr(info, "max", None) is None
        and getattr(info, "parser", None) is None
        and not getattr(info, "clamp", False)
        and not any(getattr(info, flag, False) for flag in ("exists", "writable", "resolve_path", "allow_dash"))
        and getattr(info, "path_type", None) is None
    )


def install() -> bool:
    """Answer plain parameters without pydantic from now on; True when installed."""
    try:
        from typer import _coercion, core
    except ImportError:
        return False
    parameter = getattr(core, "_TyperParameter", None)
    runtime = getattr(_coercion, "RuntimeParam", None)
    build: Any = getattr(_coercion, "build_runtime_param", None)
    if parameter is None or runtime is None or build is None or not hasattr(parameter, "get_runtime_param"):
        return False
    if getattr(parameter.get_runtime_param, "plain", False):
        return True
    fields = getattr(runtime, "__dataclass_fields__", {})
    if set(fields) != {"parameter_info", "annotation"}:
        return False  # another shape than the one this was written against

    class Plain(runtime):  # type: ignore[misc,valid-type]
        """Typer's RuntimeParam (its None and multi-value handling kept) that
        answers plain values itself and builds Typer's own one for the rest."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            found = plain_value(self.annotation, value)
            if found is not _MISS:
                return found
            typers = build(param.type_descriptor)
            param._runtime_param = typers
            return typers._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            descriptor = self.type_descriptor
            if descriptor.file_annotation is None and _unconstrained(descriptor.parameter_info):
                self._runtime_param = Plain(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            else:
                self._runtime_param = build(descriptor)
        return self._runtime_param

    get_runtime_param.plain = True  # type: ignore[attr-defined]
    parameter.get_runtime_param = get_runtime_param
    return True
