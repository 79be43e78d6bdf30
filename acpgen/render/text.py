"""Text from a schema, a file name or an option, made safe for the one place it enters source.

Every string acpgen did not write itself reaches generated code through one of these (or `repr`):
inside a docstring, a `#` comment or a double-quoted f-string. Each escapes whatever could end
the literal or the line, or could not be written as UTF-8: backslashes, quotes, control
characters (NUL, CR, ...), the Unicode line and paragraph separators, and lone surrogates.
"""

from __future__ import annotations

import functools
import re

# Quotes that could close a triple-quoted literal: three or more in a row, or any at the end. An
# escaped quote (`\\"`) is never part of a run, since the backslash before it is doubled already.
_QUOTE_RUN = re.compile(r'"{3,}|"+$')


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# Control characters (Cc, which holds every line break but \u2028/\u2029), the line and paragraph
# separators (Zl, Zp) and lone surrogates (Cs): never written as they are. The classes that reach
# beyond ASCII take `re` about 0.5 ms each to compile (it lays out a map of 65,536 code points), so
# ASCII text (all of every vendored schema) is matched with the ASCII part alone, and the full
# classes are compiled only when a text needs them.
_UNSAFE_ASCII = "\x00-\x1f\x7f"
_UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff"


@functools.cache
def _pattern(quote: str, keep: str, ascii_only: bool) -> re.Pattern[str]:
    """The characters `escape_in_string` rewrites: a backslash, the quote, unsafe ones not kept
    (only the ASCII ones when the text is ASCII)."""
    kept = "".join(f"(?!{re.escape(ch)})" for ch in keep)
    unsafe = _UNSAFE_ASCII if ascii_only else _UNSAFE
    return re.compile(f"\\\\{'|' + re.escape(quote) if quote else ''}|{kept}[{unsafe}]")


def _replace(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "\\":
        return "\\\\"
    return _escape_char(ch) if _unsafe_char(ch) else "\\" + ch  # else: the quote


def _unsafe_char(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029) or 0xD800 <= code <= 0xDFFF


def escape_in_string(text: str, quote: str, keep: str = "") -> str:
    """`text` as the body of a (non-raw) string literal delimited by `quote`: backslashes and
    the quote character escaped, unsafe characters as `\\x..` / `\\u..` escapes."""
    return _pattern(quote, keep, text.isascii()).sub(_replace, text)


# What `docstring_body` may rewrite: a backslash, a tab, a quote, an unsafe character but the newline.
_DOCSTRING_SPECIAL_ASCII = re.compile('[\\\\\t"\x00-\x09\x0b-\x1f\x7f]')


@functools.cache
def _docstring_special() -> re.Pattern[str]:
    return re.compile('[\\\\\t"\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')


@functools.cache
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


@functools.cache
def docstring_body(text: str) -> str:
    """The body of a `\"\"\"...\"\"\"` docstring whose value is exactly `text`: newlines kept, tabs
    written `\\t` (a tab after a newline would mix tabs into the spaces of the indentation); a run
    of three or more quotes, or quotes at the very end, escaped (so nothing closes the literal
    early), other quotes left readable. A lone surrogate (JSON allows `\\ud800`, Unicode
    text does not) becomes U+FFFD: a class cannot be created with one in its docstring."""
    if text.isascii():
        if _DOCSTRING_SPECIAL_ASCII.search(text) is None:
            return text  # most schema prose: nothing to escape
    else:
        if _docstring_special().search(text) is None:
            return text
        text = _surrogate().sub("\ufffd", text)
    out = "\\t".join(escape_in_string(part, "", keep="\n") for part in text.split("\t"))
    return _QUOTE_RUN.sub(lambda m: '\\"' * len(m.group()), out)


def comment_text(text: str) -> str:
    """`text` on one `#` comment line: nothing in it can start a new line."""
    return escape_in_string(text, "", keep="\t").replace("\n", "\\n")


def fstring_text(text: str) -> str:
    """`text` inside a double-quoted f-string: braces doubled, so it is never an expression."""
    return escape_in_string(text, '"').replace("{", "{{").replace("}", "}}")
