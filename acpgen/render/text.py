"""Text from a schema, a file name or an option, made safe for the one place it enters source.

Every string acpgen did not write itself reaches generated code through one of these (or `repr`):
inside a docstring, a `#` comment or a double-quoted f-string. Each escapes whatever could end
the literal or the line, or could not be written as UTF-8: backslashes, quotes, control
characters (NUL, CR, ...), the Unicode line and paragraph separators, and lone surrogates.
"""

from __future__ import annotations

import re
import unicodedata

# Characters a Python tokenizer, an editor or ruff may take as a line end, besides "\n".
_LINE_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


# Quotes that could close a triple-quoted literal: three or more in a row, or any at the end. An
# escaped quote (`\\"`) is never part of a run, since the backslash before it is doubled already.
_QUOTE_RUN = re.compile(r'"{3,}|"+$')


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _unsafe(ch: str, keep: str) -> bool:
    if ch in keep:
        return False
    if ch in _LINE_BREAKS:
        return True
    category = unicodedata.category(ch)
    return category in ("Cc", "Cs", "Zl", "Zp")  # control characters, lone surrogates, separators


def escape_in_string(text: str, quote: str, keep: str = "") -> str:
    """`text` as the body of a (non-raw) string literal delimited by `quote`: backslashes and
    the quote character escaped, unsafe characters as `\\x..` / `\\u..` escapes."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif _unsafe(ch, keep):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def docstring_body(text: str) -> str:
    """The body of a `\"\"\"...\"\"\"` docstring whose value is exactly `text`: newlines and tabs
    kept; a run of three or more quotes, or quotes at the very end, escaped (so nothing closes the
    literal early), other quotes left readable. A lone surrogate (JSON allows `\\ud800`, Unicode
    text does not) becomes U+FFFD: a class cannot be created with one in its docstring."""
    text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    out = escape_in_string(text, "", keep="\n\t")
    return _QUOTE_RUN.sub(lambda m: '\\"' * len(m.group()), out)


def comment_text(text: str) -> str:
    """`text` on one `#` comment line: nothing in it can start a new line."""
    return escape_in_string(text, "", keep="\t").replace("\n", "\\n")


def fstring_text(text: str) -> str:
    """`text` inside a double-quoted f-string: braces doubled, so it is never an expression."""
    return escape_in_string(text, '"').replace("{", "{{").replace("}", "}}")
