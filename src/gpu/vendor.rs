//! What the NVIDIA (`cuda.rs`) and AMD (`hip.rs`) platforms share: CUDA's runtime and HIP's are
//! the same C API under two prefixes (`cudaMalloc` / `hipMalloc`, same signatures and, for the
//! values used here, the same constants), so the calls both make are one table ([`RtFns`],
//! loaded with the vendor's prefix) and the platform runtime is one generic type,
//! [`DeviceRuntime`], over a small [`Vendor`] trait for what differs (how device memory is
//! allocated, the module and kernel-launch calls, pinned host memory, the log lines).
//!
//! A PE's device segment (device synchronisation area + user heap) is one device allocation,
//! exported with `*IpcGetMemHandle` and opened by every peer with `*IpcOpenMemHandle` after peer
//! access is enabled; the host control segments stay host shared memory ([`HostRuntime`]);
//! the library's own copies and fills run on a private non-blocking stream; the RO backend's
//! heaps are registered host memory ([`HostHeaps`]).

use super::host::HostRuntime;
use super::host_heap::{HostHeaps, MappedHostApi};
use super::modules::{ModuleApi, Modules};
use super::{GpuRuntime, Platform, Segment};
use crate::dl::{fn_table, symbol};
use crate::error::{Error, Result};
use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::fmt::Display;
use std::sync::Arc;

/// `cudaError_t` / `hipError_t` (C enums).
pub type RtError = i32;
/// `cudaStream_t` / `hipStream_t`.
pub type Stream = *mut c_void;

pub const SUCCESS: RtError = 0;
/// `cudaErrorPeerAccessAlreadyEnabled` / `hipErrorPeerAccessAlreadyEnabled`.
const PEER_ACCESS_ALREADY_ENABLED: RtError = 704;
/// `CUDA_ERROR_NOT_FOUND` / `hipErrorNotFound` (a module global that does not exist).
pub const NOT_FOUND: RtError = 500;
/// `cudaMemcpyDefault` / `hipMemcpyDefault`: the direction is inferred from the addresses
/// (unified addressing).
pub const MEMCPY_DEFAULT: c_int = 4;
/// `cudaStreamNonBlocking` / `hipStreamNonBlocking`: no implicit synchronisation with the
/// legacy (null) stream.
const STREAM_NON_BLOCKING: c_uint = 1;
/// `cudaStreamPerThread` / `hipStreamPerThread`.
pub const STREAM_PER_THREAD: usize = 0x2;
/// `cudaStreamCaptureStatusActive` / `hipStreamCaptureStatusActive`.
const STREAM_CAPTURE_ACTIVE: c_int = 1;
/// Bytes of a `cudaIpcMemHandle_t` / `hipIpcMemHandle_t`.
pub const IPC_HANDLE_BYTES: usize = 64;
/// `*HostRegisterPortable | *HostRegisterMapped`: every device (context), and a device address.
/// On HIP, without `hipExtHostRegisterCoarseGrained` (8) the registration is fine-grained: the
/// GPU's accesses stay coherent with the CPU's while kernels run.
const HOST_REGISTER_PORTABLE_MAPPED: c_uint = 1 | 2;

/// `cudaIpcMemHandle_t` / `hipIpcMemHandle_t`: 64 opaque bytes passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IpcMemHandle {
    pub reserved: [u8; IPC_HANDLE_BYTES],
}

/// `cudaPointerAttributes` (CUDA 11 on: type, device, device and host pointers) and
/// `hipPointerAttribute_t` (HIP 5 and 6: the same four, isManaged, allocationFlags; 32 bytes).
/// Padded, so a later release that appends fields cannot write past it.
#[repr(C)]
pub struct PointerAttributes {
    pub kind: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
    pub reserved: [u64; 8],
}

fn_table!(
    /// The runtime calls of both vendors: each symbol is the vendor's prefix (`cuda`, `hip`)
    /// and this name, with the same C signature in CUDA 11 to 13 and HIP 5.2 to 7.
    pub struct RtFns {
        pub get_device_count = "GetDeviceCount": fn(*mut c_int) -> RtError;
        pub get_device = "GetDevice": fn(*mut c_int) -> RtError;
        pub set_device = "SetDevice": fn(c_int) -> RtError;
        pub malloc = "Malloc": fn(*mut *mut c_void, usize) -> RtError;
        pub free = "Free": fn(*mut c_void) -> RtError;
        pub memcpy_async = "MemcpyAsync": fn(*mut c_void, *const c_void, usize, c_int, Stream) -> RtError;
        pub memset_async = "MemsetAsync": fn(*mut c_void, c_int, usize, Stream) -> RtError;
        pub stream_create_with_flags = "StreamCreateWithFlags": fn(*mut Stream, c_uint) -> RtError;
        pub stream_synchronize = "StreamSynchronize": fn(Stream) -> RtError;
        pub stream_is_capturing = "StreamIsCapturing": fn(Stream, *mut c_int) -> RtError;
        pub ipc_get_mem_handle = "IpcGetMemHandle": fn(*mut IpcMemHandle, *mut c_void) -> RtError;
        pub ipc_open_mem_handle = "IpcOpenMemHandle": fn(*mut *mut c_void, IpcMemHandle, c_uint) -> RtError;
        pub ipc_close_mem_handle = "IpcCloseMemHandle": fn(*mut c_void) -> RtError;
        pub device_can_access_peer = "DeviceCanAccessPeer": fn(*mut c_int, c_int, c_int) -> RtError;
        pub device_enable_peer_access = "DeviceEnablePeerAccess": fn(c_int, c_uint) -> RtError;
        pub get_last_error = "GetLastError": fn() -> RtError;
        pub get_error_string = "GetErrorString": fn(RtError) -> *const c_char;
        pub get_error_name = "GetErrorName": fn(RtError) -> *const c_char;
        pub runtime_get_version = "RuntimeGetVersion": fn(*mut c_int) -> RtError;
        pub host_register = "HostRegister": fn(*mut c_void, usize, c_uint) -> RtError;
        pub host_unregister = "HostUnregister": fn(*mut c_void) -> RtError;
        pub host_get_device_pointer = "HostGetDevicePointer": fn(*mut *mut c_void, *mut c_void, c_uint) -> RtError;
        pub pointer_get_attributes = "PointerGetAttributes": fn(*mut PointerAttributes, *const c_void) -> RtError;
    }
);

/// A string the runtime returned (static, NUL-terminated), or "unknown error" for NULL.
pub(super) fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return "unknown error".into();
    }
    // SAFETY: the runtimes return static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// One vendor's runtime: its common calls and its prefix (for the names in messages).
pub struct Rt {
    pub f: RtFns,
    /// `cuda` or `hip`.
    pub prefix: &'static str,
}

impl Rt {
    /// Resolves `<prefix><name>` for every call in `lib`; the first missing one is the error
    /// (`<lib_name> has no <symbol>: <why>`).
    pub fn load(lib: &Library, lib_name: &str, prefix: &'static str) -> Result<Rt> {
        let find = |name: &str| {
            let sym = format!("{prefix}{name}");
            symbol(lib, &sym).map_err(|e| Error::Gpu(format!("{lib_name} has no {sym}: {e}")))
        };
        // SAFETY: every symbol has the declared C signature in every release we accept.
        Ok(Rt { f: unsafe { RtFns::load_with(find) }?, prefix })
    }

    /// The runtime's description of `rc` (HIP 5 returns the name as the description: said once).
    pub fn error_text(&self, rc: RtError) -> String {
        // SAFETY: plain queries returning static strings.
        let (name, text) = unsafe { (cstr((self.f.get_error_name)(rc)), cstr((self.f.get_error_string)(rc))) };
        if name == text { format!("{name} ({rc})") } else { format!("{text} ({name} = {rc})") }
    }

    /// `Err` naming `call` and the runtime's own description unless `rc` is success.
    pub fn check(&self, call: impl Display, rc: RtError) -> Result<()> {
        if rc == SUCCESS {
            return Ok(());
        }
        Err(Error::Gpu(format!("{call} failed: {}", self.error_text(rc))))
    }

    /// Clears the last-error state after an error we ignore on purpose.
    pub fn clear_error(&self) {
        // SAFETY: plain query.
        unsafe { (self.f.get_last_error)() };
    }

    /// The current device of the calling thread.
    pub fn current_device(&self) -> Result<c_int> {
        let mut d = 0;
        // SAFETY: writes one int.
        self.check(format_args!("{}GetDevice", self.prefix), unsafe { (self.f.get_device)(&mut d) })?;
        Ok(d)
    }

    pub fn set_device(&self, d: c_int) -> Result<()> {
        // SAFETY: the runtime checks the ordinal.
        self.check(format_args!("{}SetDevice({d})", self.prefix), unsafe { (self.f.set_device)(d) })
    }

    /// Enables peer access from `device` (current on this thread) to every other of the `n`
    /// devices that allows it; returns those that do not.
    pub fn enable_peers(&self, device: c_int, n: usize) -> Result<Vec<c_int>> {
        let p = self.prefix;
        let mut unreachable = Vec::new();
        for peer in (0..n as c_int).filter(|q| *q != device) {
            let mut can = 0;
            // SAFETY: writes one int.
            let rc = unsafe { (self.f.device_can_access_peer)(&mut can, device, peer) };
            self.check(format_args!("{p}DeviceCanAccessPeer"), rc)?;
            if can == 0 {
                unreachable.push(peer);
                continue;
            }
            // SAFETY: both are valid ordinals.
            let rc = unsafe { (self.f.device_enable_peer_access)(peer, 0) };
            if rc == PEER_ACCESS_ALREADY_ENABLED {
                self.clear_error();
            } else {
                self.check(format_args!("{p}DeviceEnablePeerAccess({peer})"), rc)?;
            }
        }
        Ok(unreachable)
    }

    /// A new non-blocking stream.
    pub fn create_stream(&self) -> Result<usize> {
        let mut stream: Stream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let rc = unsafe { (self.f.stream_create_with_flags)(&mut stream, STREAM_NON_BLOCKING) };
        self.check(format_args!("{}StreamCreateWithFlags", self.prefix), rc)?;
        Ok(stream as usize)
    }

    pub fn sync(&self, call: impl Display, stream: usize) -> Result<()> {
        // SAFETY: a stream of this runtime (or the legacy default stream, NULL).
        self.check(call, unsafe { (self.f.stream_synchronize)(stream as Stream) })
    }

    /// Copies `len` bytes on `stream` (direction inferred), without waiting.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes; `stream` must be a stream of this runtime.
    pub unsafe fn copy_async(
        &self,
        call: impl Display,
        stream: Stream,
        dst: *mut u8,
        src: *const u8,
        len: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        self.check(call, unsafe { (self.f.memcpy_async)(dst.cast(), src.cast(), len, MEMCPY_DEFAULT, stream) })
    }
}

/// The caller's stream, or the per-thread default stream for NULL (never the legacy stream).
pub fn or_per_thread(stream: *mut c_void) -> Stream {
    if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream }
}

/// Makes `device` current on the calling thread for the guard's life, then restores the
/// thread's device (HIP: allocations and IPC mappings land on the PE's GPU whichever thread
/// asks). Does nothing for a vendor whose [`Vendor::GUARD_DEVICE`] is false.
pub struct DeviceGuard<'a> {
    rt: &'a Rt,
    restore: Option<c_int>,
}

impl<'a> DeviceGuard<'a> {
    pub fn new(rt: &'a Rt, device: c_int) -> Result<DeviceGuard<'a>> {
        let cur = rt.current_device()?;
        if cur == device {
            return Ok(DeviceGuard { rt, restore: None });
        }
        rt.set_device(device)?;
        Ok(DeviceGuard { rt, restore: Some(cur) })
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        if let Some(d) = self.restore {
            // SAFETY: the device that was current before.
            unsafe { (self.rt.f.set_device)(d) };
        }
    }
}

/// What differs between CUDA and HIP, for [`DeviceRuntime`].
pub trait Vendor: ModuleApi + Sized {
    const PLATFORM: Platform;
    /// Whether allocations, registrations and IPC mappings first make the PE's device current
    /// on the calling thread (the runtime's current device is per thread, 0 on a new thread).
    const GUARD_DEVICE: bool;
    /// The stream helper kernels' two images embedded at build time, or None when they were not
    /// built, with the reason.
    const IMAGES: Option<[&'static [u8]; 2]>;
    const IMAGES_NOT_BUILT: &'static str;
    /// Per-PE state of the vendor (HIP: the arch and the heap allocator).
    type Pe: Send + Sync;

    fn rt(&self) -> &Rt;
    /// One line for logs and `rocshmem_info`.
    fn describe(rt: &DeviceRuntime<Self>) -> String;
    /// The GPU's identity for the sharing check ([`GpuRuntime::identity`]).
    fn identity(rt: &DeviceRuntime<Self>) -> Option<super::share::GpuIdentity>;
    /// The `kind` of [`PointerAttributes`] that means device memory.
    fn memory_type_device(&self) -> c_int;
    /// The flags of `*IpcOpenMemHandle`: the runtime's value of `*IpcMemLazyEnablePeerAccess`,
    /// the only one it accepts.
    fn ipc_open_flags(&self) -> c_uint;
    /// `len` bytes of device memory on the PE's device (current on this thread): for the heap
    /// (`heap`), else for tables device code reads.
    fn alloc(rt: &DeviceRuntime<Self>, len: usize, heap: bool) -> Result<*mut c_void>;
    /// Host-to-device (or any) copy of host RMA, complete when it returns: by default on the
    /// library's stream, which never waits for the program's kernels.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes.
    unsafe fn copy(rt: &DeviceRuntime<Self>, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let p = rt.api.rt().prefix;
        // SAFETY: the caller's contract; our stream.
        unsafe { rt.api.rt().copy_async(format_args!("{p}MemcpyAsync"), rt.stream(), dst, src, len) }?;
        rt.sync_stream(format_args!("{p}StreamSynchronize after {p}MemcpyAsync"))
    }
    /// The device address and size of global `name` of `module`; None if it has no such global.
    ///
    /// # Safety
    /// `module` must be a loaded module of this runtime.
    unsafe fn module_global(&self, module: *mut c_void, name: &CStr) -> Result<Option<(usize, usize)>>;
    /// Stream-ordered device-to-device copy into global `name`, without synchronising.
    ///
    /// # Safety
    /// Both must be device addresses of `len` bytes; `stream` a stream of this runtime.
    unsafe fn copy_to_global(&self, dst: usize, src: *const u8, len: usize, stream: Stream, name: &str) -> Result<()>;
    /// Launches `f` (stream kernel `kernel`) with `params` on `blocks` x `threads`, stream-ordered.
    ///
    /// # Safety
    /// `f` must be a function of a loaded module taking what `params` points to.
    unsafe fn launch(
        &self,
        f: *mut c_void,
        blocks: u32,
        threads: u32,
        stream: Stream,
        params: *mut *mut c_void,
        kernel: &str,
    ) -> Result<()>;
    /// The error of a stream kernel that could not be found (HIP adds the arches).
    fn kernel_error(_rt: &DeviceRuntime<Self>, e: Error) -> Error {
        e
    }
    /// `len` bytes of pinned host memory mapped into the GPU (portable, mapped).
    fn host_alloc(&self, len: usize) -> Result<*mut u8>;
    fn host_free(&self, base: *mut u8);
    /// Whether device code reaches registered host memory `base`, mapped for the GPU at
    /// `mapped`, at `base` itself (see [`MappedHostApi::same_address`]).
    fn host_address_ok(&self, device: c_int, base: *mut u8, mapped: *mut c_void, what: &str) -> Result<()>;
    /// Releases the library's stream at finalize (nothing by default).
    fn release_stream(&self, _stream: usize) {}
}

/// The RO backend's host heaps on a GPU ([`HostHeaps`]): the vendor's calls, on the PE's GPU
/// whichever thread asks.
pub struct HostApi<V> {
    api: Arc<V>,
    device: c_int,
}

impl<V: Vendor> HostApi<V> {
    fn on_device(&self) -> Result<Option<DeviceGuard<'_>>> {
        if V::GUARD_DEVICE { DeviceGuard::new(self.api.rt(), self.device).map(Some) } else { Ok(None) }
    }
}

impl<V: Vendor> MappedHostApi for HostApi<V> {
    fn register(&self, base: *mut u8, len: usize, what: &str) -> Result<()> {
        let rt = self.api.rt();
        let _on = self.on_device()?;
        // SAFETY: a live mapping of `len` bytes.
        let rc = unsafe { (rt.f.host_register)(base.cast(), len, HOST_REGISTER_PORTABLE_MAPPED) };
        rt.check(format_args!("{}HostRegister({what}, {len} bytes)", rt.prefix), rc)
    }

    fn unregister(&self, base: *mut u8) {
        // SAFETY: registered by `register`, unregistered once.
        unsafe { (self.api.rt().f.host_unregister)(base.cast()) };
    }

    fn alloc(&self, len: usize) -> Result<*mut u8> {
        let _on = self.on_device()?;
        self.api.host_alloc(len)
    }

    fn free(&self, base: *mut u8) {
        self.api.host_free(base)
    }

    /// Device code uses host pointers as they are (the heap bases it reads are the host
    /// addresses the proxy and MPI use): the vendor decides whether the address the GPU maps
    /// registered memory at will do ([`Vendor::host_address_ok`]).
    fn same_address(&self, base: *mut u8, what: &str) -> Result<()> {
        let rt = self.api.rt();
        let mut d: *mut c_void = std::ptr::null_mut();
        // SAFETY: `base` is registered or pinned memory of this runtime; writes one pointer.
        let rc = unsafe { (rt.f.host_get_device_pointer)(&mut d, base.cast(), 0) };
        rt.check(format_args!("{}HostGetDevicePointer({what})", rt.prefix), rc)?;
        self.api.host_address_ok(self.device, base, d, what)
    }

    fn create_stream(&self) -> Result<usize> {
        self.api.rt().create_stream()
    }

    unsafe fn copy_and_wait(&self, stream: usize, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let rt = self.api.rt();
        let p = rt.prefix;
        // SAFETY: the caller's contract; the library's non-blocking stream.
        unsafe { rt.copy_async(format_args!("{p}MemcpyAsync (RO staging)"), stream as Stream, dst, src, len) }?;
        rt.sync(format_args!("{p}StreamSynchronize (RO staging)"), stream)
    }
}

/// The GPU platform runtime of this process, on CUDA or HIP.
pub struct DeviceRuntime<V: Vendor> {
    pub api: Arc<V>,
    host: HostRuntime,
    /// The device this PE uses.
    pub device: c_int,
    pub how_chosen: &'static str,
    /// Non-blocking stream for the library's own copies (host RMA, table pushes, fills): they
    /// never wait for the program's kernels on the legacy (null) stream.
    stream: usize,
    pub n_devices: usize,
    peers_unreachable: Vec<c_int>,
    /// The helper kernels of the `*_on_stream` calls (see [`super::modules`]).
    streams: Arc<Modules>,
    /// Multiprocessors (compute units) of the device: the most work-groups of a stream collective.
    max_groups: u32,
    /// The heaps in registered host memory, for RO ([`GpuRuntime::use_host_heap`]).
    host_heaps: HostHeaps<HostApi<V>>,
    pub pe: V::Pe,
}

/// What a vendor's constructor found, for [`DeviceRuntime::assemble`].
pub struct Found<V: Vendor> {
    pub api: V,
    pub device: c_int,
    pub how_chosen: &'static str,
    pub n_devices: usize,
    pub peers_unreachable: Vec<c_int>,
    pub stream: usize,
    pub max_groups: u32,
    pub pe: V::Pe,
}

impl<V: Vendor> DeviceRuntime<V> {
    pub fn assemble(f: Found<V>) -> DeviceRuntime<V> {
        let api = Arc::new(f.api);
        DeviceRuntime {
            host_heaps: HostHeaps::new(Arc::new(HostApi { api: Arc::clone(&api), device: f.device })),
            api,
            host: HostRuntime::new(),
            device: f.device,
            how_chosen: f.how_chosen,
            stream: f.stream,
            n_devices: f.n_devices,
            peers_unreachable: f.peers_unreachable,
            streams: Arc::new(Modules::default()),
            max_groups: f.max_groups,
            pe: f.pe,
        }
    }

    pub fn stream(&self) -> Stream {
        self.stream as Stream
    }

    fn sync_stream(&self, call: impl Display) -> Result<()> {
        self.api.rt().sync(call, self.stream)
    }

    fn on_device(&self) -> Result<Option<DeviceGuard<'_>>> {
        if V::GUARD_DEVICE { DeviceGuard::new(self.api.rt(), self.device).map(Some) } else { Ok(None) }
    }

    /// "; no peer access to GPU(s) [..]", or nothing.
    pub fn peers_note(&self) -> String {
        if self.peers_unreachable.is_empty() {
            String::new()
        } else {
            format!("; no peer access to GPU(s) {:?}", self.peers_unreachable)
        }
    }

    pub fn host_heaps_on(&self) -> bool {
        self.host_heaps.on()
    }

    /// `len` bytes of device memory ([`Vendor::alloc`]), zeroed, freed when the segment drops;
    /// with its IPC handle if `heap`.
    fn malloc(&self, len: usize, heap: bool) -> Result<Segment> {
        let rt = self.api.rt();
        let _on = self.on_device()?;
        let p = V::alloc(self, len, heap)?;
        let keep = Arc::clone(&self.api);
        let free: Box<dyn FnOnce(*mut u8, usize) + Send + Sync> = Box::new(move |base, _| {
            // SAFETY: `base` came from this runtime's allocation and is freed once.
            unsafe { (keep.rt().f.free)(base.cast()) };
        });
        let mut ipc = IpcMemHandle { reserved: [0; IPC_HANDLE_BYTES] };
        if heap {
            // SAFETY: `p` is the base of an allocation of this runtime.
            let rc = unsafe { (rt.f.ipc_get_mem_handle)(&mut ipc, p) };
            if let Err(e) = rt.check(format_args!("{}IpcGetMemHandle of this PE's heap", rt.prefix), rc) {
                // SAFETY: freeing what we just allocated.
                unsafe { (rt.f.free)(p) };
                return Err(e);
            }
        }
        let seg = Segment::new(p.cast(), len, if heap { ipc.reserved.to_vec() } else { Vec::new() }, free);
        // SAFETY: the whole allocation.
        unsafe { self.fill(seg.base, 0, len)? };
        Ok(seg)
    }
}

impl<V: Vendor> Drop for DeviceRuntime<V> {
    fn drop(&mut self) {
        // At finalize: every segment of ours is gone (they are dropped before the runtime).
        self.api.release_stream(self.stream);
    }
}

impl<V: Vendor> GpuRuntime for DeviceRuntime<V> {
    fn platform(&self) -> Platform {
        V::PLATFORM
    }

    fn describe(&self) -> String {
        V::describe(self)
    }

    fn identity(&self) -> Option<super::share::GpuIdentity> {
        V::identity(self)
    }

    fn create_segment(&self, name: &str, len: usize) -> Result<Segment> {
        self.host_heaps.segment(self.host.create_segment(name, len)?, "this PE's heap")
    }

    fn open_peer_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        self.host_heaps.segment(self.host.open_peer_segment(handle, len)?, "a peer's heap")
    }

    fn use_host_heap(&self) -> Result<()> {
        self.host_heaps.enable();
        Ok(())
    }

    fn alloc_host_mapped(&self, len: usize) -> Result<Segment> {
        self.host_heaps.alloc_mapped(len)
    }

    fn is_device_memory(&self, addr: usize) -> bool {
        let rt = self.api.rt();
        let mut a = PointerAttributes {
            kind: 0,
            device: 0,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
            reserved: [0; 8],
        };
        // SAFETY: writes the attributes; any address may be asked about (HIP 5 answers an
        // error for memory it does not know, HIP 6 "unregistered").
        let rc = unsafe { (rt.f.pointer_get_attributes)(&mut a, addr as *const c_void) };
        if rc != SUCCESS {
            rt.clear_error();
            return false;
        }
        a.kind == self.api.memory_type_device()
    }

    fn bind_thread(&self) -> Result<()> {
        self.api.rt().set_device(self.device)
    }

    unsafe fn copy_beside_kernels(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.host_heaps.copy_beside_kernels(dst, src, len) }
    }

    fn seal_segment(&self, own: &Segment) -> Result<()> {
        self.host.seal_segment(own)
    }

    fn discard_segment_name(&self, name: &str) {
        self.host.discard_segment_name(name)
    }

    fn separate_device_segment(&self) -> bool {
        !self.host_heaps.on()
    }

    fn create_device_segment(&self, len: usize) -> Result<Segment> {
        self.malloc(len, true)
    }

    fn open_peer_device_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        let rt = self.api.rt();
        let ipc = IpcMemHandle {
            reserved: handle.try_into().map_err(|_| {
                Error::Gpu(format!(
                    "a peer's {} IPC handle has {} bytes, not {IPC_HANDLE_BYTES}",
                    rt.prefix.to_uppercase(),
                    handle.len()
                ))
            })?,
        };
        let _on = self.on_device()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the handle came from a peer's IpcGetMemHandle.
        let rc = unsafe { (rt.f.ipc_open_mem_handle)(&mut p, ipc, self.api.ipc_open_flags()) };
        rt.check(format_args!("{}IpcOpenMemHandle of a peer's heap", rt.prefix), rc)?;
        let keep = Arc::clone(&self.api);
        Ok(Segment::new(
            p.cast(),
            len,
            handle.to_vec(),
            Box::new(move |base, _| {
                // SAFETY: `base` came from IpcOpenMemHandle and is closed once.
                unsafe { (keep.rt().f.ipc_close_mem_handle)(base.cast()) };
            }),
        ))
    }

    fn alloc_device(&self, len: usize) -> Result<Option<Segment>> {
        self.malloc(len, false).map(Some)
    }

    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { V::copy(self, dst, src, len) }
    }

    unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
        let rt = self.api.rt();
        let p = rt.prefix;
        // SAFETY: the caller's contract; our stream.
        let rc = unsafe { (rt.f.memset_async)(dst.cast(), byte as c_int, len, self.stream()) };
        rt.check(format_args!("{p}MemsetAsync"), rc)?;
        self.sync_stream(format_args!("{p}StreamSynchronize after {p}MemsetAsync"))
    }

    unsafe fn upload(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        let rt = self.api.rt();
        let p = rt.prefix;
        // SAFETY: the caller's contract; our stream.
        unsafe {
            rt.copy_async(format_args!("{p}MemcpyAsync (device tables)"), self.stream(), dst, src.as_ptr(), src.len())
        }?;
        self.sync_stream(format_args!("{p}StreamSynchronize after {p}MemcpyAsync"))
    }

    /// The global's address and size from the module (it must have `len` bytes), then a
    /// device-to-device copy on `stream` (NULL: the per-thread default stream, never the legacy
    /// stream), without synchronising, so it can be captured in a graph.
    unsafe fn module_global_copy(
        &self,
        module: *mut c_void,
        stream: *mut c_void,
        name: &str,
        src: *const u8,
        len: usize,
    ) -> Result<bool> {
        let cname = CString::new(name).map_err(|_| Error::invalid("global name has a NUL byte"))?;
        // SAFETY: `module` is the caller's module of this runtime.
        let Some((dptr, bytes)) = unsafe { self.api.module_global(module, &cname) }? else {
            return Ok(false);
        };
        if bytes != len {
            return Err(Error::invalid(format!(
                "the module's {name} has {bytes} bytes where {len} are expected: was it built against another \
                 rocSHMEM device library?"
            )));
        }
        // SAFETY: both are device addresses of `len` bytes; stream-ordered, no synchronisation.
        unsafe { self.api.copy_to_global(dptr, src, len, or_per_thread(stream), name) }?;
        Ok(true)
    }

    fn stream_kernels_start(&self, fill: super::modules::FillGlobals, all_now: bool) {
        super::modules::start(&self.api, &self.streams, V::IMAGES, V::IMAGES_NOT_BUILT, self.stream, fill, all_now);
    }

    fn stream_kernels_settle(&self, limit: std::time::Duration) {
        self.streams.wait_core(limit);
    }

    fn stream_kernels_wait(&self) {
        self.streams.wait_loaded();
    }

    fn stream_max_groups(&self) -> u32 {
        self.max_groups
    }

    /// Launches the helper kernel on the caller's stream (NULL: the per-thread default stream),
    /// without synchronising: a graph capture takes it like any kernel launch.
    unsafe fn stream_launch(
        &self,
        stream: *mut c_void,
        kernel: &str,
        args: &super::stream_args::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let f = self.streams.function(self.api.as_ref(), kernel).map_err(|e| V::kernel_error(self, e))?;
        let mut a = *args;
        let mut params = [(&mut a as *mut super::stream_args::StreamArgs).cast::<c_void>()];
        // SAFETY: a function of our module taking one rocshmem_stream_args; the runtime copies
        // the parameters before it returns. Stream-ordered, no synchronisation.
        unsafe { self.api.launch(f, blocks, threads, or_per_thread(stream), params.as_mut_ptr(), kernel) }
    }

    /// The same launch on the library's own stream (on this PE's device), then a wait for it.
    unsafe fn stream_run_and_wait(
        &self,
        kernel: &str,
        args: &super::stream_args::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let _on = self.on_device()?;
        // SAFETY: the caller's arguments; the library's stream, waited for below.
        unsafe { self.stream_launch(self.stream(), kernel, args, blocks, threads) }?;
        self.sync_stream(format_args!("{}StreamSynchronize after stream kernel {kernel}", self.api.rt().prefix))
    }

    fn stream_capturing(&self, stream: *mut c_void) -> Result<bool> {
        let rt = self.api.rt();
        let mut status: c_int = 0;
        // SAFETY: the caller's stream; the runtime writes one enum (0: not capturing).
        let rc = unsafe { (rt.f.stream_is_capturing)(or_per_thread(stream), &mut status) };
        rt.check(format_args!("{}StreamIsCapturing", rt.prefix), rc)?;
        Ok(status == STREAM_CAPTURE_ACTIVE)
    }

    unsafe fn stream_copy(&self, stream: *mut c_void, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let rt = self.api.rt();
        let stream = or_per_thread(stream);
        // SAFETY: the caller's ranges and stream; stream-ordered (the copy engine), no synchronisation.
        unsafe {
            rt.copy_async(
                format_args!("{}MemcpyAsync({len} bytes) on the caller's stream", rt.prefix),
                stream,
                dst,
                src,
                len,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes() {
        assert_eq!(std::mem::size_of::<IpcMemHandle>(), 64);
        assert_eq!(std::mem::align_of::<IpcMemHandle>(), 1, "an IPC handle is a char array");
        assert_eq!(std::mem::offset_of!(PointerAttributes, device_pointer), 8);
        assert_eq!(std::mem::offset_of!(PointerAttributes, allocation_flags), 28);
        assert_eq!(cstr(std::ptr::null()), "unknown error");
    }

    #[test]
    fn a_library_without_the_runtime_names_the_first_missing_call() {
        // SAFETY: libc is loaded already.
        let lib = unsafe { Library::new("libc.so.6") }.unwrap();
        let e = Rt::load(&lib, "libc.so.6", "cuda").err().unwrap().to_string();
        assert!(e.contains("libc.so.6 has no cudaGetDeviceCount"), "{e}");
    }
}
