"""Work SymPy repeats for every object it builds, done once where the result is the same.

Writing sums out and putting values in build about a hundred thousand entries q_i over a
catalogue run, and SymPy deduces each one's assumptions afresh from its base's: the closure of
its assumption rules, about a tenth of the checks' time.  The closure depends on the base's
assumptions alone, so it is deduced once per set of them; each entry gets its own copy, since an
object adds to its own the facts it is later asked about.

SymPy compares two entries, or two bases, by their arguments and their facts, sorted afresh at
every comparison (``_hashable_content``), and the checks compare them hundreds of thousands of
times: dictionary lookups, the cache, trees compared whole.  So an entry built again is the
entry built before (as SymPy's cache does for sums and products, whose comparisons then stop at
identity), and an entry's or a base's content is kept once its facts are settled.  Together
about a seventh of the checks' time.  tests/test_sympywork.py holds all three to SymPy's own.
"""

from __future__ import annotations

from sympy import Basic, S, Symbol
from sympy.core.assumptions import StdFactKB
from sympy.tensor.indexed import Indexed, IndexedBase

_DEDUCED: dict = {}  # the assumptions given -> (the facts deduced, the assumptions as given)


def set_assumptions(obj, assumptions: dict) -> None:
    """``IndexedBase._set_assumptions``: obj's facts, the closure of ``assumptions`` (with
    commutative unless they say otherwise), copied from the closure deduced before for the
    same assumptions."""
    key = frozenset(assumptions.items())
    if key not in _DEDUCED:
        _SYMPY_SET_ASSUMPTIONS(obj, assumptions)
        _DEDUCED[key] = dict(obj._assumptions), dict(obj._assumptions._generator)
        return
    facts, given = _DEDUCED[key]
    deduced = StdFactKB()  # its rules, and no facts yet
    dict.update(deduced, facts)
    deduced._generator = dict(given)
    obj._assumptions = deduced


_SYMPY_SET_ASSUMPTIONS = IndexedBase._set_assumptions
IndexedBase._set_assumptions = staticmethod(set_assumptions)


def content_once(sympy_content):
    """SymPy's ``_hashable_content`` of an entry or base (its arguments and its facts), kept on
    the object while its facts stay as they were.  Facts are only ever added, or settled from
    None (asked, not known) to True or False, never changed: with no None among them, the same
    number of facts are the same facts."""
    slot = f"_kept_{sympy_content.__qualname__}"  # a subclass's content is kept apart

    def content(self):
        facts = self._assumptions
        kept = self.__dict__.get(slot)
        if kept is not None and kept[0] is facts and kept[1] == len(facts):
            return kept[2]
        found = sympy_content(self)
        if None not in facts.values():
            self.__dict__[slot] = (facts, len(facts), found)
        return found
    return content


_BUILT: dict = {}  # what only the same arguments give -> (the object, the arguments kept)
MOST_KEPT = 2**17  # then forgotten: an object built afresh is no less right, only slower
_PLAIN = (str, int, bool, type(None))  # values that are nothing but their type and value


def _the_same(part) -> object:
    """What only the very same argument gives: a plain value by its type and value, anything
    else by its identity.  Not SymPy's equality: it holds a base declared real and one declared
    real and finite equal (the same facts follow), yet each keeps its declaration, which
    validation reads (review round 58)."""
    return (type(part), part) if type(part) in _PLAIN else id(part)


def _interned(key: tuple, arguments: tuple, build):
    """The object built before from the same arguments, or ``build()``; the arguments are kept
    with it, so that no identity in a key is given to another object while the key is kept.
    What was built from the same arguments cannot be told from a fresh build."""
    kept = _BUILT.get(key)
    if kept is None:
        if len(_BUILT) >= MOST_KEPT:
            _BUILT.clear()
        kept = _BUILT[key] = (build(), arguments)
    return kept[0]


def entry(cls, base, *indices, **options):
    """``Indexed.__new__``: base[indices] as built before from the same base and indices.
    Anything else (options, a base that is not an IndexedBase, a subclass, an index written as
    a string) is built by SymPy as always."""
    if options or cls is not Indexed or not isinstance(base, IndexedBase) \
            or any(isinstance(n, str) for n in indices):  # read as SymPy's evaluate flag says
        return _SYMPY_ENTRY(cls, base, *indices, **options)
    return _interned(("entry", id(base), *map(_the_same, indices)), (base, indices),
                     lambda: _SYMPY_ENTRY(cls, base, *indices))


def indexed_base(cls, label, shape=None, *, offset=S.Zero, strides=None, **assumptions):
    """``IndexedBase.__new__``: the base built before from the same label, shape, offset and
    assumptions.  Writing trees out and putting values in rebuild every base they pass
    (``base.func(*base.args)``): 23,000 bases a catalogue run, each deducing its facts, and
    each a new object that every comparison then looks into.  A label that is not a name or a
    symbol, strides, a shape that is not a SymPy object, and a class of its own ``__new__``
    are built by SymPy as always."""
    if cls.__new__ is not indexed_base or strides is not None \
            or not isinstance(label, (str, Symbol)) \
            or not (shape is None or isinstance(shape, Basic)) \
            or not isinstance(offset, (int, Basic)):
        return _SYMPY_BASE(cls, label, shape, offset=offset, strides=strides, **assumptions)
    key = ("base", cls, *map(_the_same, (label, shape, offset)),
           *sorted((name, _the_same(value)) for name, value in assumptions.items()))
    return _interned(key, (label, shape, offset, assumptions),
                     lambda: _SYMPY_BASE(cls, label, shape, offset=offset, **assumptions))


_SYMPY_ENTRY, _SYMPY_BASE = Indexed.__new__, IndexedBase.__new__
Indexed.__new__, IndexedBase.__new__ = entry, indexed_base
Indexed._hashable_content = content_once(Indexed._hashable_content)
IndexedBase._hashable_content = content_once(IndexedBase._hashable_content)
