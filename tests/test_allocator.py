"""The sampler's allocator settings: freed arrays are reused, not mapped afresh (each fresh page
is a page fault the kernel pays for)."""

import platform
import subprocess
import sys
import textwrap

import pytest

from sdpa_proofs.allocator import keep_freed_memory

PROBE = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from sdpa_proofs.allocator import keep_freed_memory
    if sys.argv[1] == "keep":
        assert keep_freed_memory()
    def rounds(n):
        for _ in range(n):
            arrays = [np.ones(2**17) for _ in range(40)]  # 40 MiB in arrays of 1 MiB, then freed
            del arrays
    rounds(1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    rounds(20)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def page_faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                         check=True)
    return int(out.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_freed_arrays_are_reused_instead_of_mapped_afresh():
    """20 rounds of 40 MiB touch 800 MiB: about 200,000 pages of 4 KiB if glibc gives the heap
    back after each round (its default trim threshold is far below 40 MiB), none if it keeps
    it."""
    plain, kept = page_faults("plain"), page_faults("keep")
    assert plain > 20 * 40 * 2**20 // 4096 // 2  # the default really maps afresh
    assert kept < plain // 20


def test_without_glibc_it_says_so_and_changes_nothing(monkeypatch):
    """A C library without mallopt (musl, macOS): False, and no error."""
    import ctypes

    class NoMallopt:
        def __init__(self, *args):
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    assert keep_freed_memory() is False
