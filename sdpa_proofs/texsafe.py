"""User text made safe for TeX: prose escaped, and $...$ math let through only when it is built
from a whitelist of control sequences and parses, so that a title or a `why` can neither run
TeX (\\input reads a file, \\openout writes one, ^^5c makes a backslash) nor break the compile.
"""

from __future__ import annotations

import re
import unicodedata

_SPECIAL = {"&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
            "$": r"\$", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "\\": r"\textbackslash{}", "<": r"\textless{}", ">": r"\textgreater{}"}

_GREEK = """alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma
    tau upsilon phi chi psi omega""".split()
_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi",
             "Omega"}
#: control sequences that take no argument
SYMBOLS = frozenset(_GREEK + sorted(_CAPITALS) + """varepsilon vartheta varpi varrho varsigma
    varphi ell sum prod int cdot cdots ldots dots times div pm mp le leq ge geq ne neq approx sim
    simeq propto equiv to mapsto rightarrow leftarrow Rightarrow iff implies infty partial nabla
    in notin subset subseteq cup cap forall exists emptyset circ star ast prime top intercal
    dagger mid max min log exp ln sin cos tan tanh lim sup inf det displaystyle quad
    qquad langle rangle lVert rVert lvert rvert""".split())
#: control sequences with the number of arguments they take, and what may stand in them
ARGUMENTS = {"frac": (2, "math"), "dfrac": (2, "math"), "tfrac": (2, "math"),
             "binom": (2, "math"), "sqrt": (1, "math"), "hat": (1, "math"),
             "bar": (1, "math"), "tilde": (1, "math"), "vec": (1, "math"),
             "overline": (1, "math"), "underline": (1, "math"), "mathopen": (1, "math"),
             "mathclose": (1, "math"), "mathbb": (1, "letters"), "mathcal": (1, "letters"),
             "mathrm": (1, "letters"), "mathbf": (1, "letters"), "mathit": (1, "letters"),
             "operatorname": (1, "letters"), "text": (1, "words")}
SIZES = {"left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr"}
_DELIMITERS = {"(", ")", "[", "]", "|", ".", "/", r"\{", r"\}", r"\|", r"\langle", r"\rangle",
               r"\lvert", r"\rvert", r"\lVert", r"\rVert"}
_SPACES = {r"\,", r"\;", r"\:", r"\!", r"\ ", r"\{", r"\}", r"\|"}
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\{|\}|\s+|.", re.S)
_CONTENT = {"letters": re.compile(r"[A-Za-z0-9 ]+"),
            "words": re.compile(r"[A-Za-z0-9 .,;:!?'()/-]*")}


def escape(prose: str, unicode: bool = False) -> str:
    """Plain text for TeX's text mode: every special character escaped, Greek letters and a
    few mathematical signs as their TeX, any other non-ASCII character by its code point (a
    pdflatex document has no glyph for it) or, with ``unicode`` (a xelatex document with CJK
    fonts), as itself."""
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else _SPECIAL.get(c, c) if ord(c) < 128
                   else _unicode(c, unicode) for c in str(prose))


_UNICODE = {"·": r"$\cdot$", "≤": r"$\le$", "≥": r"$\ge$", "≠": r"$\neq$", "√": r"$\surd$",
            "∂": r"$\partial$", "→": r"$\to$", "∞": r"$\infty$", "−": "-", "…": r"\dots{}",
            "×": r"$\times$", "±": r"$\pm$", "–": "--", "—": "---", "‘": "`", "’": "'",
            "“": "``", "”": "''"}
_CJK = re.compile(r"CJK |FULLWIDTH |IDEOGRAPHIC |HIRAGANA |KATAKANA |HALFWIDTH |LEFT CORNER |"
                  r"RIGHT CORNER |LEFT WHITE CORNER |RIGHT WHITE CORNER |LEFT BLACK LENTICULAR |"
                  r"RIGHT BLACK LENTICULAR ")
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))


def _unicode(c: str, unicode: bool = False) -> str:
    if c in _UNICODE:
        return _UNICODE[c]
    if c in _SUPERSCRIPTS:
        return rf"\textsuperscript{{{_SUPERSCRIPTS[c]}}}"
    name = unicodedata.name(c, "")
    if name.startswith("GREEK") and name.split()[-1].lower() in _GREEK:
        letter = name.split()[-1].lower()
        capital = letter.capitalize()
        if "CAPITAL" in name:
            return f"${chr(92)}{capital}$" if capital in _CAPITALS else c.upper().translate(
                str.maketrans("ΑΒΕΖΗΙΚΜΝΟΡΤΧ", "ABEZHIKMNOPTX"))
        return f"${chr(92)}{letter}$"
    if unicode and _CJK.match(unicodedata.name(c, "")):
        return c  # the Chinese edition's fonts have these; any other glyph may be missing
    return rf"\texttt{{[U+{ord(c):04X}]}}"


def text(prose: str, unicode: bool = False) -> str:
    """Prose for text mode: a $...$ whose math is safe passes through as math; everything else,
    unpaired $ included, is escaped (see escape for ``unicode``)."""
    parts = re.split(r"(\$[^$]+\$)", str(prose))
    return "".join(p if len(p) > 2 and p[0] == p[-1] == "$" and safe_math(p[1:-1])
                   else escape(p, unicode) for p in parts)


MAX_MATH = 400  # tokens in one $...$: more is not a formula a reader writes by hand
MAX_DEPTH = 12  # nested groups: TeX allows 255, a recursive parse less


def safe_math(body: str) -> bool:
    """Whether the body of a $...$ is ASCII math built from the whitelists, with every argument
    present, balanced braces and \\left/\\right, no double sub- or superscript (a prime is a
    superscript), short, and not nested deeper than MAX_DEPTH."""
    if not body.isascii() or "^^" in body or any(c in body for c in "%#&\n"):
        return False
    tokens = [t for t in _TOKEN.findall(body) if not t.isspace()]
    if len(tokens) > MAX_MATH or _depth(tokens) > MAX_DEPTH:
        return False
    return _group(tokens, 0, top=True) == len(tokens)


def _depth(tokens: list[str]) -> int:
    depth = deepest = 0
    for token in tokens:
        depth += {"{": 1, "}": -1}.get(token, 0)
        deepest = max(deepest, depth)
    return deepest


def _group(tokens: list[str], at: int, top: bool = False) -> int | None:
    """Parse math up to the closing brace of the group (or the end, at the top); the position
    after it, or None if it does not parse."""
    lefts, scripts = 0, set()
    while at < len(tokens):
        token = tokens[at]
        if token == "}":
            return None if top or lefts else at + 1
        if token in "^_'":
            script = "_" if token == "_" else "^"  # x' is x^{\prime}: x^2' is a TeX error
            if script in scripts:
                return None  # x^2^3 is a TeX error
            scripts.add(script)
            at = at + 1 if token == "'" else _argument(tokens, at + 1, "math")
        else:
            scripts = set()
            if token == "{":
                at = _group(tokens, at + 1)
            elif token.startswith("\\"):
                at, lefts = _control(tokens, at, lefts)
            else:
                at += 1
        if at is None:
            return None
    return at if top and not lefts else None


def _control(tokens: list[str], at: int, lefts: int) -> tuple[int | None, int]:
    token, name = tokens[at], tokens[at][1:]
    if token in _SPACES or name in SYMBOLS:
        return at + 1, lefts
    if name in SIZES:
        if at + 1 >= len(tokens) or tokens[at + 1] not in _DELIMITERS:
            return None, lefts
        lefts += {"left": 1, "right": -1}.get(name, 0)
        return (at + 2 if lefts >= 0 else None), lefts
    if name in ARGUMENTS:
        count, kind = ARGUMENTS[name]
        at += 1
        for _ in range(count):
            at = _argument(tokens, at, kind) if at is not None else None
        return at, lefts
    return None, lefts


def _argument(tokens: list[str], at: int, kind: str) -> int | None:
    """One argument: a braced group (of math, or of letters or words only), or a single
    letter, digit or symbol."""
    if at >= len(tokens):
        return None
    if tokens[at] != "{":
        single = tokens[at]
        ok = single.isalnum() if kind != "math" else (single.isalnum() or single in SYMBOLS
                                                       or single[1:] in SYMBOLS)
        return at + 1 if ok and single not in "{}^_" else None
    if kind == "math":
        return _group(tokens, at + 1)
    end = tokens.index("}", at) if "}" in tokens[at:] else None
    content = "".join(tokens[at + 1:end]) if end is not None else None
    return end + 1 if content is not None and _CONTENT[kind].fullmatch(content) else None
