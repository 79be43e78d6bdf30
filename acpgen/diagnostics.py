"""Errors as values: every stage reports `Diagnostic`s; the CLI prints them and picks the exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Level = Literal["error", "warning"]


def shown_pointer(pointer: str) -> str:
    """A JSON pointer as a line of output may show it: control characters (a newline or tab inside
    a property name) percent-encoded, as in a URI fragment (RFC 6901, section 6)."""
    return "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in pointer)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding of a stage: its level and code, where (file and JSON pointer), what, and what to do."""

    level: Level
    code: str
    pointer: str
    message: str
    file: str = ""
    hint: str = ""

    def render(self) -> str:
        where = self.file or "<schema>"
        if self.pointer or self.file:
            where += f"#{shown_pointer(self.pointer)}" if self.pointer else ""
        text = f"{where}: {self.level}[{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


@dataclass
class Diagnostics:
    """An accumulator a stage appends to; `errors` decides whether the build may go on."""

    file: str = ""
    items: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, pointer: str, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic("error", code, pointer, message, self.file, hint))

    def warning(self, code: str, pointer: str, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic("warning", code, pointer, message, self.file, hint))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.level == "error"]


def pointer_join(base: str, *parts: str | int) -> str:
    """Extend a JSON pointer, escaping `~` and `/` as RFC 6901 says."""
    out = base
    for part in parts:
        text = part if type(part) is str else str(part)
        if "~" in text or "/" in text:
            text = text.replace("~", "~0").replace("/", "~1")
        out = f"{out}/{text}"
    return out
