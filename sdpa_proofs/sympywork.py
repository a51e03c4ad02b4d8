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
    def content(self):
        facts = self._assumptions
        kept = self.__dict__.get("_content_kept")
        if kept is not None and kept[0] is facts and kept[1] == len(facts):
            return kept[2]
        found = sympy_content(self)
        if None not in facts.values():
            self.__dict__["_content_kept"] = (facts, len(facts), found)
        return found
    return content


_ENTRIES: dict = {}  # (base, what places it, each index with its type) -> the entry
MOST_ENTRIES = 2**17  # then forgotten: an entry built afresh is no less right, only slower


def entry(cls, base, *indices, **options):
    """``Indexed.__new__``: base[indices] as built before, when it was.  Equal bases have equal
    facts (they are part of what makes them equal), and their offset and strides, which are
    not, are part of the key; each index's type is too, as SymPy's cache keeps 1 apart from
    1.0.  Anything else (options, a base that is not an IndexedBase, a subclass) is built by
    SymPy as always."""
    if options or cls is not Indexed or not isinstance(base, IndexedBase):
        return _SYMPY_ENTRY(cls, base, *indices, **options)
    try:
        key = (base, base.offset, base.strides, *((type(n), n) for n in indices))
        return _ENTRIES[key]
    except TypeError:  # an index that cannot be a key (a list): SymPy will say what it is
        return _SYMPY_ENTRY(cls, base, *indices)
    except KeyError:
        if len(_ENTRIES) >= MOST_ENTRIES:
            _ENTRIES.clear()
        built = _ENTRIES[key] = _SYMPY_ENTRY(cls, base, *indices)
        return built


_SYMPY_ENTRY = Indexed.__new__
Indexed.__new__ = entry
Indexed._hashable_content = content_once(Indexed._hashable_content)
IndexedBase._hashable_content = content_once(IndexedBase._hashable_content)
