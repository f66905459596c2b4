"""A server publishing one skill bundle (the Skills extension, 2026-07-28).

Serve it with ``mcpkit serve examples/skills/server.py``.  Clients find the skill with
``skills/list`` / ``skills/get`` and read its files with ``resources/read``; 2025 clients see
an endpoint without skills.  The bundle is checked (paths, sizes, front matter) and hashed
once, here, when the module is imported.
"""

from pathlib import Path

import mcpkit

PDF = mcpkit.SkillBundle.from_directory(Path(__file__).parent / "pdf-processing")

skills = mcpkit.EndpointBuilder(
    "skills-demo", version="1.0.0", skills=[mcpkit.SkillRegistration(PDF)]
)


@skills.tool
def page_count(pages: list[str]) -> str:
    """Count the pages of a document given as a list of page texts."""
    return f"{len(pages)} pages"
