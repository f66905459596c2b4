"""The shorter form of ``@tool`` and ``@prompt``: used bare, named after the method, described
by its docstring; explicit ``name`` and ``description`` still win."""

from __future__ import annotations

import pytest

import mcpkit
from mcpkit import CompleteResult, ConfigurationError, PromptOutput, Revision

MODERN = Revision.V2026_07_28


def _say(text: str) -> PromptOutput:
    content = mcpkit.TextContent(text=text)
    return PromptOutput(messages=(mcpkit.PromptMessage(role=mcpkit.Role.USER, content=content),))


@mcpkit.endpoint(path="/mcp", name="short", version="1.0.0", revisions={MODERN})
class Short:
    @mcpkit.tool
    def get_weather(self, city: str) -> CompleteResult:
        """Today's weather in a city.

        Any city name the weather service knows."""
        return CompleteResult.from_tool_text(city)

    @mcpkit.tool()
    def undocumented(self) -> CompleteResult:
        return CompleteResult.from_tool_text("")

    @mcpkit.tool(name="explicit", description="Said here, not in the docstring")
    def renamed(self) -> CompleteResult:
        """Not this."""
        return CompleteResult.from_tool_text("")

    @mcpkit.prompt
    def greeting(self, who: str) -> PromptOutput:
        """A friendly greeting."""
        return _say(f"Hello {who}")


ENDPOINT = mcpkit.EndpointRegistry.from_classes(Short).endpoints[0]


def test_a_bare_decorator_names_the_tool_after_its_method_and_reads_its_docstring() -> None:
    tools = {tool.name: tool.description for tool in ENDPOINT.tools}
    assert tools == {
        "get_weather": "Today's weather in a city.\n\nAny city name the weather service knows.",
        "undocumented": None,
        "explicit": "Said here, not in the docstring",
    }


def test_a_bare_prompt_decorator_does_the_same() -> None:
    (prompt,) = ENDPOINT.prompts
    assert (prompt.name, prompt.description) == ("greeting", "A friendly greeting.")


def test_a_bare_decorator_on_anything_but_a_function_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="@tool decorates a method"):
        mcpkit.tool(42)  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match="@prompt decorates a method"):
        mcpkit.prompt(staticmethod(len))
