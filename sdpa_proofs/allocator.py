"""The C allocator's settings for a process that allocates and frees large arrays in a loop.

glibc serves a block above its mmap threshold (128 KiB at first, raised as such blocks are
freed, up to 32 MiB) with a fresh mapping, and gives memory at the top of its heap back to the
kernel beyond its trim threshold. Every page of fresh memory then costs a page fault, and the
kernel zeroes it. A Monte Carlo sampler allocates and frees arrays of 1 to 64 MiB thousands of
times: on the bundled catalogue that was 1.9 million page faults and about 10 s of kernel time,
a third of the sampler's time.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's malloc.h


def keep_freed_memory(largest: int = 256 * 2**20) -> bool:
    """Have the allocator keep freed memory for the next allocation: blocks up to ``largest``
    bytes come from the heap, which grows in steps of 64 MiB and is trimmed only beyond four
    times ``largest``.  Only for a worker process (the setting is the whole process's): its
    peak memory grows by about ``largest``.  False where the C library has no ``mallopt``
    (not glibc), which changes nothing else."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c")).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = {M_MMAP_THRESHOLD: largest, M_TRIM_THRESHOLD: 4 * largest, M_TOP_PAD: 64 * 2**20}
    return all(mallopt(option, value) == 1 for option, value in settings.items())
