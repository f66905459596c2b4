"""The ``pattern`` keyword's matcher: ECMA-262 syntax, linear time (docs/design/schema.md).

Python's ``re`` backtracks, so ``(a+)+$`` against a long run of ``a`` takes exponential time,
and the subject is the client's.  This matcher never backtracks: a pattern is compiled once,
at schema compile time, into a small program of states (Thompson's construction), and
:meth:`Pattern.search` runs every thread of that program in lockstep over the subject's code
points (a Pike VM without captures, since only a yes/no answer is wanted).  Each state is
visited at most once per code point, so a search is O(states x code points), whatever the
pattern, and it reports the states it visited so that the evaluator charges its budget for
them.

The syntax is a strict subset of ECMA-262 read with the ``u`` flag (code points, no Annex B
leniency); anything else is refused by name, never read with different semantics.  Compiling
never recurses in Python: groups are kept on an explicit stack.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Pattern", "PatternError", "compile_pattern"]


class PatternError(Exception):
    """A pattern outside the supported syntax or over a limit; the message says which."""


# Instructions: (opcode, x, y).  _CHAR: x is the code point; _SET: x indexes the set table;
# _SPLIT: continue at x and at y; _JUMP: continue at x; _BEGIN/_END: assertions ^ and $.
# While fragments are built x and y are relative to the instruction, so a fragment can be
# repeated (counted repetition) and concatenated without relocation.
_CHAR, _SET, _SPLIT, _JUMP, _BEGIN, _END, _MATCH = range(7)
Instruction = tuple[int, int, int]
Ranges = tuple[tuple[int, int], ...]
"""Inclusive code point ranges."""

_MAX_CODE_POINT: Final = 0x10FFFF
_DIGIT: Final = ((0x30, 0x39),)
_WORD: Final = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
# ECMA WhiteSpace (TAB, VT, FF, ZWNBSP and the Zs category) plus LineTerminator.
_SPACE: Final = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_LINE_TERMINATORS: Final = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_CONTROL_ESCAPES: Final = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
# Characters that stand for themselves after a backslash (ECMA SyntaxCharacter, "/" and "-").
_IDENTITY_ESCAPES: Final = frozenset("^$\\.*+?()[]{}|/-")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_DIGITS: Final = frozenset("0123456789")
# Counts longer than this many digits are compared as strings and never converted: any of
# them is far past every repetition the state limit allows.
_MAX_COUNT_DIGITS: Final = 9
_UNBOUNDED: Final = -1


def _merge(ranges: list[tuple[int, int]]) -> Ranges:
    """Sorted, disjoint, non-adjacent ranges covering the same code points."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            if high > merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return tuple(merged)


def _complement(ranges: Ranges) -> Ranges:
    """Every code point outside ``ranges`` (which are merged)."""
    gaps: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            gaps.append((start, low - 1))
        start = high + 1
    if start <= _MAX_CODE_POINT:
        gaps.append((start, _MAX_CODE_POINT))
    return tuple(gaps)


def _bounds(ranges: Ranges) -> tuple[int, ...]:
    """The ranges as ascending boundaries: a code point is in the set when the number of
    boundaries at or below it is odd (one ``bisect`` per test)."""
    return tuple(point for low, high in ranges for point in (low, high + 1))


_DOT: Final = _complement(_LINE_TERMINATORS)
_CLASS_ESCAPES: Final[dict[str, Ranges]] = {
    "d": _DIGIT,
    "D": _complement(_DIGIT),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}


class _Fragment:
    """A piece of program: instructions and sub-fragments, in order, and its state count.

    Sub-fragments are referenced, not copied, so nesting groups and repeating an atom cost
    work in proportion to the pattern and the states, never their product; the program is
    written out once, by ``_flatten``."""

    __slots__ = ("parts", "size")

    def __init__(self, parts: list[Instruction | _Fragment], size: int) -> None:
        self.parts = parts
        self.size = size


_EMPTY: Final = _Fragment([], 0)


def _one(instruction: Instruction) -> _Fragment:
    return _Fragment([instruction], 1)


def _flatten(root: _Fragment) -> list[Instruction]:
    out: list[Instruction] = []
    stack = [iter(root.parts)]
    while stack:
        part = next(stack[-1], None)
        if part is None:
            stack.pop()
        elif isinstance(part, _Fragment):
            stack.append(iter(part.parts))
        else:
            out.append(part)
    return out


@dataclass
class _Group:
    """A group being parsed: its finished alternatives and the current one's atoms."""

    start: int
    branches: list[_Fragment] = field(default_factory=list)
    atoms: list[_Fragment] = field(default_factory=list)
    # whether the last atom may take a quantifier (not an assertion, not already quantified)
    repeatable: bool = False

    def concatenation(self) -> _Fragment:
        return _Fragment(list(self.atoms), sum(atom.size for atom in self.atoms))

    def alternation(self) -> _Fragment:
        """The group's program: ``SPLIT(next branch) branch JUMP(end)`` for each branch but
        the last (``_Parser`` counted the two extra states when it met the ``|``)."""
        branches = [*self.branches, self.concatenation()]
        if len(branches) == 1:
            return branches[0]
        total = sum(branch.size for branch in branches) + 2 * (len(branches) - 1)
        parts: list[Instruction | _Fragment] = []
        at = 0
        for branch in branches[:-1]:
            at += branch.size + 2
            parts += ((_SPLIT, 1, branch.size + 2), branch, (_JUMP, total - at + 1, 0))
        parts.append(branches[-1])
        return _Fragment(parts, total)


def _repeat(atom: _Fragment, least: int, most: int) -> _Fragment:
    """``atom{least,most}`` (``most`` is ``_UNBOUNDED`` for ``{least,}``)."""
    size = atom.size
    if size == 0:  # an empty fragment repeated is still empty
        return _EMPTY
    if most == _UNBOUNDED:
        if least == 0:  # atom*: SPLIT(in, out) atom JUMP(back to the split)
            parts: list[Instruction | _Fragment] = [
                (_SPLIT, 1, size + 2),
                atom,
                (_JUMP, -(size + 1), 0),
            ]
        else:  # least - 1 copies, then atom+
            parts = [*([atom] * least), (_SPLIT, -size, 1)]
        return _Fragment(parts, _repeated_size(size, least, most))
    # Optional copies nested, not in a row: (a(a(a)?)?)?, so that after k code points one
    # thread sits in the k-th copy instead of one in each of the copies it might be in.
    parts = [atom] * least
    optional = most - least
    for index in range(optional):
        parts += ((_SPLIT, 1, (optional - index) * (size + 1)), atom)
    return _Fragment(parts, _repeated_size(size, least, most))


def _repeated_size(size: int, least: int, most: int) -> int:
    """``len(_repeat(atom, least, most))`` for an atom of ``size`` states, without building it."""
    if size == 0:
        return 0
    if most == _UNBOUNDED:
        return size + 2 if least == 0 else least * size + 1
    return least * size + (most - least) * (size + 1)


class _Parser:
    """One pass over the pattern, building fragments bottom-up on a stack of groups."""

    def __init__(self, source: str, max_states: int) -> None:
        self.source = source
        self.at = 0
        self.max_states = max_states
        self.held = 0  # states in every fragment held so far, and the "|" overheads
        self.sets: dict[tuple[int, ...], int] = {}

    def fail(self, problem: str, at: int | None = None) -> PatternError:
        return PatternError(f"{problem} (at offset {self.at if at is None else at})")

    def hold(self, states: int) -> None:
        """Account for ``states`` more states; the program also ends with a match state."""
        self.held += states
        if self.held + 1 > self.max_states:
            raise PatternError(f"compiles to more than {self.max_states} states")

    def parse(self) -> tuple[_Fragment, tuple[tuple[int, ...], ...]]:
        source = self.source
        groups = [_Group(-1)]
        while self.at < len(source):
            group = groups[-1]
            char = source[self.at]
            if char == "(":
                groups.append(_Group(self.at))
                self.at = self.open_group()
                continue
            if char == ")":
                if len(groups) == 1:
                    raise self.fail("unmatched ')'; write \\) for the character")
                groups.pop()
                self.add(groups[-1], group.alternation(), held=True)
            elif char == "|":
                self.hold(2)
                group.branches.append(group.concatenation())
                group.atoms = []
                group.repeatable = False
            elif char in "*+?{":
                self.quantify(group)
                continue
            elif char in "^$":
                group.atoms.append(_one((_BEGIN if char == "^" else _END, 0, 0)))
                self.hold(1)
                group.repeatable = False
            elif char == ".":
                self.add(group, _one((_SET, self.set_index(_DOT), 0)))
            elif char == "[":
                self.add(group, _one(self.character_class()))
                continue
            elif char == "\\":
                self.add(group, _one(self.atom_escape()))
                continue
            elif char in "]}":
                raise self.fail(f"a lone '{char}' must be escaped as \\{char}")
            else:
                self.add(group, _one((_CHAR, ord(char), 0)))
            self.at += 1
        if len(groups) > 1:
            raise self.fail("a group is not closed", groups[-1].start)
        return groups[0].alternation(), tuple(self.sets)

    def add(self, group: _Group, fragment: _Fragment, *, held: bool = False) -> None:
        """Append a repeatable atom to the current alternative."""
        if not held:
            self.hold(fragment.size)
        group.atoms.append(fragment)
        group.repeatable = True

    def open_group(self) -> int:
        """Check what follows ``(``; the offset past ``(`` of a plain group or past ``(?:`` of
        a non-capturing one (captures are not needed to say yes or no)."""
        rest = self.source[self.at + 1 : self.at + 4]
        if not rest.startswith("?"):
            return self.at + 1
        if rest.startswith(("?=", "?!")):
            raise self.fail("lookahead assertions are not supported")
        if rest.startswith(("?<=", "?<!")):
            raise self.fail("lookbehind assertions are not supported")
        if rest.startswith("?<"):
            raise self.fail("named groups are not supported; use (?:...)")
        if not rest.startswith("?:"):
            raise self.fail("inline flags and other (?...) groups are not supported")
        return self.at + 3

    def quantify(self, group: _Group) -> None:
        """Apply ``* + ?`` or ``{n}``, ``{n,}``, ``{n,m}`` (lazy or not) to the last atom."""
        start = self.at
        char = self.source[self.at]
        if char == "{":
            least, most = self.counts()
        else:
            least, most = {"*": (0, _UNBOUNDED), "+": (1, _UNBOUNDED), "?": (0, 1)}[char]
            self.at += 1
        if not group.repeatable:
            raise self.fail("a quantifier must follow a character, a class or a group", start)
        if self.source.startswith("?", self.at):
            self.at += 1  # lazy: the same yes/no answer
        atom = group.atoms[-1]
        self.hold(_repeated_size(atom.size, least, most) - atom.size)
        group.atoms[-1] = _repeat(atom, least, most)
        group.repeatable = False

    def counts(self) -> tuple[int, int]:
        """``{n}``, ``{n,}`` or ``{n,m}`` at ``at``; past its ``}``."""
        source, start = self.source, self.at
        self.at += 1
        least_text = self.digits()
        most_text: str | None = least_text
        if source.startswith(",", self.at):
            self.at += 1
            most_text = self.digits() or None
        if not least_text or not source.startswith("}", self.at):
            raise self.fail(
                "'{' must open a quantifier {n}, {n,} or {n,m}; write \\{ for the character",
                start,
            )
        self.at += 1
        if most_text is not None and (len(least_text), least_text) > (len(most_text), most_text):
            raise self.fail("a quantifier's minimum exceeds its maximum", start)
        least = self._count(least_text)
        return least, _UNBOUNDED if most_text is None else self._count(most_text)

    def digits(self) -> str:
        """The decimal digits at ``at``, leading zeros dropped ("0" stays "0")."""
        start = self.at
        while self.at < len(self.source) and self.source[self.at] in _DIGITS:
            self.at += 1
        text = self.source[start : self.at]
        return text.lstrip("0") or text[:1]

    def _count(self, text: str) -> int:
        # A count with too many digits to convert is past the state limit anyway, unless its
        # atom is empty; either way any count above the limit gives the same program.
        return int(text) if len(text) <= _MAX_COUNT_DIGITS else self.max_states + 1

    def set_index(self, ranges: Ranges) -> int:
        return self.sets.setdefault(_bounds(ranges), len(self.sets))

    def character_class(self) -> Instruction:
        """``[...]`` or ``[^...]`` at ``at``; past its ``]``."""
        source, start = self.source, self.at
        self.at += 1
        negated = source.startswith("^", self.at)
        self.at += negated
        ranges: list[tuple[int, int]] = []
        while True:
            if self.at >= len(source):
                raise self.fail("a character class is not closed", start)
            if source[self.at] == "]":
                self.at += 1
                break
            low = self.class_atom()
            dash = self.at
            if source.startswith("-", dash) and dash + 1 < len(source) and source[dash + 1] != "]":
                self.at += 1
                high = self.class_atom()
                if isinstance(low, tuple) or isinstance(high, tuple):
                    raise self.fail("a class escape cannot bound a range", dash)
                if low > high:
                    raise self.fail("a class range is out of order", dash)
                ranges.append((low, high))
            elif isinstance(low, tuple):
                ranges.extend(low)
            else:
                ranges.append((low, low))
        merged = _merge(ranges)
        return (_SET, self.set_index(_complement(merged) if negated else merged), 0)

    def class_atom(self) -> int | Ranges:
        """One code point or class escape inside ``[...]``; past it."""
        if self.source[self.at] == "\\":
            return self.escape(in_class=True)
        self.at += 1
        return ord(self.source[self.at - 1])

    def atom_escape(self) -> Instruction:
        """An escape outside a class, as the instruction that matches it."""
        value = self.escape(in_class=False)
        if isinstance(value, int):
            return (_CHAR, value, 0)
        return (_SET, self.set_index(value), 0)

    def escape(self, *, in_class: bool) -> int | Ranges:
        """The escape at ``at`` (a backslash): a code point or a class escape's ranges."""
        source, start = self.source, self.at
        if start + 1 >= len(source):
            raise self.fail("a pattern cannot end with a lone backslash")
        char = source[start + 1]
        self.at = start + 2
        if char in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[char]
        if char in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[char]
        if char in _IDENTITY_ESCAPES:
            return ord(char)
        if char == "b" and in_class:
            return 0x08  # [\b] is backspace
        if char == "0" and source[self.at : self.at + 1] not in _DIGITS:
            return 0
        if char == "c":
            letter = source[self.at : self.at + 1]
            if not (letter.isascii() and letter.isalpha()):
                raise self.fail("\\c must be followed by an ASCII letter", start)
            self.at += 1
            return ord(letter) % 32
        if char == "x":
            return self.hex_digits(2, start)
        if char == "u":
            return self.unicode_escape(start)
        raise self.fail(_ESCAPE_REFUSALS.get(char, f"the escape \\{char} is not supported"), start)

    def hex_digits(self, count: int, start: int) -> int:
        text = self.source[self.at : self.at + count]
        if len(text) != count or not set(text) <= _HEX:
            kind = "\\x needs two" if count == 2 else "\\u needs four"
            raise self.fail(f"{kind} hexadecimal digits", start)
        self.at += count
        return int(text, 16)

    def unicode_escape(self, start: int) -> int:
        """``\\uXXXX``; a high surrogate followed by a ``\\u`` low one is one code point, as
        with the ``u`` flag."""
        if self.source.startswith("{", self.at):
            raise self.fail("\\u{...} escapes are not supported; use \\uXXXX", start)
        unit = self.hex_digits(4, start)
        low = self.source[self.at + 2 : self.at + 6]
        if (
            0xD800 <= unit <= 0xDBFF
            and self.source.startswith("\\u", self.at)
            and len(low) == 4
            and set(low) <= _HEX
            and 0xDC00 <= int(low, 16) <= 0xDFFF
        ):
            self.at += 6
            return 0x10000 + ((unit - 0xD800) << 10) + (int(low, 16) - 0xDC00)
        return unit


_ESCAPE_REFUSALS: Final = {
    **dict.fromkeys("0123456789", "backreferences and octal escapes are not supported"),
    "k": "backreferences are not supported",
    "b": "word-boundary assertions \\b and \\B are not supported",
    "B": "word-boundary assertions \\b and \\B are not supported",
    "p": "Unicode property escapes \\p{...} and \\P{...} are not supported",
    "P": "Unicode property escapes \\p{...} and \\P{...} are not supported",
}


def _link(fragment: _Fragment) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The finished program as three parallel tuples, with absolute targets and a final
    match state."""
    ops: list[int] = []
    xs: list[int] = []
    ys: list[int] = []
    for index, (op, x, y) in enumerate(_flatten(fragment)):
        ops.append(op)
        if op == _SPLIT:
            x, y = index + x, index + y
        elif op == _JUMP:
            x += index
        xs.append(x)
        ys.append(y)
    ops.append(_MATCH)
    xs.append(0)
    ys.append(0)
    return tuple(ops), tuple(xs), tuple(ys)


class Pattern:
    """A compiled pattern.  :meth:`search` is JSON Schema's ``pattern``: a match anywhere in
    the subject, unless the pattern anchors it."""

    __slots__ = ("_ops", "_restart", "_sets", "_xs", "_ys", "source", "states")

    def __init__(self, source: str, fragment: _Fragment, sets: tuple[tuple[int, ...], ...]) -> None:
        self.source = source
        self._ops, self._xs, self._ys = _link(fragment)
        self._sets = sets
        self.states = len(self._ops)
        # Whether a match can start after the first code point: if not (every branch begins
        # with ^), a search whose threads all died can skip to the end, where only an
        # empty-input branch such as "^a|$" is still worth trying.
        self._restart = self._can_restart()

    def _can_restart(self) -> bool:
        """Whether a thread started past the first code point and before the end reaches a
        consuming state or the match: there ``^`` and ``$`` both block it."""
        pending, seen = [0], set()
        while pending:
            pc = pending.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op = self._ops[pc]
            if op == _SPLIT:
                pending += (self._xs[pc], self._ys[pc])
            elif op == _JUMP:
                pending.append(self._xs[pc])
            elif op not in (_BEGIN, _END):
                return True
        return False

    def __repr__(self) -> str:
        return f"<Pattern {self.states} states>"

    def search(self, text: str, budget: int) -> tuple[bool, int]:
        """Whether ``text`` contains a match, and the states visited to find out.

        Stops once more than ``budget`` states have been visited (checked after each code
        point, so by at most ``states`` more); then the answer means nothing and the caller
        reports an exhausted budget.
        """
        ops, xs, ys, sets = self._ops, self._xs, self._ys, self._sets
        end = len(text)
        used = 0
        position = 0
        pending = [0]
        while True:
            # Follow SPLIT, JUMP and the assertions from every pending state: ``alive`` gets
            # the consuming states, each state visited once per position.
            seen: set[int] = set()
            alive: list[int] = []
            while pending:
                pc = pending.pop()
                if pc in seen:
                    continue
                seen.add(pc)
                op = ops[pc]
                if op <= _SET:
                    alive.append(pc)
                elif op == _SPLIT:
                    pending.append(xs[pc])
                    pending.append(ys[pc])
                elif op == _JUMP:
                    pending.append(xs[pc])
                elif op == _BEGIN:
                    if position == 0:
                        pending.append(pc + 1)
                elif op == _END:
                    if position == end:
                        pending.append(pc + 1)
                else:  # _MATCH
                    return True, used + len(seen)
            used += len(seen)
            if used > budget or position == end:
                return False, used
            code = ord(text[position])
            position += 1
            for pc in alive:
                x = xs[pc]
                if (x == code) if ops[pc] == _CHAR else (bisect_right(sets[x], code) & 1):
                    pending.append(pc + 1)
            if self._restart or position == end:
                pending.append(0)  # unanchored: a match may also start here
            elif not pending:
                position = end  # nothing alive and nothing can start before the end
                pending.append(0)


def compile_pattern(source: str, *, max_chars: int, max_states: int) -> Pattern:
    """Compile ``source`` or raise :class:`PatternError` saying what is unsupported."""
    if len(source) > max_chars:
        raise PatternError(f"is longer than {max_chars} characters")
    fragment, sets = _Parser(source, max_states).parse()
    return Pattern(source, fragment, sets)
