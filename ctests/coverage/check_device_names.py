#!/usr/bin/env python3
"""Device name coverage: every device name of upstream rocSHMEM must be defined by the device
library (here: its host-platform build inside librocshmem.so).

  - D rows: a function rocshmem::<name>(...) (upstream's device symbol);
  - HD rows: the device entry point rocshmem::device::<name>(...) (the plain name belongs to
    the host function; see codegen/device.rs), or, where the device form takes other
    parameters than the host's (rocshmem_barrier() vs rocshmem_barrier(team)), a second
    overload rocshmem::<name>;
  - D(extern C, bitcode) rows: an unmangled entry point. On the host platform the host API
    owns the plain C names, so the bitcode entry points carry the prefix `rocshmemi_bc_`;
  - D(template) rows (upstream's tile templates, header-only): each is called the way an
    upstream program calls it (`using namespace rocshmem;`, a tensor and a tuple type of the
    caller's, upstream's argument order) in a program this check writes, compiles against the
    library's headers and links against the library; the row counts when the program defines
    the instantiation rocshmem::<name><...>(...) with upstream's parameter list.

Also counts the rocSHMEM 2.x aliases (`wg_` forms renamed in 3.0).

usage: check_device_names.py <names.tsv> <librocshmem.so> <C++ compiler> <include dir> <work dir>
Prints the counts and every missing name; exits non-zero below 100 % of the required names.
"""
import os
import re
import subprocess
import sys

BITCODE_PREFIX = "rocshmemi_bc_"


def rows(tsv):
    for line in open(tsv, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        yield line.rstrip("\n").split("\t")[:2]


def symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.strip()]
    plain = {s for s in syms if not s.startswith("_Z")}
    mangled = [s for s in syms if s.startswith("_ZN8rocshmem")]
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), check=True, capture_output=True, text=True).stdout
    device, public, overloads = set(), set(), {}
    for d in demangled.splitlines():
        m = re.match(r"rocshmem::device::(rocshmem_\w+)\(", d)
        if m:
            device.add(m.group(1))
            continue
        m = re.match(r"rocshmem::(rocshmem_\w+)\(", d)
        if m:
            public.add(m.group(1))
            overloads.setdefault(m.group(1), set()).add(d)
    device |= {n for n, sigs in overloads.items() if len(sigs) > 1}
    return plain, device, public


# An upstream program's tensor and tuple types (the contract of upstream's tile templates).
PROBE_HEAD = """// Written by check_device_names.py: every tile template called as upstream programs call it.
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/rocshmem_device.hpp>
using namespace rocshmem;
struct ProbeTensor {
  using element_type = float;
  static constexpr int ndim = 2;
  float *p;
  float *data_handle() const { return p; }
  int stride(int d) const { return d == 0 ? 8 : 1; }
};
struct ProbeCoord {
  int v[2];
  int get(int d) const { return v[d]; }
};
static ProbeTensor dst{nullptr}, src{nullptr};
static ProbeCoord start{{0, 0}}, boundary{{1, 1}};
static rocshmem_team_t team = nullptr;
static rocshmem_ctx_t ctx{};
"""


def template_args(name):
    """Upstream's argument list of a tile template, from its name."""
    m = re.match(r"rocshmem_(ctx_)?tile_(put|get|allgather|broadcast|sum_reduce|max_reduce|min_reduce)(_wave|_wg)?$", name)
    if not m:
        return None
    ctx, fam = m.group(1), m.group(2)
    args = ["ctx"] if ctx else []
    if fam not in ("put", "get"):
        args.append("team")
    args += ["dst", "src", "start", "boundary"]
    if fam != "allgather":
        args.append("1")  # pe, pe_root or root
    args.append("0")  # flags
    return args


def expected_params(args):
    """The demangled parameter list an instantiation with the probe types must have."""
    kinds = {"ctx": "rocshmem::rocshmem_ctx", "team": "unsigned long*", "dst": "ProbeTensor", "src": "ProbeTensor",
             "start": "ProbeCoord", "boundary": "ProbeCoord", "1": "int", "0": "unsigned long"}
    return ", ".join(kinds[a] for a in args)


def templates_defined(names, cxx, include, lib, work):
    """Names whose template instantiation the probe program defines with upstream's parameters."""
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "tile_templates_probe.cpp")
    exe = os.path.join(work, "tile_templates_probe")
    calls = []
    for i, n in enumerate(names):
        args = template_args(n)
        if args is None:
            continue
        calls.append(f"int probe_{i}() {{ return {n}({', '.join(args)}); }}")
    with open(src, "w", encoding="utf-8") as f:
        f.write(PROBE_HEAD + "\n".join(calls) + "\nint main() { return 0; }\n")
    # -O0: every instantiation stays a function of its own.
    cmd = [cxx, "-std=c++17", "-O0", "-I", include, src, "-o", exe, lib, "-Wl,--no-undefined"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("  tile templates: the probe program does not build:")
        print("    " + " ".join(cmd))
        print("\n".join("    " + l for l in r.stderr.splitlines()[:30]))
        return set()
    out = subprocess.run(["nm", "-C", "--defined-only", exe], check=True, capture_output=True, text=True).stdout
    have = set()
    for n in names:
        args = template_args(n)
        if args is None:
            continue
        want = f"rocshmem::{n}<ProbeTensor, ProbeTensor, ProbeCoord>({expected_params(args)})"
        if want in out:
            have.add(n)
    return have


def main():
    tsv, lib, cxx, include, work = sys.argv[1:6]
    plain, device, public = symbols(lib)
    want = {"D": set(), "HD": set(), "bitcode": set(), "template": set()}
    for name, side in rows(tsv):
        if side == "D":
            want["D"].add(name)
        elif side == "HD":
            want["HD"].add(name)
        elif side.startswith("D(extern C"):
            want["bitcode"].add(name)
        elif side == "D(template)":
            want["template"].add(name)
    checks = [
        ("D names defined as rocshmem::<name>", want["D"], public),
        ("HD names with a device entry point rocshmem::device::<name>", want["HD"], device),
        (f"bitcode extern \"C\" entry points ({BITCODE_PREFIX}<name> on the host platform)", want["bitcode"],
         {s[len(BITCODE_PREFIX):] for s in plain if s.startswith(BITCODE_PREFIX)}),
        ("tile templates (rocshmem::<name><tensor, tensor, tuple>, upstream's parameters)", want["template"],
         templates_defined(sorted(want["template"]), cxx, include, lib, work)),
    ]
    total = missing_total = 0
    for what, need, have in checks:
        missing = sorted(n for n in need if n not in have)
        total += len(need)
        missing_total += len(missing)
        print(f"  {what}: {len(need) - len(missing)} / {len(need)}")
        for n in missing:
            print(f"    missing: {n}")
    legacy = sorted(n for n in public if "_wg_" in n and re.search(r"_wg_(alltoall|broadcast|fcollect|reduce|barrier_all|sync_all|team_sync)$", n))
    print(f"  rocSHMEM 2.x aliases defined: {len(legacy)}")
    pct = 100.0 * (total - missing_total) / total if total else 100.0
    print(f"device name coverage: {total - missing_total} / {total} ({pct:.1f} %)")
    return 1 if missing_total else 0


if __name__ == "__main__":
    sys.exit(main())
