"""What Triton's compiled module must show once our device bitcode is linked into it (used by
check_compile.py here, for NVIDIA, and by ctests/python/triton_torch_amd.py, for AMD):
every call into the library resolved and made with the library's own types, and the symbols
of the loaded image.
"""

import re
import struct


def elf_symbols(blob):
    """name -> (binding, type, size, section index) from an ELF64 little-endian symbol table."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
        raise ValueError("the cubin is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", blob, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    syms = {}
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        stroff = sections[sh[6]][4]
        for k in range(sh[5] // 24):
            name_off, info, _other, shndx, _value, size = struct.unpack_from("<IBBHQQ", blob, sh[4] + 24 * k)
            end = blob.index(b"\0", stroff + name_off)
            syms[blob[stroff + name_off:end].decode()] = (info >> 4, info & 0xF, size, shndx)
    return syms


def ir_type(arg):
    """The type of one LLVM IR argument or parameter text ('ptr noundef %0' -> 'ptr')."""
    m = re.match(r"\s*(ptr(?: addrspace\(\d+\))?|i\d+|float|double|half|bfloat|void)\b", arg)
    return m.group(1) if m else arg.strip().split(" ")[0]


def split_args(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def args_at(line, start):
    """The text between the parenthesis at `start` and its match."""
    depth = 0
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start + 1:i]
    return line[start + 1:]


def check_llir(llir):
    problems = []
    undefined = [m for m in re.findall(r"^declare [^@]*@([\w.$]+)\(", llir, re.M) if not m.startswith("llvm.")]
    if undefined:
        problems.append(f"unresolved functions (not in the bitcode?): {undefined}")
    defs = {}
    for m in re.finditer(r"^define [^@]*?(\S+) @(rocshmem\w*)\(", llir, re.M):
        line = llir[m.start():llir.index("\n", m.start())]
        params = args_at(line, line.index("(", line.index("@" + m.group(2))))
        defs[m.group(2)] = (m.group(1), [ir_type(p) for p in split_args(params)])
    calls = 0
    for m in re.finditer(r"call [^@\n]*?(\S+) @(rocshmem\w*)\(", llir):
        name, ret = m.group(2), m.group(1)
        line = llir[m.start():llir.index("\n", m.start())]
        args = [ir_type(a) for a in split_args(args_at(line, line.index("(", line.index("@" + name))))]
        calls += 1
        if name not in defs:
            continue
        if (ret, args) != defs[name]:
            problems.append(f"call {ret} @{name}({', '.join(args)}) does not match its definition "
                            f"{defs[name][0]} ({', '.join(defs[name][1])}): fix the wrapper's types")
    return problems, len(defs), calls
