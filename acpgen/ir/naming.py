"""Name policy. Class names: `$defs` keys first, then tag const + union, then title + union, then
parent + field. Python attribute names: snake_case of the wire name, keyword- and builtin-safe.
A clash is reported with both JSON pointers; it is never resolved with a number suffix."""

from __future__ import annotations

import keyword
import re
import unicodedata

# Names the generated modules define or import next to the models.
RESERVED_CLASS_NAMES = frozenset(
    {
        "UNSET", "Unset", "ValidationError", "JsonValue", "TYPES", "DECODERS", "METHODS",
        "AGENT_METHODS", "CLIENT_METHODS", "MethodInfo", "decode", "encode", "dataclass", "field",
        "Literal", "Any", "Callable", "TypeAlias", "Enum", "Final", "Agent", "Client",
        "Model", "ModelType", "Tagged", "Self", "TYPE_CHECKING",
    }
)
# Builtins a generated module may use that a class name could shadow (`except KeyError:` must
# still mean the builtin), plus the keywords that look like class names. A fixed list, so the
# output does not depend on the Python version acpgen runs on.
BUILTIN_CLASS_NAMES = frozenset(
    {
        "None", "True", "False", "NotImplemented", "Ellipsis", "BaseException", "Exception",
        "ArithmeticError", "AssertionError", "AttributeError", "ConnectionError", "IndexError",
        "KeyError", "LookupError", "NameError", "OSError", "OverflowError", "RecursionError",
        "RuntimeError", "StopIteration", "TypeError", "UnicodeDecodeError", "UnicodeError",
        "ValueError", "Warning",
    }
)
# Attribute names that would shadow a name the generated class bodies use in annotations, or a
# generated method.
RESERVED_FIELD_NAMES = frozenset(
    {"str", "int", "float", "bool", "list", "dict", "object", "from_dict", "to_dict", "self", "cls",
     "unknown_fields", "field"}
)

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|\b|_|$)|[A-Z]?[a-z0-9]+|[A-Z]+|[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def pascal(text: str) -> str:
    """`agent_message_chunk` -> `AgentMessageChunk`; `McpServer` stays; punctuation is dropped."""
    out = "".join(w[:1].upper() + w[1:] for w in words(text))
    if out and not out[0].isalpha():
        out = "Value" + out
    return out


def snake(text: str) -> str:
    """`sessionId` -> `session_id`, `_meta` -> `meta`, `HTTPHeaders` -> `http_headers`."""
    out = "_".join(w.lower() for w in words(text))
    if not out:
        out = "field"
    if out[0].isdigit():
        out = "f_" + out
    if keyword.iskeyword(out) or keyword.issoftkeyword(out) or out in RESERVED_FIELD_NAMES:
        out += "_"
    return out


def class_name(text: str) -> str:
    """A `$defs` key as a class name: kept as it is when it is already a valid identifier; a
    trailing `_` when it would be a keyword or shadow a builtin the generated code uses."""
    if text.isidentifier() and not keyword.iskeyword(text) and text[:1].isupper():
        out = unicodedata.normalize("NFKC", text)
    else:
        out = pascal(text) or "Definition"
    # `None` (a $defs key) or `KeyError` would break or shadow what the generated code uses.
    return out + "_" if out in BUILTIN_CLASS_NAMES or keyword.iskeyword(out) else out


def member_name(value: str | int, title: str = "") -> str:
    """An enum member: UPPER_SNAKE of the value, or of the title for integer values."""
    source = title if (title and not isinstance(value, str)) else str(value)
    out = "_".join(w.upper() for w in words(source))
    if not out:
        out = "VALUE"
    if out[0].isdigit():
        out = "VALUE_" + out
    if keyword.iskeyword(out.lower()) and out.lower() == out:
        out += "_"
    return out


def handler_name(method: str) -> str:
    """Wire method -> interface method name: `session/new` -> `session_new`, `$/cancel_request`
    -> `cancel_request`."""
    return snake(method.replace("$/", "").replace("/", "_"))
