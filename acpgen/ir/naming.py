"""Name policy: one rule per kind of name, no order-dependent choices.

Given names. Every `$defs` key (and every `rename`) is a name the schema or the user gives and is
kept as it is (`class_name`); two given names that clash are an error naming both pointers. Given
names are claimed before any derived one, so a derived name never takes a given name's place.

Derived class names. A union variant the generator names is always `<Label><Union>`: the label
first, the union's name last (`TextContentBlock`, `AgentMessageChunkSessionUpdate`,
`ResultAgentResponse`; the synthesized variant holding an unknown tag is `Other<Union>`). The label
comes from the cascade in `variant_label` (title, `$ref` name, tag `const`, the property only it
requires, its single property, the property only it has, its JSON type, and its position only as a
last resort). When that name is already a class (the schema names the variant's payload the same
way: ACP's `RunningStateUpdate` for the `running` variant of `StateUpdate`), the variant is
`<Label><Union>Variant` (`RunningStateUpdateVariant`) - the order of the words never flips. A
nested object is `<Parent><Field>`. A derived name still taken after that gets the first free
numeric suffix (`Name2`, `Name3`, ... in schema order, so the result is deterministic) and a
`name-suffixed` warning. A tagged variant that is its `$defs` payload plus the tag is a subclass
of the payload (`class TextContentBlock(Tagged, TextContent)`): the union's fields take the
variant class, not the payload.

Attribute names. A field is the snake_case of its wire name (`sessionId` -> `session_id`, `list`
-> `list`, `type` -> `type`): Python allows a builtin's name as an attribute, and the generated
modules refer to the builtins their class bodies use through private aliases where a field takes
the name (`from builtins import list as _list`, acpgen.render.codegen.Imports). The one escape is
a trailing `_`, for a keyword or soft keyword (`from` -> `from_`, `class` -> `class_`), a name that
would shadow a generated member (RESERVED_FIELD_NAMES: `from_dict`, `to_dict`, `unknown_fields`,
`tag`, `self`, `cls`), an ambiguous one (`l`, `O`, `I`), or one named like a class of its module.

Tags. Every variant class of a tagged union has a `tag` class attribute, read the same way on the
class and on an instance: `TextContentBlock.tag == "text"`, typed `ClassVar[Literal["text"]]`;
the default variant's (no tag on the wire) is `None`; `Other<Union>.tag` is the unknown value
(`str`)."""

from __future__ import annotations

import functools
import keyword
import re
import sys
import unicodedata
from collections.abc import Callable, Collection, Mapping
from typing import Any

from acpgen.runtime import package_exports

# The names the generated package's `__init__` exports besides the models, derived from the tables
# `__init__.py.j2` prints (acpgen/runtime/__init__.py: EAGER_EXPORTS, LAZY_EXPORTS, each runtime
# module's share checked against its own `__all__`; tests/corpus/test_schema_safety.py checks the
# set against a built package). These are the only names a model cannot take at package level: such
# a model keeps its name in models.py (`pkg.models.RequestError`, and `TYPES` under the schema's
# name) and the package exports it as `export_name(...)` (`RequestError_`), with an
# `export-renamed` warning. The set is fixed (the router's names count in a package that cannot
# route), so the rule does not depend on the schema's shape. Every other name a generated module
# uses for itself (`Literal`, `field`, `Model`, `KeyError`, ...) is imported under a private alias
# where a class takes it (acpgen.render.codegen.Imports), so nothing else is reserved.
PACKAGE_EXPORTS = package_exports(check=False)
# The capitalised names of Python's builtins (3.10 to 3.14, all platforms; a fixed list, so the
# output does not depend on the Python acpgen runs on). A class of one of these names is a real
# clash, not a generator-internal one: type checkers read a reference to a class defined further
# down the module as the builtin (mypy types `x: KeyError` as builtins.KeyError), so the class gets
# a trailing `_`, as a keyword does.
BUILTIN_CLASS_NAMES = frozenset(
    {
        "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
        "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
        "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
        "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
        "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError",
        "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
        "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError",
        "MemoryError", "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented",
        "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError",
        "ProcessLookupError", "PythonFinalizationError", "RecursionError", "ReferenceError",
        "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration",
        "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError", "True",
        "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
        "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning", "WindowsError",
        "ZeroDivisionError",
    }
)
# Attribute names that would shadow a member every generated class has (its codec methods, the
# kept unknown keys, a variant's `tag`) or a parameter of its generated `__init__` (`self`, and
# `cls` of the class methods). Builtins (`list`, `str`, `type`, `id`) and the other names class
# bodies use (`field`) are not reserved: the modules alias them (acpgen.render.codegen.Imports).
RESERVED_FIELD_NAMES = frozenset({"from_dict", "to_dict", "self", "cls", "unknown_fields", "tag"})
# The builtins a generated class body names in its annotations and defaults: a module where a field
# takes one of these names imports it under a private alias (`from builtins import list as _list`).
BODY_BUILTINS = frozenset({"str", "int", "float", "bool", "list", "dict", "object"})

# Names that read like digits (`l`, `O`, `I`): linters refuse them as names (E741, E742).
AMBIGUOUS = frozenset({"l", "O", "I"})

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|\b|_|$)|[A-Z]?[a-z0-9]+|[A-Z]+|[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def identifier_chars(text: str) -> str:
    """`text` in NFKC form with the characters an identifier cannot hold dropped (case mapping can
    produce combining marks or leave a name Python would normalise differently when it parses it)."""
    if text.isascii():  # NFKC leaves ASCII as it is, and letters, digits and `_` are what stays
        return _NOT_IDENTIFIER_ASCII.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if ("a" + ch).isidentifier())


_NOT_IDENTIFIER_ASCII = re.compile(r"[^A-Za-z0-9_]")


@functools.cache  # pure, and called for the same few hundred words thousands of times a build
def pascal(text: str) -> str:
    """`agent_message_chunk` -> `AgentMessageChunk`; `McpServer` stays; punctuation is dropped."""
    out = identifier_chars("".join(w[:1].upper() + w[1:] for w in words(text)))
    if out and not out.isidentifier():
        out = "Value" + out
    return out


def snake(text: str) -> str:
    """`sessionId` -> `session_id`, `_meta` -> `meta`, `HTTPHeaders` -> `http_headers`."""
    return snake_escaped(text)[0]


@functools.cache
def snake_escaped(text: str) -> tuple[str, bool]:
    """(`snake(text)`, whether the generator escaped it: a keyword or reserved name that got a
    trailing `_`, or a placeholder for a name with no letters or digits). An escaped name is one
    the generator made, so it gives way when it meets a name the schema gives."""
    out = identifier_chars("_".join(w.lower() for w in words(text))).strip("_")
    made = not out
    if made:
        out = "field"
    if not out.isidentifier():
        out = "f_" + out
    if keyword.iskeyword(out) or keyword.issoftkeyword(out) or out in RESERVED_FIELD_NAMES or out in AMBIGUOUS:
        return out + "_", made or out + "_" != text  # `class_` on the wire is given as it is
    return out, made


def class_name(text: str) -> str:
    """A `$defs` key as a class name: kept as it is when it is already a valid identifier that
    starts with a capital (or uncased) letter, else in PascalCase; a trailing `_` only where the
    language or the linters refuse the name itself (`None`: a keyword; `KeyError`: a builtin, see
    BUILTIN_CLASS_NAMES; `O`, `I`: ambiguous). A name the generated code uses for itself
    (`Literal`, `field`, `Model`, `ValidationError`) is kept: the modules reach their own names
    through private aliases."""
    return class_name_escaped(text)[0]


@functools.cache
def class_name_escaped(text: str) -> tuple[str, bool]:
    """(`class_name(text)`, whether the generator made it: `Definition` for a key with no
    letters or digits, or a name escaped with a trailing `_`). A made name gives way to a given
    one (the builder suffixes it)."""
    if text.isidentifier() and not keyword.iskeyword(text) and text[:1].isupper():
        out = unicodedata.normalize("NFKC", text)
    else:
        out = pascal(text)
    if not out:
        return "Definition", True
    return (out + "_", True) if not is_class_name(out) else (out, False)


def is_class_name(name: str) -> bool:
    """A name a class may have (and a `rename` may give): a safe identifier starting with a capital
    or an uncased letter that is neither a builtin nor ambiguous. Lowercase and `_` names are the
    generated code's locals, builtins and private helpers (`data`, `str`, `_dec_x`)."""
    return (is_safe_identifier(name) and not name[:1].islower() and not name.startswith("_")
            and name not in BUILTIN_CLASS_NAMES and name not in AMBIGUOUS)


def export_name(name: str, taken: Collection[str]) -> str:
    """The package-level name of a model whose name is one of PACKAGE_EXPORTS: `name_`, or
    `name__`, ... until it is neither an export nor in `taken` (the package's class names)."""
    out = name + "_"
    while out in PACKAGE_EXPORTS or out in taken:
        out += "_"
    return out


def member_name(value: str | int, title: str = "") -> str:
    """An enum member: UPPER_SNAKE of the value, or of the title for integer values."""
    return member_name_and_source(value, title)[0]


def member_name_and_source(value: str | int, title: str = "") -> tuple[str, bool]:
    """(member name, whether the value or title gave it): False when the name is invented (`VALUE`
    for a value with no letters or digits, `VALUE_1` for one starting with a digit)."""
    source = title if (title and not isinstance(value, str)) else str(value)
    out = identifier_chars("_".join(w.upper() for w in words(source))).strip("_")
    given = bool(out) and out.isidentifier()
    if not out:
        out = "VALUE"
    if not out.isidentifier():
        out = "VALUE_" + out
    if (keyword.iskeyword(out.lower()) and out.lower() == out) or out in AMBIGUOUS:
        out += "_"
    return out, given


def handler_name(method: str) -> str:
    """Wire method -> interface method name: `session/new` -> `session_new`, `$/cancel_request`
    -> `cancel_request`."""
    return snake(method.replace("$/", "").replace("/", "_"))


def variant_names(label: str, union: str) -> list[str]:
    """The names a union variant labelled `label` may take, in order: `<Label><Union>`, then
    `<Label><Union>Variant` when a class already has the first (the builder takes the first free
    one, then numeric suffixes). The label always comes first, so the order never flips."""
    base = pascal(label) + union
    return [base, base + "Variant"]


# How `variant_label` found a label, in the order it tries them.
LABEL_SOURCES = ("title", "ref", "tag", "required", "property", "only-property", "type", "position")


def variant_label(
    alts: list[Any], index: int, props_of: Callable[[Any], Mapping[str, Any]],
    ref_name: Callable[[Any], str | None],
) -> tuple[str, str]:
    """(label, source) for alternative `index` of a union: the first of its title, the `$defs`
    name it references, its tag `const`, the property only it requires (a JSON-RPC response's
    `result` / `error`), its single property, the property only it has, its JSON type, the property
    it requires that the fewest others require; else its position (the caller warns). `props_of`
    gives an alternative's properties (through `allOf`)."""
    alt = alts[index]
    if not isinstance(alt, dict):
        return f"variant {index}", "position"
    title = alt.get("title")
    if isinstance(title, str) and words(title):
        return title, "title"
    ref = ref_name(alt)
    if ref and words(ref):
        return ref, "ref"
    props = props_of(alt)
    for p in props.values():
        if isinstance(p, dict) and isinstance(p.get("const"), str) and words(p["const"]):
            return p["const"], "tag"
    others = [a for i, a in enumerate(alts) if i != index]
    required = [r for r in alt.get("required", []) if isinstance(r, str)] if isinstance(alt.get("required"), list) else []
    required_elsewhere = {r for a in others if isinstance(a, dict) and isinstance(a.get("required"), list)
                          for r in a["required"] if isinstance(r, str)}
    only_required = [r for r in required if r not in required_elsewhere and words(r)]
    if only_required:
        return only_required[0], "required"
    named = [k for k in props if words(k)]
    if len(props) == 1 and named:
        return named[0], "property"
    props_elsewhere = {k for a in others for k in props_of(a)}
    only = [k for k in named if k not in props_elsewhere]
    if only:
        return only[0], "only-property"
    kind = alt.get("type")
    if isinstance(kind, str) and words(kind) and not props:
        return kind, "type"
    # The property it requires that the fewest others require (ACP 0.0.16's tool call update, whose
    # properties are the tool call's but which requires only `toolCallId` of them).
    rarity = {r: sum(1 for a in others if isinstance(a, dict) and r in (a.get("required") or [])) for r in required}
    rare = sorted((n, r) for r, n in rarity.items() if n < len(others) and words(r))
    if rare:
        return rare[0][1], "rare-required"
    return f"variant {index}", "position"


# Top-level modules of the standard library (those of Python 3.10 to 3.14, a fixed list so the
# answer does not depend on the Python acpgen runs on): a package named like one shadows it for
# every import in the program (`typing` cannot even import itself), so it is refused.
STDLIB_MODULES = frozenset(["__future__", "_abc", "_aix_support", "_android_support", "_apple_support", "_ast", "_asyncio", "_bisect", "_blake2", "_bootsubprocess", "_bz2", "_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022", "_codecs_jp", "_codecs_kr", "_codecs_tw", "_collections", "_collections_abc", "_colorize", "_compat_pickle", "_compression", "_contextvars", "_crypt", "_csv", "_ctypes", "_curses", "_curses_panel", "_datetime", "_dbm", "_decimal", "_elementtree", "_frozen_importlib", "_frozen_importlib_external", "_functools", "_gdbm", "_hashlib", "_heapq", "_hmac", "_imp", "_interpchannels", "_interpqueues", "_interpreters", "_io", "_ios_support", "_json", "_locale", "_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec", "_multiprocessing", "_opcode", "_opcode_metadata", "_operator", "_osx_support", "_overlapped", "_pickle", "_posixshmem", "_posixsubprocess", "_py_abc", "_py_warnings", "_pydatetime", "_pydecimal", "_pyio", "_pylong", "_pyrepl", "_queue", "_random", "_remote_debugging", "_scproxy", "_sha1", "_sha2", "_sha256", "_sha3", "_sha512", "_signal", "_sitebuiltins", "_socket", "_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime", "_struct", "_suggestions", "_symtable", "_sysconfig", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing", "_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_wmi", "_zoneinfo", "_zstd", "abc", "aifc", "annotationlib", "antigravity", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit", "audioop", "base64", "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile", "calendar", "cgi", "cgitb", "chunk", "cmath", "cmd", "code", "codecs", "codeop", "collections", "colorsys", "compileall", "compression", "concurrent", "configparser", "contextlib", "contextvars", "copy", "copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime", "dbm", "decimal", "difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum", "errno", "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools", "gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip", "hashlib", "heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib", "inspect", "io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale", "logging", "lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder", "msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path", "numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib", "pdb", "pickle", "pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath", "pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data", "pyexpat", "queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter", "runpy", "sched", "secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal", "site", "smtpd", "smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3", "sre_compile", "sre_constants", "sre_parse", "ssl", "stat", "statistics", "string", "stringprep", "struct", "subprocess", "sunau", "symtable", "sys", "sysconfig", "syslog", "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "this", "threading", "time", "timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle", "turtledemo", "types", "typing", "unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings", "wave", "weakref", "webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "xxlimited", "xxlimited_35", "xxsubinterpreters", "zipapp", "zipfile", "zipimport", "zlib", "zoneinfo"])


def package_name_problem(name: str) -> str:
    """Why `name` cannot name a generated package ("" when it can): it must be an identifier in
    NFKC form, no keyword (a soft keyword such as `match` is a valid module name) and no
    standard-library module, which the package would shadow."""
    if not name:
        return "it is empty"
    if not name.isidentifier():
        return "it is not a Python identifier"
    if keyword.iskeyword(name):
        return "it is a Python keyword"
    if unicodedata.normalize("NFKC", name) != name:
        return f"it is not in NFKC form (Python would import it as {unicodedata.normalize('NFKC', name)!r})"
    if name in STDLIB_MODULES or name in sys.stdlib_module_names:
        return "it is the name of a standard-library module, which the package would shadow"
    return ""


def is_safe_identifier(name: str) -> bool:
    """A name usable as written in generated code: an identifier, not a keyword (soft keywords
    included), and already in NFKC form (Python would silently normalise it otherwise)."""
    return (name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
            and unicodedata.normalize("NFKC", name) == name)
