#!/usr/bin/env python3
"""Checks the layout rules of the hand-written code (docs/design.md, "Inside the core"):

- no file over 800 lines and no Rust function over 100 lines (signature to closing brace), in
  src/ and in the build code: build.rs, device/**/*.rs, codegen/;
- no cycle in the import graph of src/'s Rust files: an edge A -> B when file A names module
  file B by a path (`crate::x::y`, `super::x`, `self::x`, or a child module `x::` that A
  declares). Every such edge counts, a folder's `mod.rs` naming its own parts included: a
  `mod.rs` that its parts build on must not name them back (put what both need in a part of
  its own). `mod x;` declarations and `#[cfg(test)]` modules do not count;
- no cycle among the top-level modules of src/ (each folder or file under src/ one node; an
  edge where any file of one names a file of another): the layers of docs/design.md.

Generated files (those codegen/generated-files.txt lists, and src/api/generated/) are left out.
Exits 1 listing every offender, 0 with a one-line summary otherwise.

Usage: check-layout.py [REPO_ROOT]   (default: the folder above this script; runs --self-test first)
       check-layout.py --self-test     (the checker finds each kind of offender in a made-up tree)
"""

import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FN_LINES = 100


def generated(root):
    out = set()
    listing = os.path.join(root, "codegen", "generated-files.txt")
    if os.path.exists(listing):
        with open(listing) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    out.add(os.path.normpath(line))
    return out


def hand_written(root):
    """src/'s hand-written files."""
    gen = generated(root)
    src = os.path.join(root, "src")
    for d, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            rel = os.path.normpath(os.path.relpath(os.path.join(d, name), root))
            if rel in gen or rel.startswith(os.path.join("src", "api", "generated") + os.sep):
                continue
            if name.startswith("gen_"):
                continue
            yield rel


def build_code(root):
    """The hand-written Rust of the build: build.rs, device/**/*.rs, codegen/ (sizes only)."""
    gen = generated(root)
    if os.path.exists(os.path.join(root, "build.rs")):
        yield "build.rs"
    for top in ("device", "codegen"):
        for d, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                rel = os.path.normpath(os.path.relpath(os.path.join(d, name), root))
                if name.endswith(".rs") and rel not in gen:
                    yield rel


def strip_code(text):
    """Text with comments, string and char literals blanked (newlines kept), so that braces
    and paths are those of the code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), or a lifetime ('a), which stays.
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(code, open_at):
    """Index just past the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def without_tests(code):
    """`code` with every `#[cfg(test)]` module blanked (newlines kept)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code)
        if not m:
            return code
        end = block_end(code, m.end() - 1)
        code = code[: m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def long_functions(code):
    """(name, first line, lines) of every function longer than MAX_FN_LINES."""
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        # The body: the first `{` after the signature at parenthesis depth 0 (a `;` first is a
        # declaration without a body).
        depth, j = 0, m.end()
        while j < len(code):
            c = code[j]
            if c in "(<[":
                depth += 1
            elif c in ")>]":
                depth -= 1 if c != ">" or code[j - 1] != "-" else 0
            elif c == ";" and depth <= 0:
                j = -1
                break
            elif c == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        end = block_end(code, j)
        first = code.count("\n", 0, m.start()) + 1
        lines = code.count("\n", m.start(), end) + 1
        if lines > MAX_FN_LINES:
            yield m.group(1), first, lines


def module_of(rel):
    """src/gpu/mod.rs -> ('gpu',), src/gpu/cuda.rs -> ('gpu', 'cuda'), src/lib.rs -> ()."""
    parts = rel.split(os.sep)[1:]
    parts[-1] = parts[-1][:-3]
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    if parts and parts[0] == "bin":
        return None
    return tuple(parts)


def imports(code, mod, declared, modules):
    """The module files `code` (of module `mod`, declaring child modules `declared`) names."""
    found = set()

    def resolve(path):
        # The longest prefix of `path` that is a module of the crate.
        for k in range(len(path), -1, -1):
            if tuple(path[:k]) in modules:
                return tuple(path[:k])
        return None

    def absolute(segs):
        out = list(mod)
        if segs[0] == "crate":
            out, segs = [], segs[1:]
        elif segs[0] in ("self", "super"):
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    out = out[:-1]
                segs = segs[1:]
        elif segs[0] in declared:
            pass
        else:
            return None
        return out + segs

    # `use` trees: expand braces.
    def expand(prefix, tree):
        tree = tree.strip()
        if not tree:
            return []
        if tree.startswith("{") and tree.endswith("}"):
            items, depth, cur = [], 0, ""
            for ch in tree[1:-1]:
                if ch == "," and depth == 0:
                    items.append(cur)
                    cur = ""
                    continue
                depth += ch == "{"
                depth -= ch == "}"
                cur += ch
            items.append(cur)
            return [p for it in items for p in expand(prefix, it)]
        m = re.match(r"([\w:]*?)(::)?(\{.*\})$", tree, re.S)
        if m and m.group(3):
            head = [s for s in m.group(1).split("::") if s]
            return expand(prefix + head, m.group(3))
        path = tree.split(" as ")[0].strip()
        return [prefix + [s for s in path.split("::") if s and s != "*"]]

    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for segs in expand([], m.group(1)):
            if segs:
                p = absolute(segs)
                if p is not None:
                    found.add(resolve(p))
    for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+|(\w+)(?:::\w+)+)", code):
        segs = m.group(1).split("::")
        if m.group(2) and m.group(2) not in declared:
            continue
        p = absolute(segs)
        if p is not None:
            found.add(resolve(p))
    found.discard(None)
    found.discard(mod)
    return found


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def self_test():
    """A made-up tree with one offender of each kind, and a clean one: the checker must list
    exactly those offenders, and pass the clean tree."""
    import contextlib
    import io
    import tempfile

    def write(root, files):
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)

    long_body = "".join(f"    let x{i} = {i};\n" for i in range(100))
    clean = {
        "src/lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
        "src/a/mod.rs": "pub mod part;\npub struct A;\n",
        "src/a/part.rs": "use super::A;\npub fn g() { let _ = A; let _ = \"crate::b::B\"; }\n",
        "src/b.rs": "use crate::a::A;\n// crate::c::f() in a comment\npub struct B(A);\npub fn h() { crate::a::part::g() }\n"
        "#[cfg(test)]\nmod tests {\n    fn t() { crate::c::f(); }\n}\n",
        "src/c/mod.rs": "pub mod x;\npub fn f() { x::y(); }\n",
        "src/c/x.rs": "pub fn y() { crate::b::h(); }\n",
        "src/api/generated/big.rs": "\n" * 900,
        "codegen/generated-files.txt": "src/cxx/gen_shim.cpp\n",
        "src/cxx/gen_shim.cpp": "\n" * 900,
        "build.rs": "fn main() {}\n",
        "codegen/emit.rs": "pub fn emit() {}\n",
    }
    bad = dict(clean)
    # A file and a function too long, in src/ and in the build code; a mod.rs that names the
    # part that names it; top-level modules that name each other through files that do not.
    bad["src/a/part.rs"] = "use super::A;\nuse crate::b::B;\npub fn g() {\n" + long_body + "}\n"
    bad["src/b.rs"] = "use crate::a::{self, A};\npub struct B(A);\npub fn h() {}\n" + "\n" * 800
    bad["src/c/x.rs"] = "use super::f;\npub fn y() {}\n"
    bad["build.rs"] = "fn main() {\n" + long_body + "}\n"
    bad["codegen/emit.rs"] = "\n" * 801
    outcomes = []
    want_bad = [
        "src/b.rs: 803 lines",
        "fn g has 102 lines",
        "build.rs:1: fn main has 102 lines",
        "codegen/emit.rs: 801 lines",
        "import cycle between src/c/mod.rs, src/c/x.rs",
        "top-level module cycle between a, b:",
    ]
    for files, want in ((clean, []), (bad, want_bad)):
        with tempfile.TemporaryDirectory() as root:
            write(root, files)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = check(root)
            text = out.getvalue()
            ok = (rc == 0) if not want else (rc == 1 and all(w in text for w in want) and text.count("\n  ") == len(want))
            outcomes.append(ok)
            if not ok:
                print(f"check-layout self-test: expected {want or 'a pass'}, got rc {rc}:\n{text}")
    if all(outcomes):
        print("check-layout self-test: long files and functions (src/ and build code), a mod.rs cycle and a top-level "
              "cycle are found; a clean tree passes")
        return 0
    return 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    # The checker itself first: a check that cannot fail would pass anything.
    if self_test() != 0:
        return 1
    return check(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))


def sizes(root, rel, problems):
    """Checks one file's size and its functions'; returns its code (comments and strings
    blanked) for Rust files, else None."""
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if n > MAX_FILE_LINES:
        problems.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES}): split it by job")
    if not rel.endswith(".rs"):
        return None
    code = strip_code(text)
    for name, first, lines in long_functions(code):
        problems.append(f"{rel}:{first}: fn {name} has {lines} lines (at most {MAX_FN_LINES}): split it into named steps")
    return code


def check(root):
    problems = []
    files = list(hand_written(root))
    build = list(build_code(root))
    rust = {}
    for rel in files:
        code = sizes(root, rel, problems)
        if code is not None and module_of(rel) is not None:
            rust[rel] = without_tests(code)
    for rel in build:
        sizes(root, rel, problems)

    modules = {module_of(rel): rel for rel in rust}
    # Generated Rust files are modules too (paths into them resolve to them), without edges.
    for rel in generated(root):
        if rel.endswith(".rs") and rel.startswith("src" + os.sep):
            modules.setdefault(module_of(rel), rel)
    gen_dir = os.path.join(root, "src", "api", "generated")
    if os.path.isdir(gen_dir):
        for name in os.listdir(gen_dir):
            if name.endswith(".rs"):
                rel = os.path.join("src", "api", "generated", name)
                modules.setdefault(module_of(rel), rel)
    graph = {}
    for rel, code in rust.items():
        mod = module_of(rel)
        declared = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
        graph[rel] = sorted(modules[m] for m in imports(code, mod, declared, modules) if modules[m] != rel)
    for comp in cycles(graph):
        members = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in graph[a] if b in members]
        problems.append("import cycle between " + ", ".join(comp) + " (" + "; ".join(edges) + ")")
    # The same graph with each top-level module of src/ as one node (lib.rs, which declares
    # them, is none); each edge keeps one file edge that makes it, to name in a report.
    top = {}
    for a, targets in graph.items():
        ma = module_of(a)
        for b in targets:
            mb = module_of(b)
            if ma and mb and ma[0] != mb[0]:
                top.setdefault(ma[0], {}).setdefault(mb[0], f"{a} -> {b}")
    for comp in cycles({k: sorted(v) for k, v in top.items()}):
        members = set(comp)
        edges = [f"{a} -> {b} ({top[a][b]})" for a in comp for b in sorted(top.get(a, {})) if b in members]
        problems.append("top-level module cycle between " + ", ".join(comp) + ": " + "; ".join(edges))

    if problems:
        print(f"check-layout: {len(problems)} problem(s) in the hand-written code (docs/design.md, \"Inside the core\"):")
        for p in problems:
            print("  " + p)
        return 1
    tops = len({module_of(r)[0] for r in rust if module_of(r)})
    print(f"check-layout: {len(files)} hand-written files in src/ and {len(build)} of build code: none over "
          f"{MAX_FILE_LINES} lines, no function over {MAX_FN_LINES} lines; no import cycle among {len(rust)} Rust "
          f"modules (every edge counted) nor among {tops} top-level modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
