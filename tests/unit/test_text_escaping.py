"""Schema prose reaches docstrings through `docstring_body`, whose fast path (text with nothing to
escape is returned as it is) must agree with the escaping it skips."""

from __future__ import annotations

import ast
import itertools
import re

from acpgen.render import text

# One of each kind of character the escaping treats differently, plus plain ones.
ALPHABET = 'a "\\\t\n\x00\x0b\x1f\x7f\x9f\xa0\u2028\u2029\ud800\U0001f600'


def escaped_the_long_way(value: str) -> str:
    value = re.sub("[\ud800-\udfff]", "\ufffd", value)
    out = "\\t".join(text.escape_in_string(part, "", keep="\n") for part in value.split("\t"))
    return text._QUOTE_RUN.sub(lambda m: '\\"' * len(m.group()), out)


def test_the_fast_path_agrees_with_the_escaping_on_every_short_string() -> None:
    for n in range(4):
        for chars in itertools.product(ALPHABET, repeat=n):
            value = "".join(chars)
            assert text.docstring_body(value) == escaped_the_long_way(value), repr(value)


def test_a_docstring_body_reads_back_as_its_text() -> None:
    for value in ("plain prose", 'a "quoted" word', 'ends with "', "tab\there", "back\\slash", "nul\x00"):
        body = text.docstring_body(value)
        assert ast.literal_eval(f'"""{body}"""') == value


def test_ascii_text_is_escaped_alike_by_the_ascii_patterns_and_the_full_ones() -> None:
    """ASCII text is matched with the ASCII part of the unsafe class (the full class is slow to
    compile): for every short ASCII string and every quote and kept character, the same text."""
    ascii_alphabet = [ch for ch in ALPHABET if ch.isascii()]
    for n in range(5):
        for chars in itertools.product(ascii_alphabet, repeat=n):
            value = "".join(chars)
            for quote, keep in (("", ""), ('"', ""), ("", "\n"), ("", "\t"), ("'", "")):
                full = text._pattern(quote, keep, False).sub(text._replace, value)
                assert text.escape_in_string(value, quote, keep) == full, (value, quote, keep)
