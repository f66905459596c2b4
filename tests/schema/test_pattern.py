"""The ``pattern`` matcher (``mcpkit.schema._pattern``): ECMA-262 syntax and semantics, linear
time, refusals by name.

- Semantics: explicit cases, a differential against Python's ``re`` on generated patterns
  (rendered for ``re`` where the two dialects spell a construct differently, such as ``$``
  and ``\\Z``), explicit cases where ``re`` and ECMA-262 disagree, and the official suite's
  optional ``ecmascript-regex`` and ``non-bmp-regex`` files.
- Cost: pathological patterns on 100,000 code points are linear, asserted on the states the
  search reports (what the evaluator charges), never on the clock.
"""

from __future__ import annotations

import json
import re
import tarfile
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpkit.schema._pattern import Pattern, PatternError, compile_pattern

from .suite import CACHE, SUITE_MEMBER_DIR, jsonschema_version, suite_dir

BIG: Final = 10**12
PROPERTY = settings(max_examples=1_500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pattern(source: str, *, max_chars: int = 1_000, max_states: int = 10_000) -> Pattern:
    return compile_pattern(source, max_chars=max_chars, max_states=max_states)


def search(source: str, text: str) -> bool:
    found, used = pattern(source).search(text, BIG)
    assert used <= pattern(source).states * (len(text) + 1)
    return found


def refused(source: str, match: str, **options: int) -> None:
    with pytest.raises(PatternError, match=match):
        pattern(source, **options)


# --- semantics ------------------------------------------------------------------------------

MATCHES: list[tuple[str, str, bool]] = [
    # unanchored search, anchors
    ("a+", "xxaayy", True),
    ("^a*$", "aaa", True),
    ("^a*$", "abc", False),
    ("", "anything", True),
    ("^$", "", True),
    ("^$", "x", False),
    ("$", "abc", True),
    ("^a|$", "bbb", True),  # every thread dies early; the end still matches
    ("^a|b$", "ab", True),
    ("^ab", "cab", False),
    ("b^", "ab", False),
    ("a$b", "ab", False),
    ("(?:|)^a", "ba", False),
    ("(^)*a", "ba", True),
    # literals and escapes
    ("^\\.\\\\\\/\\-$", ".\\/-", True),
    ("^\\t\\n\\r\\f\\v$", "\t\n\r\f\v", True),
    ("^\\0$", "\0", True),
    ("^\\x41\\u0042$", "AB", True),
    ("^\\cC\\cc$", "\x03\x03", True),
    ("^\\^\\$\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|$", "^$*+?()[]{}|", True),
    ("^\\uD83D\\uDE00$", "\U0001f600", True),  # a surrogate pair is one code point
    ("^\\uD83D$", "\ud83d", True),  # a lone surrogate escape is that code point
    ("^\\uD83D\\u0041$", "\ud83dA", True),
    ("^\U0001f432*$", "\U0001f432\U0001f432", True),
    ("^\U0001f432*$", "\U0001f409", False),
    # dot
    ("^.$", "\U0001f600", True),
    ("^.$", "\n", False),
    ("^.$", "\r", False),
    ("^.$", "\u2028", False),
    ("^.$", "\u2029", False),
    ("^.$", "\x85", True),
    # classes
    ("^[a-c]+$", "abcba", True),
    ("^[a-c]+$", "abd", False),
    ("^[^a]$", "b", True),
    ("^[^a]$", "a", False),
    ("^[]$", "a", False),
    ("^[^]$", "\n", True),
    ("^[-a]+$", "-a", True),
    ("^[a-]+$", "-a", True),
    ("^[--0]+$", "-./0", True),
    ("^[a-b-d]+$", "ab-d", True),
    ("^[a-b-d]+$", "c", False),
    ("^[\\d\\s]+$", "1 2", True),
    ("^[\\D]$", "x", True),
    ("^[^\\D]$", "7", True),
    ("^[^\\s\\S]$", "a", False),
    ("^[\\b]$", "\b", True),
    ("^[\\-\\]\\\\]+$", "-]\\", True),
    ("^[\\x41-\\u0043]+$", "ABC", True),
    ("^[[]$", "[", True),
    ("^[a-cb-ex]+$", "abcdex", True),
    ("^[a-ab-b]+$", "ab", True),
    ("^[a-eb-c]+$", "ead", True),
    ("^[\\u0000-\\uFFFF]$", "\U00010000", False),
    # class escapes, with ECMA meanings
    ("^\\d+$", "0123456789", True),
    ("^\\d$", "\u0663", False),
    ("^\\D$", "\u0663", True),
    ("^\\w+$", "azAZ09_", True),
    ("^\\w$", "\u00e9", False),
    ("^\\W$", "\u00e9", True),
    ("^\\s+$", "\t\n\v\f\r \xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff", True),
    ("^\\s$", "\x1c", False),
    ("^\\s$", "\x85", False),
    ("^\\s$", "\u180e", False),
    ("^\\S$", "\x85", True),
    # groups, alternation, quantifiers
    ("^(ab|cd)+$", "abcdab", True),
    ("^(?:ab|cd)+$", "abce", False),
    ("^(a|)+$", "aaa", True),
    ("^a|b|c$", "xc", True),
    ("^(?:a|b|c)$", "xc", False),
    ("^a?$", "", True),
    ("^a??$", "a", True),
    ("^a*?b$", "aab", True),
    ("^a+?$", "", False),
    ("^a{3}$", "aaa", True),
    ("^a{3}$", "aa", False),
    ("^a{3}$", "aaaa", False),
    ("^a{2,}$", "a", False),
    ("^a{2,}$", "aaaaa", True),
    ("^a{0,}$", "", True),
    ("^a{1,}$", "aa", True),
    ("^a{2,3}$", "aaa", True),
    ("^a{2,3}$", "aaaa", False),
    ("^a{0,0}$", "", True),
    ("^a{0,0}$", "a", False),
    ("^a{003}$", "aaa", True),
    ("^(?:ab){1,2}?c$", "ababc", True),
    ("^(?:){99999999999}$", "", True),  # an empty atom repeats to nothing, any count
    ("^(?:){5,}$", "", True),
    ("^(a*)*b$", "aab", True),
    ("^(a*)+$", "", True),
    ("^((a)|b)*$", "abba", True),
]


@pytest.mark.parametrize(("source", "text", "expected"), MATCHES, ids=repr)
def test_matches(source: str, text: str, expected: bool) -> None:
    assert search(source, text) is expected


REFUSALS: list[tuple[str, str]] = [
    ("a\\1", "backreferences and octal escapes are not supported \\(at offset 1\\)"),
    ("(a)\\1", "backreferences"),
    ("\\01", "octal escapes"),
    ("[\\1]", "octal escapes"),
    ("\\k<a>", "backreferences are not supported"),
    ("(?=a)", "lookahead assertions are not supported"),
    ("(?!a)", "lookahead"),
    ("(?<=a)b", "lookbehind assertions are not supported"),
    ("(?<!a)b", "lookbehind"),
    ("(?<name>a)", "named groups are not supported"),
    ("(?i)a", "inline flags and other \\(\\?\\.\\.\\.\\) groups are not supported"),
    ("(?", "inline flags"),
    ("\\p{Letter}", "Unicode property escapes"),
    ("[\\P{L}]", "Unicode property escapes"),
    ("\\bword", "word-boundary assertions"),
    ("\\B", "word-boundary"),
    ("\\u{41}", "\\\\u\\{\\.\\.\\.\\} escapes are not supported"),
    ("\\u12", "\\\\u needs four hexadecimal digits"),
    ("\\uD83D\\uDE0", "\\\\u needs four hexadecimal digits \\(at offset 6\\)"),
    ("\\uD83D\\uZZZZ", "\\\\u needs four hexadecimal digits \\(at offset 6\\)"),
    ("\\x4", "\\\\x needs two hexadecimal digits"),
    ("\\xZZ", "\\\\x needs two"),
    ("\\c1", "\\\\c must be followed by an ASCII letter"),
    ("\\c", "\\\\c must be followed"),
    ("\\q", "the escape \\\\q is not supported"),
    ("\\a", "the escape \\\\a is not supported"),  # Annex B would read it as "a"
    ("a\\", "lone backslash"),
    ("*a", "a quantifier must follow a character, a class or a group \\(at offset 0\\)"),
    ("a**", "a quantifier must follow"),
    ("a{2}{3}", "a quantifier must follow"),
    ("^*", "a quantifier must follow"),
    ("a|?", "a quantifier must follow"),
    ("(+)", "a quantifier must follow"),
    ("a{", "'\\{' must open a quantifier"),
    ("a{,2}", "'\\{' must open a quantifier"),
    ("a{1,2", "'\\{' must open a quantifier"),
    ("a{x}", "'\\{' must open a quantifier"),
    ("a{3,2}", "minimum exceeds its maximum"),
    ("a{99999999999,99999999998}", "minimum exceeds its maximum"),
    ("a}", "a lone '\\}' must be escaped"),
    ("a]", "a lone '\\]' must be escaped"),
    ("a)", "unmatched '\\)'"),
    ("(a", "a group is not closed \\(at offset 0\\)"),
    ("((a)", "a group is not closed \\(at offset 0\\)"),
    ("[a", "a character class is not closed"),
    ("[a-", "a character class is not closed"),
    ("[z-a]", "a class range is out of order"),
    ("[\\d-z]", "a class escape cannot bound a range"),
    ("[a-\\w]", "a class escape cannot bound a range"),
]


@pytest.mark.parametrize(("source", "match"), REFUSALS, ids=repr)
def test_unsupported_syntax_is_refused_by_name(source: str, match: str) -> None:
    refused(source, match)


def test_pattern_length_limit_at_and_past() -> None:
    assert pattern("a" * 10, max_chars=10).search("a" * 10, BIG)[0]
    refused("a" * 11, "is longer than 10 characters", max_chars=10)


def test_state_limit_at_and_past() -> None:
    """``a{n}`` is n states and the final match state."""
    assert pattern("a{9}", max_states=10).states == 10
    refused("a{10}", "compiles to more than 10 states", max_states=10)
    refused("a{99999999999}", "compiles to more than 10 states", max_states=10)
    assert pattern("a|b", max_states=5).states == 5  # SPLIT a JUMP b MATCH
    refused("a|b|", "more than 5 states", max_states=5)
    assert pattern("(?:ab){2}", max_states=5).states == 5
    refused("(?:ab){2}c", "more than 5 states", max_states=5)


def test_counted_repetition_is_bounded_at_compile_time() -> None:
    refused("(a{1000}){1000}", "compiles to more than 10000 states")
    assert pattern("a{9999}").states == 10_000
    refused("a{10000}", "compiles to more than 10000 states")
    refused("(?:a{100}){100}", "compiles to more than 10000 states")


def test_repr_and_source() -> None:
    compiled = pattern("^a$")
    assert compiled.source == "^a$"
    assert repr(compiled) == "<Pattern 4 states>"


# --- differential against Python's re -------------------------------------------------------

_PY_DOT = "[^\\n\\r\\u2028\\u2029]"
_PY_SPACE = "\\t-\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
# (ECMA-262 spelling, re spelling): the same set of strings in both dialects
ATOMS = st.sampled_from(
    [
        ("a", "a"),
        ("b", "b"),
        ("\\.", "\\."),
        ("\\-", "\\-"),
        ("\\/", "/"),
        ("\\t", "\\t"),
        ("\\n", "\\n"),
        ("\\u0041", "A"),
        ("\\x62", "b"),
        (".", _PY_DOT),
        ("\\d", "[0-9]"),
        ("\\D", "[^0-9]"),
        ("\\w", "[A-Za-z0-9_]"),
        ("\\W", "[^A-Za-z0-9_]"),
        ("\\s", f"[{_PY_SPACE}]"),
        ("\\S", f"[^{_PY_SPACE}]"),
        ("[ab]", "[ab]"),
        ("[a-c]", "[a-c]"),
        ("[^a]", "[^a]"),
        ("[a\\d]", "[a0-9]"),
        ("[^\\s]", f"[^{_PY_SPACE}]"),
        ("[-a]", "[\\-a]"),
        ("[\\w.]", "[A-Za-z0-9_.]"),
    ]
)
ANCHORS = st.sampled_from([("^", "^"), ("$", "\\Z")])
QUANTIFIERS = st.sampled_from(
    ["*", "+", "?", "{2}", "{0,2}", "{1,}", "{1,3}", "*?", "+?", "??", "{2,}?", "{0}"]
)
# (ECMA, re, whether a quantifier may follow it directly)
Piece = tuple[str, str, bool]


def _quantified(piece: Piece, quantifier: str) -> Piece:
    ecma, python, repeatable = piece
    if not repeatable:
        ecma, python = f"(?:{ecma})", f"(?:{python})"
    return (ecma + quantifier, python + quantifier, False)


def _pieces(children: st.SearchStrategy[Piece]) -> st.SearchStrategy[Piece]:
    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(
            lambda parts: ("".join(p[0] for p in parts), "".join(p[1] for p in parts), False)
        ),
        st.lists(children, min_size=2, max_size=3).map(
            lambda parts: ("|".join(p[0] for p in parts), "|".join(p[1] for p in parts), False)
        ),
        st.tuples(children, st.sampled_from(["(", "(?:"])).map(
            lambda pair: (f"{pair[1]}{pair[0][0]})", f"{pair[1]}{pair[0][1]})", True)
        ),
        st.tuples(children, QUANTIFIERS).map(lambda pair: _quantified(*pair)),
    )


PIECES: st.SearchStrategy[Piece] = st.recursive(
    st.one_of(
        ATOMS.map(lambda atom: (atom[0], atom[1], True)),
        ANCHORS.map(lambda anchor: (anchor[0], anchor[1], False)),
        st.just(("", "", False)),
    ),
    _pieces,
    max_leaves=8,
)
# Characters on which the dialects would disagree if the rendering were wrong.
SUBJECTS = st.text(
    alphabet=st.sampled_from(
        list("ab bc019_A.-/\t\n\r\v\x1c\x85\xa0\ufeff\u2028\u0663\u00e9\U0001f600")
    ),
    max_size=10,
)


@PROPERTY
@given(PIECES, SUBJECTS)
@example(("(a+)+$", "(a+)+\\Z", False), "aaaa\n")
@example(("^\\s$", f"^[{_PY_SPACE}]\\Z", False), "\ufeff")
def test_agrees_with_python_re_where_the_dialects_agree(piece: Piece, text: str) -> None:
    ecma, python, _ = piece
    compiled = pattern(ecma)
    found, used = compiled.search(text, BIG)
    assert found is (re.search(python, text) is not None), (ecma, python, text)
    assert used <= compiled.states * (len(text) + 1)


# Where a Python re reading of the same pattern text would differ from ECMA-262.
DIALECT_DIFFERENCES: list[tuple[str, str, bool]] = [
    ("^abc$", "abc\n", False),  # re's $ also matches before a final newline
    ("^\\d$", "\u0663", False),  # re's \d is any Unicode decimal digit
    ("^\\w$", "\u00e9", False),  # re's \w is any Unicode word character
    ("^\\s$", "\x1c", False),  # re's \s is str.isspace()
    ("^\\s$", "\x85", False),
    ("^\\s$", "\ufeff", True),  # ECMA counts ZWNBSP as white space, re does not
    ("^.$", "\r", False),  # ECMA's dot excludes every line terminator, re's only \n
    ("^.$", "\u2028", False),
]


@pytest.mark.parametrize(("source", "text", "ecma"), DIALECT_DIFFERENCES, ids=repr)
def test_ecma_semantics_where_python_re_differs(source: str, text: str, ecma: bool) -> None:
    assert search(source, text) is ecma
    assert (re.search(source, text) is not None) is not ecma


def _optional_suite_file(name: str) -> list[dict[str, Any]]:
    """A file of the suite's ``optional/`` directory, read from the sdist ``suite.py`` fetched."""
    suite_dir()  # fetches the sdist if this run has not yet
    version = jsonschema_version()
    sdist = CACHE / f"jsonschema-{version}" / f"jsonschema-{version}.tar.gz"
    member = f"jsonschema-{version}/{SUITE_MEMBER_DIR}optional/{name}.json"
    with tarfile.open(sdist, "r:gz") as archive:
        stream = archive.extractfile(member)
        assert stream is not None
        groups: list[dict[str, Any]] = json.loads(stream.read())
    return groups


# Groups of the optional files that use syntax the profile refuses, with the reason; every
# other group with a "pattern" runs.
OPTIONAL_REFUSED: Final = {
    "patterns always use unicode semantics with pattern": "Unicode property escapes",
    "pattern with non-ASCII digits": "Unicode property escapes",
}


@pytest.mark.parametrize("name", ["ecmascript-regex", "non-bmp-regex"])
def test_the_suites_optional_regex_files(name: str) -> None:
    ran = 0
    for group in _optional_suite_file(name):
        source = group["schema"].get("pattern")
        if source is None:
            continue  # patternProperties: not in the profile
        if group["description"] in OPTIONAL_REFUSED:
            refused(source, OPTIONAL_REFUSED[group["description"]])
            continue
        for case in group["tests"]:
            if isinstance(case["data"], str):
                assert search(source, case["data"]) is case["valid"], case["description"]
                ran += 1
    assert ran >= (40 if name == "ecmascript-regex" else 7)


# --- linear time ----------------------------------------------------------------------------

PATHOLOGICAL: Final = ["(a+)+$", "(a|a)*b", "(a*)*b", "^(a|aa)+$", "(a|a?)+c", "(.*a){12}b"]


@pytest.mark.parametrize("source", PATHOLOGICAL)
def test_pathological_patterns_are_linear(source: str) -> None:
    """Catastrophic for a backtracking engine; here each code point costs the same."""
    compiled = pattern(source)
    costs = []
    for size in (1_000, 2_000, 100_000):
        found, used = compiled.search("a" * size + "!", BIG)
        assert not found
        assert used <= compiled.states * (size + 2)
        costs.append(used)
    per_code_point = (costs[1] - costs[0]) / 1_000
    assert costs[2] - costs[1] == per_code_point * 98_000  # exactly linear
    assert per_code_point <= compiled.states


def test_an_anchored_pattern_stops_when_every_thread_dies() -> None:
    """``^`` on every branch: nothing can start later, so a long mismatch costs O(pattern)."""
    compiled = pattern("^[A-Z]{3}$")
    assert compiled.search("x" * 100_000, BIG) == (False, 3)
    assert compiled.search("ABC" + "x" * 100_000, BIG)[1] < 20
    assert pattern("^a|$").search("b" * 100_000, BIG) == (True, 7)


def test_the_budget_stops_a_search() -> None:
    compiled = pattern("(a|a)*b")
    text = "a" * 1_000
    found, used = compiled.search(text, BIG)
    assert not found
    stopped, spent = compiled.search(text, used - 1)
    assert not stopped and used - 1 < spent <= used
    assert compiled.search(text, used) == (False, used)
    found, used = pattern("b").search("a" * 50 + "b", BIG)
    assert found
    assert pattern("b").search("a" * 50 + "b", used - 1)[1] > used - 1
