#!/usr/bin/env python3
"""Name coverage: every host name of upstream rocSHMEM (sides H, HD and H(undeclared) of
rocshmem-api-names.tsv,) must be

  1. exported by librocshmem.so as a C symbol (plain name, for C / dlopen / FFI users),
  2. exported as a C++ symbol in namespace rocshmem (what objects built against upstream's
     headers reference),
  3. declared in include/rocshmem/rocshmem.h, and
  4. declared in the C++ headers reached from include/rocshmem/rocshmem.hpp.

usage: check_names.py <names.tsv> <librocshmem.so> <include dir>
Prints the counts and every missing name; exits non-zero if anything is missing.
"""
import re
import subprocess
import sys


def required_names(tsv):
    names = []
    for line in open(tsv, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        name, side, _family = line.rstrip("\n").split("\t")
        if side in ("H", "HD", "H(undeclared)"):
            names.append(name)
    return sorted(set(names))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.strip()]
    plain = {s for s in syms if not s.startswith("_Z")}
    mangled = [s for s in syms if s.startswith("_ZN8rocshmem")]
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), check=True, capture_output=True, text=True).stdout
    cxx = set()
    for d in demangled.splitlines():
        m = re.match(r"rocshmem::(rocshmem_\w+)\(", d)
        if m:
            cxx.add(m.group(1))
    return plain, cxx


def declared(paths):
    text = ""
    for p in paths:
        text += open(p, encoding="utf-8").read()
    return set(re.findall(r"\b(rocshmem_\w+)\s*\(", text))


def main():
    tsv, lib, inc = sys.argv[1:4]
    need = required_names(tsv)
    plain, cxx = exported(lib)
    c_decl = declared([f"{inc}/rocshmem/rocshmem.h"])
    hpp = ["rocshmem.hpp", "rocshmem_HOST.hpp", "rocshmem_RMA.hpp", "rocshmem_AMO.hpp", "rocshmem_SIG_OP.hpp",
           "rocshmem_COLL.hpp", "rocshmem_P2P_SYNC.hpp", "rocshmem_RMA_X.hpp", "qp_introspect.hpp"]
    cxx_decl = declared([f"{inc}/rocshmem/{h}" for h in hpp])
    checks = [
        ("exported as C symbols (nm -D)", plain),
        ("exported as C++ symbols in namespace rocshmem", cxx),
        ("declared in rocshmem.h", c_decl),
        ("declared in rocshmem.hpp and its headers", cxx_decl),
    ]
    failed = False
    print(f"upstream host names required (H, HD, H(undeclared)): {len(need)}")
    for what, have in checks:
        missing = [n for n in need if n not in have]
        print(f"  {what}: {len(need) - len(missing)} / {len(need)}")
        for n in missing:
            print(f"    missing: {n}")
        failed |= bool(missing)
    print("name coverage: " + ("FAILED" if failed else "complete"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
