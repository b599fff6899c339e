#!/usr/bin/env python3
"""Checks the layout rules of the hand-written core in src/ (docs/design.md, "Inside the core"):

- no file over 800 lines;
- no Rust function over 100 lines (signature to closing brace);
- no cycle in the import graph of src/'s Rust files: an edge A -> B when file A names module
  file B by a path (`crate::x::y`, `super::x`, `self::x`, or a child module `x::` that A
  declares). A folder's `mod.rs` naming its own parts (the modules below it) is not an edge:
  the folder owns them, and they may use what it defines; `mod x;` declarations and
  `#[cfg(test)]` modules do not count.

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
    gen = generated(root)
    src = os.path.join(root, "src")
    for d, _, files in os.walk(src):
        for name in sorted(files):
            rel = os.path.normpath(os.path.relpath(os.path.join(d, name), root))
            if rel in gen or rel.startswith(os.path.join("src", "api", "generated") + os.sep):
                continue
            if name.startswith("gen_"):
                continue
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
        "src/lib.rs": "pub mod a;\npub mod b;\n",
        "src/a/mod.rs": "pub mod part;\npub struct A;\npub fn f() { part::g(); }\n",
        "src/a/part.rs": "use super::A;\npub fn g() { let _ = A; let _ = \"crate::b::B\"; }\n",
        "src/b.rs": "use crate::a::A;\n// crate::a::f() in a comment\npub struct B(A);\n"
        "#[cfg(test)]\nmod tests {\n    fn t() { crate::a::f(); }\n}\n",
        "src/api/generated/big.rs": "\n" * 900,
        "codegen/generated-files.txt": "src/cxx/gen_shim.cpp\n",
        "src/cxx/gen_shim.cpp": "\n" * 900,
    }
    bad = dict(clean)
    bad["src/a/part.rs"] = "use super::A;\nuse crate::b::B;\npub fn g() {\n" + long_body + "}\n"
    bad["src/b.rs"] = "use crate::a::{self, A};\npub struct B(A);\nfn h() { crate::a::part::g() }\n" + "\n" * 800
    outcomes = []
    for files, want in ((clean, []), (bad, ["src/b.rs: 803 lines", "fn g has 102 lines", "import cycle between src/a/part.rs, src/b.rs"])):
        with tempfile.TemporaryDirectory() as root:
            write(root, files)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = check(root)
            text = out.getvalue()
            ok = (rc == 0) if not want else (rc == 1 and all(w in text for w in want) and text.count("\n  ") == 3)
            outcomes.append(ok)
            if not ok:
                print(f"check-layout self-test: expected {want or 'a pass'}, got rc {rc}:\n{text}")
    if all(outcomes):
        print("check-layout self-test: a long file, a long function and an import cycle are found; a clean tree passes")
        return 0
    return 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    # The checker itself first: a check that cannot fail would pass anything.
    if self_test() != 0:
        return 1
    return check(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))


def check(root):
    problems = []
    files = list(hand_written(root))
    rust = {}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if n > MAX_FILE_LINES:
            problems.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES}): split it by job")
        if rel.endswith(".rs"):
            code = strip_code(text)
            for name, first, lines in long_functions(code):
                problems.append(f"{rel}:{first}: fn {name} has {lines} lines (at most {MAX_FN_LINES}): split it into named steps")
            if module_of(rel) is not None:
                rust[rel] = without_tests(code)

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
        # A module's own parts (its descendants) are not dependencies of it.
        graph[rel] = sorted(
            modules[m] for m in imports(code, mod, declared, modules) if modules[m] != rel and m[: len(mod)] != mod
        )
    for comp in cycles(graph):
        members = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in graph[a] if b in members]
        problems.append("import cycle between " + ", ".join(comp) + " (" + "; ".join(edges) + ")")

    if problems:
        print(f"check-layout: {len(problems)} problem(s) in src/ (hand-written files; docs/design.md, \"Inside the core\"):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check-layout: {len(files)} hand-written files in src/: none over {MAX_FILE_LINES} lines, no function over "
          f"{MAX_FN_LINES} lines, no import cycle among {len(rust)} Rust modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
