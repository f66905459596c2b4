"""RFC 6570 level 1 resource templates: parsing, matching and overlap (CT-04, CT-05, CT-11, CT-12).

The overlap decision is cross-checked against two independent oracles: a product automaton
over whole templates (no segment split, no prefix/suffix shortcut) and a brute-force search
over every short URI built from the templates' characters.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcpkit.errors import ConfigurationError
from mcpkit.model._templates import (
    MAX_TEMPLATE_CHARS,
    MAX_TEMPLATE_VARIABLES,
    MAX_TEMPLATES_PER_ENDPOINT,
    MAX_VARIABLE_NAME_CHARS,
    UriTemplate,
    check_no_overlaps,
    is_template,
    overlaps,
)

# --- parsing ---------------------------------------------------------------------------------


def test_parse_keeps_text_literals_and_variables() -> None:
    template = UriTemplate.parse("inventory://items/{sku}/v{version.major}")
    assert template.text == "inventory://items/{sku}/v{version.major}"
    assert template.literals == ("inventory://items/", "/v", "")
    assert template.variables == ("sku", "version.major")
    assert repr(template) == "UriTemplate(text='inventory://items/{sku}/v{version.major}')"


def test_templates_are_frozen_and_equal_by_text() -> None:
    template = UriTemplate.parse("r://{a}")
    assert template == UriTemplate("r://{a}")
    assert hash(template) == hash(UriTemplate("r://{a}"))
    assert template != UriTemplate("r://{b}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        template.text = "r://{b}"  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "{x}",
        "r://{x}",
        "file:///{path}",
        "db://t?id={id}&v={v}",
        "r://{a}-{b}",
        "r://{a}/{b}",
        "r://x/{A_9}",
        "r://{a.b.c}",
        "r://{%41b}",
        "r://caf%C3%A9/{x}",
        "r://a%2fb/{x}",
        "urn:!#$&()*+,-.;=?@[]_~:{x}",
    ],
)
def test_valid_level_1_templates_parse(text: str) -> None:
    assert UriTemplate.parse(text).text == text


REFUSED: list[tuple[Any, str]] = [
    (None, "must be a str"),
    (b"r://{x}", "must be a str"),
    ("r://x", "no variables"),
    ("", "no variables"),
    ("r://{}", "empty expression"),
    *[(f"r://{{{op}x}}", f"operator {op!r}") for op in "+#./;?&=,!@|"],
    ("r://{x:3}", "prefix modifier"),
    ("r://{x*}", "explode modifier"),
    ("r://{x,y}", "several variables"),
    ("r://{{x}}", "nested braces"),
    ("r://{a{b}}", "nested braces"),
    ("r://{x", "without a matching '}'"),
    ("r://x}", "without a matching '{'"),
    ("r://{x}}", "without a matching '{'"),
    ("r://}{x}", "without a matching '{'"),
    ("r://{x}/{x}", "repeats the variable 'x'"),
    ("r://{x}{y}", "no literal between them"),
    ("r://{a-b}", "invalid variable name"),
    ("r://{.a}", "operator '.'"),
    ("r://{a.}", "invalid variable name"),
    ("r://{a..b}", "invalid variable name"),
    ("r://{a%zz}", "invalid variable name"),
    ("r://{ a}", "invalid variable name"),
    ("r://{é}", "invalid variable name"),
    ("r://a b/{x}", "whitespace"),
    ("r://a\tb/{x}", "whitespace"),
    ("r://\x00/{x}", "control"),
    ("r://\x7f/{x}", "control"),
    ("r://café/{x}", "percent-encode non-ASCII"),
    ("r://{x}/é", "percent-encode non-ASCII"),
    ("r://it's/{x}", 'contains "\'"'),
    ('r://"/{x}', "contains '\"'"),
    ("r://</{x}", "contains '<'"),
    ("r://\\/{x}", "contains '\\\\'"),
    ("r://^/{x}", "contains '^'"),
    ("r://`/{x}", "contains '`'"),
    ("r://|/{x}", "contains '|'"),
    ("r://%/{x}", "two hex digits"),
    ("r://%4/{x}", "two hex digits"),
    ("r://{x}%G0", "two hex digits"),
]


@pytest.mark.parametrize(("text", "rule"), REFUSED)
def test_parse_refusals_name_the_rule(text: Any, rule: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        UriTemplate.parse(text)
    assert rule in str(caught.value)


def test_parse_limits() -> None:
    longest = "r://{x}" + "a" * (MAX_TEMPLATE_CHARS - 7)
    assert UriTemplate.parse(longest).text == longest
    with pytest.raises(ConfigurationError, match="over 8192 characters"):
        UriTemplate.parse(longest + "a")
    many = "r://" + "-".join(f"{{v{index}}}" for index in range(MAX_TEMPLATE_VARIABLES))
    assert len(UriTemplate.parse(many).variables) == 32
    with pytest.raises(ConfigurationError, match="more than 32 variables"):
        UriTemplate.parse(many + "-{v32}")
    name = "n" * MAX_VARIABLE_NAME_CHARS
    assert UriTemplate.parse(f"r://{{{name}}}").variables == (name,)
    with pytest.raises(ConfigurationError, match="over 128 characters"):
        UriTemplate.parse(f"r://{{{name}n}}")


def test_is_template() -> None:
    assert is_template("r://{x}")
    assert is_template("r://x}")  # meant as a template, and refused by parse
    assert not is_template("r://items/1")
    assert not is_template("file:///a%7Bb%7D")


# --- matching --------------------------------------------------------------------------------

MATCHES: list[tuple[str, str, dict[str, str] | None]] = [
    ("inventory://items/{sku}", "inventory://items/A-1", {"sku": "A-1"}),
    ("inventory://items/{sku}", "inventory://items/", None),  # a value is never empty
    ("inventory://items/{sku}", "inventory://items/a/b", None),  # a raw "/" is never consumed
    ("inventory://items/{sku}", "inventory://items/a/", None),
    ("inventory://items/{sku}", "Inventory://items/a", None),  # literals match verbatim
    ("inventory://items/{sku}", "inventory://items", None),
    ("file:///{path}", "file:///src%2Fmain.rs", {"path": "src/main.rs"}),
    ("file:///{path}", "file:///src%2fmain.rs", {"path": "src/main.rs"}),
    ("file:///{path}", "file:///src/main.rs", None),
    ("file:///{path}", "file:///%252F", {"path": "%2F"}),  # decoded exactly once
    ("r://{x}", "r://%E2%82%AC", {"x": "€"}),
    ("r://{x}", "r://%e2%82%ac", {"x": "€"}),
    ("r://{x}", "r://%F0%9F%98%80!", {"x": "😀!"}),
    ("r://{x}", "r://a+b", {"x": "a+b"}),  # "+" is not a space
    ("r://{x}", "r://%00", {"x": "\x00"}),  # the handler validates values (CT-12)
    ("r://{x}", "r://%", None),
    ("r://{x}", "r://%4", None),
    ("r://{x}", "r://%zz", None),
    ("r://{x}", "r://%FF", None),  # not UTF-8
    ("r://{x}", "r://%C3", None),  # truncated UTF-8
    ("r://{x}", "r://%C0%AF", None),  # overlong UTF-8
    ("r://{x}", "r://%ED%A0%80", None),  # an encoded surrogate
    ("r://{x}", "r://é", None),  # raw non-ASCII is not a URI character
    ("r://{x}", "r://a b", None),
    ("r://{x}", 'r://a"b', None),
    ("r://{x}", "r://{y}", None),
    ("r://{x}", "r://\x00", None),
    ("r://a%2Fb/{x}", "r://a%2Fb/1", {"x": "1"}),
    ("r://a%2Fb/{x}", "r://a%2fb/1", None),
    ("r://a%2Fb/{x}", "r://a/b/1", None),
    ("r://{a}-{b}", "r://x-y-z", {"a": "x-y", "b": "z"}),  # earlier variables are greedy
    ("r://{a}-{b}", "r://---", {"a": "-", "b": "-"}),
    ("r://{a}-{b}", "r://--", None),
    ("r://{name}.{ext}", "r://archive.tar.gz", {"name": "archive.tar", "ext": "gz"}),
    ("r://{a}/{b}", "r://1/2", {"a": "1", "b": "2"}),
    ("r://{a}/{b}", "r://1/2/3", None),
    ("r://{a}/{b}", "r://1", None),
    ("r://{a}x", "r://1x2", None),  # the match is exact: the whole URI
    ("r://x{a}", "r://x", None),
    ("r://x{a}y", "r://xy", None),
    ("r://x{a}y", "r://xyy", {"a": "y"}),
    ("r://{a}ab{b}", "r://aab", None),
    ("r://{a}ab{b}", "r://aabb", {"a": "a", "b": "b"}),
    ("db://t?id={id}", "db://t?id=5&x=1", {"id": "5&x=1"}),
    ("{scheme}://h/{p}", "https://h/x", {"scheme": "https", "p": "x"}),
    ("r://{a}.{b}.{c}", "r://1.2.3.4", {"a": "1.2", "b": "3", "c": "4"}),
]


@pytest.mark.parametrize(("text", "uri", "expected"), MATCHES)
def test_match_CT_12(text: str, uri: str, expected: dict[str, str] | None) -> None:
    assert UriTemplate.parse(text).match(uri) == expected


def test_variable_values_come_in_template_order() -> None:
    values = UriTemplate.parse("r://{z}/{a}").match("r://1/2")
    assert values is not None
    assert list(values) == ["z", "a"]


def _timed(template: str, uri: str) -> tuple[dict[str, str] | None, float]:
    parsed = UriTemplate.parse(template)
    started = time.perf_counter()
    result = parsed.match(uri)
    return result, time.perf_counter() - started


HOSTILE = 100_000


@pytest.mark.parametrize(
    ("template", "uri", "matches"),
    [
        # Catastrophic for a backtracking regex: nested ambiguous splits that finally fail.
        ("r://{a}a{b}a{c}a{d}a{e}b", "r://" + "a" * HOSTILE, False),
        ("r://{a}a{b}a{c}a{d}a{e}b", "r://" + "a" * HOSTILE + "b", True),
        ("r://" + "a".join(f"{{w{i}}}" for i in range(16)), "r://" + "a" * HOSTILE, True),
        # A long piece that almost occurs everywhere (worst case for naive substring search).
        ("r://{a}" + "a" * 2_000 + "b{c}", "r://" + "a" * HOSTILE, False),
        ("r://{a}b" + "a" * 2_000 + "{c}", "r://" + "a" * HOSTILE, False),
        ("r://{a}" + "ab" * 1_000 + "{c}", "r://" + "ab" * (HOSTILE // 2) + "a", True),
        ("r://{a}/{b}", "r://" + "/" * HOSTILE, False),
        ("r://{a}", "r://" + "%" * HOSTILE, False),
        ("r://{a}", "r://" + "%E2%82%AC" * (HOSTILE // 9), True),
    ],
)
def test_matching_is_linear_on_a_100_kb_hostile_uri(template: str, uri: str, matches: bool) -> None:
    """A quadratic matcher needs ~10^10 steps here; the bound is 100x the measured time."""
    result, elapsed = _timed(template, uri)
    assert (result is not None) is matches
    assert elapsed < 0.5


def test_matching_time_grows_linearly() -> None:
    """Ten times the input may not cost a hundred times the time (generous: 50x)."""
    template = "r://{a}a{b}a{c}" + "a" * 500 + "b{d}b"
    _, small = _timed(template, "r://" + "a" * 100_000 + "b")
    _, large = _timed(template, "r://" + "a" * 1_000_000 + "b")
    assert large < max(small, 0.001) * 50


# --- overlap ---------------------------------------------------------------------------------

PAIRS: list[tuple[str, str, bool]] = [
    ("r://{x}", "r://{y}", True),  # the same shape with different names
    ("r://{x}", "r://{x}", True),
    ("r://a/{x}", "r://a/{y}/b", False),  # different numbers of segments
    ("file:///{path}", "file:///{dir}/{name}", False),
    ("r://{x}ab", "r://{y}/ab", False),
    ("r://{x}.json", "r://{y}.txt", False),  # incompatible suffixes
    ("r://{x}a", "r://{y}b", False),
    ("r://{x}.tar.gz", "r://{y}.gz", True),
    ("r://{x}a", "r://{y}ba", True),
    ("r://x{a}", "r://{b}y", True),  # "r://x?y" matches both
    ("r://a{x}", "r://b{y}", False),  # incompatible prefixes
    ("r://ab{x}", "r://ac{y}", False),
    ("r://a{x}", "r://ab{y}", True),
    ("r://a-{x}", "r://a{y}", True),
    ("r://items/{id}", "r://items/{id}.json", True),
    ("r://items/{id}", "r://users/{id}", False),
    ("r://{x}", "s://{x}", False),
    ("r://{x}", "r:/{x}", False),
    ("r://{a}/x", "r://{b}/y", False),  # differing only after a "/"
    ("r://{x}/a/b", "r://{y}/a/c", False),
    ("r://{a}/x", "r://y/{b}", True),  # "r://y/x"
    ("r://items/{id}/meta", "r://{kind}/list/meta", True),
    ("r://a/{x}b", "r://{y}/cd", False),
    ("r://a/{x}b", "r://{y}/cb", True),
    ("r://ab/{x}", "r://{y}b{z}/{w}", False),  # "ab" leaves no character for y
    ("r://abc/{x}", "r://{y}b{z}/{w}", True),
    ("r://ab/{x}", "r://{y}a{z}/{w}", False),  # "a" would leave y empty
    ("r://-x/{x}", "r://{a}-{b}/{c}", False),
    ("r://{a}-{b}", "r://{c}", True),
    ("r://{a}-{b}", "r://{c}_{d}", True),  # "r://1-2_3"
    ("r://p{a}q{b}s", "r://pq{c}s", True),
    ("r://x{a}y", "r://{b}xy{c}", True),
    ("r://{x}%2F", "r://{y}", True),
    ("db://t?id={id}", "db://t?id={id}&x={x}", True),  # "id" may hold "&x=..."
    ("db://t?id={id}", "db://t?key={key}", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), PAIRS)
def test_overlap_pairs_CT_05(a: str, b: str, expected: bool) -> None:
    ta, tb = UriTemplate.parse(a), UriTemplate.parse(b)
    assert overlaps(ta, tb) is expected
    assert overlaps(tb, ta) is expected
    assert _product_intersects(ta, tb) is expected


@pytest.mark.parametrize(("a", "b", "expected"), PAIRS)
def test_check_no_overlaps_names_both_templates_CT_05(a: str, b: str, expected: bool) -> None:
    if a == b:
        return
    templates = [UriTemplate.parse(a), UriTemplate.parse(b)]
    if expected:
        with pytest.raises(ConfigurationError, match="overlap") as caught:
            check_no_overlaps(templates)
        assert repr(a) in str(caught.value) and repr(b) in str(caught.value)
    else:
        check_no_overlaps(templates)


def test_duplicate_template_strings_are_refused_CT_04() -> None:
    with pytest.raises(ConfigurationError, match="registered twice on one endpoint"):
        check_no_overlaps([UriTemplate.parse("r://{x}"), UriTemplate.parse("r://{x}")])


def test_the_first_overlapping_pair_in_order_is_reported() -> None:
    texts = ("r://a/{x}", "r://{y}.json", "r://{z}", "r://{v}x")
    with pytest.raises(ConfigurationError, match=r"'r://\{y\}.json' and 'r://\{z\}' overlap"):
        check_no_overlaps(UriTemplate.parse(text) for text in texts)


def test_an_exact_uri_a_template_matches_is_not_a_conflict_CT_11() -> None:
    """Exact resources are routed first, so only templates are checked for overlap."""
    assert not is_template("r://items/new")
    template = UriTemplate.parse("r://items/{id}")
    assert template.match("r://items/new") == {"id": "new"}
    check_no_overlaps([template])
    with pytest.raises(ConfigurationError, match="exact resource URI"):
        UriTemplate.parse("r://items/new")


def test_templates_per_endpoint_are_bounded() -> None:
    templates = [UriTemplate.parse(f"r://t{index}/{{x}}") for index in range(256)]
    check_no_overlaps(templates)
    assert len(templates) == MAX_TEMPLATES_PER_ENDPOINT
    with pytest.raises(ConfigurationError, match="at most 256 resource templates"):
        check_no_overlaps([*templates, UriTemplate.parse("r://t256/{x}")])


def test_the_largest_endpoint_checks_quickly() -> None:
    """256 templates of ~8 KiB that agree up to their last characters: 32,640 linear checks."""
    shared = "r://" + "a" * 8_000
    templates = [
        UriTemplate.parse(f"{shared}/{{x}}{index:03d}b" + "c" * 150) for index in range(256)
    ]
    assert all(len(t.text) <= MAX_TEMPLATE_CHARS for t in templates)
    started = time.perf_counter()
    check_no_overlaps(templates)
    assert time.perf_counter() - started < 5


def test_check_reads_a_generator_only_up_to_the_bound() -> None:
    def endless() -> Any:
        for index in itertools.count():
            yield UriTemplate.parse(f"r://t{index}/{{x}}")

    with pytest.raises(ConfigurationError, match="at most 256"):
        check_no_overlaps(endless())


# --- oracles ---------------------------------------------------------------------------------

ANY, STAR = -1, -2


def _nfa(template: UriTemplate) -> list[int]:
    tokens: list[int] = []
    for index, literal in enumerate(template.literals):
        if index:
            tokens += (ANY, STAR)
        tokens += map(ord, literal)
    return tokens


def _product_intersects(a: UriTemplate, b: UriTemplate) -> bool:
    """Reachability in the product of the two whole-template automata (worklist, no shortcut).

    Visits each of the (len(a) + 1) * (len(b) + 1) states at most once.
    """
    ta, tb, slash = _nfa(a), _nfa(b), ord("/")
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        if i == len(ta) and j == len(tb):
            return True
        x = ta[i] if i < len(ta) else None
        y = tb[j] if j < len(tb) else None
        moves = []
        if x == STAR:
            moves.append((i + 1, j))
        if y == STAR:
            moves.append((i, j + 1))
        if x is not None and y is not None:
            wild_x, wild_y = x < 0, y < 0
            if (wild_x and wild_y) or (wild_x and y != slash) or (wild_y and x != slash) or x == y:
                moves.append((i if x == STAR else i + 1, j if y == STAR else j + 1))
        for move in moves:
            if move not in seen:
                seen.add(move)
                stack.append(move)
    return False


def _reference(template: UriTemplate) -> re.Pattern[str]:
    """The raw language as a regex, with greedy groups as the official SDKs build it."""
    parts = [re.escape(template.literals[0])]
    for literal in template.literals[1:]:
        parts += ("([^/]+)", re.escape(literal))
    return re.compile("".join(parts))


def _brute_force_intersects(a: UriTemplate, b: UriTemplate) -> bool:
    """Try every URI up to the longest a shortest common one can be.

    In a shortest common URI every character is a literal character of ``a`` or ``b`` or the
    first character of a variable of ``a`` or ``b`` (any other one could be deleted), so its
    length is at most their total and its characters are theirs plus one filler, ``x``.
    """
    ra, rb = _reference(a), _reference(b)
    literal_chars = "".join(a.literals) + "".join(b.literals)
    bound = len(literal_chars) + len(a.variables) + len(b.variables)
    alphabet = sorted(set(literal_chars) | {"x"})
    for length in range(bound + 1):
        for letters in itertools.product(alphabet, repeat=length):
            uri = "".join(letters)
            if ra.fullmatch(uri) and rb.fullmatch(uri):
                return True
    return False


@st.composite
def templates(draw: st.DrawFn, alphabet: str, max_piece: int, max_variables: int) -> UriTemplate:
    count = draw(st.integers(1, max_variables))
    pieces = [
        draw(st.text(alphabet, min_size=0 if index in (0, count) else 1, max_size=max_piece))
        for index in range(count + 1)
    ]
    text = pieces[0] + "".join(f"{{v{index}}}{pieces[index + 1]}" for index in range(count))
    return UriTemplate.parse(text)


@settings(max_examples=300, deadline=None)
@given(templates("ab/", 2, 2), templates("ab/", 2, 2))
def test_overlaps_agrees_with_brute_force_CT_05(a: UriTemplate, b: UriTemplate) -> None:
    literal_chars = "".join(a.literals) + "".join(b.literals)
    assume(len(literal_chars) + len(a.variables) + len(b.variables) <= 7)
    expected = _brute_force_intersects(a, b)
    assert overlaps(a, b) is expected
    assert _product_intersects(a, b) is expected


@settings(max_examples=300, deadline=None)
@given(templates("ab/.", 6, 4), templates("ab/.", 6, 4))
def test_overlaps_agrees_with_the_product_automaton_CT_05(a: UriTemplate, b: UriTemplate) -> None:
    assert overlaps(a, b) is _product_intersects(a, b)
    assert overlaps(a, b) is overlaps(b, a)


@settings(max_examples=300, deadline=None)
@given(templates("ab/-", 3, 3), st.text("ab/-x", max_size=14))
def test_match_agrees_with_the_greedy_reference_regex(template: UriTemplate, uri: str) -> None:
    """Without "%" in play, match is the SDKs' greedy ``[^/]+`` regex, groups included."""
    found = _reference(template).fullmatch(uri)
    expected = None if found is None else dict(zip(template.variables, found.groups(), strict=True))
    assert template.match(uri) == expected


@settings(max_examples=200, deadline=None)
@given(templates("ab/", 2, 3), st.data())
def test_expanding_then_matching_returns_the_values(
    template: UriTemplate, data: st.DataObject
) -> None:
    """Values without literal characters, percent-encoded as a client expands them, round-trip."""
    names = template.variables
    values = {name: data.draw(st.text("xy%/ é€😀", min_size=1, max_size=4)) for name in names}
    uri = template.literals[0] + "".join(
        quote(values[name], safe="") + literal
        for name, literal in zip(names, template.literals[1:], strict=True)
    )
    assert template.match(uri) == values
