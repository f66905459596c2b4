"""The strict YAML profile of ``SKILL.md`` front matter: what it reads, what it refuses (with a
fixed message that never quotes the document), and its limits at the limit and one past."""

from __future__ import annotations

from decimal import Decimal

import pytest

from mcpkit import ConfigurationError, Limits
from mcpkit.limits import DEFAULT_LIMITS
from mcpkit.model._skill_yaml import parse_front_matter


def parse(text: str, limits: Limits = DEFAULT_LIMITS) -> object:
    return parse_front_matter(text.split("\n"), limits)


def refused(text: str, fragment: str, limits: Limits = DEFAULT_LIMITS) -> str:
    with pytest.raises(ConfigurationError) as caught:
        parse(text, limits)
    message = str(caught.value)
    assert message.startswith("SKILL.md front matter: ")
    assert fragment in message
    return message


def test_block_mappings_sequences_and_scalars() -> None:
    text = """# a comment
name: pdf
empty:
nested:
  inner: value   # trailing comment
  deeper:
    leaf: 1
list:
- a
- "b"
-
- key: v
  other: w
- - x
  - y
inline_list:
  - 'it''s'
    """
    assert parse(text) == {
        "name": "pdf",
        "empty": None,
        "nested": {"inner": "value", "deeper": {"leaf": 1}},
        "list": ["a", "b", None, {"key": "v", "other": "w"}, ["x", "y"]],
        "inline_list": ["it's"],
    }


def test_plain_scalars_resolve_by_the_core_schema() -> None:
    text = """a: ~
b: null
c: True
d: FALSE
e: -12
f: 0o17
g: 0x1F
h: 2.5
i: 1e3
j: 9007199254740992
k: hello: world
""".replace("k: hello: world\n", "k: http://x.example/a#b\n")
    assert parse(text) == {
        "a": None,
        "b": None,
        "c": True,
        "d": False,
        "e": -12,
        "f": 15,
        "g": 31,
        "h": Decimal("2.5"),
        "i": Decimal("1000.0"),
        "j": 2**53,
        "k": "http://x.example/a#b",
    }


@pytest.mark.parametrize("value", ["9007199254740993", "1" * 21, ".inf", "-.Inf", ".NaN", "1e999"])
def test_numbers_json_cannot_carry_are_refused(value: str) -> None:
    refused(f"n: {value}", "cannot be written as JSON")


def test_quoted_scalars_and_escapes() -> None:
    text = r"""a: "tab\there \"q\" \\ \/ \0 \x41 \u00e9 \U0001F600 \n\r\ "
b: 'single # not a comment'
'quoted key': 1
"dq key": 2
c: "x"  # comment after
"""
    assert parse(text) == {
        "a": 'tab\there "q" \\ / \0 A \u00e9 \U0001f600 \n\r ',
        "b": "single # not a comment",
        "quoted key": 1,
        "dq key": 2,
        "c": "x",
    }


@pytest.mark.parametrize("escape", [r"\q", r"\x4", r"\u12G4", r"\UFFFFFFFF", r"\uD800", "\\"])
def test_unsupported_escapes_are_refused(escape: str) -> None:
    message = refused(f'a: "x{escape}"', "")
    assert "escape" in message or "quoted" in message


def test_block_scalars() -> None:
    text = """lit: |
  line one
    indented

  line three

folded: >
  one
  two

  three
    more
  four
strip: >-
  kept
keep: |+
  kept

clip_empty: |
next: x
"""
    assert parse(text) == {
        "lit": "line one\n  indented\n\nline three\n",
        "folded": "one two\nthree\n  more\nfour\n",
        "strip": "kept",
        "keep": "kept\n\n",
        "clip_empty": "",
        "next": "x",
    }


def test_folded_scalar_keeps_leading_blank_lines() -> None:
    assert parse("f: >\n\n  a\n") == {"f": "\na\n"}


def test_plain_scalars_continue_on_more_indented_lines() -> None:
    text = "d: first\n  second\n\n  third\nnext: 1\n- x"
    text = text.removesuffix("\n- x")
    assert parse(text) == {"d": "first second\nthird", "next": 1}


def test_a_more_indented_item_line_continues_a_plain_item() -> None:
    assert parse("a:\n  - 1\n    - 2") == {"a": ["1 - 2"]}


def test_continuation_stops_at_a_comment_line() -> None:
    assert parse("d: first\n  # note\n  x: 1\n".replace("  x: 1\n", "")) == {"d": "first"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: 1\na: 2", "repeats a key"),
        ("a: [1, 2]", "not supported"),
        ("a: {b: 1}", "not supported"),
        ("a: &anchor 1", "not supported"),
        ("a: *alias", "not supported"),
        ("a: !tag 1", "not supported"),
        ("? complex\n: key", "not supported"),
        ("[a]: 1", "not supported"),
        ("a: - b", "not supported"),
        ("a: b: c", "quote it"),
        ("a: b:", "quote it"),
        ('a: "open', "must end on its line"),
        ('a: "x" y', "must end on its line"),
        ("a: |2\n  x", "block scalar header"),
        ("a:\n\t- b", "tab"),
        ("a: 1\n  b: 2", "quote it"),
        ("a:\n    b: 1\n  c: 2", "indented inconsistently"),
        ("a:\n  - 1\n  b: 2", "indented inconsistently"),
        ("a: 1\n- b", "sequence item stands among mapping keys"),
        ("a:\n- '1'\n  - 2", "indented inconsistently"),
        (": value", "not supported"),
        ("a: 1\njust text", "not a 'key: value' entry"),
        ("'k' x: 1", "not a 'key: value' entry"),
        ("- a\n- b", "must be a mapping"),
        ("", "must be a mapping"),
        ("# only a comment", "must be a mapping"),
        ("  a: 1\nb: 2", "indented inconsistently"),
        ("a: \x01", "control character"),
        ("a: b\rc", "control character"),
    ],
)
def test_refusals_have_fixed_messages(text: str, fragment: str) -> None:
    refused(text, fragment)


@pytest.mark.parametrize(
    "text", ["zq: [zq]", "zq: zq: zq", "zq: 1\nzq: 2", 'zq: "zq', "zq: *zq", "zq zq"]
)
def test_messages_never_quote_the_document(text: str) -> None:
    assert "zq" not in refused(text.replace("\\n", "\n"), "")


def test_whitespace_only_lines_with_tabs_are_blank() -> None:
    assert parse("a: 1\n \t \nb: 2") == {"a": 1, "b": 2}
    assert parse("a:\n \t \n  b: 1") == {"a": {"b": 1}}


def test_a_colon_not_followed_by_a_space_belongs_to_the_key() -> None:
    assert parse("a:b: 1\nurl:x: y") == {"a:b": 1, "url:x": "y"}


def test_depth_at_the_limit_and_past() -> None:
    limits = DEFAULT_LIMITS.replace(max_skill_yaml_depth=3)
    assert parse("a:\n  b:\n    c: 1", limits) == {"a": {"b": {"c": 1}}}
    refused("a:\n  b:\n    c:\n      d: 1", "max_skill_yaml_depth", limits)


def test_default_depth_is_128() -> None:
    lines = [" " * level + f"k{level}:" for level in range(127)] + [" " * 127 + "leaf: 1"]
    assert parse_front_matter(lines, DEFAULT_LIMITS)
    deeper = [*lines[:-1], " " * 127 + "k:", " " * 128 + "leaf: 1"]
    with pytest.raises(ConfigurationError, match="max_skill_yaml_depth"):
        parse_front_matter(deeper, DEFAULT_LIMITS)


def test_nodes_at_the_limit_and_past() -> None:
    limits = DEFAULT_LIMITS.replace(max_skill_yaml_nodes=5)
    # the mapping, two keys and two values
    assert parse("a: 1\nb: 2", limits) == {"a": 1, "b": 2}
    refused("a: 1\nb: 2\nc: 3", "max_skill_yaml_nodes", limits)


def test_scalar_units_at_the_limit_and_past() -> None:
    limits = DEFAULT_LIMITS.replace(max_skill_yaml_scalar_units=4)
    assert parse("a: abc\U0001f600".replace("abc", "ab"), limits) == {"a": "ab\U0001f600"}
    refused("a: abc\U0001f600", "max_skill_yaml_scalar_units", limits)


def test_total_units_at_the_limit_and_past() -> None:
    limits = DEFAULT_LIMITS.replace(max_skill_yaml_total_units=6)
    assert parse("a: bc\nd: ef", limits) == {"a": "bc", "d": "ef"}
    refused("a: bc\nd: efg", "max_skill_yaml_total_units", limits)


def test_work_units_at_the_limit_and_past() -> None:
    # "a: 1" (4 characters, one line) costs 31: the character check 5, three peeks (the first
    # line, the root block, its mapping) 15, splitting the entry 5, the mapping node 1, the
    # key 1 + 1, the value's text 1, the value node 1 + 1
    assert parse("a: 1", Limits(max_skill_yaml_work_units=31)) == {"a": 1}
    message = refused("a: 1", "max_skill_yaml_work_units", Limits(max_skill_yaml_work_units=30))
    assert message == (
        "SKILL.md front matter: parsing takes more work than Limits.max_skill_yaml_work_units; "
        "shorten it"
    )


def test_default_work_units_are_50_million() -> None:
    assert DEFAULT_LIMITS.max_skill_yaml_work_units == 50_000_000


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "x" * 10_000,
        "a: |\n" + "  x\n" * 5_000,
        "a: >\n" + "\n" * 5_000 + "  x",
        "a: x\n" + "  y\n" * 5_000,
        "a: 'x" + "''" * 5_000 + "'",
        "a:\n" + "- x\n" * 5_000,
        "a:\n" + "- - - x\n" * 2_000,
        "".join(f"k{index}: {index}\n" for index in range(2_000)),
    ],
)
def test_the_charge_is_at_least_the_document_size(text: str) -> None:
    # every character is looked at, so a parse that charged less would undercount its work;
    # and a few passes each is all it costs, so ordinary documents stay far inside the default
    assert parse(text, Limits(max_skill_yaml_work_units=16 * len(text)))
    refused(text, "max_skill_yaml_work_units", Limits(max_skill_yaml_work_units=len(text)))


def test_a_line_peeked_once_per_level_is_charged_each_time() -> None:
    # each of the 100 enclosing mappings peeks the last line again as it ends, so the parse
    # costs at least 100 times that line, not its length once
    depth, width = 100, 1_000
    nested = [" " * level + f"k{level}:" for level in range(depth)] + [" " * depth + "leaf: 1"]
    lines = [*nested, "z" * width + ": 1"]
    size = sum(len(line) + 1 for line in lines)
    assert size * 3 < depth * width
    with pytest.raises(ConfigurationError, match="max_skill_yaml_work_units"):
        parse_front_matter(lines, Limits(max_skill_yaml_work_units=depth * width))
    assert parse_front_matter(lines, Limits(max_skill_yaml_work_units=2 * depth * width))
