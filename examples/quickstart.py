"""A first MCP server: a tool, a prompt and a resource.  Serve it with
``mcpkit serve examples/quickstart.py`` (http://127.0.0.1:8000/mcp, every protocol revision)."""

import mcpkit

notes = mcpkit.EndpointBuilder("notes", version="1.0.0")
NOTES = {"welcome": "mcpkit serves tools, prompts and resources."}


@notes.tool
def add_note(name: str, text: str) -> str:
    """Save a note under a name, replacing any note of that name."""
    NOTES[name] = text
    return f"Saved note {name!r}."


@notes.prompt
def summarize(name: str) -> str:
    """Ask the model for a one-line summary of a note."""
    return f"Summarize this note in one line: {NOTES.get(name, '(no such note)')}"


@notes.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """The text of one note."""
    if name not in NOTES:
        raise mcpkit.ResourceNotFound()
    return NOTES[name]
