"""rocshmem.triton on AMD, compile only (no GPU needed): Triton's AMD backend (the PyPI triton
wheel) compiles kernels that call every function of rocshmem.triton for each arch of
ROCSHMEM_TEST_AMD_ARCHES (default gfx942,gfx950), linking this build's
librocshmem_device_<arch>.bc (ROCSHMEM_TEST_AMD_BITCODE_DIR), and the code object is checked:
  - every rocSHMEM call was resolved by the link (no rocshmem_* left undefined in the LLVM IR
    or the hsaco's symbol table), and each call has the library's own types;
  - the module-init globals rocshmem_hipmodule_init looks up are in the hsaco as global objects
    (ROCSHMEM_CTX_DEFAULT, 16 bytes), and rocshmem.triton's kernel-load hook would initialise it;
  - the team collectives compile against the bitcode's C-linkage entry points (the team an int32
    first), and a compile-time team other than 0, or a bitcode without an entry point, is
    refused with a message naming it.
Run with --noconftest (one process, no rocSHMEM init)."""

import os
import re
import struct
import sys

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import rocshmem.triton as rt  # noqa: E402
from rocshmem import RocshmemError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton"))
from every_function import EVERY, TEAM, every_function, team_collectives  # noqa: E402

ARCHES = [a for a in os.environ.get("ROCSHMEM_TEST_AMD_ARCHES", "gfx942,gfx950").split(",") if a]
BC_DIR = os.environ.get("ROCSHMEM_TEST_AMD_BITCODE_DIR", "")
REQUIRED = os.environ.get("ROCSHMEM_TEST_AMD_REQUIRED") == "1"


def elf_symbols(blob):
    """name -> (binding, type, size, section index) from an ELF64 little-endian symbol table."""
    assert blob[:4] == b"\x7fELF" and blob[4] == 2 and blob[5] == 1, "the hsaco is not a 64-bit little-endian ELF"
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", blob, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    syms = {}
    for sh in sections:
        if sh[1] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        stroff = sections[sh[6]][4]
        for k in range(sh[5] // 24):
            name_off, info, _other, shndx, _value, size = struct.unpack_from("<IBBHQQ", blob, sh[4] + 24 * k)
            end = blob.index(b"\0", stroff + name_off)
            syms[blob[stroff + name_off:end].decode()] = (info >> 4, info & 0xF, size, shndx)
    return syms


def bitcode(arch):
    path = os.path.join(BC_DIR, f"librocshmem_device_{arch}.bc")
    if not os.path.isfile(path):
        if REQUIRED:
            pytest.fail(f"{path} is missing: the build's AMD device library should have made it")
        pytest.skip(f"no {path} (the AMD device library was not built)")
    return path


def messages(e):
    """The messages of an exception and of those it was raised from (Triton wraps the error of a
    function a kernel calls in one CompilationError per call level)."""
    out = []
    while e is not None and len(out) < 10:
        out.append(str(e))
        e = e.__cause__ or e.__context__
    return "\n".join(out)


def compile_for(arch, fn, signature, path):
    opts = rt.options(arch, bitcode=path)  # also what the team collectives check their symbols in
    return triton.compile(ASTSource(fn=fn, signature=signature, constexprs={}), target=GPUTarget("hip", arch, 64),
                          options=opts)


def check_code_object(k, arch, kernel):
    llir, hsaco = k.asm["llir"], k.asm["hsaco"]
    undefined = sorted(set(re.findall(r"^declare [^@]*@(rocshmem\w*)\(", llir, re.M)))
    assert not undefined, f"{kernel} ({arch}): unresolved after the link: {undefined}"
    syms = elf_symbols(hsaco)
    left = sorted(n for n, (_b, _t, _s, shndx) in syms.items() if n.startswith("rocshmem") and shndx == 0)
    assert not left, f"{kernel} ({arch}): undefined in the hsaco: {left}"
    ctx = syms.get("ROCSHMEM_CTX_DEFAULT")
    assert ctx is not None, f"{kernel} ({arch}): no ROCSHMEM_CTX_DEFAULT in the hsaco (module init would fail)"
    bind, typ, size, shndx = ctx
    assert bind == 1 and typ == 1 and size == 16 and shndx != 0, \
        f"{kernel} ({arch}): ROCSHMEM_CTX_DEFAULT is binding {bind}, type {typ}, size {size}: want a global 16-byte object"
    assert rt.holds_rocshmem_globals(hsaco), "the kernel-load hook would not initialise this module"
    assert kernel in syms, f"no kernel symbol {kernel} in the hsaco"
    # Every call into the library has the definition's types (no mismatched declaration left).
    defs = dict(re.findall(r"^define [^@]*@(rocshmem\w+)\(([^)]*)\)", llir, re.M))
    for callee, args in re.findall(r"call [^@]*@(rocshmem\w+)\(([^)]*)\)", llir):
        if callee in defs:
            want = [a.split()[0] for a in defs[callee].split(",") if a.strip()]
            got = [a.split()[0] for a in args.split(",") if a.strip()]
            assert want == got, f"{kernel} ({arch}): call of {callee} with {got}, defined with {want}"


@pytest.mark.parametrize("arch", ARCHES)
def test_every_function_links_for_amd(arch):
    path = bitcode(arch)
    k = compile_for(arch, every_function, EVERY, path)
    check_code_object(k, arch, "every_function")


@pytest.mark.parametrize("arch", ARCHES)
def test_team_collectives_for_amd(arch):
    path = bitcode(arch)
    with open(path, "rb") as f:
        have = f.read()
    # The C-linkage entry points the team collectives call are in this build's bitcode.
    names = sorted({n for f in rt.TEAM_COLLECTIVES for n in rt.TEAM_ENTRY_POINTS[f]})
    missing = [n for n in names if n.encode() not in have]
    assert not missing, f"{path} lacks the C-linkage entry points {missing}"
    k = compile_for(arch, team_collectives, TEAM, path)
    check_code_object(k, arch, "team_collectives")
    # The names the library's own ones call with, the team an int32 first; no name of ours that
    # the bitcode does not define (rocshmem_team_barrier_wg, rocshmem_fcollectmem_wg).
    llir = k.asm["llir"]
    called = set(re.findall(r"@(rocshmem\w+)\(", llir))
    assert not called & {"rocshmem_team_barrier_wg", "rocshmem_fcollectmem_wg"}, sorted(called)
    for f in rt.TEAM_COLLECTIVES:
        for n in rt.TEAM_ENTRY_POINTS[f]:
            m = re.search(rf"^define [^@]*@{n}\(([^)]*)\)", llir, re.M)
            if m and n.endswith(("_reduce_wg", "alltoallmem_wg", "broadcastmem_wg")):
                assert m.group(1).split()[0] == "i32", f"{n} is defined with ({m.group(1)}): want the team as i32"


@pytest.mark.parametrize("arch", ARCHES)
def test_team_collectives_refused_for_amd(arch, tmp_path):
    path = bitcode(arch)

    @triton.jit
    def team_one(dst, src, nbytes):
        rt.fcollectmem_wg(1, dst, src, nbytes)

    sig = {"dst": "*u8", "src": "*u8", "nbytes": "i64"}
    # A compile-time team other than the world team: refused when the kernel compiles.
    with pytest.raises((RocshmemError, triton.CompilationError)) as e:
        compile_for(arch, team_one, sig, path)
    assert "take only the world team (0)" in messages(e.value), messages(e.value)
    # A bitcode without an entry point (an older one, or upstream's): refused, naming it.
    old = tmp_path / f"librocshmem_device_{arch}.bc"
    old.write_bytes(b"BC\xc0\xde rocshmem_putmem_wg rocshmem_barrier_all_wg")
    with pytest.raises((RocshmemError, triton.CompilationError)) as e:
        compile_for(arch, team_collectives, TEAM, str(old))
    assert "rocshmem_barrier_wg is not in" in messages(e.value), messages(e.value)


def test_bitcode_lookup_by_arch(tmp_path, monkeypatch):
    monkeypatch.delenv("ROCSHMEM_BITCODE", raising=False)
    assert rt.bitcode_name("gfx942:sramecc+:xnack-") == "librocshmem_device_gfx942.bc"
    assert rt.bitcode_name(90) == rt.bitcode_name("sm_90") == "librocshmem_device_sm_90.bc"
    (tmp_path / "librocshmem_device_gfx950.bc").write_bytes(b"BC")
    monkeypatch.setenv("ROCSHMEM_LIB_DIR", str(tmp_path))
    assert rt.bitcode_path("gfx950") == str(tmp_path / "librocshmem_device_gfx950.bc")
    with pytest.raises(RocshmemError, match="no librocshmem_device_gfx90a.bc .*ROCSHMEM_AMD=AUTO"):
        rt.bitcode_path("gfx90a")
