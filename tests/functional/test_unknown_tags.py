"""A union with a default variant keeps an object whose tag it does not list whole (`Other<Union>`),
where JSON Schema would read it as the default and lose the tag and the keys the default lacks."""

from __future__ import annotations

import acp_v1
import pytest

CODEX_ENV_VAR = {"id": "openai-api-key", "name": "OPENAI_API_KEY", "type": "env_var",
                 "vars": [{"name": "OPENAI_API_KEY"}], "description": "an API key in the environment"}


def test_an_unlisted_tag_is_kept_whole_not_read_as_the_default() -> None:
    method = acp_v1.decode("AuthMethod", CODEX_ENV_VAR)
    assert isinstance(method, acp_v1.OtherAuthMethod) and not isinstance(method, acp_v1.AuthMethodAgent)
    assert method.tag == "env_var" and method.raw == CODEX_ENV_VAR
    assert acp_v1.encode(method) == CODEX_ENV_VAR


def test_inside_a_message_too() -> None:
    result = acp_v1.decode("InitializeResponse", {"protocolVersion": 1, "authMethods": [
        CODEX_ENV_VAR, {"id": "chatgpt", "name": "Log in with ChatGPT"}]})
    kinds = [type(m).__name__ for m in result.auth_methods]
    assert kinds == ["OtherAuthMethod", "AuthMethodAgent"]
    assert acp_v1.encode(result)["authMethods"][0] == CODEX_ENV_VAR


def test_an_absent_tag_still_selects_the_default_and_a_listed_one_its_variant() -> None:
    assert type(acp_v1.decode("AuthMethod", {"id": "a", "name": "A"})) is acp_v1.AuthMethodAgent
    terminal = acp_v1.decode("AuthMethod", {"id": "t", "name": "T", "type": "terminal"})
    assert type(terminal) is acp_v1.TerminalAuthMethod


def test_the_default_must_accept_the_object_as_the_schema_reads_it() -> None:
    with pytest.raises(acp_v1.ValidationError, match="id"):
        acp_v1.decode("AuthMethod", {"name": "no id", "type": "env_var"})
    with pytest.raises(acp_v1.ValidationError):  # a listed tag is never kept raw
        acp_v1.OtherAuthMethod.from_dict({"id": "t", "name": "T", "type": "terminal"})


def test_an_unknown_mcp_server_transport_is_kept() -> None:
    sent = {"type": "websocket", "name": "w", "command": "c", "args": [], "env": [], "url": "ws://x"}
    server = acp_v1.decode("McpServer", sent)
    assert type(server).__name__ == "OtherMcpServer" and acp_v1.encode(server) == sent
