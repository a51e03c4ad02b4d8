"""Work done once instead of SymPy's doing it again must give what SymPy gives: an entry's
assumptions copied from an earlier deduction are SymPy's own deduction, and each entry's
facts stay its own."""

import pytest
import sympy as sp
from sympy.core.assumptions import StdFactKB

from sdpa_proofs import sympywork
from sdpa_proofs.expressions import RandomVector

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


def sympys_content(x) -> tuple:
    """SymPy's definition for an entry or a base: its arguments, then its facts sorted."""
    return x._args + tuple(sorted((k, v) for k, v in x._assumptions.items() if v is not None))


def sympys_entry(base, *indices):
    return sympywork._SYMPY_ENTRY(sp.Indexed, base, *indices)


INDICES = [1, sp.Integer(2), 2.5, sp.Symbol("i", integer=True), sp.Symbol("i", integer=True) + 1,
           sp.Dummy("j")]


@pytest.mark.parametrize("base", BASES, ids=str)
def test_an_entry_built_again_is_the_entry_sympy_builds(base):
    for index in INDICES:
        entry, fresh = base[index], sympys_entry(base, index)
        assert base[index] is entry and sp.Indexed(base, index) is entry
        assert entry == fresh and sp.srepr(entry) == sp.srepr(fresh)
        assert entry.assumptions0 == fresh.assumptions0 and type(entry) is type(fresh)


def test_entries_sympy_tells_apart_stay_apart():
    q = sp.IndexedBase("q", real=True)
    assert q[1] != q[1.0] and q[1] is not q[1.0]  # SymPy's cache keeps them apart too
    assert q[sp.Dummy("j")] != q[sp.Dummy("j")]
    assert sp.IndexedBase("q")[1] != q[1] and not sp.IndexedBase("q")[1].is_real
    for placed in (sp.IndexedBase("q", real=True, offset=1), sp.IndexedBase("q", real=True,
                                                                          strides=(2,))):
        assert placed == q  # to SymPy; but its entries keep their own base
        assert placed[1] is not q[1]
        assert (placed[1].base.offset, placed[1].base.strides) == (placed.offset,
                                                                    placed.strides)


def test_a_random_vectors_declaration_is_part_of_what_it_is():
    """Review round 58: q declared real and q declared real and finite were equal to SymPy
    (the same facts follow), so SymPy's cache, and the entries built before, handed q_1 k_1
    back for Q_1 k_1, and validation, which refuses the second declaration, saw only the
    first's."""
    plain = RandomVector("q", real=True)
    finite = RandomVector("q", real=True, finite=True)
    assert plain != finite and plain[1] != finite[1] and plain[1] is not finite[1]
    product = plain[1] * plain[2]  # in SymPy's cache now
    assert (finite[1] * finite[2]).has(finite) and not product.has(finite)
    assert "finite" in finite[1].base.label._assumptions_orig
    assert RandomVector(sp.Symbol("q", real=True)) == plain  # declared alike, however written
    assert RandomVector("q", real=True, commutative=True) == plain  # as every symbol is


def test_a_base_built_again_is_the_base_built_before():
    named = sp.IndexedBase("b", real=True)
    assert sp.IndexedBase("b", real=True) is named
    assert sp.IndexedBase("b", real=True, positive=True) is not named
    from_symbol = sp.IndexedBase(sp.Symbol("b", real=True))
    assert from_symbol.func(*from_symbol.args) is from_symbol  # rebuilt from its arguments
    for base in (named, from_symbol):
        fresh = sympywork._SYMPY_BASE(type(base), *base.args)
        assert base == fresh and base.assumptions0 == fresh.assumptions0


def test_a_base_of_a_mutable_shape_or_a_class_of_its_own_is_sympys():
    shape = [3]
    assert sp.IndexedBase("b", shape) is not sp.IndexedBase("b", shape)
    shape.append(4)
    assert sp.IndexedBase("b", shape).shape == (3, 4)

    class Labelled(sp.IndexedBase):
        def __new__(cls, label, **assumptions):
            made = super().__new__(cls, label, **assumptions)
            made.note = label
            return made

    assert Labelled("b") is not Labelled("b") and Labelled("c").note == "c"


def test_derivations_keep_their_own_declarations(tmp_path):
    """End to end: a vector declared real and finite is refused however many entries of the
    standard q exist in the process the file is loaded from, and a file that builds such an
    entry on the side is not refused for it."""
    from sdpa_proofs import k, q
    from sdpa_proofs.isolation import verify_paths
    from sdpa_proofs.runner import VerifySettings

    assert (q[1] * k[1]).has(q)  # in the cache and among the entries of the loaders' parent
    header = ("from sympy import Eq\nfrom sdpa_proofs import Derivation, E, Step, k, q\n"
              "from sdpa_proofs.expressions import RandomVector\n")
    steps = "steps=[Step(E(Q[1]) * E(k[1]), 'independence', ''), Step(0, 'zero_mean', '')])\n"
    (tmp_path / "declared.py").write_text(
        header + "Q = RandomVector('q', real=True, finite=True)\n"
        "derivation = Derivation(title='declared finite', claim=Eq(E(Q[1] * k[1]), 0), " + steps)
    (tmp_path / "aside.py").write_text(
        header + "_aside = RandomVector('q', real=True, finite=True)[1]\nQ = q\n"
        "derivation = Derivation(title='standard q', claim=Eq(E(Q[1] * k[1]), 0), " + steps)
    run = verify_paths([str(tmp_path)], VerifySettings(monte_carlo=False))
    status = {report.file.rsplit("/", 1)[-1]: report for report in run.derivations}
    assert status["declared.py"].status == "error"
    assert "different RandomVector" in status["declared.py"].error
    assert status["aside.py"].status == "verified"


def test_a_subclass_or_options_are_built_by_sympy_alone():
    class Entry(sp.Indexed):
        pass

    q = sp.IndexedBase("q", real=True)
    assert Entry(q, 1) is not Entry(q, 1) and type(Entry(q, 1)) is Entry
    assert sp.Indexed("r", 1) is not sp.Indexed("r", 1)  # a name, not a base


def test_copies_and_pickles_leave_the_entry_as_it_was():
    import copy
    import pickle

    q = sp.IndexedBase("q", real=True)
    entry = q[7]
    facts = dict(entry._assumptions)
    for other in (copy.copy(entry), copy.deepcopy(entry), pickle.loads(pickle.dumps(entry))):
        assert other == entry and dict(entry._assumptions) == facts
    assert q[7] is entry


def test_sympy_forgets_what_it_built_beyond_the_most_it_keeps(monkeypatch):
    monkeypatch.setattr(sympywork, "MOST_KEPT", 3)
    monkeypatch.setattr(sympywork, "_BUILT", {})
    q = sp.IndexedBase("q", real=True)
    entries = [q[n] for n in range(10)]
    assert len(sympywork._BUILT) <= 3
    assert [q[n] for n in range(10)] == entries == [sympys_entry(q, n) for n in range(10)]


@pytest.mark.parametrize("x", [BASES[1], BASES[1][3], BASES[2][sp.Symbol("i")]], ids=str)
def test_kept_content_follows_the_facts_sympy_adds(x):
    assert x._hashable_content() == sympys_content(x)
    x._hashable_content()  # now kept
    x._assumptions._tell("zero", False)  # a new fact: one more of them
    assert x._hashable_content() == sympys_content(x) and ("zero", False) in sympys_content(x)
    x._assumptions._tell("prime", None)  # asked, not known: not kept while unsettled
    assert x._hashable_content() == sympys_content(x)
    x._assumptions["prime"] = False  # settled, with as many facts as before
    assert x._hashable_content() == sympys_content(x) and ("prime", False) in sympys_content(x)


def test_a_random_vectors_kept_content_is_its_own_and_follows_its_facts():
    """RandomVector adds its declaration to IndexedBase's content; each is kept apart."""
    vector = RandomVector("w", real=True, finite=True)
    assert vector._hashable_content() == sympys_content(vector) + vector.declared
    assert vector._hashable_content() == sympys_content(vector) + vector.declared  # kept
    vector._assumptions._tell("zero", False)
    assert vector._hashable_content() == sympys_content(vector) + vector.declared
    assert sp.IndexedBase._hashable_content(vector) == sympys_content(vector)


def test_an_index_written_as_a_string_is_read_as_sympy_reads_it_then():
    """Review round 59: SymPy reads q["1+1"] as 1 + 1 or 2 by its evaluate flag."""
    q = sp.IndexedBase("q", real=True)
    with sp.evaluate(False):
        unevaluated = q["1+1"]
    assert q["1+1"] == q[2] != unevaluated
