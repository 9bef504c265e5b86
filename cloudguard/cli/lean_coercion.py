"""Typer's coercion of a parameter's value, without pydantic where there is nothing to coerce.

Typer (0.29) coerces every value it parses through a pydantic `TypeAdapter`,
which it builds for each parameter the first time the parameter is processed,
given or not. For `cloudguard audit` that was 50 adapters and the import of
pydantic, about a quarter of an empty audit's start-up (issue 34), though
nearly every option is not given (nothing to coerce) and the rest are strings
as argv holds them (nothing to convert): cloudguard parses its options' values
itself (cloudguard.settings.option_spec).

So each parameter's coercion is built only when a value needs it, and a
string (or a list of strings) as argv gives it is taken as typer's adapter
would return it: the same string, the same list. Anything else (a number with
its bounds, a path, a value that is not a plain string) goes to typer's own
coercion, built then, with its own messages. A typer without this hook (its
coercion elsewhere) is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_BUILD = "build_runtime_param"


def apply() -> None:
    """Make typer build each parameter's coercion only when a value needs it (idempotent)."""
    import typer.core

    found = getattr(typer.core, _BUILD, None)
    if found is None or getattr(found, "built_when_needed", False):
        return
    build: Callable[[Any], Any] = found
    from typer._coercion import RuntimeParam

    @dataclass(frozen=True)
    class BuiltWhenNeeded(RuntimeParam):
        """Typer's `RuntimeParam` contract: `coerce` (typer's) answers a missing value
        itself; `_coerce_value` is asked only for a value that was given."""

        descriptor: Any = None
        built: list[Any] = field(default_factory=list)  # typer's own, once one is needed

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation is str and type(value) is str:
                return value
            if self.annotation == list[str] and _strings(value):
                return list(value)
            if not self.built:
                self.built.append(build(self.descriptor))
            return self.built[0]._coerce_value(value, param=param, ctx=ctx)

    def built_when_needed(descriptor: Any) -> Any:
        if descriptor.file_annotation is not None or descriptor.parameter_info.parser:
            return build(descriptor)  # opens files, or runs the parameter's own parser
        return BuiltWhenNeeded(
            parameter_info=descriptor.parameter_info,
            annotation=descriptor.annotation,
            descriptor=descriptor,
        )

    built_when_needed.built_when_needed = True  # type: ignore[attr-defined]
    setattr(typer.core, _BUILD, built_when_needed)


def _strings(value: Any) -> bool:
    return isinstance(value, (tuple, list)) and all(type(item) is str for item in value)
