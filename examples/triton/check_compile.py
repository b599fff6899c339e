#!/usr/bin/env python3
"""Compiles the Triton kernels of this folder for an NVIDIA GPU with our device bitcode, without a
GPU (Triton bundles ptxas), and checks what the GPU run relies on.

    check_compile.py [--bitcode librocshmem_device_sm_90.bc] [--arch 90]

(default: the bitcode of the installed package `rocshmem`, as rocshmem.triton finds it). Needs
triton (the CPU-only wheel is enough) and the package, no torch. For each kernel
(put_signal_graph.ring_put_signal, every_function.every_function, which calls every device
function of rocshmem.triton but the team collectives, and every_function.team_collectives):
  - Triton links the bitcode and compiles to PTX and a cubin (ptxas);
  - the LLVM IR has no unresolved function left, and every call into the library has the
    library's own types (the int32/int64 declarations were rewritten, not left mismatched);
  - the PTX declares the library globals it uses `.visible`, and ROCSHMEM_CTX_DEFAULT is there;
  - the cubin's symbol table has them as global objects of the right size: what
    cuModuleGetGlobal (inside rocshmem_hipmodule_init) looks up.
Prints "PASS <kernel>: ..." or "FAIL <kernel>: ..." lines; exit status 0 only if all pass.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import triton
from triton.backends.compiler import GPUTarget

import rocshmem.triton as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llir_check import check_llir, elf_symbols  # noqa: E402
from every_function import EVERY, TEAM, every_function, team_collectives  # noqa: E402
from put_signal_graph import ring_put_signal  # noqa: E402


KERNELS = [
    (ring_put_signal, {"dst": "*u8", "src": "*u8", "sig": "*i64", "epoch": "*i64", "nbytes": "i32", "nxt": "i32"}),
    (every_function, EVERY),
    (team_collectives, TEAM),
]

# Sizes of the globals rocshmem_hipmodule_init copies (None: any; it checks the size itself).
GLOBALS = {"ROCSHMEM_CTX_DEFAULT": 16, "ROCSHMEM_TEAM_WORLD": 8, "ROCSHMEM_TEAM_SHARED": 8, "rocshmemi_device_fast": None}


def check_kernel(fn, signature, bitcode, arch):
    options = rt.options(bitcode=bitcode)  # what every launch of an @rt.jit kernel gets
    options["num_warps"] = 4
    t0 = time.monotonic()
    try:
        src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs={})
        k = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
    except Exception as e:  # noqa: BLE001 - report any compiler failure as this kernel's
        return [f"Triton could not compile it with {bitcode}: {type(e).__name__}: {e}"], ""
    secs = time.monotonic() - t0
    problems, nfuncs, ncalls = check_llir(k.asm["llir"])
    ptx = k.asm["ptx"]
    used = sorted(set(re.findall(r"\b(ROCSHMEM_\w+|rocshmemi_\w+)\b", ptx)))
    visible = set(re.findall(r"^\.visible \.(?:global|const) .*?\b(\w+)(?:\[\d+\])?;", ptx, re.M))
    if "ROCSHMEM_CTX_DEFAULT" not in used:
        problems.append("the PTX does not use ROCSHMEM_CTX_DEFAULT (rocshmem_hipmodule_init requires it)")
    for g in used:
        if g not in visible:
            problems.append(f"the PTX uses {g} but does not declare it .visible: cuModuleGetGlobal cannot find it")
    if re.search(r"^\.extern \.func", ptx, re.M):
        problems.append("the PTX still calls external functions: " + ", ".join(
            re.findall(r"^\.extern \.func .*?(\w+)\s*\(", ptx, re.M)))
    syms = elf_symbols(k.asm["cubin"])
    for g in used:
        want = GLOBALS.get(g)
        s = syms.get(g)
        if s is None:
            problems.append(f"the cubin has no symbol {g}")
        elif s[0] != 1 or s[1] != 1 or s[3] == 0:
            problems.append(f"the cubin's {g} is not a defined global object (binding {s[0]}, type {s[1]})")
        elif want is not None and s[2] != want:
            problems.append(f"the cubin's {g} has {s[2]} bytes, rocshmem_hipmodule_init copies {want}")
    summary = (f"sm_{arch}: {secs:.1f} s, {nfuncs} library functions linked, {ncalls} calls checked, "
               f"PTX {len(ptx) // 1024} KiB, globals {', '.join(f'{g}[{syms[g][2]}]' for g in used if g in syms)}")
    called = len(set(re.findall(r'symbol = "(rocshmem\w+)"', k.asm.get("ttgir", "") or k.asm.get("ttir", ""))))
    if nfuncs > called + 50:
        problems.append(f"{nfuncs} library functions were linked for a kernel that calls {called}: the bitcode "
                        "keeps every entry point alive (llvm.used / llvm.compiler.used), so Triton compiles the "
                        "whole library into each kernel")
    return problems, summary


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bitcode", help="librocshmem_device_sm_XX.bc (default: the package's, as rocshmem.triton "
                                     "finds it: ROCSHMEM_BITCODE, next to ROCSHMEM_LIBRARY, or bundled)")
    p.add_argument("--arch", type=int, default=90, help="compute capability, default 90")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: check this kernel, in this process
    args = p.parse_args()
    if not args.bitcode:
        try:
            args.bitcode = rt.bitcode_path(args.arch)
        except Exception as e:  # noqa: BLE001 - reported as the failure
            print(f"FAIL check_compile: {e}", file=sys.stderr)
            return 1
    if not os.path.isfile(args.bitcode):
        print(f"FAIL check_compile: no device bitcode ({args.bitcode!r}): give --bitcode or ROCSHMEM_BITCODE",
              file=sys.stderr)
        return 1
    bitcode = os.path.abspath(args.bitcode)
    kernels = {fn.fn.__name__: (fn, sig) for fn, sig in KERNELS}
    if args.one:
        fn, sig = kernels[args.one]
        problems, summary = check_kernel(fn, sig, bitcode, args.arch)
        for pr in problems:
            print(f"FAIL {args.one}: {pr}", file=sys.stderr, flush=True)
        if not problems:
            print(f"PASS {args.one}: {summary}", flush=True)
        return 1 if problems else 0
    print(f"check_compile: triton {triton.__version__}, {bitcode}", flush=True)
    failed = 0
    for name in kernels:
        # One process per kernel: an assertion inside Triton's LLVM aborts the process.
        rc = subprocess.run([sys.executable, os.path.abspath(__file__), "--bitcode", bitcode, "--arch",
                             str(args.arch), "--one", name]).returncode
        if rc < 0 or rc > 1:
            print(f"FAIL {name}: the Triton compiler died ({'signal ' + str(-rc) if rc < 0 else 'status ' + str(rc)}) "
                  "compiling it with this bitcode (see above). A bitcode that keeps all its entry points "
                  "(__attribute__((used))) makes Triton compile the whole library into the kernel, and Triton "
                  "3.6's NVPTX back end asserts on some of it", file=sys.stderr, flush=True)
        failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
