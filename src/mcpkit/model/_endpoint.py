"""The endpoint: an immutable operation catalog at one exact path.

An ``Endpoint`` is built once, checked in full when it is built (``_endpoint_checks`` lists the
order), and served as is.  Everything a request needs per revision is
decided here too, once: which tools, prompts, resources and templates select
the revision, the name and URI indexes, and the capabilities to advertise.  A request then does
a dictionary lookup, never a scan of the registrations or a revision comparison.

Python adaptations of Soklet's ``McpEndpoint.Builder``: the constructor takes what
``withPath(...)`` and the setters take, by keyword; ``with_tools`` / ``with_prompts`` /
``with_resources`` append (each argument one registration or a list or tuple of them, like
Soklet's singular and collection forms) and ``replace(...)`` replaces any value, each returning a
new, fully re-checked endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, TypeAlias

import mcpkit.model._endpoint_checks as checks
from mcpkit.json import JsonArray, JsonObject
from mcpkit.limits import DEFAULT_LIMITS, Limits
from mcpkit.model._app_checks import check_app_links
from mcpkit.model._apps import APPS_CAPABILITY
from mcpkit.model._implementation import CachePolicy, Implementation
from mcpkit.model._paths import validate_endpoint_path
from mcpkit.model._prompts import PromptRegistration
from mcpkit.model._resources import ResourceListRegistration, ResourceRegistration
from mcpkit.model._revision import Revision
from mcpkit.model._skill_checks import check_skills
from mcpkit.model._skills import SKILLS_EXTENSION, SkillAccessPolicy, SkillFile, SkillRegistration
from mcpkit.model._tasks import TASKS_EXTENSION, TaskSupport
from mcpkit.model._tools import ToolRegistration

__all__ = ["Endpoint", "Lifespan", "ResourceMatch"]

Lifespan: TypeAlias = Callable[[], AbstractAsyncContextManager[Any]]
"""An endpoint's lifespan: entered when the server starts, left when it stops; what it yields
is every handler's ``ctx.state`` (a database pool, a client, a cache)."""

"""A read routed through a template is limited to 65,535 characters, as in Soklet.
Only ASCII can match a template, so characters are bytes;
the bound keeps the scan over every template of a revision linear in a small number."""

_NO_VARIABLES: Final[Mapping[str, str]] = MappingProxyType({})

ResourceMatch = tuple[ResourceRegistration, Mapping[str, str]]
"""What ``find_resource`` returns: the registration, and its template variables (empty for an
exact resource), decoded once and read-only."""


@dataclass(frozen=True, slots=True)
class _View:
    """Everything one revision of an endpoint serves, decided when the endpoint is built."""

    tools: tuple[ToolRegistration, ...]
    prompts: tuple[PromptRegistration, ...]
    resources: tuple[ResourceRegistration, ...]
    templates: tuple[ResourceRegistration, ...]
    resource_list: ResourceListRegistration | None
    tool_index: Mapping[str, ToolRegistration]
    prompt_index: Mapping[str, PromptRegistration]
    resource_index: Mapping[str, ResourceRegistration]
    capabilities: JsonObject
    skills: tuple[SkillRegistration, ...] = ()
    skill_index: Mapping[str, SkillRegistration] = field(default_factory=dict)
    skill_files: Mapping[str, tuple[SkillRegistration, SkillFile]] = field(default_factory=dict)
    skill_directories: Mapping[str, tuple[SkillRegistration, JsonArray]] = field(
        default_factory=dict
    )


_EMPTY_VIEW: Final = _View((), (), (), (), None, {}, {}, {}, JsonObject())
"""What an unserved revision sees: nothing, and no capabilities."""


def _view(
    revision: Revision,
    tools: tuple[ToolRegistration, ...],
    prompts: tuple[PromptRegistration, ...],
    resources: tuple[ResourceRegistration, ...],
    resource_list: ResourceListRegistration | None,
    sessions: bool = False,
    listen: bool = False,
    skills: tuple[SkillRegistration, ...] = (),
) -> _View:
    """The catalog of one revision, in registration order, and its capabilities.

    Capabilities follow what is registered: ``tools``, ``prompts`` and
    ``resources`` are present exactly when an operation of that kind selects the revision (for
    ``resources``: an exact resource, a template or the resource list handler), and
    ``completions`` when a prompt or template selecting it has a completion handler.  Each is
    ``{}`` unless the revision can deliver change notifications: on a revision the endpoint
    keeps 2025 sessions on (``sessions``, their ``GET`` streams) or serves
    ``subscriptions/listen`` on (``listen``), ``tools`` and ``prompts`` promise ``listChanged``
    (the application may swap in a new catalog) and ``resources`` promises ``subscribe`` and
    ``listChanged``.  ``extensions`` names the tasks extension on 2026-07-28 when a tool there
    may run as a task, and the skills extension when ``skills`` (the skills served on the
    revision: none on 2025) is not empty; skill files are read as resources, so ``resources``
    is then advertised too.  MCP logging is not part of an endpoint's registrations.  The member
    names are the same on all three revisions.
    """
    tools = tuple(tool for tool in tools if revision in tool.revisions)
    prompts = tuple(prompt for prompt in prompts if revision in prompt.revisions)
    selected = tuple(resource for resource in resources if revision in resource.revisions)
    exact = tuple(resource for resource in selected if resource.template is None)
    templates = tuple(resource for resource in selected if resource.template is not None)
    if resource_list is not None and revision not in resource_list.revisions:
        resource_list = None
    completions = any(prompt.completions for prompt in prompts) or any(
        template.completions for template in templates
    )
    live = sessions or listen  # change notifications can reach a client on this revision
    changing: dict[str, object] = {"listChanged": True} if live else {}
    capabilities: dict[str, object] = {}
    if tools:
        capabilities["tools"] = dict(changing)
    if prompts:
        capabilities["prompts"] = dict(changing)
    if selected or resource_list is not None or skills:
        capabilities["resources"] = {"subscribe": True, "listChanged": True} if live else {}
    if completions:
        capabilities["completions"] = {}
    if not revision.has_handshake and any(
        tool.task_support is not TaskSupport.FORBIDDEN for tool in tools
    ):
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    if skills:
        # skill directories are listed by resources/directory/read
        extensions: dict[str, object] = {SKILLS_EXTENSION: {"directoryRead": True}}
        extensions.update(capabilities.get("extensions", {}))  # type: ignore[call-overload]
        capabilities["extensions"] = extensions
    if any(tool.app is not None for tool in tools):  # MCP Apps: 2026-07-28 tools only
        offered: Any = capabilities.get("extensions", {})  # built above: a dict when present
        capabilities["extensions"] = {**offered, **APPS_CAPABILITY}
    return _View(
        tools=tools,
        prompts=prompts,
        resources=exact,
        templates=templates,
        resource_list=resource_list,
        tool_index={tool.name: tool for tool in tools},
        prompt_index={prompt.name: prompt for prompt in prompts},
        resource_index={checks.uri_of(resource): resource for resource in exact},
        capabilities=JsonObject(capabilities),
        skills=skills,
        skill_index=MappingProxyType({skill.uri: skill for skill in skills}),
        skill_files=MappingProxyType(
            {uri: (skill, item) for skill in skills for uri, item in skill.files.items()}
        ),
        skill_directories=MappingProxyType(
            {uri: (skill, items) for skill in skills for uri, items in skill.directories.items()}
        ),
    )


class Endpoint:
    """An immutable operation catalog at one exact path.

    ``Endpoint(path, implementation, revisions, *, ...)`` takes the exact raw path, the server's
    ``Implementation``, the non-empty set of revisions served at the path and, by keyword:
    ``instructions`` (client-facing guidance), ``tools``, ``prompts`` and ``resources`` (lists or
    tuples of registrations, order kept), ``resource_list`` (the application's
    ``resources/list`` handler), ``resource_list_cache`` and
    ``resource_template_list_cache`` (the 2026 cache hints of those two catalogs),
    ``tool_rate_limiter`` (the name of a server limiter, in
    ``Server(rate_limiters=...)``, for the endpoint's tools that name none of their own),
    ``session_revisions`` (the served 2025 revisions on which ``initialize`` opens a session that
    later requests name in ``Mcp-Session-Id``; empty, the default, serves 2025 statelessly) and
    ``listen`` (serve ``subscriptions/listen`` on 2026-07-28, so clients hear of catalog and
    resource changes; the server must then be given a subscription authorizer) and ``lifespan``
    (a callable returning an async context manager, such as an ``@asynccontextmanager``
    function: the server enters it when it starts and leaves it when it stops, and what it
    yields is every handler's ``ctx.state``).

    Every value is checked now; a refusal is a ``ConfigurationError`` naming the path, the
    operation and the revisions.  An endpoint without operations is valid and advertises no
    operation capability.  Compared by identity; ``repr`` is short.
    """

    __slots__ = (
        "_declared_scopes",
        "_views",
        "implementation",
        "instructions",
        "lifespan",
        "listen",
        "path",
        "prompts",
        "resource_list",
        "resource_list_cache",
        "resource_template_list_cache",
        "resources",
        "revisions",
        "session_revisions",
        "skill_access",
        "skills",
        "tool_rate_limiter",
        "tools",
    )

    path: str
    implementation: Implementation
    revisions: frozenset[Revision]
    instructions: str | None
    tools: tuple[ToolRegistration, ...]
    prompts: tuple[PromptRegistration, ...]
    resources: tuple[ResourceRegistration, ...]
    """Exact resources and templates together, in registration order."""
    resource_list: ResourceListRegistration | None
    resource_list_cache: CachePolicy
    resource_template_list_cache: CachePolicy
    tool_rate_limiter: str | None
    session_revisions: frozenset[Revision]
    listen: bool
    """Whether ``subscriptions/listen`` is served on 2026-07-28 (the server then needs a
    subscription authorizer)."""
    lifespan: Lifespan | None
    """Entered when the server starts; what it yields is every handler's ``ctx.state``."""
    skills: tuple[SkillRegistration, ...]
    """Skills (extension ``io.modelcontextprotocol/skills``), served on 2026-07-28 only."""
    skill_access: SkillAccessPolicy | None
    """Who may see which skill (``None``: everyone); asked on every list entry, ``skills/get``
    and file read."""
    _declared_scopes: tuple[str, ...]
    _views: Mapping[Revision, _View]

    def __init__(
        self,
        path: str,
        implementation: Implementation,
        revisions: Collection[Revision],
        *,
        instructions: str | None = None,
        tools: Sequence[ToolRegistration] = (),
        prompts: Sequence[PromptRegistration] = (),
        resources: Sequence[ResourceRegistration] = (),
        resource_list: ResourceListRegistration | None = None,
        resource_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        resource_template_list_cache: CachePolicy = CachePolicy.PRIVATE_NO_CACHE,
        tool_rate_limiter: str | None = None,
        session_revisions: Collection[Revision] = frozenset(),
        listen: bool = False,
        lifespan: Lifespan | None = None,
        skills: Sequence[SkillRegistration] = (),
        skill_access: SkillAccessPolicy | None = None,
    ) -> None:
        path = validate_endpoint_path(path)
        served = checks.revision_set(checks.Site(path), "revisions", revisions, empty=False)
        site = checks.Site(path, served)
        values: dict[str, object] = {"path": site.path, "revisions": site.revisions}
        if not isinstance(implementation, Implementation):
            raise site.fail("implementation must be an Implementation")
        values["implementation"] = implementation
        values["instructions"] = checks.text_option(site, "instructions", instructions, empty=True)
        # A name; the server resolves it among its rate_limiters when it is built.
        values["tool_rate_limiter"] = checks.text_option(
            site, "tool_rate_limiter", tool_rate_limiter, empty=False
        )
        for option, policy in (
            ("resource_list_cache", resource_list_cache),
            ("resource_template_list_cache", resource_template_list_cache),
        ):
            if not isinstance(policy, CachePolicy):
                raise site.fail(f"{option} must be a CachePolicy")
            values[option] = policy
        values["session_revisions"] = sessions = checks.revision_set(
            site, "session_revisions", session_revisions, empty=True
        )
        if not sessions <= {revision for revision in site.revisions if revision.has_handshake}:
            raise site.fail(
                f"session_revisions {checks.wires(sessions)} must be served 2025 revisions "
                "only; 2026-07-28 is always stateless"
            )
        if not isinstance(listen, bool):
            raise site.fail("listen must be a bool")
        if listen and all(revision.has_handshake for revision in site.revisions):
            raise site.fail(
                "listen serves subscriptions/listen, which only 2026-07-28 has: serve that "
                "revision too, or leave listen off (2025 sessions get change notifications on "
                "their GET stream)"
            )
        values["listen"] = listen
        if lifespan is not None and not callable(lifespan):
            raise site.fail(
                "lifespan must be callable with no arguments and return an async context "
                "manager (an @asynccontextmanager function)"
            )
        values["lifespan"] = lifespan
        values["tools"] = tools = checks.registrations(site, "tools", tools, ToolRegistration)
        values["prompts"] = prompts = checks.registrations(
            site, "prompts", prompts, PromptRegistration
        )
        values["resources"] = resources = checks.registrations(
            site, "resources", resources, ResourceRegistration
        )
        if resource_list is not None and not isinstance(resource_list, ResourceListRegistration):
            raise site.fail("resource_list must be a ResourceListRegistration or None")
        values["resource_list"] = resource_list
        listing = () if resource_list is None else (resource_list,)
        checks.check_subsets(site, (*tools, *prompts, *resources, *listing))
        checks.check_input_sessions(site, sessions, (*tools, *prompts, *resources))
        checks.check_object_outputs(site, tools)
        exact = [resource for resource in resources if resource.template is None]
        templates = [resource for resource in resources if resource.template is not None]
        checks.check_unique(site, "name", ((tool.name, tool) for tool in tools))
        checks.check_unique(site, "name", ((prompt.name, prompt) for prompt in prompts))
        checks.check_unique(site, "URI", ((checks.uri_of(r), r) for r in exact))
        checks.check_unique(site, "template", ((checks.template_of(r).text, r) for r in templates))
        checks.check_templates(site, templates)
        values["skills"] = skills = check_skills(site, skills, exact, templates)
        if skill_access is not None and not callable(skill_access):
            raise site.fail("skill_access must be callable with a SkillAccess, or None")
        values["skill_access"] = skill_access
        check_app_links(site, tools, exact)
        declared: list[frozenset[str]] = [tool.scopes for tool in tools]
        declared += (prompt.scopes for prompt in prompts)
        declared += (resource.scopes for resource in resources)
        values["_declared_scopes"] = tuple(sorted(set[str]().union(*declared)))
        values["_views"] = MappingProxyType(
            {
                revision: _view(
                    revision,
                    tools,
                    prompts,
                    resources,
                    resource_list,
                    revision in sessions,
                    listen and not revision.has_handshake,
                    () if revision.has_handshake else skills,
                )
                for revision in site.revisions
            }
        )
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Endpoint is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Endpoint is immutable")

    def __repr__(self) -> str:
        return f"<Endpoint {checks.show(self.path)} [{checks.wires(self.revisions)}]>"

    @property
    def declared_scopes(self) -> tuple[str, ...]:
        """Every OAuth scope a tool, prompt, resource or template here declares, sorted and
        without duplicates: what the server advertises as ``scopes_supported``."""
        return self._declared_scopes

    # -- new endpoints ----------------------------------------------------------

    def replace(self, **changes: Any) -> Endpoint:
        """A new endpoint with the given constructor values replaced and the rest kept, checked
        in full again (the Python form of Soklet's builder setters, which replace a list)."""
        values: dict[str, Any] = {
            name: getattr(self, name) for name in self.__slots__ if not name.startswith("_")
        }
        values.update(changes)
        return Endpoint(**values)

    def with_tools(self, *tools: ToolRegistration | Sequence[ToolRegistration]) -> Endpoint:
        """A new endpoint with ``tools`` appended: each argument one registration or a list or
        tuple of them."""
        return self.replace(tools=self.tools + _flatten(tools))

    def with_prompts(self, *prompts: PromptRegistration | Sequence[PromptRegistration]) -> Endpoint:
        """A new endpoint with ``prompts`` appended, like :meth:`with_tools`."""
        return self.replace(prompts=self.prompts + _flatten(prompts))

    def with_resources(
        self, *resources: ResourceRegistration | Sequence[ResourceRegistration]
    ) -> Endpoint:
        """A new endpoint with exact resources or templates appended, like :meth:`with_tools`."""
        return self.replace(resources=self.resources + _flatten(resources))

    # -- per-revision views ---------------------------------------------

    def tools_for(self, revision: Revision) -> tuple[ToolRegistration, ...]:
        """The tools selecting ``revision``, in registration order; none for an unserved one."""
        return self._views.get(revision, _EMPTY_VIEW).tools

    def prompts_for(self, revision: Revision) -> tuple[PromptRegistration, ...]:
        """The prompts selecting ``revision``, in registration order."""
        return self._views.get(revision, _EMPTY_VIEW).prompts

    def resources_for(self, revision: Revision) -> tuple[ResourceRegistration, ...]:
        """The exact resources selecting ``revision``, in registration order: the static
        ``resources/list`` catalog when there is no resource list handler (templates excluded)."""
        return self._views.get(revision, _EMPTY_VIEW).resources

    def templates_for(self, revision: Revision) -> tuple[ResourceRegistration, ...]:
        """The resource templates selecting ``revision``, in registration order."""
        return self._views.get(revision, _EMPTY_VIEW).templates

    def resource_list_for(self, revision: Revision) -> ResourceListRegistration | None:
        """The resource list handler if it selects ``revision``, else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).resource_list

    def capabilities(self, revision: Revision) -> JsonObject:
        """The server capabilities to advertise on ``revision``, derived from what selects it:
        ``tools``, ``prompts``, ``resources``, ``completions``, each ``{}``."""
        return self._views.get(revision, _EMPTY_VIEW).capabilities

    @property
    def tasks(self) -> bool:
        """Whether a tool may run as a task here (the server then needs a task store and
        answers ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` on 2026-07-28)."""
        return any(
            TASKS_EXTENSION in view.capabilities.get("extensions", ())  # type: ignore[operator]
            for view in self._views.values()
        )

    def skills_for(self, revision: Revision) -> tuple[SkillRegistration, ...]:
        """The skills served on ``revision``, in registration order (none on 2025)."""
        return self._views.get(revision, _EMPTY_VIEW).skills

    def find_skill(self, uri: str, revision: Revision) -> SkillRegistration | None:
        """The skill whose ``SKILL.md`` URI is exactly ``uri`` on ``revision``, else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).skill_index.get(uri)

    def find_skill_file(
        self, uri: str, revision: Revision
    ) -> tuple[SkillRegistration, SkillFile] | None:
        """The skill file at exactly ``uri`` on ``revision`` and its skill, else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).skill_files.get(uri)

    def find_skill_directory(
        self, uri: str, revision: Revision
    ) -> tuple[SkillRegistration, JsonArray] | None:
        """The skill directory at exactly ``uri`` on ``revision`` (its skill, and its direct
        children), else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).skill_directories.get(uri)

    def find_tool(self, name: str, revision: Revision) -> ToolRegistration | None:
        """The tool called exactly ``name`` if it selects ``revision``, else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).tool_index.get(name)

    def find_prompt(self, name: str, revision: Revision) -> PromptRegistration | None:
        """The prompt called exactly ``name`` if it selects ``revision``, else ``None``."""
        return self._views.get(revision, _EMPTY_VIEW).prompt_index.get(name)

    def find_resource(
        self, uri: str, revision: Revision, *, limits: Limits = DEFAULT_LIMITS
    ) -> ResourceMatch | None:
        """Route a ``resources/read``: the exact resource whose URI is exactly ``uri``, else the
        one template matching it, with its decoded variables; ``None`` if neither.

        Templates never overlap, so at most one matches and the order in which they are
        tried cannot change the answer.  A URI over ``limits.max_templated_uri_chars`` matches
        no template, so the work a client can cause here stays bounded.
        """
        view = self._views.get(revision, _EMPTY_VIEW)
        resource = view.resource_index.get(uri)
        if resource is not None:
            return resource, _NO_VARIABLES
        if len(uri) > limits.max_templated_uri_chars:
            return None
        for registration in view.templates:
            variables = checks.template_of(registration).match(uri)
            if variables is not None:
                return registration, MappingProxyType(variables)
        return None


def _flatten(items: tuple[object, ...]) -> tuple[Any, ...]:
    """One level of lists and tuples flattened; anything else kept for the checks to refuse."""
    flat: list[object] = []
    for item in items:
        if isinstance(item, list | tuple):
            flat.extend(item)
        else:
            flat.append(item)
    return tuple(flat)
