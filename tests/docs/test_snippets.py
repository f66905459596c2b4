"""Every Python snippet of the documentation runs, and the pages keep their promises.

The fenced ``python`` blocks of each page under ``docs/`` and of ``README.md`` run in order, in
one fresh module per page: a page is a story, so a block may use what an earlier block of the
same page defined.  Tutorial blocks that define a server also exercise it (a ``TestClient``
call and an ``assert``), so running the page checks what it claims.  An HTML comment on the
line before a fence (blank lines between are allowed) changes how its block is treated:

* ``<!-- snippet: continue -->`` -- the default, said explicitly: run in the page's module;
* ``<!-- snippet: standalone -->`` -- run in a fresh module of its own, leaving the page's
  module as it was;
* ``<!-- snippet: fragment -->`` -- part of a larger program (the design documents quote
  such parts): compiled, never run;
* ``<!-- snippet: file PATH -->`` -- the block is the whole of the repository file ``PATH``
  (an example the page shows), and runs like ``continue``.

Any other marker, a marker before a block that is not Python, or an unmarked block that
fails, fails the test.  Pages run with the repository as the working directory, as their
commands assume.  Shell blocks are not run, but every ``*.py`` file named in a shell block
of ``docs/`` must exist (the README's commands name ``hello.py``, the reader's own file).
Pages outside ``docs/design/`` (tutorials and reference) carry no requirement IDs, and
neither do the docstrings the reference pages render.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import traceback
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DESIGN = DOCS / "design"
DOC_PAGES = tuple(sorted(DOCS.rglob("*.md")))
PAGES = (*DOC_PAGES, ROOT / "README.md")

PYTHON = frozenset({"python", "py"})
SHELL = frozenset({"sh", "bash", "shell", "console"})
KINDS = frozenset({"continue", "standalone", "fragment", "file"})

_MARKER = re.compile(r"<!--\s*snippet:\s*(?P<kind>\S+)(?:\s+(?P<argument>\S+))?\s*-->")
_FENCE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)")
# Requirement IDs of the contract documents: two or three capitals (or a capital and a digit),
# a hyphen and a number ("LG-03", "SS-12", "CC-4", "P1-09").  Encodings and algorithms that look
# alike are not IDs.
_REQUIREMENT_ID = re.compile(r"\b(?!(?:UTF|SHA|AES)-)[A-Z][A-Z0-9]{1,2}-\d{1,3}\b")
_PY_FILE = re.compile(r"(?<![\w./-])(?P<path>[\w./-]+\.py)(?::\w+)?(?![\w./-])")
_AUTODOC = re.compile(r"^:::\s+(?P<identifier>[\w.]+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    """The 1-based line of the opening fence."""
    language: str
    code: str
    kind: str | None
    """The marker's kind, or ``None`` for an unmarked block."""
    argument: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> Iterator[Block]:
    """The page's fenced blocks, in order, each with the marker that precedes it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    marker: re.Match[str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE.fullmatch(line)
        if opening is None:
            if line.strip():
                marker = _MARKER.fullmatch(line.strip())
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = lines[index].strip()
            if closing.startswith(fence[0] * len(fence)) and not closing.strip(fence[0]):
                break
            body.append(lines[index].removeprefix(indent))
            index += 1
        info = opening["info"].split()
        yield Block(
            page=page,
            line=index - len(body),
            language=info[0].lower() if info else "",
            code="\n".join(body) + "\n",
            kind=None if marker is None else marker["kind"],
            argument=None if marker is None else marker["argument"],
        )
        marker = None
        index += 1


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _compiled(block: Block) -> types.CodeType:
    """The block compiled so that tracebacks name the page and its own line numbers."""
    padded = "\n" * block.line + block.code
    return compile(padded, str(block.page), "exec")


def _module(name: str) -> types.ModuleType:
    """A fresh module, registered while it runs (dataclasses and typing look modules up)."""
    module = types.ModuleType(name)
    module.__file__ = name
    sys.modules[name] = module
    return module


def _run(page: Path, name: str) -> None:
    """Run the page's Python blocks in order: in the module ``name``, or in one of their own
    (``standalone``); fragments are only compiled."""
    story = _module(name)
    names = [name]
    try:
        for number, block in enumerate(b for b in blocks(page) if b.language in PYTHON):
            code = _compiled(block)
            if block.kind == "fragment":
                continue
            target = story
            if block.kind == "standalone":
                target = _module(f"{name}_{number}")
                names.append(target.__name__)
            exec(code, target.__dict__)
    finally:
        for registered in names:
            sys.modules.pop(registered, None)


RUNNABLE = [page for page in PAGES if any(b.language in PYTHON for b in blocks(page))]


def test_the_documentation_has_pages_with_snippets() -> None:
    assert (DOCS / "index.md").is_file()
    assert len(RUNNABLE) >= 10, [_page_id(page) for page in RUNNABLE]


@pytest.mark.parametrize("page", RUNNABLE, ids=_page_id)
def test_every_snippet_of_the_page_runs_in_order(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the pages' commands and paths are relative to the repository
    _run(page, "mcpkit_docs_" + re.sub(r"\W", "_", _page_id(page)))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_markers_are_known_and_mark_python_blocks(page: Path) -> None:
    for block in blocks(page):
        if block.kind is None:
            continue
        assert block.kind in KINDS, f"{block.where}: unknown snippet marker {block.kind!r}"
        assert block.language in PYTHON, f"{block.where}: a snippet marker on a non-Python block"
        assert (block.kind == "file") == (block.argument is not None), (
            f"{block.where}: only 'file' takes an argument (the repository path)"
        )
        if block.kind == "file":
            assert block.argument is not None
            shown = ROOT / block.argument
            assert shown.is_file(), f"{block.where}: {block.argument} does not exist"
            assert block.code == shown.read_text(encoding="utf-8"), (
                f"{block.where}: the block differs from {block.argument}"
            )


@pytest.mark.parametrize("page", DOC_PAGES, ids=_page_id)
def test_shell_blocks_name_files_that_exist(page: Path) -> None:
    for block in blocks(page):
        if block.language not in SHELL:
            continue
        for found in _PY_FILE.finditer(block.code):
            path = found["path"]
            assert (ROOT / path).is_file(), f"{block.where}: {path} is not a file of the repository"


USER_PAGES = [
    page for page in PAGES if page.is_relative_to(DOCS) and not page.is_relative_to(DESIGN)
]


@pytest.mark.parametrize("page", USER_PAGES, ids=_page_id)
def test_user_facing_pages_carry_no_requirement_ids(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = sorted(set(_REQUIREMENT_ID.findall(text)))
    assert not found, f"{_page_id(page)}: requirement IDs belong in docs/design/: {found}"


def _documented(identifier: str) -> object:
    """The object a ``::: identifier`` line renders."""
    module_name, _, attribute = identifier, "", ""
    while True:
        try:
            value: object = importlib.import_module(module_name)
            break
        except ModuleNotFoundError:
            module_name, _, last = module_name.rpartition(".")
            attribute = f"{last}.{attribute}" if attribute else last
    for part in filter(None, attribute.split(".")):
        value = getattr(value, part)
    return value


def _docstrings(value: object) -> Iterator[tuple[str, str]]:
    """``(name, docstring)`` of ``value`` and of the public names it documents, one level of
    classes deep (methods and properties)."""
    seen: set[int] = set()

    def visit(name: str, item: object, depth: int) -> Iterator[tuple[str, str]]:
        if id(item) in seen or depth > 2:
            return
        seen.add(id(item))
        if inspect.ismodule(item) or inspect.isclass(item) or callable(item):
            yield name, inspect.getdoc(item) or ""
        elif isinstance(item, property):
            yield name, item.__doc__ or ""
        if inspect.ismodule(item):
            for member in getattr(item, "__all__", ()):
                yield from visit(f"{name}.{member}", getattr(item, member), depth + 1)
        elif inspect.isclass(item):
            for member, child in vars(item).items():
                if not member.startswith("_"):
                    yield from visit(f"{name}.{member}", child, depth + 1)

    yield from visit(getattr(value, "__name__", "?"), value, 0)


REFERENCE_PAGES = sorted((DOCS / "reference").glob("*.md"))


@pytest.mark.parametrize("page", REFERENCE_PAGES, ids=_page_id)
def test_reference_docstrings_carry_no_requirement_ids(page: Path) -> None:
    identifiers = _AUTODOC.findall(page.read_text(encoding="utf-8"))
    found = {
        f"{name}: {match}"
        for identifier in identifiers
        for name, text in _docstrings(_documented(identifier))
        for match in _REQUIREMENT_ID.findall(text)
    }
    assert not found, f"{_page_id(page)} renders requirement IDs: {sorted(found)}"


def test_a_failing_unmarked_block_fails_its_page_at_its_own_line(tmp_path: Path) -> None:
    page = tmp_path / "broken.md"
    page.write_text(
        "Text.\n\n```python\nvalue = 1\n```\n\n<!-- snippet: fragment -->\n\n```python\n"
        "undefined_name\n```\n\n```python\nassert value == 2\n```\n",
        encoding="utf-8",
    )
    assert [(block.kind, block.line) for block in blocks(page)] == [
        (None, 3),
        ("fragment", 9),
        (None, 13),
    ]
    with pytest.raises(AssertionError) as failed:
        _run(page, "mcpkit_docs_selftest")
    last = traceback.extract_tb(failed.tb)[-1]
    assert (last.filename, last.lineno) == (str(page), 14)
    assert "mcpkit_docs_selftest" not in sys.modules


def test_standalone_blocks_leave_the_story_alone(tmp_path: Path) -> None:
    page = tmp_path / "story.md"
    page.write_text(
        "```python\nvalue = 1\n```\n\n<!-- snippet: standalone -->\n```python\n"
        "assert 'value' not in globals()\nvalue = 2\n```\n\n"
        "<!-- snippet: continue -->\n```python\nassert value == 1\n```\n",
        encoding="utf-8",
    )
    _run(page, "mcpkit_docs_selftest")


def test_a_fragment_is_not_run_but_must_compile(tmp_path: Path) -> None:
    page = tmp_path / "fragment.md"
    page.write_text("<!-- snippet: fragment -->\n```python\ndef broken(:\n```\n")
    with pytest.raises(SyntaxError):
        _run(page, "mcpkit_docs_selftest")
