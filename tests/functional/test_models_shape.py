"""The shape of the generated models (issue 10): every object type of every generated package is a
real dataclass, a union variant that is a `$ref` is that `$defs` class (or a subclass adding only
the tag), closed enums take their plain values, and nothing but ValidationError escapes `encode`."""

from __future__ import annotations

import copy
import dataclasses
import enum
import importlib
import json
import subprocess
import sys
import types
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import GENERATED
from tests.functional.test_codecs import make

PACKAGES = ("acp_v0_4", "acp_v1", "acp_v2")


def package(name: str) -> Any:
    return importlib.import_module(name)


def object_types(name: str) -> list[type]:
    """Every class of the package's models that is an object type (a Model)."""
    models = importlib.import_module(f"{name}.models")
    base = importlib.import_module(f"{name}._codec").Model
    return [v for k, v in sorted(vars(models).items())
            if isinstance(v, type) and issubclass(v, base) and v.__module__ == models.__name__]


# -- a value for each annotation, built from the type hints (the smallest valid one) ------------


def sample(hint: Any, pkg: Any, depth: int = 0) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = [o for o in typing.get_args(hint) if o is not type(None) and o is not pkg.Unset]
        for option in options:
            try:
                return sample(option, pkg, depth)
            except LookupError:
                continue
        return None
    if origin is list:  # one item: some lists have `minItems: 1`
        try:
            return [sample(typing.get_args(hint)[0], pkg, depth + 1)] if depth < 4 else []
        except LookupError:
            return []
    if origin is dict:
        return {}
    if origin is typing.Literal:
        return typing.get_args(hint)[0]
    if isinstance(hint, typing.ForwardRef) or hint is typing.Any:
        return None
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return next(iter(hint))
        if dataclasses.is_dataclass(hint):
            if depth > 6:
                raise LookupError(hint)
            return instance(hint, pkg, depth + 1)
        return {str: "x", int: 1, float: 1.5, bool: True}.get(hint)
    raise LookupError(hint)


def instance(cls: type, pkg: Any, depth: int = 0) -> Any:
    """An object of `cls` with every required field set (optional ones keep their defaults)."""
    hints = typing.get_type_hints(cls)
    kwargs = {f.name: sample(hints[f.name], pkg, depth) for f in dataclasses.fields(cls)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    if "raw" in kwargs:  # the `other` variant of an open union keeps the raw object
        kwargs["raw"] = {}
    return cls(**kwargs)


def other_value(value: Any) -> Any:
    """A different value of the same kind, for `replace`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, enum.Enum):
        members = list(type(value))
        return members[(members.index(value) + 1) % len(members)]
    if isinstance(value, str):
        return value + "y"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, list):
        return value * 2  # as long or longer: limits on the item count still hold
    if isinstance(value, dict):
        return {**value, "other": None} if not value else {}
    return value


@pytest.mark.parametrize("name", PACKAGES)
def test_every_object_type_is_a_real_dataclass(name: str) -> None:
    pkg = package(name)
    classes = object_types(name)
    assert len(classes) > 20
    round_trips = 0
    for cls in classes:
        assert dataclasses.is_dataclass(cls), cls
        fields = dataclasses.fields(cls)
        hints = typing.get_type_hints(cls)  # every annotation resolves
        # fields in declaration order, each with its annotation as written
        declared = [n for c in reversed(cls.__mro__) for n in vars(c).get("__annotations__", {})
                    if n in {f.name for f in fields}]
        assert [f.name for f in fields] == list(dict.fromkeys(declared)), cls
        for f in fields:
            owner = next(c for c in cls.__mro__ if f.name in vars(c).get("__annotations__", {}))
            assert f.type == owner.__annotations__[f.name] and f.kw_only, (cls, f.name)
            optional = pkg.Unset in typing.get_args(hints[f.name])
            if optional:
                assert f.default is pkg.UNSET, (cls, f.name)  # absent unless set
            if f.default_factory is not dataclasses.MISSING:
                first, second = f.default_factory(), f.default_factory()
                assert first == second and (first is not second or first == ()), (cls, f.name)
        value = instance(cls, pkg)
        with pytest.raises(TypeError):
            hash(value)
        assert not hasattr(value, "__dict__")
        assert dataclasses.asdict(value).keys() == {f.name for f in fields}
        assert len(dataclasses.astuple(value)) == len(fields)
        assert dataclasses.replace(value) == value and dataclasses.replace(value) is not value
        if fields:
            first = fields[0]
            changed = dataclasses.replace(value, **{first.name: other_value(getattr(value, first.name))})
            assert getattr(changed, first.name) == other_value(getattr(value, first.name))
        else:
            changed = value
        if "raw" in {f.name for f in fields}:
            continue
        wire = pkg.encode(changed)
        json.dumps(wire)
        again = cls.from_dict(wire)
        assert type(again) is cls and pkg.encode(again) == wire
        round_trips += 1
    # every class but the `other` variants of open unions (kept raw: their round trip is a
    # property test's) round-trips after `replace`
    raw = sum("raw" in {f.name for f in dataclasses.fields(c)} for c in classes)
    assert round_trips == len(classes) - raw


@pytest.mark.parametrize("name", PACKAGES)
def test_a_ref_variant_is_its_defs_class_or_a_subclass_adding_only_the_tag(name: str) -> None:
    pkg = package(name)
    codec = importlib.import_module(f"{name}._codec")
    tagged = [c for c in object_types(name) if issubclass(c, codec.Tagged)]
    assert tagged or name == "acp_v0_4"  # v0.4 writes its variants out inline (no `$ref`)
    for cls in tagged:
        payload = next(c for c in cls.__mro__ if not issubclass(c, codec.Tagged))
        assert dataclasses.fields(cls) == dataclasses.fields(payload)
        # No field of its own: the one annotation is the `tag` ClassVar.
        assert set(vars(cls).get("__annotations__", {})) == {"tag"}
        key, tag = cls._tag_key, cls.tag
        value = instance(cls, pkg)
        wire = pkg.encode(value)
        assert wire[key] == tag
        assert key not in pkg.encode(instance(payload, pkg))  # the `$defs` type has no tag
        with pytest.raises(pkg.ValidationError, match=key):
            cls.from_dict({**wire, key: tag + "-not"})
        try:
            decoded = cls.from_dict(wire)
        except pkg.ValidationError:
            continue  # the minimal value misses a schema limit (minItems) of the `$defs` type
        assert type(decoded) is cls and pkg.encode(decoded) == wire


def test_mcp_server_the_defs_class_is_rejected_the_variant_writes_its_tag() -> None:
    import acp_v1

    good = acp_v1.NewSessionRequest(cwd="/x", mcp_servers=[acp_v1.HttpMcpServer(name="a", url="u", headers=[])])
    assert acp_v1.encode(good)["mcpServers"] == [{"type": "http", "name": "a", "url": "u", "headers": []}]
    assert issubclass(acp_v1.HttpMcpServer, acp_v1.McpServerHttp)
    bad = acp_v1.NewSessionRequest(cwd="/x", mcp_servers=[acp_v1.McpServerHttp(name="a", url="u", headers=[])])
    with pytest.raises(acp_v1.ValidationError) as info:
        acp_v1.encode(bad)
    assert info.value.path == "mcp_servers[0]"
    assert "construct HttpMcpServer" in str(info.value)
    # stdio is the default variant: the `$defs` class itself, with no tag on the wire
    stdio = acp_v1.McpServerStdio(name="s", command="run", args=[], env=[])
    assert "type" not in acp_v1.encode(acp_v1.NewSessionRequest(cwd="/x", mcp_servers=[stdio]))["mcpServers"][0]
    # a class that is no variant at all
    with pytest.raises(acp_v1.ValidationError, match=r"^prompt\[1\]: expected one of"):
        acp_v1.encode(acp_v1.PromptRequest(session_id="s", prompt=[
            acp_v1.TextContentBlock(text="a"), acp_v1.TextContent(text="b")]))


def test_a_subclass_of_a_variant_class_is_reported_not_encoded_without_its_tag() -> None:
    import acp_v1

    class Mine(acp_v1.TextContentBlock):
        __slots__ = ()

    value = acp_v1.PromptRequest(session_id="s", prompt=[Mine(text="a")])
    assert Mine(text="a").to_dict() == {"type": "text", "text": "a"}
    with pytest.raises(acp_v1.ValidationError, match=r"prompt\[0\]: Mine subclasses the variant"):
        acp_v1.encode(value)


def test_prompt_response_takes_the_plain_stop_reason() -> None:
    import acp_v1

    response = acp_v1.PromptResponse(stop_reason="end_turn")  # raised AttributeError before
    assert acp_v1.encode(response) == {"stopReason": "end_turn"}
    assert type(acp_v1.encode(response)["stopReason"]) is str
    assert acp_v1.decode("PromptResponse", {"stopReason": "end_turn"}).stop_reason is acp_v1.StopReason.END_TURN
    for bad in ("bogus", 1, None, ["end_turn"], acp_v1.UNSET, acp_v1.ToolKind.READ):
        with pytest.raises(acp_v1.ValidationError) as info:
            acp_v1.encode(acp_v1.PromptResponse(stop_reason=bad))
        assert info.value.path == "stop_reason", bad


def closed_enum_fields(name: str) -> list[tuple[type, str, type]]:
    """(class, field, enum) for every field whose annotation is a closed enum (maybe optional)."""
    pkg = package(name)
    out = []
    for cls in object_types(name):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            options = [o for o in typing.get_args(hints[f.name]) or (hints[f.name],)
                       if o is not pkg.Unset and o is not type(None) and typing.get_origin(o) is not typing.Literal]
            if len(options) == 1 and isinstance(options[0], type) and issubclass(options[0], enum.Enum):
                out.append((cls, f.name, options[0]))
    return out


@pytest.mark.parametrize("name", PACKAGES)
def test_closed_enum_fields_take_members_and_their_plain_values(name: str) -> None:
    pkg = package(name)
    fields = closed_enum_fields(name)
    assert fields
    for cls, field, kind in fields:
        base = instance(cls, pkg)
        for member in kind:
            as_member = pkg.encode(dataclasses.replace(base, **{field: member}))
            as_value = pkg.encode(dataclasses.replace(base, **{field: member.value}))
            assert as_member == as_value and type(next(v for k, v in as_value.items() if v == member.value)) is type(
                member.value), (cls, field)
        wrong = "not-a-member" if issubclass(kind, str) else 987654
        with pytest.raises(pkg.ValidationError) as info:
            pkg.encode(dataclasses.replace(base, **{field: wrong}))
        assert info.value.path == field and kind.__name__ in info.value.message, (cls, field)


def test_the_runtime_path_reports_a_bad_enum_value_as_a_validation_error() -> None:
    import acp_v1

    with pytest.raises(acp_v1.ValidationError, match="stop_reason: expected a StopReason"):
        acp_v1.encode_value(acp_v1.PromptResponse(stop_reason="end-turn"))
    with pytest.raises(acp_v1.ValidationError, match=r"^\[0\]\.stop_reason"):
        acp_v1.encode_value([acp_v1.PromptResponse(stop_reason="end-turn")])


TYPING_WORDS = "Callable Final Literal TypeAlias Enum field cast Self TYPE_CHECKING Model model Tagged UNSET expected"


def test_a_description_naming_typing_words_leaves_no_unused_import(tmp_path: Any, monkeypatch: Any) -> None:
    p = make(tmp_path, {
        "Plain": {
            "description": f"Mentions {TYPING_WORDS} in prose.",
            "type": "object",
            "properties": {"note": {"type": "string", "description": f"Also {TYPING_WORDS}."}},
            "required": ["note"],
        },
    }, monkeypatch)
    path = p.__path__[0] + "/models.py"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "Callable" in text and "from collections.abc import Callable" not in text
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F401,F811,F821", path],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout


# -- encode fuzz: any value in any field encodes or raises ValidationError, never anything else ---

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    | st.sampled_from([object(), b"bytes", 1j, (1, 2), {1, 2}]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3),
    max_leaves=5,
)


def corpus_objects(name: str) -> list[Any]:
    pkg = package(name)
    folder = GENERATED.parent / "tests" / "fixtures" / "messages" / name.removeprefix("acp_")
    out = []
    for path in sorted(folder.glob("*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        for item in items if isinstance(items, list) else [items]:
            out.append(pkg.decode(path.stem, item))
    return out


def nested_objects(value: Any) -> list[Any]:
    """`value` and every generated object reachable from it."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            found.append(item)
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


@pytest.mark.parametrize("name", ["acp_v1", "acp_v2"])
def test_encode_fuzz_any_value_in_any_field_encodes_or_raises_validation_error(name: str) -> None:
    pkg = package(name)
    objects = [o for o in corpus_objects(name) if dataclasses.is_dataclass(o) and dataclasses.fields(o)]
    classes = object_types(name)
    foreign = st.sampled_from(classes).map(lambda c: instance(c, pkg))
    enums = [m for v in vars(importlib.import_module(f"{name}.models")).values()
             if isinstance(v, type) and issubclass(v, enum.Enum) for m in v]

    values = JUNK | foreign | st.sampled_from(enums) | st.just(pkg.UNSET) | st.lists(foreign, max_size=2)

    @settings(max_examples=300, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.sampled_from(range(len(objects))), st.data())
    def check(index: int, data: st.DataObject) -> None:
        root = copy.deepcopy(objects[index])
        targets = [o for o in nested_objects(root) if dataclasses.fields(o)]
        target = data.draw(st.sampled_from(targets))
        field = data.draw(st.sampled_from(dataclasses.fields(target)))
        object.__setattr__(target, field.name, data.draw(values))
        try:
            pkg.encode(root)
        except pkg.ValidationError as e:
            assert str(e)  # anything else (AttributeError, KeyError, TypeError) fails the test

    check()


# -- lean, with every docstring kept ----------------------------------------------------------


def ir_descriptions(package: str) -> list[str]:
    """Every description the IR of a configured target carries (types, fields, members, variants)."""
    from acpgen.config import load_config
    from acpgen.diagnostics import Diagnostics
    from acpgen.ir import IrOptions, build_package
    from acpgen.ir.model import Enum, Struct, Union_
    from acpgen.load import load_schema

    target = next(t for t in load_config(GENERATED.parent / "pyproject.toml", Diagnostics()) if t.package == package)
    loaded, _ = load_schema(target.schema, target.unstable if target.include_unstable else None, target.meta,
                            find_companion=target.find_unstable)
    assert loaded is not None
    ir, _ = build_package(loaded, IrOptions(package=package, include_unstable=target.include_unstable))
    assert ir is not None
    out = []
    for node in ir.nodes:
        out.append(node.description)
        if isinstance(node, Struct):
            out += [f.description for f in node.fields if not node.base]
        elif isinstance(node, Enum):
            out += [m.description for m in node.members]
        elif isinstance(node, Union_):
            out += [v.description for v in node.variants]
    return [d for d in out if d.strip()]


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", PACKAGES)
def test_every_description_is_a_docstring_of_models_py(name: str) -> None:
    """Sharing one class per schema type loses no prose: each description is in models.py."""
    from acpgen.render.context import docstring

    text = words((GENERATED / name / "models.py").read_text(encoding="utf-8"))
    missing = [d[:80] for d in ir_descriptions(name) if words(docstring(d)) not in text]
    assert not missing, missing


def tagged_unions(name: str) -> list[tuple[str, str, list[type], type | None, type | None]]:
    """(union, tag wire name, known variant classes, default class, other class) of each tagged
    union of a built package, read from the IR the package was built from."""
    from acpgen.config import load_config
    from acpgen.diagnostics import Diagnostics
    from acpgen.ir.model import Union_
    from acpgen.pipeline import load_ir

    target = next(t for t in load_config(GENERATED.parent / "pyproject.toml", Diagnostics("pyproject.toml"))
                  if t.name == name)
    ir, _ = load_ir(target)
    assert ir is not None
    models = importlib.import_module(f"{name}.models")
    out = []
    for u in (n for n in ir.nodes if isinstance(n, Union_) and n.tag):
        known = [getattr(models, v.type.name) for v in u.variants if v.tag_value is not None]
        default = getattr(models, u.default) if u.default else None
        other = getattr(models, u.other) if u.other else None
        out.append((u.name, u.tag, known, default, other))
    return out


@pytest.mark.parametrize("name", PACKAGES)
def test_every_variant_of_a_tagged_union_reads_its_tag_as_tag(name: str) -> None:
    pkg = package(name)
    unions = tagged_unions(name)
    assert unions
    for union, key, known, default, other in unions:
        for cls in known:
            value = instance(cls, pkg)
            wire = pkg.encode(value)
            # One way on the class and on an instance, equal to what the wire carries.
            assert cls.tag == value.tag == wire[key], (union, cls)
            assert "tag" not in {f.name for f in dataclasses.fields(cls)}  # a ClassVar, no field
            # Typed as its own Literal (what lets mypy narrow a closed union on `x.tag == ...`).
            assert vars(cls)["__annotations__"]["tag"] == f"ClassVar[Literal[{cls.tag!r}]]", (union, cls)
        if default is not None:
            assert default.tag is None, (union, default)
        if other is not None:
            assert other(raw={key: "_not_a_known_tag"}).tag == "_not_a_known_tag"
            assert isinstance(vars(other)["tag"], property)  # the unknown value, read from `raw`


def test_the_v1_and_v2_state_and_content_variants_follow_label_union() -> None:
    import acp_v1
    import acp_v2

    for pkg in (acp_v1, acp_v2):
        assert pkg.RunningStateUpdateVariant.tag == "running"
        assert issubclass(pkg.RunningStateUpdateVariant, pkg.RunningStateUpdate)
        assert pkg.OtherStateUpdate.__name__ == "OtherStateUpdate"
        assert not hasattr(pkg, "StateUpdateRunning") and not hasattr(pkg, "MultiSelectItemsString")
    assert acp_v1.SessionCapabilities(list=acp_v1.SessionListCapabilities()).to_dict() == {"list": {}}
    assert acp_v1.SessionCapabilities.from_dict({"list": {}}).list == acp_v1.SessionListCapabilities()
