#!/usr/bin/env python3
"""rocSHMEM from Python through ctypes (no bindings, no compiler): the C ABI of librocshmem.so.

    rocshmem-run -n N python3 ctypes_test.py /path/to/librocshmem.so

Every PE initialises, agrees on PE 0's seed (ROCSHMEM_TEST_SEED replays a run), allocates a
symmetric buffer, puts fresh random bytes into the next PE's buffer at several sizes, and checks
after a barrier what it received from the previous PE; it also reads the next PE's buffer back
with getmem. Exit status 0 on success, 1 with a message naming the PE otherwise.
"""
import ctypes
import os
import random
import sys


def load(path):
    lib = ctypes.CDLL(path)
    c_int, c_size_t, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
    signatures = {
        "rocshmem_init": (None, []),
        "rocshmem_finalize": (None, []),
        "rocshmem_my_pe": (c_int, []),
        "rocshmem_n_pes": (c_int, []),
        "rocshmem_malloc": (c_void_p, [c_size_t]),
        "rocshmem_free": (None, [c_void_p]),
        "rocshmem_putmem": (None, [c_void_p, c_void_p, c_size_t, c_int]),
        "rocshmem_getmem": (None, [c_void_p, c_void_p, c_size_t, c_int]),
        "rocshmem_barrier_all": (None, []),
        "rocshmem_info_get_name": (None, [ctypes.c_char_p]),
    }
    for name, (res, args) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def stream(seed, pe, salt, size):
    """The bytes PE `pe` sends at step `salt`: any PE can recompute them."""
    return random.Random(f"{seed}:{pe}:{salt}").randbytes(size)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lib = load(sys.argv[1])
    lib.rocshmem_init()
    me, n = lib.rocshmem_my_pe(), lib.rocshmem_n_pes()
    failures = []

    def check(cond, msg):
        if not cond:
            failures.append(msg)
            print(f"FAIL PE {me}: {msg}", file=sys.stderr)

    check(0 <= me < n, f"my_pe={me} n_pes={n}")

    # PE 0's seed, put into everyone's symmetric slot.
    slot = lib.rocshmem_malloc(8)
    check(slot is not None, "rocshmem_malloc(8) returned NULL")
    if me == 0:
        env = os.environ.get("ROCSHMEM_TEST_SEED")
        seed = int(env, 0) if env else random.SystemRandom().getrandbits(63)
        raw = ctypes.c_uint64(seed)
        for p in range(n):
            lib.rocshmem_putmem(slot, ctypes.byref(raw), 8, p)
        name = ctypes.create_string_buffer(64)
        lib.rocshmem_info_get_name(name)
        print(f"ctypes_test: {n} PE(s) of {name.value.decode()}, seed {seed:#x} (replay: ROCSHMEM_TEST_SEED={seed:#x})")
        sys.stdout.flush()
    lib.rocshmem_barrier_all()
    seed = ctypes.c_uint64.from_address(slot).value
    lib.rocshmem_free(slot)

    sizes = [1, 7, 100, 4096, 65537, 1 << 20]
    buf = lib.rocshmem_malloc(max(sizes))
    check(buf is not None, "rocshmem_malloc(1 MiB) returned NULL")
    nxt, prev = (me + 1) % n, (me - 1) % n
    for i, size in enumerate(sizes):
        data = stream(seed, me, i, size)
        lib.rocshmem_putmem(buf, data, size, nxt)
        lib.rocshmem_barrier_all()
        got = ctypes.string_at(buf, size)
        want = stream(seed, prev, i, size)
        if got != want:
            at = next(k for k in range(size) if got[k] != want[k])
            check(False, f"{size} bytes from PE {prev} differ at byte {at}")
        back = ctypes.create_string_buffer(size)
        lib.rocshmem_getmem(back, buf, size, nxt)
        check(back.raw == data, f"getmem of {size} bytes from PE {nxt} is not what this PE put there")
        lib.rocshmem_barrier_all()
    lib.rocshmem_free(buf)
    lib.rocshmem_finalize()
    if failures:
        print(f"PE {me}: ctypes_test: {len(failures)} check(s) failed", file=sys.stderr)
        return 1
    if me == 0:
        print(f"ctypes_test: {len(sizes)} sizes checked on {n} PE(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
