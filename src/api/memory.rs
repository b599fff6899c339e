//! Symmetric memory: allocation (collective), peer pointers, buffer registration.

use super::*;
use crate::heap::alloc::MIN_ALIGN;
use crate::heap_agree::{HeapCall, agree, free_offset};
use crate::runtime::Stats;
use std::ffi::{c_int, c_void};

/// Collective allocation: every PE makes the same call; all get the same heap offset. The
/// world barrier at the end (inside the agreement: src/heap/agree.rs) makes the memory usable
/// as a target as soon as the call returns, and checks that every PE made the same call. Calls
/// that differ only in size are served: every PE reserves the largest (same offset).
fn collective_alloc(call: &'static str, what: HeapCall, size: usize, align: usize, zero: bool) -> *mut c_void {
    value_call(call, std::ptr::null_mut(), || {
        let rt = rt()?;
        // Every PE takes part in the agreement, also when its allocation failed (all fail alike
        // when they made the same call).
        let got = match size {
            0 => Ok(std::ptr::null_mut()),
            _ => rt.heap.alloc(size, align),
        };
        let base = rt.heap.user_base(rt.my_pe());
        let offset = got.as_ref().ok().filter(|p| !p.is_null()).map(|p| *p as usize - base);
        if let (Some(off), true) = (offset, zero) {
            // Before the barrier: once a peer has returned it may put into our block.
            // SAFETY: off..off+size was just allocated in our heap.
            unsafe { rt.heap.fill((base + off) as *mut u8, 0, size)? };
        }
        let got = match agree(&rt.heap, &rt.net, what, offset) {
            Ok(None) => got,
            Ok(Some(largest)) => {
                // The PEs asked for different sizes (asymmetric allocation): each reserves the
                // largest, at the same offset everywhere. Nothing returns early before the
                // barrier, which every PE must reach.
                let undone = offset.map_or(Ok(()), |off| rt.heap.free(base + off));
                let got = undone.and_then(|()| rt.heap.alloc(largest, align));
                let zeroed = match (&got, zero) {
                    // SAFETY: the block was just allocated with `largest` >= `size` bytes.
                    (Ok(p), true) if !p.is_null() => unsafe { rt.heap.fill(*p, 0, size) },
                    _ => Ok(()),
                };
                rt.net.barrier(&rt.heap, crate::pe_set::PeSet::world(rt.n_pes()), crate::team::WORLD_SLOT)?;
                zeroed?;
                got
            }
            Err(e) => {
                if let Some(off) = offset {
                    // Undone: the heaps stay as they were on every PE.
                    rt.heap.free(base + off)?;
                }
                return Err(e);
            }
        };
        let p = got?;
        if !p.is_null() {
            Stats::add(&rt.stats.allocs, 1);
        }
        Ok(p.cast())
    })
}

/// Allocates `size` bytes (aligned to 128) on every PE's symmetric heap; collective. NULL if
/// `size` is 0 or the heap is exhausted (with a message naming ROCSHMEM_HEAP_SIZE).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_malloc(size: usize) -> *mut c_void {
    collective_alloc("rocshmem_malloc", HeapCall::Malloc { size }, size, MIN_ALIGN, false)
}

/// Like `rocshmem_malloc` with `alignment` (a power of two, multiple of 8); collective. NULL
/// for an invalid alignment (every PE still synchronises).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_align(alignment: usize, size: usize) -> *mut c_void {
    if !alignment.is_power_of_two() || alignment % 8 != 0 {
        report(
            "rocshmem_align",
            &Error::invalid(format!("alignment={alignment} must be a power of two and a multiple of 8")),
        );
        return collective_alloc("rocshmem_align", HeapCall::Align { alignment, size }, 0, MIN_ALIGN, false);
    }
    collective_alloc("rocshmem_align", HeapCall::Align { alignment, size }, size, alignment, false)
}

/// Allocates `count * size` zeroed bytes; collective. NULL if either is 0 or the product
/// overflows.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        Some(total) => collective_alloc("rocshmem_calloc", HeapCall::Calloc { count, size }, total, MIN_ALIGN, true),
        None => {
            report("rocshmem_calloc", &Error::invalid(format!("count={count} × size={size} overflows size_t")));
            collective_alloc("rocshmem_calloc", HeapCall::Calloc { count, size }, 0, MIN_ALIGN, false)
        }
    }
}

/// Frees memory from `rocshmem_malloc`/`_align`/`_calloc`; collective (synchronises first, so
/// no PE frees memory another is still writing). NULL is a no-op.
///
/// # Safety
/// `ptr` must be NULL or a symmetric allocation not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_free(ptr: *mut c_void) {
    void_call("rocshmem_free", || {
        let rt = rt()?;
        // Every PE agrees first (the agreement's barrier: no PE frees memory another is still
        // writing), and frees only if every PE frees the same block.
        let offset = free_offset(&rt.heap, ptr as usize);
        let live = ptr.is_null() || rt.heap.is_block(ptr as usize);
        agree(&rt.heap, &rt.net, HeapCall::Free { offset }, live.then_some(0))?;
        if ptr.is_null() {
            return Ok(());
        }
        Stats::add(&rt.stats.frees, 1);
        rt.heap.free(ptr as usize)
    })
}

/// The address at which this process can load/store PE `pe`'s copy of the symmetric object
/// `dest`, or NULL if `dest` is not symmetric or `pe` is not reachable by load/store.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    value_call("rocshmem_ptr", std::ptr::null_mut(), || {
        let rt = rt()?;
        let pe = rt.check_pe(pe as i64)?;
        Ok(crate::rma::ptr(rt, dest.cast(), pe).map_or(std::ptr::null_mut(), |p| p.cast()))
    })
}

/// Registers a local, non-symmetric buffer as the local side of RMA. On the host platform any
/// local memory already works; the registration is recorded so that unregister can check it.
/// Returns 0 on success.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_register(addr: *mut c_void, length: usize) -> c_int {
    status_call("rocshmem_buffer_register", || {
        let rt = rt()?;
        if addr.is_null() {
            return Err(Error::NullPointer("addr"));
        }
        if length == 0 {
            return Err(Error::invalid("length=0"));
        }
        let mut reg = rt.registered.lock().unwrap();
        let (a, end) = (addr as usize, addr as usize + length);
        if let Some((b, l)) = reg.iter().find(|(b, l)| a < b + l && *b < end) {
            return Err(Error::invalid(format!("{addr:p}+{length} overlaps the registered buffer {b:#x}+{l}")));
        }
        reg.push((a, length));
        Ok(())
    })
}

/// Unregisters a buffer registered with `rocshmem_buffer_register`. Returns 0 on success.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_unregister(addr: *mut c_void) -> c_int {
    status_call("rocshmem_buffer_unregister", || {
        let rt = rt()?;
        let mut reg = rt.registered.lock().unwrap();
        let i = reg
            .iter()
            .position(|(b, _)| *b == addr as usize)
            .ok_or_else(|| Error::invalid(format!("{addr:p} is not a registered buffer")))?;
        reg.swap_remove(i);
        Ok(())
    })
}

/// Unregisters every registered buffer.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_unregister_all() {
    void_call("rocshmem_buffer_unregister_all", || {
        rt()?.registered.lock().unwrap().clear();
        Ok(())
    })
}

/// Registers user memory as a symmetric region (collective). Upstream supports HIP VMM memory
/// only; the host platform has none, so this reports that and returns NULL.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_register_symmetric(addr: *mut c_void, length: usize) -> *mut c_void {
    value_call("rocshmem_buffer_register_symmetric", std::ptr::null_mut(), || {
        rt()?;
        let _ = (addr, length);
        Err(Error::Unsupported(
            "rocshmem_buffer_register_symmetric needs GPU virtual-memory (VMM) allocations; the host platform has none \
             (use rocshmem_malloc)"
                .into(),
        ))
    })
}

/// Checks the arguments of the flat-layout registrations (`rocshmem_buffer_register_vmm`,
/// `rocshmem_sym_buffer_register`): this PE's view of a buffer that every PE's process maps
/// into one virtual address space, PE `p`'s copy at `addr + (p - my_pe) * stride`.
fn check_flat_layout(
    rt: &crate::runtime::Runtime,
    addr: *mut c_void,
    length: usize,
    my_pe: c_int,
    n_pes: c_int,
    stride: isize,
) -> Result<()> {
    if addr.is_null() {
        return Err(Error::NullPointer("addr"));
    }
    if length == 0 {
        return Err(Error::invalid("length=0"));
    }
    if my_pe != rt.my_pe() as c_int || n_pes != rt.n_pes() as c_int {
        return Err(Error::invalid(format!(
            "my_pe={my_pe} n_pes={n_pes}, but this is PE {} of {}",
            rt.my_pe(),
            rt.n_pes()
        )));
    }
    if stride.unsigned_abs() < length && n_pes > 1 {
        return Err(Error::invalid(format!(
            "stride={stride} is smaller than length={length}: the PEs' buffers overlap"
        )));
    }
    Ok(())
}

/// The reason the flat-layout registrations fail here (upstream's error code, one line).
const FLAT_LAYOUT_UNSUPPORTED: &str = "buffers in a virtual address space shared by all PEs (GPU VMM memory such as \
    RCCL's LSA window) are not supported by this library yet: allocate with rocshmem_malloc, or register the local \
    buffer with rocshmem_buffer_register";

/// Registers user memory laid out in one flat virtual address space (upstream: VMM memory
/// mapped by every PE, PE `p`'s buffer at `addr + (p - my_pe) * stride`), without a collective.
/// Not supported by this library yet: checks the arguments, then returns ROCSHMEM_ERROR with
/// one line saying so.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_register_vmm(
    addr: *mut c_void,
    length: usize,
    my_pe: c_int,
    n_pes: c_int,
    stride: isize,
) -> c_int {
    status_call("rocshmem_buffer_register_vmm", || {
        let rt = rt()?;
        check_flat_layout(rt, addr, length, my_pe, n_pes, stride)?;
        Err(Error::Unsupported(FLAT_LAYOUT_UNSUPPORTED.into()))
    })
}

/// Registers a symmetric user buffer with a known per-PE layout (upstream: PE `p`'s copy is at
/// `addr + (p - my_pe) * stride`; the backend makes it reachable). Not supported by this
/// library yet: checks the arguments, then returns ROCSHMEM_ERROR with one line saying so.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_sym_buffer_register(
    addr: *mut c_void,
    length: usize,
    my_pe: c_int,
    n_pes: c_int,
    stride: isize,
) -> c_int {
    status_call("rocshmem_sym_buffer_register", || {
        let rt = rt()?;
        check_flat_layout(rt, addr, length, my_pe, n_pes, stride)?;
        Err(Error::Unsupported(FLAT_LAYOUT_UNSUPPORTED.into()))
    })
}

/// Unregisters a buffer of `rocshmem_sym_buffer_register`: none can exist here, so non-zero.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_sym_buffer_unregister(addr: *mut c_void) -> c_int {
    status_call("rocshmem_sym_buffer_unregister", || {
        rt()?;
        Err(Error::invalid(format!("{addr:p} was not registered with rocshmem_sym_buffer_register")))
    })
}

/// Unregisters a symmetric region (see `rocshmem_buffer_register_symmetric`). Returns non-zero
/// on the host platform, where no region can exist.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_buffer_unregister_symmetric(addr: *mut c_void) -> c_int {
    status_call("rocshmem_buffer_unregister_symmetric", || {
        rt()?;
        Err(Error::invalid(format!("{addr:p} is not a registered symmetric region")))
    })
}
