"""The tools the model may call: each is data (name, description, schema) plus one function.

Imports neither telegram, anthropic nor bot: past conversations are searched through the
PastConversations protocol, which bot/conversations implements.
"""

from memory.tools.base import (
    FoundMemory,
    PastConversations,
    Tool,
    ToolContext,
    ToolDefinition,
    ToolOutcome,
    json_schema,
    run_tool,
    tool_definitions,
)
from memory.tools.memory_tools import MEMORY_TOOLS

__all__ = [
    "MEMORY_TOOLS",
    "FoundMemory",
    "PastConversations",
    "Tool",
    "ToolContext",
    "ToolDefinition",
    "ToolOutcome",
    "json_schema",
    "run_tool",
    "tool_definitions",
]
