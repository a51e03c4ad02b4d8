"""Work done once instead of SymPy's doing it again must give what SymPy gives: an entry's
assumptions copied from an earlier deduction are SymPy's own deduction, and each entry's
facts stay its own."""

import pytest
import sympy as sp
from sympy.core.assumptions import StdFactKB

from sdpa_proofs import sympywork

BASES = [sp.IndexedBase("a"), sp.IndexedBase("b", real=True), sp.IndexedBase("c", positive=True),
         sp.IndexedBase("e", integer=True, nonnegative=True),
         sp.IndexedBase("f", commutative=False)]


@pytest.mark.parametrize("base", BASES, ids=str)
def test_an_entrys_copied_facts_are_sympys_deduction(base):
    for index in (1, 2, sp.Symbol("i", integer=True)):
        entry = base[index]  # the second and third from the remembered deduction
        assumptions = dict(base.assumptions0)
        fresh = StdFactKB({**assumptions, "commutative": assumptions.get("commutative", True)})
        assert dict(entry._assumptions) == dict(fresh)
        assert entry._assumptions.generator == assumptions
        assert entry.is_real == fresh.get("real")


def test_each_entry_keeps_the_facts_it_is_asked_about_to_itself():
    base = sp.IndexedBase("g", real=True)
    first, second = base[1], base[2]
    first._assumptions["zero"] = False  # what asking is_zero of first might store
    assert "zero" not in second._assumptions and "zero" not in base[3]._assumptions
    assert sympywork._DEDUCED  # the deduction was remembered, not redone
