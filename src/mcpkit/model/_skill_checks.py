"""The endpoint's checks of its skills: registrations, distinct URIs, and no shadowing.

A skill file's URI must mean that file only: two skills may not serve the same URI, and no
exact resource or template of the endpoint may answer a skill file's URI (a template would
otherwise be reached for it on a revision that lists no skills, and a reader could not tell
which one it got).
"""

from __future__ import annotations

from collections.abc import Sequence

import mcpkit.model._endpoint_checks as checks
from mcpkit.model._resources import ResourceRegistration
from mcpkit.model._skills import SkillRegistration

__all__ = ["check_skills"]


def check_skills(
    site: checks.Site,
    skills: object,
    exact: Sequence[ResourceRegistration],
    templates: Sequence[ResourceRegistration],
) -> tuple[SkillRegistration, ...]:
    """``skills`` as a tuple, refused if any two serve the same URI or a resource shadows a
    skill file."""
    registered = checks.registrations(site, "skills", skills, SkillRegistration)
    if registered and all(revision.has_handshake for revision in site.revisions):
        raise site.fail(
            "skills are served on 2026-07-28 only: serve that revision too, or remove them"
        )
    owners: dict[str, SkillRegistration] = {}
    taken: set[str] = set()
    for skill in registered:
        for uri in (*skill.files, *skill.directories):
            if uri in taken:
                raise site.fail(
                    "two skills serve the same file or directory URI; give each skill a "
                    "directory of its own, outside the other's"
                )
        taken.update(skill.files, skill.directories)
        owners.update(dict.fromkeys(skill.files, skill))
    for resource in exact:
        if checks.uri_of(resource) in owners:
            raise site.fail(
                "a resource has the URI of a skill file; skill files are served by their "
                "skill, so give the resource another URI"
            )
    for template in templates:
        if any(checks.template_of(template).match(uri) is not None for uri in owners):
            raise site.fail(
                "a resource template matches the URI of a skill file; narrow the template "
                "or move the skill"
            )
    return registered
