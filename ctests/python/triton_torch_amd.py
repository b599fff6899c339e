#!/usr/bin/env python3
"""PyTorch's rocSHMEM Triton layer against our AMD device bitcode, without a GPU.

    triton_torch_amd.py <folder with librocshmem_device_<gfx>.bc> [<gfx> ...]

torch/distributed/_symmetric_memory/_rocshmem_triton.py (imported by ROCm builds of PyTorch)
declares rocSHMEM's device functions with `core.extern_elementwise`, each returning int32, and
links `librocshmem_device_<arch>.bc` under the extern_libs key "rocshmem". This program declares
the same functions the same way (the names and types below are that file's; its code is not
copied here, and torch is not needed), plus the three C-linkage functions this library adds for
the next version of that file (signal_op, alltoallmem_wg, broadcastmem_wg: int32 team first, as
its reductions), calls every one from one Triton kernel, and compiles it with Triton's AMD
back end for each arch (default: every librocshmem_device_gfx*.bc of the folder) against our
bitcode. It checks:
  - every declared function is defined by the bitcode and linked: no rocSHMEM function is left
    unresolved in the final LLVM IR, and the code object links (ld.lld);
  - every call has the definition's own types (Triton's int32/int64 declarations were rewritten
    by LLVM, not left as mismatched calls that would pass garbage);
  - the code object exports ROCSHMEM_CTX_DEFAULT (16 bytes) and the team globals it uses, which
    rocshmem_hipmodule_init looks up with hipModuleGetGlobal;
  - only what the kernel calls was linked (not the whole library).
Prints "PASS <arch>: ..." or "FAIL <arch>: ..." lines; exit status 0 only if every arch passes.
"""

import os
import re
import sys
import time

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.language import core

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton"))
from llir_check import check_llir, elf_symbols  # noqa: E402

I32, I64, U64 = core.dtype("int32"), core.dtype("int64"), core.dtype("uint64")

# (symbol, argument dtypes, pure): every declaration returns int32, as torch's do.
RMA = (I64, I64, I64, I32)  # dest, source, bytes, pe
TORCH = [
    ("rocshmem_putmem_wg", RMA, False),
    ("rocshmem_getmem_wg", RMA, False),
    ("rocshmem_getmem_nbi_wg", RMA, False),
    ("rocshmem_putmem_signal_wg", (I64, I64, I64, I64, U64, I32, I32), False),
    ("rocshmem_int_wait_until", (I64, I32, I32), False),
    ("rocshmem_uint64_wait_until", (I64, I32, U64), False),
    ("rocshmem_fence", (), False),
    ("rocshmem_quiet", (), False),
    ("rocshmem_my_pe", (), True),
    ("rocshmem_n_pes", (), True),
    ("rocshmem_barrier_all_wg", (), False),
    ("rocshmem_sync_all_wg", (), False),
]
# torch's reduce: team (int32, 0 = all PEs), dest, source, nreduce (int32).
REDUCE_TYPES = ("short", "int", "long", "float", "double")  # int16, int32, int64, fp32, fp64
REDUCE_OPS = ("sum", "max", "min", "prod")
TORCH += [(f"rocshmem_{t}_{op}_reduce_wg", (I32, I64, I64, I32), False) for t in REDUCE_TYPES for op in REDUCE_OPS]
# Ours, in the same style (the functions that layer stubs out today).
OURS = [
    ("rocshmem_signal_op", (I64, U64, I32, I32), False),  # sig_addr, signal, sig_op, pe
    ("rocshmem_alltoallmem_wg", (I32, I64, I64, I64), False),  # team, dest, source, bytes per PE
    ("rocshmem_broadcastmem_wg", (I32, I64, I64, I64, I32), False),  # team, dest, source, bytes, pe_root
]
DECLS = {name: (types, pure) for name, types, pure in TORCH + OURS}


@core.extern
def call(name, *args, _semantic=None):
    """One declared function, called as torch calls it: extern_elementwise, int32 result."""
    name = core._unwrap_if_constexpr(name)
    types, pure = DECLS[name]
    assert len(args) == len(types), name
    args = [core.cast(a, t, _semantic=_semantic) for a, t in zip(args, types)]
    return core.extern_elementwise("", "", args, {tuple(types): (name, I32)}, is_pure=pure, _semantic=_semantic)


@triton.jit
def every_call(dst, src, sig, ivar, out, nbytes, r16, r32, r64, rf32, rf64):
    """Calls each declared function once (compiled, never run here)."""
    me = call("rocshmem_my_pe")
    n = call("rocshmem_n_pes")
    nxt = (me + 1) % n
    # The void functions' int32 results are not read (as torch's callers do not): LLVM then
    # rewrites each call to the definition's type; a read result would stay a mismatched call.
    call("rocshmem_putmem_wg", dst, src, nbytes, nxt)
    call("rocshmem_getmem_wg", dst, src, nbytes, nxt)
    call("rocshmem_getmem_nbi_wg", dst, src, nbytes, nxt)
    call("rocshmem_putmem_signal_wg", dst, src, nbytes, sig, 1, 0, nxt)
    call("rocshmem_int_wait_until", ivar, 0, 1)
    call("rocshmem_uint64_wait_until", sig, 3, 1)
    call("rocshmem_fence")
    call("rocshmem_quiet")
    call("rocshmem_barrier_all_wg")
    call("rocshmem_sync_all_wg")
    call("rocshmem_signal_op", sig, 5, 1, nxt)
    acc = call("rocshmem_alltoallmem_wg", 0, dst, src, nbytes)
    acc += call("rocshmem_broadcastmem_wg", 0, dst, src, nbytes, 0)
    acc += call("rocshmem_short_sum_reduce_wg", 0, r16 + 64, r16, 64)
    acc += call("rocshmem_short_max_reduce_wg", 0, r16 + 64, r16, 64)
    acc += call("rocshmem_short_min_reduce_wg", 0, r16 + 64, r16, 64)
    acc += call("rocshmem_short_prod_reduce_wg", 0, r16 + 64, r16, 64)
    acc += call("rocshmem_int_sum_reduce_wg", 0, r32 + 64, r32, 64)
    acc += call("rocshmem_int_max_reduce_wg", 0, r32 + 64, r32, 64)
    acc += call("rocshmem_int_min_reduce_wg", 0, r32 + 64, r32, 64)
    acc += call("rocshmem_int_prod_reduce_wg", 0, r32 + 64, r32, 64)
    acc += call("rocshmem_long_sum_reduce_wg", 0, r64 + 64, r64, 64)
    acc += call("rocshmem_long_max_reduce_wg", 0, r64 + 64, r64, 64)
    acc += call("rocshmem_long_min_reduce_wg", 0, r64 + 64, r64, 64)
    acc += call("rocshmem_long_prod_reduce_wg", 0, r64 + 64, r64, 64)
    acc += call("rocshmem_float_sum_reduce_wg", 0, rf32 + 64, rf32, 64)
    acc += call("rocshmem_float_max_reduce_wg", 0, rf32 + 64, rf32, 64)
    acc += call("rocshmem_float_min_reduce_wg", 0, rf32 + 64, rf32, 64)
    acc += call("rocshmem_float_prod_reduce_wg", 0, rf32 + 64, rf32, 64)
    acc += call("rocshmem_double_sum_reduce_wg", 0, rf64 + 64, rf64, 64)
    acc += call("rocshmem_double_max_reduce_wg", 0, rf64 + 64, rf64, 64)
    acc += call("rocshmem_double_min_reduce_wg", 0, rf64 + 64, rf64, 64)
    acc += call("rocshmem_double_prod_reduce_wg", 0, rf64 + 64, rf64, 64)
    tl.store(out, acc + me + n)


SIGNATURE = {"dst": "*u8", "src": "*u8", "sig": "*u64", "ivar": "*i32", "out": "*i32", "nbytes": "i64",
             "r16": "*i16", "r32": "*i32", "r64": "*i64", "rf32": "*fp32", "rf64": "*fp64"}
GLOBALS = {"ROCSHMEM_CTX_DEFAULT": 16, "ROCSHMEM_TEAM_WORLD": 8, "ROCSHMEM_TEAM_SHARED": 8}


def check_arch(arch, bitcode):
    # torch's key: Triton's AMD back end links an extern library only into a module that calls a
    # function whose name contains the key.
    options = {"num_warps": 4, "extern_libs": {"rocshmem": bitcode}}
    t0 = time.monotonic()
    try:
        src = triton.compiler.ASTSource(fn=every_call, signature=SIGNATURE, constexprs={})
        k = triton.compile(src, target=GPUTarget("hip", arch, 32 if arch.startswith(("gfx10", "gfx11", "gfx12")) else 64),
                           options=options)
    except Exception as e:  # noqa: BLE001 - any compiler failure is this arch's
        return [f"Triton could not compile the kernel with {bitcode}: {type(e).__name__}: {e}"], ""
    secs = time.monotonic() - t0
    llir = k.asm["llir"]
    problems, nfuncs, ncalls = check_llir(llir)
    called = set(re.findall(r"call [^@\n]*@(rocshmem\w*)\(", llir))
    # LLVM may inline a called entry point, and keeps the others: each must be a definition
    # (checked above) or have been inlined away; none may remain undefined.
    for name in DECLS:
        if re.search(rf"^declare [^@]*@{name}\(", llir, re.M):
            problems.append(f"{name} is not defined by the bitcode")
    ttir = k.asm["ttir"]
    missing = [name for name in DECLS if f'symbol = "{name}"' not in ttir]
    if missing:
        problems.append(f"the kernel does not call {missing} (the test is incomplete)")
    # The entry points are small (the heavy bodies are outlined, ROCSHMEM_DEV_OUTLINE), so LLVM
    # may inline every one of them; then the kernel still calls the library's own functions.
    internal = set(re.findall(r"call [^@\n]*@(_Z\w*rocshmem\w*)\(", llir))
    if ncalls == 0 and not called and not internal:
        problems.append("no call into the library was left to check (did the kernel compile to nothing?)")
    syms = elf_symbols(k.asm["hsaco"])
    for g, size in GLOBALS.items():
        if g not in llir:
            continue
        s = syms.get(g)
        if s is None:
            problems.append(f"the code object has no symbol {g} (hipModuleGetGlobal cannot find it)")
        elif s[1] != 1 or s[3] == 0 or s[0] == 0:
            problems.append(f"the code object's {g} is not a defined global object (binding {s[0]}, type {s[1]})")
        elif s[2] != size:
            problems.append(f"the code object's {g} has {s[2]} bytes, rocshmem_hipmodule_init copies {size}")
    if "ROCSHMEM_CTX_DEFAULT" not in syms:
        problems.append("the code object has no ROCSHMEM_CTX_DEFAULT (rocshmem_hipmodule_init requires it)")
    defined = set(re.findall(r"^define [^@]*@(rocshmem_\w+)\(", llir, re.M))
    if len(defined) > 200:
        problems.append(f"{len(defined)} library functions were linked for a kernel that calls {len(DECLS)}: the "
                        "bitcode keeps every entry point alive")
    summary = (f"{secs:.1f} s, {len(DECLS)} functions declared as torch does, {ncalls} calls checked against "
               f"{nfuncs} definitions, code object {len(k.asm['hsaco']) // 1024} KiB, globals "
               + ", ".join(f"{g}[{syms[g][2]}]" for g in GLOBALS if g in syms))
    return problems, summary


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = sys.argv[1]
    arches = sys.argv[2:]
    if not arches:
        arches = sorted(m.group(1) for f in os.listdir(folder)
                        if (m := re.fullmatch(r"librocshmem_device_(gfx\w+)\.bc", f)))
    if not arches:
        print(f"FAIL triton_torch_amd: no librocshmem_device_gfx*.bc in {folder}", file=sys.stderr)
        return 1
    print(f"triton_torch_amd: triton {triton.__version__}, {len(DECLS)} functions, arches {' '.join(arches)}", flush=True)
    failed = 0
    for arch in arches:
        bc = os.path.abspath(os.path.join(folder, f"librocshmem_device_{arch}.bc"))
        if not os.path.isfile(bc):
            print(f"FAIL {arch}: no {bc}", flush=True)
            failed += 1
            continue
        problems, summary = check_arch(arch, bc)
        for p in problems:
            print(f"FAIL {arch}: {p}", flush=True)
        if not problems:
            print(f"PASS {arch}: {summary}", flush=True)
        failed += bool(problems)
    print(f"{len(arches) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
