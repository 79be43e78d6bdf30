"""conform client's command line: the fake agent's argv appended, spliced at `{agent}`, or, inside
a longer argument (`--agent={agent}`, as acpx takes its agent), one shell-quoted string."""

from __future__ import annotations

import shlex

from acpgen.kit.conform_client import client_command

AGENT = ["my env/bin/python", "-m", "acpgen.kit.fake_agent", "--log", "a b.jsonl"]


def test_appended_spliced_or_quoted_into_one_argument() -> None:
    assert client_command(["client"], AGENT, ["--cancel"]) == ["client", "--cancel", *AGENT]
    assert client_command(["client", "{agent}", "--json"], AGENT, []) == ["client", *AGENT, "--json"]
    quoted = client_command(["acpx", "--agent={agent}", "exec", "hi"], AGENT, ["--x"])
    assert quoted == ["acpx", f"--agent={shlex.join(AGENT)}", "exec", "hi", "--x"]
    assert shlex.split(quoted[1].removeprefix("--agent=")) == AGENT
