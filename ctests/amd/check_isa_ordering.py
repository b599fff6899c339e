#!/usr/bin/env python3
"""Memory ordering of the AMD device library, checked in the ISA (no GPU needed).

For gfx942 and gfx950 (MI300 / MI325 / MI355), code-generates entry points of the shipped
librocshmem_device_<arch>.bc (llvm-extract --recursive, then llc, the tools of the LLVM that made
the bitcode) and checks what the AMD memory model requires for one GPU's stores and atomics to be
seen by another GPU (over XGMI) or the CPU on fine-grained or uncached memory, the heap kinds of
docs/amd.md. Source: LLVM's AMDGPUUsage, "Memory Model GFX942" (which gfx950 follows):

- system scope is the sc0 sc1 bits: an atomic load or store at system scope carries both, an
  atomic read-modify-write carries sc1 (and sc0 when it returns the old value);
- a release at system scope writes the L2 back first: `buffer_wbl2 sc0 sc1`, then
  `s_waitcnt vmcnt(0)` before the releasing store or atomic;
- an acquire at system scope invalidates after the load: `buffer_inv sc0 sc1`;
- a fence (acq_rel / seq_cst, system) is both: `buffer_wbl2 sc0 sc1`, wait, `buffer_inv sc0 sc1`;
- a polling loop reads the flag with a system-scope load (sc0 sc1): a plain load would hit a
  cached copy and spin forever on a value another GPU already changed.

usage: check_isa_ordering.py <lib dir> [arches]   (default "gfx942;gfx950")
Tools: <tool>-N on the PATH (or $AMD_LLVM_BIN/<tool>), the newest N that reads the bitcode.
Exits non-zero on any violation, naming the entry point and the instruction.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Entry points: what each must show. Names are the extern "C" bitcode entry points
# (ctests/data/rocshmem-api-names.tsv, "D(extern C, bitcode)").
CHECKS = {
    # quiet and fence complete earlier puts: a system-scope fence.
    "rocshmem_quiet": ["fence"],
    "rocshmem_fence": ["fence"],
    "rocshmem_threadfence_system": ["fence"],
    # put: plain stores of the data (delivered by a later quiet, checked above).
    "rocshmem_putmem": ["stores"],
    # p: one store.
    "rocshmem_long_p": ["stores"],
    # put + signal (set or add, chosen at run time): the data, then a release at system scope
    # (write-back), then the signal as a system-scope store (set) or atomic add.
    "rocshmem_putmem_signal": ["stores", "release_before_signal", "system_atomics"],
    # signal_fetch: an acquire load at system scope.
    "rocshmem_signal_fetch": ["system_loads", "acquire"],
    # wait_until: polls with system-scope loads and acquires after the loop.
    "rocshmem_uint64_wait_until": ["poll", "acquire"],
    "rocshmem_int_wait_until": ["poll", "acquire"],
    # (sub-word: polls the aligned word that holds it)
    "rocshmem_short_wait_until": ["poll", "acquire"],
    "rocshmem_uint64_wait_until_all": ["poll", "acquire"],
    # barrier: releases its stores, signals with system-scope atomics or stores, polls, acquires.
    # (Its sequence counter is this PE's own, counted at device scope; the peers' flags are
    # system-scope adds, each a release.)
    "rocshmem_barrier_all": ["fence", "release_before_signal", "poll", "acquire"],
    "rocshmem_barrier_all_wg": ["fence", "release_before_signal", "poll", "acquire"],
    # atomics on the heap: system scope.
    "rocshmem_long_atomic_fetch_add": ["system_atomics", "has_atomic"],
    "rocshmem_int_atomic_fetch_add": ["system_atomics", "has_atomic"],
    "rocshmem_long_atomic_compare_swap": ["system_atomics", "has_atomic"],
    "rocshmem_int_atomic_compare_swap": ["system_atomics", "has_atomic"],
    "rocshmem_long_atomic_add": ["system_atomics", "has_atomic"],
}

VMEM_LOAD = re.compile(r"^\s*(global|flat|buffer)_load_\w+")
VMEM_STORE = re.compile(r"^\s*(global|flat|buffer)_store_\w+")
VMEM_ATOMIC = re.compile(r"^\s*(global|flat|buffer)_atomic_\w+")
SMEM_LOAD = re.compile(r"^\s*s_load_\w+|^\s*s_buffer_load_\w+")
WBL2 = re.compile(r"^\s*buffer_wbl2\s+sc0\s+sc1\b")
INV = re.compile(r"^\s*buffer_inv\s+sc0\s+sc1\b")
ANY_WBL2 = re.compile(r"^\s*buffer_wbl2\b")
ANY_INV = re.compile(r"^\s*buffer_inv\b")
WAIT_VM0 = re.compile(r"^\s*s_waitcnt\b.*vmcnt\(0\)")
LABEL = re.compile(r"^(\.LBB\w+):")
BRANCH = re.compile(r"^\s*s_(c?branch\w*)\s+(\.LBB\w+)")


def bits(line):
    ops = line.split("//")[0].split(";")[0]
    return set(re.findall(r"\b(sc0|sc1|nt)\b", ops))


def tool(name, bitcode):
    """The newest <name>-N (or $AMD_LLVM_BIN/<name>) whose llvm-extract reads `bitcode`."""
    cands = []
    if os.environ.get("AMD_LLVM_BIN"):
        cands.append(os.environ["AMD_LLVM_BIN"])
    for n in range(30, 14, -1):
        if shutil.which(f"llvm-extract-{n}") and shutil.which(f"llc-{n}"):
            cands.append(str(n))
    for c in cands:
        ext = os.path.join(c, "llvm-extract") if "/" in c else f"llvm-extract-{c}"
        r = subprocess.run([ext, "--func=rocshmem_quiet", bitcode, "-o", os.devnull], capture_output=True)
        if r.returncode == 0:
            return (lambda t: os.path.join(c, t)) if "/" in c else (lambda t: f"{t}-{c}")
    sys.exit(f"amd-isa: FAIL: no llvm-extract/llc on the PATH reads {bitcode} (tried {', '.join(cands) or 'none'})")


def functions(asm):
    """{name: [instruction lines]} of the code-generated functions."""
    out, cur = {}, None
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_]\w*):", line)
        if m and not line.startswith(".L"):
            cur = m.group(1)
            out[cur] = []
            continue
        if cur is None:
            continue
        if line.startswith(".Lfunc_end"):
            cur = None
            continue
        s = line.split(";")[0].rstrip()
        if s.strip() and (not s.strip().startswith(".") or LABEL.match(s.strip())):
            out[cur].append(s.strip())
    return out


CALL_TARGET = re.compile(r"^\s*s_add_u32\s+\w+,\s*\w+,\s*([A-Za-z_]\w*)@rel32@lo")
CALL = re.compile(r"^\s*s_swappc_b64\b|^\s*s_setpc_b64\s+s\[(?!30:31\])")


FORWARDED = "_ZN8rocshmem6device"


def expand(name, funcs, stack=()):
    """`name`'s instructions with each direct call (s_swappc_b64, or the tail call s_setpc_b64
    to an address made by s_getpc + s_add_u32 <function>@rel32@lo) of a C++ API function
    (rocshmem::device::..., the prefix FORWARDED) replaced by the callee's instructions, labels
    renamed per copy: what a thread executes on the IPC path of the entry point, in order. (An
    extern "C" entry point may call its C++ function rather than inline it, as
    rocshmem_barrier_all does since the GDA route made it larger.) Calls into the RO and GDA
    routes (rocshmem::dev::ro / gda, out of line by design) are not followed: their queues are
    this GPU's own memory, ordered at agent scope, and outside what this check is about."""
    out, target, copy = [], None, 0
    for line in funcs[name]:
        m = CALL_TARGET.match(line)
        if m and m.group(1) in funcs and m.group(1).startswith(FORWARDED):
            target = m.group(1)
        if CALL.match(line) and target is not None and target not in stack and len(stack) < 8:
            copy += 1
            tag = f"__{len(stack)}_{copy}"
            out += [re.sub(r"(\.LBB\w+)", lambda x: x.group(1) + tag, l)
                    for l in expand(target, funcs, stack + (name,))]
            target = None
            continue
        out.append(line)
    return out


def loops(body):
    """[(start, end)] index ranges of the loops: a branch back to a label above it."""
    where = {}
    spans = []
    for i, line in enumerate(body):
        m = LABEL.match(line)
        if m:
            where[m.group(1)] = i
        b = BRANCH.match(line)
        if b and b.group(2) in where:
            spans.append((where[b.group(2)], i))
    return spans


def polling_loops(body):
    """The innermost loops that poll: a back-edge span holding a system-scope load and s_sleep
    (the backoff), containing no smaller such span. (The structurizer splits one source loop
    into several back edges; an outer loop, such as the barrier's loop over its peers, re-reads
    read-only tables after each acquire and is not a polling loop.)"""
    def polls(a, b):
        part = body[a:b + 1]
        return (any(VMEM_LOAD.match(x) and {"sc0", "sc1"} <= bits(x) for x in part)
                and any(x.startswith("s_sleep") for x in part))
    cands = sorted({s for s in loops(body) if polls(*s)}, key=lambda s: s[1] - s[0])
    inner = []
    for a, b in cands:
        if not any(a <= x and y <= b for x, y in inner):
            inner.append((a, b))
    return inner


def fence_waits(body, w, v):
    """Whether, at `v` (the invalidate or the signal after the write-back at `w`), every vector
    memory access issued before `w` has completed: an s_waitcnt vmcnt(0) between `w` and `v`,
    or none outstanding (the last one before `w` waited for since, or none since the function's
    entry, which waits for everything). LLVM's waitcnt pass does not count the write-back itself,
    so with nothing outstanding it leaves the table's s_waitcnt out (llc 21)."""
    if any(WAIT_VM0.match(x) for x in body[w:v]):
        return True
    last = max((i for i in range(w) if VMEM_LOAD.match(body[i]) or VMEM_STORE.match(body[i])
                or VMEM_ATOMIC.match(body[i])), default=-1)
    return any(WAIT_VM0.match(x) for x in body[last + 1:w])


def check(name, body, wants, arch):
    """Violations of `wants` in one function's instructions."""
    bad = []
    loads = [l for l in body if VMEM_LOAD.match(l)]
    stores = [l for l in body if VMEM_STORE.match(l)]
    atomics = [l for l in body if VMEM_ATOMIC.match(l)]
    wbl2 = [i for i, l in enumerate(body) if WBL2.match(l)]
    inv = [i for i, l in enumerate(body) if INV.match(l)]
    # A write-back or invalidate without both bits is a narrower scope than system.
    for l in body:
        if (ANY_WBL2.match(l) and not WBL2.match(l)) or (ANY_INV.match(l) and not INV.match(l)):
            if "fence" in wants or "acquire" in wants or "release_before_signal" in wants:
                bad.append(f"a cache operation below system scope: {l}")
    if "fence" in wants:
        ok = any(any(w < v and fence_waits(body, w, v) for v in inv) for w in wbl2)
        if not ok:
            bad.append("no system-scope fence (buffer_wbl2 sc0 sc1, the earlier accesses waited for, "
                       "buffer_inv sc0 sc1)")
    if "stores" in wants and not stores:
        bad.append("no vector store of the data")
    if "has_atomic" in wants and not atomics:
        bad.append("no atomic instruction (the operation did not reach memory as an atomic)")
    if "system_atomics" in wants:
        for l in atomics:
            if "sc1" not in bits(l):
                bad.append(f"an atomic below system scope (no sc1): {l}")
    if "release_before_signal" in wants:
        # Every system-scope store or atomic (the signal) comes after a write-back, with the
        # accesses before it completed.
        sig = [i for i, l in enumerate(body) if (VMEM_ATOMIC.match(l) and "sc1" in bits(l))
               or (VMEM_STORE.match(l) and {"sc0", "sc1"} <= bits(l))]
        if not sig:
            bad.append("no system-scope signal store or atomic")
        for i in sig:
            before = [w for w in wbl2 if w < i]
            if not before or not fence_waits(body, before[-1], i):
                bad.append(f"signal without a release at system scope before it: {body[i]}")
    if "system_loads" in wants:
        sys_loads = [l for l in loads if {"sc0", "sc1"} <= bits(l)]
        if not sys_loads:
            bad.append("no system-scope load (sc0 sc1)")
    if "acquire" in wants:
        if not inv:
            bad.append("no acquire at system scope (buffer_inv sc0 sc1)")
    if "poll" in wants:
        polls = polling_loops(body)
        if not polls:
            bad.append("no polling loop (a loop with a system-scope load and s_sleep)")
        for a, b in polls:
            for l in body[a:b + 1]:
                if VMEM_LOAD.match(l) and not {"sc0", "sc1"} <= bits(l):
                    bad.append(f"a plain (cached) load in a polling loop: {l}")
                if SMEM_LOAD.match(l):
                    bad.append(f"a scalar (cached) load in a polling loop: {l}")
    return bad


def self_test():
    """The checks reject code that breaks each rule (so a pass means something)."""
    poll_ok = [".LBB0_1:", "flat_load_dwordx2 v[2:3], v[0:1] sc0 sc1", "s_waitcnt vmcnt(0) lgkmcnt(0)",
               "buffer_inv sc0 sc1", "s_sleep 1", "s_cbranch_vccz .LBB0_1"]
    fence_ok = ["flat_store_dword v[0:1], v2", "buffer_wbl2 sc0 sc1", "s_waitcnt vmcnt(0) lgkmcnt(0)",
                "buffer_inv sc0 sc1"]
    signal_ok = ["flat_store_dword v[0:1], v2", "buffer_wbl2 sc0 sc1", "s_waitcnt vmcnt(0) lgkmcnt(0)",
                 "flat_atomic_add_x2 v[0:1], v[2:3] sc1"]
    cases = [
        ("poll", poll_ok, True),
        ("poll", [l.replace(" sc0 sc1", "") if l.startswith("flat_load") else l for l in poll_ok]
         + ["flat_load_dwordx2 v[4:5], v[0:1] sc0 sc1"], False),  # a cached load in the loop
        ("poll", [l for l in poll_ok if not l.startswith("s_sleep")], False),
        ("poll", poll_ok[:1] + ["s_load_dwordx2 s[0:1], s[2:3], 0x0"] + poll_ok[1:], False),
        ("fence", fence_ok, True),
        ("fence", [l.replace("sc0 sc1", "sc1") for l in fence_ok], False),  # agent scope only
        ("fence", [l for l in fence_ok if not l.startswith("s_waitcnt")], False),  # store outstanding
        ("fence", fence_ok[:2], False),  # no invalidate
        ("acquire", ["flat_load_dwordx2 v[2:3], v[0:1] sc0 sc1"], False),
        ("system_atomics", ["flat_atomic_add_x2 v[0:1], v[2:3] sc1"], True),
        ("system_atomics", ["flat_atomic_add_x2 v[0:1], v[2:3] sc0"], False),
        ("release_before_signal", signal_ok, True),
        ("release_before_signal", signal_ok[:1] + signal_ok[3:], False),
        ("release_before_signal", [l for l in signal_ok if not l.startswith("s_waitcnt")], False),
        ("has_atomic", ["flat_store_dword v[0:1], v2"], False),
    ]
    # A call is checked as the callee's code at the call site: a fence in the callee counts, one
    # missing from it fails, and the callee's loop labels do not clash with the caller's.
    callee = FORWARDED + "4fooEv"
    funcs = {callee: poll_ok + fence_ok + ["s_setpc_b64 s[30:31]"],
             "entry": ["s_getpc_b64 s[0:1]", f"s_add_u32 s0, s0, {callee}@rel32@lo+4",
                       f"s_addc_u32 s1, s1, {callee}@rel32@hi+12", "s_setpc_b64 s[0:1]"],
             "entry2": [".LBB0_1:", "s_getpc_b64 s[0:1]", f"s_add_u32 s0, s0, {callee}@rel32@lo+4",
                        "s_swappc_b64 s[30:31], s[0:1]", "s_cbranch_vccz .LBB0_1"]}
    cases += [("fence", expand("entry", funcs), True), ("poll", expand("entry", funcs), True),
              ("poll", expand("entry2", funcs), True),
              ("fence", funcs["entry"], False)]
    for want, body, ok in cases:
        got = not check("self-test", body, [want], "gfx942")
        if got != ok:
            sys.exit(f"amd-isa: FAIL: self-test: the {want} check {'rejects' if ok else 'accepts'}: {body}")
    print(f"amd-isa: self-test: {len(cases)} cases (each rule rejects code that breaks it)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    self_test()
    lib = sys.argv[1]
    arches = [a for a in re.split(r"[;, ]", sys.argv[2] if len(sys.argv) > 2 else "gfx942;gfx950") if a]
    fail = 0
    for arch in arches:
        bc = os.path.join(lib, f"librocshmem_device_{arch}.bc")
        if not os.path.isfile(bc):
            print(f"amd-isa: FAIL: no {bc}")
            fail = 1
            continue
        t = tool("llvm-extract", bc)
        with tempfile.TemporaryDirectory() as d:
            small = os.path.join(d, "f.bc")
            args = [t("llvm-extract"), "--recursive"] + [f"--func={f}" for f in CHECKS] + [bc, "-o", small]
            subprocess.run(args, check=True)
            asm = subprocess.run([t("llc"), "-O3", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", small, "-o", "-"],
                                 check=True, capture_output=True, text=True).stdout
        funcs = functions(asm)
        for name, wants in CHECKS.items():
            body = expand(name, funcs) if name in funcs else None
            if body is None:
                print(f"amd-isa: FAIL: {arch}: {name} was not code-generated")
                fail = 1
                continue
            bad = check(name, body, wants, arch)
            n_inv = sum(1 for l in body if INV.match(l))
            n_wb = sum(1 for l in body if WBL2.match(l))
            n_at = sum(1 for l in body if VMEM_ATOMIC.match(l))
            if bad:
                fail = 1
                for b in dict.fromkeys(bad):
                    print(f"amd-isa: FAIL: {arch}: {name}: {b}")
            else:
                print(f"amd-isa: {arch}: {name}: {', '.join(wants)} OK "
                      f"({len(body)} lines, {n_wb} wbl2, {n_inv} inv, {n_at} atomics)")
    if fail:
        print("amd-isa: FAILED")
        sys.exit(1)
    print(f"amd-isa: OK ({', '.join(arches)}: {len(CHECKS)} entry points each)")


if __name__ == "__main__":
    main()
