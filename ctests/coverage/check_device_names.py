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
  - D(template) rows (tile tensor templates, header-only upstream) are listed, not required.

Also counts the rocSHMEM 2.x aliases (`wg_` forms renamed in 3.0).

usage: check_device_names.py <names.tsv> <librocshmem.so>
Prints the counts and every missing name; exits non-zero below 100 % of the required names.
"""
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


def main():
    tsv, lib = sys.argv[1:3]
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
    ]
    total = missing_total = 0
    for what, need, have in checks:
        missing = sorted(n for n in need if n not in have)
        total += len(need)
        missing_total += len(missing)
        print(f"  {what}: {len(need) - len(missing)} / {len(need)}")
        for n in missing:
            print(f"    missing: {n}")
    tmpl = sorted(want["template"])
    print(f"  tile tensor templates (header-only upstream, not required): {len(tmpl)}")
    legacy = sorted(n for n in public if "_wg_" in n and re.search(r"_wg_(alltoall|broadcast|fcollect|reduce|barrier_all|sync_all|team_sync)$", n))
    print(f"  rocSHMEM 2.x aliases defined: {len(legacy)}")
    pct = 100.0 * (total - missing_total) / total if total else 100.0
    print(f"device name coverage: {total - missing_total} / {total} ({pct:.1f} %)")
    return 1 if missing_total else 0


if __name__ == "__main__":
    sys.exit(main())
