"""Skill bundles and registrations: every rule checked when the bundle is built, hostile bundles
refused with a fixed message, the manifest and file representations computed once, and the
endpoint's checks (distinct file URIs, no shadowing, 2026-07-28 only, capabilities)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import mcpkit
from mcpkit import ConfigurationError, Limits, SkillBundle, SkillRegistration
from mcpkit.limits import DEFAULT_LIMITS
from mcpkit.model import (
    SKILLS_EXTENSION,
    TASKS_EXTENSION,
    Endpoint,
    EndpointRegistry,
    Implementation,
    Revision,
    TaskSupport,
)

JUNE, NOVEMBER, MODERN = Revision.V2025_06_18, Revision.V2025_11_25, Revision.V2026_07_28
ROOT = b"---\nname: pdf\ndescription: Work with PDF files\n---\nBody.\r\n"


def bundle(extra: dict[str, bytes] | None = None, root: bytes = ROOT, **limits: int) -> SkillBundle:
    files = {"SKILL.md": root, **(extra or {})}
    return SkillBundle.from_files(files, limits=DEFAULT_LIMITS.replace(**limits))


def refused(files: dict[str, object], fragment: str, **limits: int) -> str:
    with pytest.raises(ConfigurationError) as caught:
        SkillBundle.from_files(files, limits=DEFAULT_LIMITS.replace(**limits))  # type: ignore[arg-type]
    assert fragment in str(caught.value)
    return str(caught.value)


def front(text: str) -> bytes:
    return f"---\n{text}\n---\n".encode()


def test_a_bundle_keeps_bytes_and_computes_digests_once() -> None:
    png = b"\x89PNG\r\n\x1a\nrest"
    built = bundle({"b/notes.txt": b"\xef\xbb\xbfhi\r\n", "a.png": png, "data.bin": b"\x00"})
    assert [item.path for item in built.files] == ["SKILL.md", "a.png", "b/notes.txt", "data.bin"]
    root, image, notes, data = built.files
    assert root.data == ROOT and root.text == ROOT.decode() and root.mime_type == "text/markdown"
    assert root.digest == "sha256:" + hashlib.sha256(ROOT).hexdigest() and root.size == len(ROOT)
    assert (image.mime_type, image.text) == ("image/png", None)
    assert (notes.mime_type, notes.text) == ("text/plain", "\ufeffhi\r\n")
    assert (data.mime_type, data.text) == ("application/octet-stream", None)
    assert built.name == "pdf" and built.description == "Work with PDF files"
    assert built.frontmatter == {"name": "pdf", "description": "Work with PDF files"}
    assert repr(built) == "<SkillBundle 'pdf', 4 files>"


def test_a_bundle_is_immutable_and_built_by_its_factories() -> None:
    built = bundle()
    with pytest.raises(AttributeError):
        built.files = ()
    with pytest.raises(TypeError):
        SkillBundle()


def test_suffixes_are_matched_without_case() -> None:
    built = bundle({"IMG.JPEG": b"x", "noext": b"y", "doc.PDF": b"z"})
    assert [item.mime_type for item in built.files[1:]] == [
        "image/jpeg",
        "application/pdf",
        "application/octet-stream",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "../escape.md",
        "a/../../b.md",
        "/abs.md",
        "a//b.md",
        "./a.md",
        "a/.",
        "a\\b.md",
        "a\x00b.md",
        "a\x85.md",
        "e\u0301.md",
        "\ud800.md",
        "",
    ],
)
def test_path_traversal_and_bad_paths_are_refused(path: str) -> None:
    message = refused({"SKILL.md": ROOT, path: b"x"}, "relative, '/'-separated")
    assert "escape" not in message


def test_non_str_paths_and_non_bytes_data_are_refused() -> None:
    refused({"SKILL.md": ROOT, 1: b"x"}, "relative")  # type: ignore[dict-item]
    refused({"SKILL.md": "text"}, "mapping of paths (str) to bytes")
    refused([("SKILL.md", ROOT)], "mapping of paths")  # type: ignore[arg-type]


def test_a_file_that_is_another_files_directory_is_refused() -> None:
    refused({"SKILL.md": ROOT, "ref": b"x", "ref/a.md": b"y"}, "also the directory")
    refused({"SKILL.md": ROOT, "a/b": b"x", "a/b/c/d.md": b"y"}, "also the directory")
    # a shared name prefix is not a directory prefix
    assert bundle({"ref": b"x", "reference/a.md": b"y"})


def test_513_files_are_refused_and_512_are_not() -> None:
    files = {f"f{index}.txt": b"" for index in range(511)}
    assert len(bundle(files).files) == 512
    files["one-more.txt"] = b""
    refused({"SKILL.md": ROOT, **files}, "more files than Limits.max_skill_files")


def test_bytes_at_the_limit_and_past() -> None:
    limit = len(ROOT) + 10
    assert bundle({"a.txt": b"x" * 10}, max_skill_bytes=limit)
    refused({"SKILL.md": ROOT, "a.txt": b"x" * 11}, "max_skill_bytes", max_skill_bytes=limit)


def test_path_bytes_at_the_limit_and_past() -> None:
    assert bundle({"ab/cdefg": b""}, max_skill_path_bytes=8)
    refused({"SKILL.md": ROOT, "ab/cdefgh": b""}, "max_skill_path_bytes", max_skill_path_bytes=8)


def test_root_document_at_the_limit_and_past() -> None:
    assert bundle(max_skill_document_bytes=len(ROOT))
    refused({"SKILL.md": ROOT}, "max_skill_document_bytes", max_skill_document_bytes=len(ROOT) - 1)


def test_the_root_document_is_required() -> None:
    refused({"docs/SKILL.md": ROOT}, "must have a SKILL.md file at its root")


def test_invalid_utf8_in_a_text_suffix_is_refused() -> None:
    message = refused({"SKILL.md": ROOT, "notes.md": b"ok \xff\xfe"}, "not valid UTF-8")
    assert "notes" not in message
    refused({"SKILL.md": b"---\xff\n"}, "not valid UTF-8")
    assert bundle({"blob.bin": b"\xff"})


def test_oversized_yaml_is_refused() -> None:
    deep = "\n".join(" " * level + f"k{level}:" for level in range(130))
    refused({"SKILL.md": front(f"name: pdf\ndescription: d\n{deep} 1")}, "max_skill_yaml_depth")
    many = "\n".join(f"k{index}: v" for index in range(10))
    refused(
        {"SKILL.md": front(f"name: pdf\ndescription: d\n{many}")},
        "max_skill_yaml_nodes",
        max_skill_yaml_nodes=10,
    )
    refused(
        {"SKILL.md": front("name: pdf\ndescription: d")},
        "max_skill_yaml_work_units",
        max_skill_yaml_work_units=20,
    )


def test_duplicate_keys_are_refused() -> None:
    refused({"SKILL.md": front("name: pdf\ndescription: d\nname: other")}, "repeats a key")


def test_front_matter_delimiters() -> None:
    assert bundle(root=b"\xef\xbb\xbf---\r\nname: pdf\r\ndescription: d\r\n--- \r\nbody")
    refused({"SKILL.md": b"name: pdf\n"}, "must begin with a '---' line")
    refused({"SKILL.md": b"---\nname: pdf\ndescription: d\n"}, "no closing '---' line")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("description: d", "Skills field 'name'"),
        ("name: PDF\ndescription: d", "Skills field 'name'"),
        ("name: -pdf\ndescription: d", "Skills field 'name'"),
        ("name: a--b\ndescription: d", "Skills field 'name'"),
        (f"name: {'a' * 65}\ndescription: d", "Skills field 'name'"),
        ("name: 12\ndescription: d", "Skills field 'name'"),
        ("name: pdf", "Skills field 'description' is required"),
        ("name: pdf\ndescription: ''", "Skills field 'description' is required"),
        ("name: pdf\ndescription: 5", "Skills field 'description' is required"),
        (f"name: pdf\ndescription: {'d' * 1025}", "exceeds 1024 code points"),
        (f"name: pdf\ndescription: d\ncompatibility: {'c' * 501}", "'compatibility'"),
        ("name: pdf\ndescription: d\ncompatibility: 3", "'compatibility'"),
        ("name: pdf\ndescription: d\nlicense: 3", "'license' and 'allowed-tools'"),
        ("name: pdf\ndescription: d\nallowed-tools:\n- a", "'license' and 'allowed-tools'"),
        ("name: pdf\ndescription: d\nmetadata: x", "'metadata'"),
        ("name: pdf\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: 1", "'metadata'"),
    ],
)
def test_field_rules_have_input_free_messages(text: str, fragment: str) -> None:
    message = refused({"SKILL.md": front(text)}, fragment)
    assert "aaaa" not in message and "dddd" not in message


def test_field_rules_at_their_limits() -> None:
    text = (
        f"name: {'a' * 64}\ndescription: {'d' * 1024}\ncompatibility: {'c' * 500}\n"
        "license: MIT\nallowed-tools: Read\nmetadata:\n  author: me"
    )
    assert bundle(root=front(text)).name == "a" * 64


def test_from_directory(tmp_path: Path) -> None:
    (tmp_path / "refs").mkdir()
    (tmp_path / "SKILL.md").write_bytes(ROOT)
    (tmp_path / "refs" / "a.md").write_bytes(b"a")
    built = SkillBundle.from_directory(tmp_path)
    assert [item.path for item in built.files] == ["SKILL.md", "refs/a.md"]
    limits = DEFAULT_LIMITS.replace(max_skill_files=1)
    with pytest.raises(ConfigurationError, match="max_skill_files"):
        SkillBundle.from_directory(tmp_path, limits=limits)
    limits = DEFAULT_LIMITS.replace(max_skill_bytes=len(ROOT))
    with pytest.raises(ConfigurationError, match="max_skill_bytes"):
        SkillBundle.from_directory(tmp_path, limits=limits)


def test_from_directory_refuses_links_special_files_and_missing_directories(
    tmp_path: Path,
) -> None:
    (tmp_path / "SKILL.md").write_bytes(ROOT)
    (tmp_path / "link.md").symlink_to(tmp_path / "SKILL.md")
    with pytest.raises(ConfigurationError, match="no symbolic links"):
        SkillBundle.from_directory(tmp_path)
    with pytest.raises(ConfigurationError, match="must exist"):
        SkillBundle.from_directory(tmp_path / "missing")
    (tmp_path / "link.md").unlink()
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ConfigurationError, match="special files"):
        SkillBundle.from_directory(tmp_path)
    (tmp_path / "pipe").unlink()
    (tmp_path.parent / "alias").symlink_to(tmp_path)
    with pytest.raises(ConfigurationError, match="must exist"):
        SkillBundle.from_directory(tmp_path.parent / "alias")


def test_registration_uris_manifest_and_resource_entry() -> None:
    built = bundle({"ref erences/a b.md": b"x", "r%.md": b"y"})
    skill = SkillRegistration(built)
    assert skill.uri == "skill://pdf/SKILL.md"
    assert list(skill.files) == [
        "skill://pdf/SKILL.md",
        "skill://pdf/r%25.md",
        "skill://pdf/ref%20erences/a%20b.md",
    ]
    assert skill.manifest == {
        "uri": "skill://pdf/SKILL.md",
        "frontmatter": built.frontmatter,
        "resources": [
            {"uri": uri, "digest": item.digest, "size": item.size}
            for uri, item in skill.files.items()
        ],
    }
    assert skill.resource == {
        "uri": "skill://pdf/SKILL.md",
        "name": "pdf",
        "description": "Work with PDF files",
        "mimeType": "text/markdown",
    }
    nested = SkillRegistration(built, uri="skill://docs.example/tools/pdf/SKILL.md")
    assert "skill://docs.example/tools/pdf/r%25.md" in nested.files


@pytest.mark.parametrize(
    "uri",
    [
        "https://x/pdf/SKILL.md",
        "skill://pdf/README.md",
        "skill://other/SKILL.md",
        "skill://a b/pdf/SKILL.md",
        "skill:///pdf/SKILL.md",
        "skill://pdf",
        5,
    ],
)
def test_registration_uri_rules(uri: object) -> None:
    with pytest.raises(ConfigurationError, match=r"skill://<skill-path>/SKILL\.md"):
        SkillRegistration(bundle(), uri=uri)  # type: ignore[arg-type]


def test_registration_needs_a_bundle() -> None:
    with pytest.raises(ConfigurationError, match="bundle must be a SkillBundle"):
        SkillRegistration({"SKILL.md": ROOT})  # type: ignore[arg-type]


def endpoint(**options: object) -> Endpoint:
    revisions = options.pop("revisions", {JUNE, NOVEMBER, MODERN})
    return Endpoint(
        "/mcp",
        Implementation("t", "1"),
        revisions,  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )


def doc() -> mcpkit.ResourceOutput:
    return mcpkit.ResourceOutput(contents=(mcpkit.TextResourceContents(uri="x:y", text=""),))


def test_endpoint_views_capabilities_and_lookups() -> None:
    skill = SkillRegistration(bundle({"a.md": b"a"}))
    served = endpoint(skills=[skill])
    assert served.skills == (skill,) and served.skill_access is None
    assert served.capabilities(MODERN) == {
        "resources": {},
        "extensions": {SKILLS_EXTENSION: {"directoryRead": True}},
    }
    assert served.capabilities(NOVEMBER) == {} and served.skills_for(JUNE) == ()
    assert served.skills_for(MODERN) == (skill,)
    assert served.find_skill(skill.uri, MODERN) is skill
    assert served.find_skill(skill.uri, NOVEMBER) is None
    assert served.find_skill_file("skill://pdf/a.md", MODERN) == (skill, skill.bundle.files[1])
    assert served.find_skill_file("skill://pdf/a.md", NOVEMBER) is None
    assert not served.tasks
    assert served.replace(skill_access=lambda access: True).skills == (skill,)


SKILL: SkillRegistration = SkillRegistration(bundle({"a.md": b"a"}))


def test_skills_and_tasks_share_the_extensions_capability() -> None:
    @mcpkit.endpoint(path="/mcp", name="s", version="1", revisions={MODERN}, skills=[SKILL])
    class Both:
        @mcpkit.tool(name="work", task_support=TaskSupport.OPTIONAL)
        def work(self) -> str:
            return "done"

    served = EndpointRegistry.from_classes(Both).endpoints[0]
    extensions = served.capabilities(MODERN)["extensions"]
    assert isinstance(extensions, dict) and set(extensions) == {SKILLS_EXTENSION, TASKS_EXTENSION}
    assert served.tasks and served.skills == (SKILL,)


def test_endpoint_refusals() -> None:
    with pytest.raises(ConfigurationError, match="2026-07-28 only"):
        endpoint(revisions={NOVEMBER}, skills=[SKILL])
    with pytest.raises(ConfigurationError, match="same file or directory URI"):
        endpoint(skills=[SKILL, SkillRegistration(SKILL.bundle)])
    inner = SkillRegistration(bundle(), uri="skill://pdf/a/pdf/SKILL.md")
    nested = SkillRegistration(bundle({"a/pdf/x.md": b""}))
    with pytest.raises(ConfigurationError, match="same file or directory URI"):
        endpoint(skills=[nested, inner])
    beside = SkillRegistration(bundle(), uri="skill://pdf/b/pdf/SKILL.md")
    assert endpoint(skills=[nested, beside]).find_skill_directory("skill://pdf/a", MODERN)
    with pytest.raises(ConfigurationError, match="must be a SkillRegistration"):
        endpoint(skills=[SKILL.bundle])
    with pytest.raises(ConfigurationError, match="skill_access must be callable"):
        endpoint(skills=[SKILL], skill_access="all")


def test_resources_cannot_shadow_skill_files() -> None:
    class Exact:
        @mcpkit.resource("skill://pdf/a.md", name="a")
        def a(self) -> str:
            return "shadow"

    class Template:
        @mcpkit.resource("skill://pdf/{name}", name="t")
        def t(self, name: str) -> str:
            return "shadow"

    class Elsewhere:
        @mcpkit.resource("skill://other/{name}", name="t")
        def t(self, name: str) -> str:
            return "fine"

    for cls, fragment in ((Exact, "has the URI of a skill file"), (Template, "matches the URI")):
        with pytest.raises(ConfigurationError, match=fragment):
            mcpkit.endpoint(path="/mcp", name="s", version="1", skills=[SKILL])(cls)
    served = mcpkit.endpoint(path="/mcp", name="s", version="1", skills=[SKILL])(Elsewhere)
    assert EndpointRegistry.from_classes(served).endpoints[0].skills == (SKILL,)


def test_decorator_and_builder_authoring() -> None:
    @mcpkit.endpoint(path="/mcp", name="s", version="1", skills=[SKILL])
    class Skills:
        pass

    decorated = EndpointRegistry.from_classes(Skills).endpoints[0]
    assert decorated.skills == (SKILL,) and decorated.revisions == {MODERN}
    builder = mcpkit.EndpointBuilder("s", version="1", skills=[SKILL], skill_access=bool)
    assert builder.endpoint.skills == (SKILL,) and builder.endpoint.skill_access is bool


def test_limits_ranges() -> None:
    with pytest.raises(ConfigurationError, match="max_skill_files"):
        Limits(max_skill_files=513)
    with pytest.raises(ConfigurationError, match="max_skill_yaml_depth"):
        Limits(max_skill_yaml_depth=129)
