#!/usr/bin/env python3
"""The ctypes signatures of python/rocshmem/_lib.py (`_SIGNATURES`), and those given inline to
`call("<name>", ..., restype=..., argtypes=...)` / `fn("<name>", restype, argtypes)` for a literal
name anywhere in the Python packages, against the C header include/rocshmem/rocshmem.h, which
cbindgen writes from the Rust entry points: every name must be declared there with as many
arguments, each (and the result) of a compatible type. A pointer matches `c_void_p`, or `POINTER(T)` / `c_char_p` when what it points
to matches too; integers match by size and sign; structures by value by name.

Usage: check_signatures.py [REPO_ROOT]   (default: three folders above this script; checks
       itself first on a table with one wrong entry of each kind)
Exits 1 listing every mismatch, 0 with a one-line summary otherwise. Needs no built library.
"""

import ast
import ctypes
import importlib
import os
import re
import sys
import types

# The package's structures and the C types they stand for.
STRUCTS = {"UniqueId": "rocshmem_uniqueid_t", "InitAttr": "rocshmem_init_attr_t", "Ctx": "rocshmem_ctx_t"}
C_SCALARS = {
    "void": "void", "bool": "bool", "char": "i8", "int": "i32", "unsigned int": "u32", "long": "i64",
    "unsigned long": "u64", "size_t": "u64", "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16",
    "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64",
}


def load_lib_module(root):
    """python/rocshmem/_lib.py without running the package's __init__ (which needs numpy)."""
    pkg = types.ModuleType("rocshmem")
    pkg.__path__ = [os.path.join(root, "python", "rocshmem")]
    sys.modules["rocshmem"] = pkg
    return importlib.import_module("rocshmem._lib")


def header_declarations(text):
    """{name: (result type, [argument types])} of the functions rocshmem.h declares, and the
    kinds of its typedefs ({name: kind})."""
    typedefs = {}
    for m in re.finditer(r"typedef\s+([\w\s]+?)\s*(\*+)\s*(\w+)\s*;", text):
        typedefs[m.group(3)] = "ptr:" * len(m.group(2)) + C_SCALARS.get(" ".join(m.group(1).split()), "opaque")
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", text):
        typedefs[m.group(1)] = "struct:" + m.group(1)
    decls = {}
    for m in re.finditer(r"^([A-Za-z_][\w\s\*]*?)\s*\b(\w+)\(([^()]*)\);$", text, re.M):
        ret, name, args = m.group(1), m.group(2), m.group(3).strip()
        params = [] if args in ("", "void") else [re.sub(r"\b\w+$", "", a.strip()) for a in args.split(",")]
        decls[name] = (ret, params)
    return decls, typedefs


def c_kind(text, typedefs):
    """A C type as a kind string: 'i32', 'u64', 'bool', 'void', 'struct:<name>', 'ptr:<kind>'."""
    text = " ".join(text.replace("const", " ").split())
    stars = text.count("*")
    base = " ".join(text.replace("*", " ").split())
    kind = C_SCALARS.get(base) or typedefs.get(base) or "unknown:" + base
    return "ptr:" * stars + kind


def py_kind(t):
    """A ctypes type (None: void) as a kind string, as `c_kind`; 'ptr' for c_void_p."""
    if t is None:
        return "void"
    if t is ctypes.c_void_p:
        return "ptr"
    if t is ctypes.c_char_p:
        return "ptr:i8"
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return "ptr:" + py_kind(t._type_)
    if isinstance(t, type) and issubclass(t, ctypes.Structure):
        return "struct:" + STRUCTS.get(t.__name__, t.__name__)
    if t is ctypes.c_bool:
        return "bool"
    signed = t(-1).value < 0
    return f"{'i' if signed else 'u'}{ctypes.sizeof(t) * 8}"


def compatible(c, py):
    if c == py:
        return True
    if py == "ptr" and c.startswith("ptr:"):
        return True  # c_void_p takes any pointer
    if c == "ptr:void" and py.startswith("ptr:"):
        return True  # void * takes any pointer
    if c.startswith("ptr:") and py.startswith("ptr:"):
        return compatible(c[4:], py[4:])
    return False


def mismatches(signatures, decls, typedefs):
    out = []
    for name, (restype, argtypes) in sorted(signatures.items()):
        if name not in decls:
            out.append(f"{name}: not declared in rocshmem.h")
            continue
        ret, params = decls[name]
        if not compatible(c_kind(ret, typedefs), py_kind(restype)):
            out.append(f"{name}: result is {ret.strip()} in rocshmem.h, {py_kind(restype)} in _lib.py")
        if len(params) != len(argtypes):
            out.append(f"{name}: {len(params)} arguments in rocshmem.h, {len(argtypes)} in _lib.py")
            continue
        for i, (p, a) in enumerate(zip(params, argtypes)):
            if not compatible(c_kind(p, typedefs), py_kind(a)):
                out.append(f"{name}: argument {i + 1} is {p.strip()} in rocshmem.h, {py_kind(a)} in _lib.py")
    return out


def inline_signatures(root, lib):
    """{name: (restype, argtypes)} of the calls with a literal name and a signature written out
    in python/ (those whose types name local variables, such as a typed family's element type,
    are left out: the generated table covers them)."""
    namespace = {"ctypes": ctypes, **{n: getattr(lib, n) for n in STRUCTS}}
    namespace.update({n: getattr(ctypes, n) for n in dir(ctypes) if n.startswith("c_")})
    found = {}
    for d, _, files in os.walk(os.path.join(root, "python")):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(d, f)) as src:
                tree = ast.parse(src.read())
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("call", "fn") and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    continue
                name = node.args[0].value
                kw = {k.arg: k.value for k in node.keywords}
                if node.func.id == "fn" and len(node.args) == 3:
                    kw.update(restype=node.args[1], argtypes=node.args[2])
                if name in lib._SIGNATURES or not ({"restype", "argtypes"} & set(kw)):
                    continue  # the table's signature is used
                try:
                    restype = eval(compile(ast.Expression(kw["restype"]), f, "eval"), namespace) if "restype" in kw else None
                    argtypes = eval(compile(ast.Expression(kw["argtypes"]), f, "eval"), namespace) if "argtypes" in kw else []
                except NameError:
                    continue
                found[name] = (restype, list(argtypes))
    return found


def self_test(lib, decls, typedefs):
    """A wrong result, a wrong argument, a missing argument and an unknown name must each be
    reported, and the real table's first entries must pass."""
    c = ctypes
    bad = {
        "rocshmem_my_pe": (c.c_uint64, []),
        "rocshmem_malloc": (c.c_void_p, [c.c_int]),
        "rocshmem_putmem": (None, [c.c_void_p, c.c_void_p, c.c_size_t]),
        "rocshmem_no_such_call": (None, []),
        "rocshmem_init_attr": (c.c_int, [c.c_uint32, c.POINTER(lib.UniqueId)]),
    }
    found = mismatches(bad, decls, typedefs)
    want = ["rocshmem_my_pe: result", "rocshmem_malloc: argument 1", "rocshmem_putmem: 4 arguments",
            "rocshmem_no_such_call: not declared", "rocshmem_init_attr: argument 2"]
    ok = len(found) == len(want) and all(any(f.startswith(w) for f in found) for w in want)
    if not ok:
        print("check_signatures self-test: expected " + "; ".join(want) + ", got:\n  " + "\n  ".join(found))
    return ok


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    lib = load_lib_module(root)
    with open(os.path.join(root, "include", "rocshmem", "rocshmem.h")) as f:
        decls, typedefs = header_declarations(f.read())
    if not self_test(lib, decls, typedefs):
        return 1
    inline = inline_signatures(root, lib)
    problems = mismatches(lib._SIGNATURES, decls, typedefs) + mismatches(inline, decls, typedefs)
    if problems:
        print(f"check_signatures: {len(problems)} ctypes signature(s) in python/ differ from rocshmem.h:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_signatures: the {len(lib._SIGNATURES)} ctypes signatures of _lib.py and {len(inline)} written out "
          f"at calls match rocshmem.h (self-test: each kind of mismatch is found)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
