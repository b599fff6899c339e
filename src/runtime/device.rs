//! The device-state block device code reads (`rocshmem_device_state`, the module globals and
//! `rocshmemi_device_fast`), built at init, and how it reaches GPU modules and programs.

use crate::ctx::CtxTable;
use crate::device_abi::{
    ROCSHMEM_DEVICE_ABI_VERSION, ROCSHMEM_FAST_PES, ROCSHMEM_ROUTE_IPC, rocshmem_device_fast, rocshmem_device_state,
};
use crate::error::{Error, Result};
use crate::gpu::mirror::Mirror;
use crate::gpu::{self, GpuRuntime};
use crate::heap::SymmetricHeap;
use crate::log_info;
use crate::team::{SHARED_SLOT, TeamTable, WORLD_SLOT};
use crate::transport::route::{Kind, Transports};
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// The head of the device-state block: the state, then the 32 bytes of the module globals
/// (`ROCSHMEM_CTX_DEFAULT` = {ctx, team}, `ROCSHMEM_TEAM_WORLD`, `ROCSHMEM_TEAM_SHARED`), then
/// the value of `rocshmemi_device_fast`. On a GPU its device copy is followed by the heap bases
/// and the route tables.
#[repr(C)]
pub struct StateHead {
    pub state: rocshmem_device_state,
    pub globals: [u64; 4],
    pub fast: rocshmem_device_fast,
}

/// Bytes of [`StateHead`] (where the heap bases start in the device copy).
pub(super) const STATE_HEAD: usize = std::mem::size_of::<StateHead>();

/// The device state of this PE: the host block, where device code reads it, and what keeps
/// the device copy alive.
pub(super) struct DeviceState {
    pub head: Box<StateHead>,
    /// `rocshmem_ctx_device::state`: the device copy on a GPU platform, `head` otherwise.
    pub addr: usize,
    pub heap_bases: Box<[u64]>,
    /// `peer_route` then `amo_route` (n_pes bytes each), where device code reads them on the
    /// host platform.
    pub routes: Box<[u8]>,
    pub mirror: Mirror,
}

/// The device route (`ROCSHMEM_ROUTE_*`) of a host transport.
fn route_of(k: Kind) -> u8 {
    match k {
        Kind::Ipc => ROCSHMEM_ROUTE_IPC,
        #[cfg(feature = "mpi")]
        Kind::Ro => crate::device_abi::ROCSHMEM_ROUTE_RO,
        #[cfg(feature = "test-doubles")]
        Kind::Gda => crate::device_abi::ROCSHMEM_ROUTE_GDA,
    }
}

/// The device state's route tables: `peer_route` (puts and gets) then `amo_route` (atomics and
/// signals), one byte per world PE each, the choice of `net` (device/src/route.hpp reads them).
fn route_tables(net: &Transports, n: usize) -> Box<[u8]> {
    let (rma, amo): (Vec<u8>, Vec<u8>) = (0..n)
        .map(|pe| {
            let (r, a) = net.kinds(pe);
            (route_of(r), route_of(a))
        })
        .unzip();
    rma.into_iter().chain(amo).collect()
}

/// Builds the device state of this PE and pushes it to its device copy (collective only in
/// that every PE does it; no exchange).
pub(super) fn build(
    gpu: &Arc<dyn GpuRuntime>,
    heap: &SymmetricHeap,
    teams: &TeamTable,
    ctxs: &CtxTable,
    net: &Transports,
) -> Result<DeviceState> {
    let (me, n) = (heap.my_pe, heap.n_pes);
    let heap_bases: Box<[u64]> = (0..n).map(|p| heap.device_base(p) as u64).collect();
    let routes = route_tables(net, n);
    let mirror = Mirror::new(gpu, STATE_HEAD + n * 8 + 2 * n)?;
    let mirror_addr = mirror.base(std::ptr::null());
    // Where device code finds the heap bases and the route tables: after the head of the state
    // mirror on a GPU, the host arrays otherwise.
    let (bases_addr, routes_addr) = if mirror.is_separate() {
        (mirror_addr + STATE_HEAD, mirror_addr + STATE_HEAD + n * 8)
    } else {
        (heap_bases.as_ptr() as usize, routes.as_ptr() as usize)
    };
    let mut head = Box::new(StateHead {
        state: state(gpu.platform(), heap, teams, ctxs, bases_addr, routes_addr),
        globals: [0; 4],
        fast: rocshmem_device_fast::default(),
    });
    // The state device code reads: the mirror's on a GPU, the host block otherwise.
    let addr = if mirror.is_separate() { mirror_addr } else { &head.state as *const _ as usize };
    ctxs.set_state(addr as *mut rocshmem_device_state)?;
    // The values of ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED, which
    // rocshmem_hipmodule_init copies into modules from the device copy of these 32 bytes.
    head.globals = [
        ctxs.opaque(0) as u64,
        teams.handle(WORLD_SLOT) as u64,
        teams.handle(WORLD_SLOT) as u64,
        teams.handle(SHARED_SLOT) as u64,
    ];
    #[cfg(feature = "mpi")]
    if let Some(ro) = net.ro() {
        head.state.ro = ro.device_ptr();
        head.fast.flags = crate::device_abi::ROCSHMEM_FAST_RO;
    }
    #[cfg(feature = "test-doubles")]
    if let Some(g) = net.gda() {
        head.state.gda = g.device_table();
        head.fast.flags |= crate::device_abi::ROCSHMEM_FAST_GDA;
    }
    let fast = &mut head.fast;
    fast.my_pe = me as i32;
    fast.n_pes = n as i32;
    // Empty while a remote transport is active: device code's IPC fast path (default context,
    // `pe < n_bases`) is then also its "no remote transport" test (device/src/route.hpp).
    let n_fast = if fast.flags & crate::device_abi::ROCSHMEM_FAST_REMOTE != 0 { 0 } else { n.min(ROCSHMEM_FAST_PES) };
    fast.n_bases = n_fast as i32;
    fast.default_ctx = ctxs.opaque(0).cast();
    fast.heap_base = heap_bases[me];
    fast.world_team = teams.handle(WORLD_SLOT).cast();
    fast.world_sync_off = (heap.control.dev_sync_off + WORLD_SLOT * heap.control.dev_sync_slot_bytes) as u64;
    fast.heap_bases[..n_fast].copy_from_slice(&heap_bases[..n_fast]);
    // SAFETY: plain-data views of the head and of the bases array.
    let (head_bytes, bases) = unsafe {
        (
            std::slice::from_raw_parts((&*head as *const StateHead).cast::<u8>(), STATE_HEAD),
            std::slice::from_raw_parts(heap_bases.as_ptr().cast::<u8>(), n * 8),
        )
    };
    mirror.push(0, head_bytes)?;
    mirror.push(STATE_HEAD, bases)?;
    mirror.push(STATE_HEAD + n * 8, &routes)?;
    Ok(DeviceState { head, addr, heap_bases, routes, mirror })
}

/// `rocshmem_device_state` of this PE (`ro` is set by the RO set-up).
fn state(
    platform: gpu::Platform,
    heap: &SymmetricHeap,
    teams: &TeamTable,
    ctxs: &CtxTable,
    bases_addr: usize,
    routes_addr: usize,
) -> rocshmem_device_state {
    let (pool_start, pool_len) = ctxs.device_pool();
    rocshmem_device_state {
        abi_version: ROCSHMEM_DEVICE_ABI_VERSION,
        platform: match platform {
            gpu::Platform::Host => 0,
            gpu::Platform::Amd => 1,
            gpu::Platform::Nvidia => 2,
        },
        my_pe: heap.my_pe as i32,
        n_pes: heap.n_pes as i32,
        control_len: heap.control.len as u64,
        heap_size: heap.user_len as u64,
        heap_bases: bases_addr as *mut u64,
        teams: teams.entries_ptr(),
        max_teams: teams.max() as i32,
        max_ctxs: ctxs.len() as i32,
        ctxs: ctxs.entries_ptr(),
        dev_sync_off: heap.control.dev_sync_off as u64,
        dev_sync_slot_bytes: heap.control.dev_sync_slot_bytes as u64,
        dev_scratch_bytes: heap.control.dev_scratch_bytes as u64,
        ctx_pool_start: pool_start as i32,
        ctx_pool_len: pool_len as i32,
        ro: std::ptr::null_mut(),
        peer_route: routes_addr as *const u8,
        amo_route: (routes_addr + heap.n_pes) as *const u8,
        gda: std::ptr::null_mut(),
    }
}

/// Signature of `rocshmemi_device_globals_set`, the device library's host glue linked into
/// programs: sets the program's `ROCSHMEM_CTX_DEFAULT` (16 bytes), `ROCSHMEM_TEAM_WORLD` and
/// `ROCSHMEM_TEAM_SHARED` (8 bytes each) and `rocshmemi_device_fast` (its size is the last
/// argument, checked by the glue) from the host values pointed to; 0 on success.
type DeviceGlobalsSet =
    unsafe extern "C" fn(*const c_void, *const c_void, *const c_void, *const c_void, usize) -> c_int;

unsafe extern "C" {
    /// The C++ shim's weak reference to the glue (src/cxx/shim_core.cpp): its address when the
    /// program was linked with it (statically, or exported to librocshmem.so), else NULL.
    fn rocshmemi_device_globals_set_linked() -> *mut c_void;
}

/// Calls the program's `rocshmemi_device_globals_set` if it has one: the glue linked into the
/// same executable as this library (librocshmem.a), else found with dlsym in the global scope
/// (the executable exports it when it links librocshmem.so, which refers to it, or `-rdynamic`).
pub(super) fn set_device_globals(globals: &[u64; 4], fast: &rocshmem_device_fast) -> Result<()> {
    // SAFETY: the shim's accessor has no preconditions; dlsym with a NUL-terminated name.
    let mut f = unsafe { rocshmemi_device_globals_set_linked() };
    if f.is_null() {
        // SAFETY: as above.
        f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"rocshmemi_device_globals_set".as_ptr()) };
    }
    if f.is_null() {
        log_info!(
            "rocshmem_init",
            "the program has no rocshmemi_device_globals_set (not linked with librocshmem_device.a, or the symbol \
             is not exported): kernels must be initialised with rocshmem_hipmodule_init"
        );
        return Ok(());
    }
    // SAFETY: the device library's glue has this signature.
    let f: DeviceGlobalsSet = unsafe { std::mem::transmute::<*mut c_void, DeviceGlobalsSet>(f) };
    // SAFETY: 16 + 8 + 8 readable bytes of host memory, and the fast block with its size.
    let rc = unsafe {
        f(
            globals.as_ptr().cast(),
            globals[2..].as_ptr().cast(),
            globals[3..].as_ptr().cast(),
            (fast as *const rocshmem_device_fast).cast(),
            std::mem::size_of::<rocshmem_device_fast>(),
        )
    };
    if rc != 0 {
        return Err(Error::Gpu(format!("rocshmemi_device_globals_set (the device library's glue) returned {rc}")));
    }
    log_info!("rocshmem_init", "device globals of the program set");
    Ok(())
}

/// `Runtime::module_init`: the device globals, from the state's device copy at `state_addr`,
/// into module `module` on `stream`.
///
/// # Safety
/// `module` must be NULL or a loaded module, `stream` NULL or a stream, of `gpu_rt`.
pub(super) unsafe fn module_init(
    gpu_rt: &dyn GpuRuntime,
    state_addr: usize,
    module: *mut c_void,
    stream: *mut c_void,
) -> Result<()> {
    if gpu_rt.platform() != gpu::Platform::Host && module.is_null() {
        return Err(Error::NullPointer("module"));
    }
    let g = state_addr + std::mem::offset_of!(StateHead, globals);
    let src = g as *const u8;
    // SAFETY: the caller's module and stream; `src` is the device copy of the 32 bytes.
    if !unsafe { gpu_rt.module_global_copy(module, stream, "ROCSHMEM_CTX_DEFAULT", src, 16)? } {
        return Err(Error::invalid(
            "the module has no ROCSHMEM_CTX_DEFAULT global: was it built with the rocSHMEM device library?",
        ));
    }
    // Modules that use no team handle may lack these globals.
    // SAFETY: offsets inside the 32 bytes of globals.
    unsafe {
        gpu_rt.module_global_copy(module, stream, "ROCSHMEM_TEAM_WORLD", src.add(16), 8)?;
        gpu_rt.module_global_copy(module, stream, "ROCSHMEM_TEAM_SHARED", src.add(24), 8)?;
    }
    // The device library's address table (constant memory); every module that holds an RMA,
    // AMO or signal function of the library has it.
    let fast = (state_addr + std::mem::offset_of!(StateHead, fast)) as *const u8;
    // SAFETY: the device copy of the fast block, inside the state mirror.
    unsafe {
        gpu_rt.module_global_copy(
            module,
            stream,
            "rocshmemi_device_fast",
            fast,
            std::mem::size_of::<rocshmem_device_fast>(),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_head_layout() {
        assert_eq!(STATE_HEAD, 160 + std::mem::size_of::<rocshmem_device_fast>());
        assert_eq!(std::mem::offset_of!(StateHead, globals), 128);
        assert_eq!(std::mem::offset_of!(StateHead, fast), 160);
    }
}
