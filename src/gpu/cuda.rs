//! The NVIDIA platform: the CUDA runtime (`libcudart`) and driver (`libcuda`), loaded at run
//! time with libloading, so that librocshmem has no link-time dependency on CUDA and still
//! loads (and runs the host platform) where CUDA is absent.
//!
//! What it provides (see `docs/design.md`, "The NVIDIA platform"):
//! - the host control segments stay host shared memory ([`HostRuntime`] does them);
//! - each PE's device segment (device synchronisation area + user heap) is one `cudaMalloc`
//!   allocation, exported with `cudaIpcGetMemHandle` and opened by every peer with
//!   `cudaIpcOpenMemHandle` after peer access is enabled;
//! - device memory for the tables device code reads, copies and fills of device memory, and
//!   the stream-ordered copy of `rocshmem_hipmodule_init` (`cuModuleGetGlobal_v2` +
//!   `cuMemcpyDtoDAsync_v2`).
//!
//! The few CUDA types and constants needed are declared here, from the CUDA headers' ABI
//! (stable across CUDA 11 to 13): `cudaError_t` and `CUresult` are C enums (i32), a
//! `cudaIpcMemHandle_t` is 64 opaque bytes passed by value, streams and modules are pointers,
//! `CUdeviceptr` is a 64-bit integer.

use super::host::HostRuntime;
use super::host_heap::{HostHeaps, MappedHostApi};
use super::{GpuRuntime, Platform, Segment};
use crate::dl::{fn_table, symbol};
use crate::error::{Error, Result};
use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::Arc;

type CudaError = i32;
type CuResult = i32;
type Stream = *mut c_void;
type CuDevicePtr = u64;

const CUDA_SUCCESS: CudaError = 0;
/// `cudaErrorPeerAccessAlreadyEnabled`.
const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: CudaError = 704;
/// `CUDA_ERROR_NOT_FOUND` (a module global that does not exist).
const CU_ERROR_NOT_FOUND: CuResult = 500;
/// `cudaMemcpyDefault`: the direction is inferred from the addresses (unified addressing).
const CUDA_MEMCPY_DEFAULT: c_int = 4;
/// `cudaIpcMemLazyEnablePeerAccess`.
const CUDA_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: c_uint = 1;
/// `cudaStreamNonBlocking`: no implicit synchronisation with the legacy default stream.
const CUDA_STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
/// `CU_DEVICE_ATTRIBUTE_MPS_ENABLED` (CUDA 12.3 on): contexts on the device are shared via MPS.
const CU_DEVICE_ATTRIBUTE_MPS_ENABLED: c_int = 133;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `cudaStreamPerThread` / `CU_STREAM_PER_THREAD`.
pub const STREAM_PER_THREAD: usize = 0x2;
/// Bytes of a `cudaIpcMemHandle_t`.
pub const IPC_HANDLE_BYTES: usize = 64;

/// `cudaHostRegisterPortable | cudaHostRegisterMapped` (the same values as cudaHostAlloc's
/// Portable | Mapped): every context of the process, and a device address.
const CUDA_HOST_PORTABLE_MAPPED: c_uint = 1 | 2;
/// `cudaMemoryTypeDevice` in `cudaPointerAttributes::type`.
const CUDA_MEMORY_TYPE_DEVICE: c_int = 2;

/// `cudaPointerAttributes` (CUDA 11 on): type, device, device and host pointers. Padded, so a
/// later release that appends fields cannot write past it.
#[repr(C)]
struct PointerAttributes {
    kind: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    reserved: [u64; 8],
}

/// `cudaIpcMemHandle_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct IpcMemHandle {
    reserved: [u8; IPC_HANDLE_BYTES],
}

/// The libraries tried, in order, for the runtime.
pub const CUDART_NAMES: [&str; 3] = ["libcudart.so", "libcudart.so.13", "libcudart.so.12"];
/// The driver library.
pub const CUDA_DRIVER_NAME: &str = "libcuda.so.1";

fn_table!(struct RuntimeFns {
    get_device_count = "cudaGetDeviceCount": fn(*mut c_int) -> CudaError;
    get_device = "cudaGetDevice": fn(*mut c_int) -> CudaError;
    set_device = "cudaSetDevice": fn(c_int) -> CudaError;
    malloc = "cudaMalloc": fn(*mut *mut c_void, usize) -> CudaError;
    free = "cudaFree": fn(*mut c_void) -> CudaError;
    memcpy = "cudaMemcpy": fn(*mut c_void, *const c_void, usize, c_int) -> CudaError;
    memcpy_async = "cudaMemcpyAsync": fn(*mut c_void, *const c_void, usize, c_int, Stream) -> CudaError;
    memset_async = "cudaMemsetAsync": fn(*mut c_void, c_int, usize, Stream) -> CudaError;
    stream_create_with_flags = "cudaStreamCreateWithFlags": fn(*mut Stream, c_uint) -> CudaError;
    stream_synchronize = "cudaStreamSynchronize": fn(Stream) -> CudaError;
    ipc_get_mem_handle = "cudaIpcGetMemHandle": fn(*mut IpcMemHandle, *mut c_void) -> CudaError;
    ipc_open_mem_handle = "cudaIpcOpenMemHandle": fn(*mut *mut c_void, IpcMemHandle, c_uint) -> CudaError;
    ipc_close_mem_handle = "cudaIpcCloseMemHandle": fn(*mut c_void) -> CudaError;
    device_can_access_peer = "cudaDeviceCanAccessPeer": fn(*mut c_int, c_int, c_int) -> CudaError;
    device_enable_peer_access = "cudaDeviceEnablePeerAccess": fn(c_int, c_uint) -> CudaError;
    get_last_error = "cudaGetLastError": fn() -> CudaError;
    get_error_string = "cudaGetErrorString": fn(CudaError) -> *const c_char;
    get_error_name = "cudaGetErrorName": fn(CudaError) -> *const c_char;
    runtime_get_version = "cudaRuntimeGetVersion": fn(*mut c_int) -> CudaError;
    driver_get_version = "cudaDriverGetVersion": fn(*mut c_int) -> CudaError;
    host_register = "cudaHostRegister": fn(*mut c_void, usize, c_uint) -> CudaError;
    host_unregister = "cudaHostUnregister": fn(*mut c_void) -> CudaError;
    host_alloc = "cudaHostAlloc": fn(*mut *mut c_void, usize, c_uint) -> CudaError;
    free_host = "cudaFreeHost": fn(*mut c_void) -> CudaError;
    host_get_device_pointer = "cudaHostGetDevicePointer": fn(*mut *mut c_void, *mut c_void, c_uint) -> CudaError;
    pointer_get_attributes = "cudaPointerGetAttributes": fn(*mut PointerAttributes, *const c_void) -> CudaError;
});

fn_table!(struct DriverFns {
    init = "cuInit": fn(c_uint) -> CuResult;
    ctx_get_current = "cuCtxGetCurrent": fn(*mut *mut c_void) -> CuResult;
    device_get = "cuDeviceGet": fn(*mut c_int, c_int) -> CuResult;
    device_get_name = "cuDeviceGetName": fn(*mut c_char, c_int, c_int) -> CuResult;
    device_get_attribute = "cuDeviceGetAttribute": fn(*mut c_int, c_int, c_int) -> CuResult;
    device_get_uuid = "cuDeviceGetUuid_v2": fn(*mut [u8; 16], c_int) -> CuResult;
    module_get_global = "cuModuleGetGlobal_v2": fn(*mut CuDevicePtr, *mut usize, *mut c_void, *const c_char) -> CuResult;
    memcpy_dtod_async = "cuMemcpyDtoDAsync_v2": fn(CuDevicePtr, CuDevicePtr, usize, Stream) -> CuResult;
    get_error_string = "cuGetErrorString": fn(CuResult, *mut *const c_char) -> CuResult;
    ctx_set_current = "cuCtxSetCurrent": fn(*mut c_void) -> CuResult;
    module_load_data = "cuModuleLoadData": fn(*mut *mut c_void, *const c_void) -> CuResult;
    module_get_function = "cuModuleGetFunction": fn(*mut *mut c_void, *mut c_void, *const c_char) -> CuResult;
    launch_kernel = "cuLaunchKernel": fn(*mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void, *mut *mut c_void) -> CuResult;
    thread_exchange_capture_mode = "cuThreadExchangeStreamCaptureMode": fn(*mut c_int) -> CuResult;
});

/// The loaded CUDA libraries.
pub struct Cuda {
    rt: RuntimeFns,
    drv: DriverFns,
    /// Which runtime library was loaded (for logs).
    pub lib_name: &'static str,
    _cudart: Library,
    _driver: Library,
}

// SAFETY: the CUDA runtime and driver APIs are thread-safe; we hold only function pointers.
unsafe impl Send for Cuda {}
unsafe impl Sync for Cuda {}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return "unknown error".into();
    }
    // SAFETY: CUDA returns static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn version(v: c_int) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl Cuda {
    /// Loads libcudart (the first of [`CUDART_NAMES`] found) and libcuda.
    pub fn load() -> Result<Cuda> {
        let mut tried = Vec::new();
        let mut found = None;
        for name in CUDART_NAMES {
            // SAFETY: loading the CUDA runtime runs only its (benign) initialisers.
            match unsafe { Library::new(name) } {
                Ok(l) => {
                    found = Some((name, l));
                    break;
                }
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        let Some((lib_name, cudart)) = found else {
            return Err(Error::Unsupported(format!(
                "the CUDA runtime is not installed or not on the library path ({})",
                tried.join("; ")
            )));
        };
        // SAFETY: as above, the driver library.
        let driver = unsafe { Library::new(CUDA_DRIVER_NAME) }.map_err(|e| {
            Error::Unsupported(format!("{lib_name} loaded but the NVIDIA driver library is missing ({e})"))
        })?;
        let missing = |lib: &str, sym: &str, e| Error::Gpu(format!("{lib} has no {sym}: {e}"));
        // SAFETY: every symbol has the declared C signature in every CUDA release we accept.
        let rt = unsafe { RuntimeFns::load_with(|s| symbol(&cudart, s).map_err(|e| missing(lib_name, s, e))) }?;
        // SAFETY: as above.
        let drv = unsafe { DriverFns::load_with(|s| symbol(&driver, s).map_err(|e| missing(CUDA_DRIVER_NAME, s, e))) }?;
        Ok(Cuda { rt, drv, lib_name, _cudart: cudart, _driver: driver })
    }

    /// `Err` naming `call` and CUDA's own description unless `rc` is success.
    fn check(&self, call: &str, rc: CudaError) -> Result<()> {
        if rc == CUDA_SUCCESS {
            return Ok(());
        }
        // SAFETY: plain queries returning static strings.
        let (name, text) = unsafe { (cstr((self.rt.get_error_name)(rc)), cstr((self.rt.get_error_string)(rc))) };
        Err(Error::Gpu(format!("{call} failed: {text} ({name} = {rc})")))
    }

    /// As [`Cuda::check`], for a driver call.
    fn check_drv(&self, call: &str, rc: CuResult) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a static string pointer.
        unsafe { (self.drv.get_error_string)(rc, &mut p) };
        Err(Error::Gpu(format!("{call} failed: {} (CUresult {rc})", cstr(p))))
    }

    pub fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: writes one int.
        self.check("cudaGetDeviceCount", unsafe { (self.rt.get_device_count)(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    fn device_name(&self, ordinal: c_int) -> String {
        let mut dev = 0;
        let mut buf = [0 as c_char; 128];
        // SAFETY: cuInit is idempotent; the name is written into `buf`, NUL-terminated.
        let ok = unsafe {
            (self.drv.init)(0) == 0
                && (self.drv.device_get)(&mut dev, ordinal) == 0
                && (self.drv.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, dev) == 0
        };
        if ok { cstr(buf.as_ptr()) } else { "unknown GPU".into() }
    }

    fn versions(&self) -> String {
        let (mut r, mut d) = (0, 0);
        // SAFETY: each writes one int.
        unsafe {
            (self.rt.runtime_get_version)(&mut r);
            (self.rt.driver_get_version)(&mut d);
        }
        format!("CUDA runtime {}, driver API {}", version(r), version(d))
    }

    /// One line: library, versions, devices.
    pub fn summary(&self) -> String {
        let devices = match self.device_count() {
            Ok(0) => "no GPU".to_string(),
            Ok(n) => {
                let names: Vec<String> = (0..n as c_int).map(|d| format!("{d}: {}", self.device_name(d))).collect();
                format!("{n} GPU(s) ({})", names.join(", "))
            }
            Err(e) => format!("no usable GPU ({e})"),
        };
        format!("nvidia: {} loaded ({}), {devices}", self.lib_name, self.versions())
    }

    /// Clears the last-error state after an error we ignore on purpose.
    fn clear_error(&self) {
        // SAFETY: plain query.
        unsafe { (self.rt.get_last_error)() };
    }
}

/// The NVIDIA platform runtime of this process.
pub struct CudaRuntime {
    cuda: Arc<Cuda>,
    host: HostRuntime,
    /// The device this PE uses.
    pub device: c_int,
    how_chosen: &'static str,
    /// Non-blocking stream for the library's own copies (table pushes, fills): they never wait
    /// for the program's kernels on the legacy default stream.
    stream: usize,
    n_devices: usize,
    peers_unreachable: Vec<c_int>,
    /// The helper kernels of the `*_on_stream` calls (see [`super::modules`]).
    streams: Arc<super::modules::Modules>,
    /// Multiprocessors of the device: the most work-groups of a stream collective.
    sm_count: u32,
    /// The heaps in registered host memory, for RO ([`GpuRuntime::use_host_heap`]).
    host_heaps: HostHeaps<Cuda>,
}

impl CudaRuntime {
    /// Picks this PE's device: the program's current device if it made one current (a CUDA
    /// context is current on this thread), else `local_rank % device count`. Then enables
    /// peer access to every device that allows it and creates the library's stream.
    pub fn new(cuda: Cuda, local_rank: usize) -> Result<CudaRuntime> {
        // Where init's GPU time goes (ROCSHMEM_DEBUG_LEVEL=INFO).
        let t0 = std::time::Instant::now();
        let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let n = cuda.device_count()?;
        let t_count = ms(t0);
        if n == 0 {
            return Err(Error::Gpu("the CUDA runtime sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)".into()));
        }
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: cuInit is idempotent; cuCtxGetCurrent writes one pointer.
        let has_ctx = unsafe { (cuda.drv.init)(0) == 0 && (cuda.drv.ctx_get_current)(&mut ctx) == 0 && !ctx.is_null() };
        let (device, how_chosen) = if has_ctx {
            let mut d = 0;
            // SAFETY: writes one int.
            cuda.check("cudaGetDevice", unsafe { (cuda.rt.get_device)(&mut d) })?;
            (d, "the program's current device")
        } else {
            let d = (local_rank % n) as c_int;
            // SAFETY: a valid ordinal.
            cuda.check(&format!("cudaSetDevice({d})"), unsafe { (cuda.rt.set_device)(d) })?;
            (d, "local rank modulo the GPU count")
        };
        let t_device = ms(t0);
        let mut peers_unreachable = Vec::new();
        for peer in (0..n as c_int).filter(|p| *p != device) {
            let mut can = 0;
            // SAFETY: writes one int.
            cuda.check("cudaDeviceCanAccessPeer", unsafe { (cuda.rt.device_can_access_peer)(&mut can, device, peer) })?;
            if can == 0 {
                peers_unreachable.push(peer);
                continue;
            }
            // SAFETY: both are valid ordinals.
            let rc = unsafe { (cuda.rt.device_enable_peer_access)(peer, 0) };
            if rc == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                cuda.clear_error();
            } else {
                cuda.check(&format!("cudaDeviceEnablePeerAccess({peer})"), rc)?;
            }
        }
        // The multiprocessor count (the grid of the large stream collectives); 1 if unknown.
        let (mut cu_dev, mut sms) = (0, 0);
        // SAFETY: cuInit was called above; each call writes one int.
        let sm_count = unsafe {
            if (cuda.drv.device_get)(&mut cu_dev, device) == 0
                && (cuda.drv.device_get_attribute)(&mut sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_dev) == 0
            {
                sms.max(1) as u32
            } else {
                1
            }
        };
        let t_peers = ms(t0);
        let mut stream: Stream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        cuda.check("cudaStreamCreateWithFlags", unsafe {
            (cuda.rt.stream_create_with_flags)(&mut stream, CUDA_STREAM_NON_BLOCKING)
        })?;
        crate::log_info!(
            "rocshmem_init",
            "CUDA set-up (ms, cumulative): cudaGetDeviceCount {t_count:.1}, cuInit + device/context {t_device:.1}, \
             peer access {t_peers:.1}, stream {:.1}",
            ms(t0)
        );
        let cuda = Arc::new(cuda);
        Ok(CudaRuntime {
            host_heaps: HostHeaps::new(Arc::clone(&cuda)),
            cuda,
            host: HostRuntime::new(),
            device,
            how_chosen,
            stream: stream as usize,
            n_devices: n,
            peers_unreachable,
            streams: Arc::new(super::modules::Modules::default()),
            sm_count,
        })
    }

    fn stream(&self) -> Stream {
        self.stream as Stream
    }

    fn sync_stream(&self, call: &str) -> Result<()> {
        // SAFETY: our stream.
        self.cuda.check(call, unsafe { (self.cuda.rt.stream_synchronize)(self.stream()) })
    }

    /// `cudaMalloc` of `len` bytes, zeroed, freed with `cudaFree` when the segment drops.
    fn malloc(&self, len: usize, handle: bool) -> Result<Segment> {
        let c = &self.cuda;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        c.check(&format!("cudaMalloc({len} bytes) on GPU {}", self.device), unsafe { (c.rt.malloc)(&mut p, len) })?;
        let keep = Arc::clone(c);
        let free: Box<dyn FnOnce(*mut u8, usize) + Send + Sync> = Box::new(move |base, _| {
            // SAFETY: `base` came from cudaMalloc and is freed once.
            unsafe { (keep.rt.free)(base.cast()) };
        });
        let mut h = IpcMemHandle { reserved: [0; IPC_HANDLE_BYTES] };
        if handle {
            // SAFETY: `p` is the base of a cudaMalloc allocation.
            if let Err(e) = c.check("cudaIpcGetMemHandle", unsafe { (c.rt.ipc_get_mem_handle)(&mut h, p) }) {
                // SAFETY: freeing what we just allocated.
                unsafe { (c.rt.free)(p) };
                return Err(e);
            }
        }
        let seg = Segment::new(p.cast(), len, if handle { h.reserved.to_vec() } else { Vec::new() }, free);
        // SAFETY: the whole allocation.
        unsafe { self.fill(seg.base, 0, len)? };
        Ok(seg)
    }
}

impl GpuRuntime for CudaRuntime {
    fn platform(&self) -> Platform {
        Platform::Nvidia
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "nvidia platform ({}, {}; GPU {} of {}: {}, chosen as {})",
            self.cuda.lib_name,
            self.cuda.versions(),
            self.device,
            self.n_devices,
            self.cuda.device_name(self.device),
            self.how_chosen
        );
        if !self.peers_unreachable.is_empty() {
            s.push_str(&format!("; no peer access to GPU(s) {:?}", self.peers_unreachable));
        }
        s
    }

    /// The device's UUID (a MIG instance's own, under MIG) and whether MPS serves this process,
    /// as the driver reports it (`CU_DEVICE_ATTRIBUTE_MPS_ENABLED`, CUDA 12.3 on; older drivers
    /// cannot say). Asked after the context exists, so it is this process's real state.
    fn identity(&self) -> Option<super::share::GpuIdentity> {
        let c = &self.cuda;
        let (mut dev, mut uuid, mut mps) = (0, [0u8; 16], 0);
        // SAFETY: cuInit was called when the device was chosen; each call writes its output.
        let rc = unsafe {
            if (c.drv.device_get)(&mut dev, self.device) != 0 || (c.drv.device_get_uuid)(&mut uuid, dev) != 0 {
                return None;
            }
            (c.drv.device_get_attribute)(&mut mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev)
        };
        let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
        let (concurrent, note) = match (rc, mps) {
            (0, 1) => (Some(true), "MPS serves this process".to_string()),
            (0, _) => (Some(false), super::share::mps_pipe_note()),
            _ => (None, format!("{}: no CU_DEVICE_ATTRIBUTE_MPS_ENABLED before CUDA 12.3", c.versions())),
        };
        Some(super::share::GpuIdentity {
            id: format!("GPU-{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]),
            concurrent,
            note,
            mps_share: (concurrent == Some(true)).then(super::share::mps_share_from_env),
        })
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
        let c = &self.cuda;
        let mut a = PointerAttributes {
            kind: 0,
            device: 0,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            reserved: [0; 8],
        };
        // SAFETY: writes the attributes; any address may be asked about.
        let rc = unsafe { (c.rt.pointer_get_attributes)(&mut a, addr as *const c_void) };
        if rc != CUDA_SUCCESS {
            c.clear_error();
            return false;
        }
        a.kind == CUDA_MEMORY_TYPE_DEVICE
    }

    fn bind_thread(&self) -> Result<()> {
        // SAFETY: a valid ordinal (chosen at init).
        self.cuda.check(&format!("cudaSetDevice({})", self.device), unsafe { (self.cuda.rt.set_device)(self.device) })
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
        let c = &self.cuda;
        let h = IpcMemHandle {
            reserved: handle.try_into().map_err(|_| {
                Error::Gpu(format!("a peer's CUDA IPC handle has {} bytes, not {IPC_HANDLE_BYTES}", handle.len()))
            })?,
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the handle came from a peer's cudaIpcGetMemHandle.
        c.check("cudaIpcOpenMemHandle of a peer's heap", unsafe {
            (c.rt.ipc_open_mem_handle)(&mut p, h, CUDA_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        })?;
        let keep = Arc::clone(c);
        Ok(Segment::new(
            p.cast(),
            len,
            handle.to_vec(),
            Box::new(move |base, _| {
                // SAFETY: `base` came from cudaIpcOpenMemHandle and is closed once.
                unsafe { (keep.rt.ipc_close_mem_handle)(base.cast()) };
            }),
        ))
    }

    fn alloc_device(&self, len: usize) -> Result<Option<Segment>> {
        self.malloc(len, false).map(Some)
    }

    /// `cudaMemcpy` (direction inferred), then a synchronisation of the legacy default stream:
    /// host-to-device copies from pageable memory and device-to-device copies may still be in
    /// flight when `cudaMemcpy` returns, and host RMA is complete when it returns.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let c = &self.cuda;
        // SAFETY: the caller's contract.
        c.check("cudaMemcpy", unsafe { (c.rt.memcpy)(dst.cast(), src.cast(), len, CUDA_MEMCPY_DEFAULT) })?;
        // SAFETY: the legacy default stream.
        c.check("cudaStreamSynchronize", unsafe { (c.rt.stream_synchronize)(std::ptr::null_mut()) })
    }

    unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
        let c = &self.cuda;
        // SAFETY: the caller's contract; our stream.
        c.check("cudaMemsetAsync", unsafe { (c.rt.memset_async)(dst.cast(), byte as c_int, len, self.stream()) })?;
        self.sync_stream("cudaStreamSynchronize after cudaMemsetAsync")
    }

    unsafe fn upload(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        let c = &self.cuda;
        // SAFETY: the caller's contract; our stream.
        c.check("cudaMemcpyAsync (device tables)", unsafe {
            (c.rt.memcpy_async)(dst.cast(), src.as_ptr().cast(), src.len(), CUDA_MEMCPY_DEFAULT, self.stream())
        })?;
        self.sync_stream("cudaStreamSynchronize after cudaMemcpyAsync")
    }

    unsafe fn module_global_copy(
        &self,
        module: *mut c_void,
        stream: *mut c_void,
        name: &str,
        src: *const u8,
        len: usize,
    ) -> Result<bool> {
        let c = &self.cuda;
        let cname = CString::new(name).map_err(|_| Error::invalid("global name has a NUL byte"))?;
        let (mut dptr, mut bytes): (CuDevicePtr, usize) = (0, 0);
        // SAFETY: `module` is the caller's CUmodule; writes a pointer and a size.
        let rc = unsafe { (c.drv.module_get_global)(&mut dptr, &mut bytes, module, cname.as_ptr()) };
        if rc == CU_ERROR_NOT_FOUND {
            return Ok(false);
        }
        c.check_drv(&format!("cuModuleGetGlobal_v2({name})"), rc)?;
        if bytes != len {
            return Err(Error::invalid(format!(
                "the module's {name} has {bytes} bytes where {len} are expected: was it built against another \
                 rocSHMEM device library?"
            )));
        }
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        // SAFETY: both are device addresses of `len` bytes; stream-ordered, no synchronisation.
        let rc = unsafe { (c.drv.memcpy_dtod_async)(dptr, src as CuDevicePtr, len, stream) };
        c.check_drv(&format!("cuMemcpyDtoDAsync_v2 into {name}"), rc)?;
        Ok(true)
    }

    fn stream_kernels_start(&self) {
        super::modules::start(&self.cuda, &self.streams, PACKS, PACKS_NOT_BUILT, self.stream);
    }

    fn stream_max_groups(&self) -> u32 {
        self.sm_count
    }

    fn stream_kernels_wait(&self) {
        self.streams.wait_loaded();
    }

    unsafe fn stream_launch(
        &self,
        stream: *mut c_void,
        kernel: &str,
        args: &crate::stream::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let c = &self.cuda;
        let f = self.streams.function(c.as_ref(), kernel)?;
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        let mut a = *args;
        let mut params = [(&mut a as *mut crate::stream::StreamArgs).cast::<c_void>()];
        // SAFETY: a function of our module taking one rocshmem_stream_args; the driver copies
        // the parameters before it returns. Stream-ordered, no synchronisation.
        let rc = unsafe {
            (c.drv.launch_kernel)(f, blocks, 1, 1, threads, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut())
        };
        c.check_drv(&format!("cuLaunchKernel(rocshmemi_stream_{kernel}, {blocks} x {threads} threads)"), rc)
    }

    unsafe fn stream_copy(&self, stream: *mut c_void, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let c = &self.cuda;
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        // SAFETY: the caller's ranges and stream; stream-ordered (the copy engine), no synchronisation.
        c.check(&format!("cudaMemcpyAsync({len} bytes) on the caller's stream"), unsafe {
            (c.rt.memcpy_async)(dst.cast(), src.cast(), len, CUDA_MEMCPY_DEFAULT, stream)
        })
    }
}

/// The stream helper kernels on NVIDIA: two modules embedded at build time (build.rs,
/// device/stream/module_*.cu), the 13 kernels of the untyped calls and the 163 reductions, each a
/// compressed container (src/stream/pack.rs) of its PTX and, when ptxas was there at build time,
/// its sm_90 SASS, which loads without JIT; loaded by the thread of [`modules`](super::modules).
#[cfg(rocshmem_stream_ptx)]
const PACKS: Option<[&[u8]; 2]> = Some([
    include_bytes!(concat!(env!("OUT_DIR"), "/stream_core.pack")),
    include_bytes!(concat!(env!("OUT_DIR"), "/stream_reduce.pack")),
]);
#[cfg(not(rocshmem_stream_ptx))]
const PACKS: Option<[&[u8]; 2]> = None;

const PACKS_NOT_BUILT: &str = "librocshmem was built without its NVIDIA stream kernels (no LLVM clang >= 16 with the \
                               NVPTX target at build time), so the *_on_stream calls are not available: rebuild it \
                               with clang-16 installed, or ROCSHMEM_LLVM_BIN naming an LLVM bin folder";
/// `CU_STREAM_CAPTURE_MODE_RELAXED`.
const CAPTURE_MODE_RELAXED: c_int = 2;

impl Cuda {
    /// The SM number (90 for compute capability 9.0) of the current context's device.
    fn current_sm(&self) -> Option<u32> {
        let (mut dev, mut major, mut minor) = (0, 0, 0);
        // SAFETY: each call writes one int.
        unsafe {
            (self.rt.get_device)(&mut dev) == 0
                && (self.drv.device_get)(&mut dev, dev) == 0
                && (self.drv.device_get_attribute)(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0
                && (self.drv.device_get_attribute)(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0
        }
        .then(|| (major * 10 + minor) as u32)
    }
}

/// The RO backend's host heaps on NVIDIA ([`HostHeaps`]).
impl MappedHostApi for Cuda {
    fn register(&self, base: *mut u8, len: usize, what: &str) -> Result<()> {
        // SAFETY: a live mapping of `len` bytes.
        self.check(&format!("cudaHostRegister({what}, {len} bytes)"), unsafe {
            (self.rt.host_register)(base.cast(), len, CUDA_HOST_PORTABLE_MAPPED)
        })
    }

    fn unregister(&self, base: *mut u8) {
        // SAFETY: registered by `register`, unregistered once.
        unsafe { (self.rt.host_unregister)(base.cast()) };
    }

    fn alloc(&self, len: usize) -> Result<*mut u8> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.check(&format!("cudaHostAlloc({len} bytes, portable | mapped)"), unsafe {
            (self.rt.host_alloc)(&mut p, len, CUDA_HOST_PORTABLE_MAPPED)
        })?;
        Ok(p.cast())
    }

    fn free(&self, base: *mut u8) {
        // SAFETY: from cudaHostAlloc, freed once.
        unsafe { (self.rt.free_host)(base.cast()) };
    }

    /// Device code uses host pointers as they are: the device address of registered or
    /// mapped host memory must be the host address (unified addressing, every 64-bit CUDA
    /// system).
    fn same_address(&self, base: *mut u8, what: &str) -> Result<()> {
        let mut d: *mut c_void = std::ptr::null_mut();
        // SAFETY: `base` is registered or cudaHostAlloc memory; writes one pointer.
        self.check(&format!("cudaHostGetDevicePointer({what})"), unsafe {
            (self.rt.host_get_device_pointer)(&mut d, base.cast(), 0)
        })?;
        if d.cast::<u8>() != base {
            return Err(Error::Gpu(format!(
                "{what}: the GPU maps host address {base:p} at {d:p}; the RO backend needs unified addressing"
            )));
        }
        Ok(())
    }

    fn create_stream(&self) -> Result<usize> {
        let mut stream: Stream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.check("cudaStreamCreateWithFlags", unsafe {
            (self.rt.stream_create_with_flags)(&mut stream, CUDA_STREAM_NON_BLOCKING)
        })?;
        Ok(stream as usize)
    }

    unsafe fn copy_and_wait(&self, stream: usize, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let s = stream as Stream;
        // SAFETY: the caller's contract; the library's non-blocking stream.
        self.check("cudaMemcpyAsync (RO staging)", unsafe {
            (self.rt.memcpy_async)(dst.cast(), src.cast(), len, CUDA_MEMCPY_DEFAULT, s)
        })?;
        // SAFETY: that stream.
        self.check("cudaStreamSynchronize (RO staging)", unsafe { (self.rt.stream_synchronize)(s) })
    }
}

impl super::modules::ModuleApi for Cuda {
    fn binding(&self) -> usize {
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        unsafe { (self.drv.ctx_get_current)(&mut ctx) };
        ctx as usize
    }

    fn bind_loader(&self, binding: usize) {
        // SAFETY: the initialising thread's context; this thread's capture mode only.
        unsafe {
            (self.drv.ctx_set_current)(binding as *mut c_void);
            let mut mode = CAPTURE_MODE_RELAXED;
            (self.drv.thread_exchange_capture_mode)(&mut mode);
        }
    }

    /// One module from its container: the SASS built for this GPU if there is one (no JIT),
    /// else the PTX (JIT-compiled by the driver, cached by it across runs).
    fn load(&self, pack: &[u8]) -> Result<(usize, String)> {
        let images = crate::stream::pack::read(pack).map_err(Error::Gpu)?;
        let sm = self.current_sm();
        let mut module: *mut c_void = std::ptr::null_mut();
        if let Some(img) = images.iter().find(|i| i.kind == crate::stream::pack::KIND_CUBIN && Some(i.sm) == sm) {
            let t = std::time::Instant::now();
            let cubin = img.unpack().map_err(Error::Gpu)?;
            let unpacked = t.elapsed().as_secs_f64() * 1e3;
            // SAFETY: a cubin image; writes one handle.
            let rc = unsafe { (self.drv.module_load_data)(&mut module, cubin.as_ptr().cast()) };
            if rc == 0 {
                let how = format!("sm_{} SASS, {} bytes unpacked in {unpacked:.1} ms", img.sm, cubin.len());
                return Ok((module as usize, how));
            }
            // A driver older than the ptxas that built it: the PTX below still loads.
            crate::log_info!(
                "rocshmem_init",
                "the embedded sm_{} SASS did not load (CUresult {rc}): JIT from PTX",
                img.sm
            );
            module = std::ptr::null_mut();
        }
        let img = images
            .iter()
            .find(|i| i.kind == crate::stream::pack::KIND_PTX)
            .ok_or_else(|| Error::Gpu("an embedded stream-kernel container has no PTX".into()))?;
        let t = std::time::Instant::now();
        let mut text = img.unpack().map_err(Error::Gpu)?;
        let unpacked = t.elapsed().as_secs_f64() * 1e3;
        text.push(0);
        // SAFETY: a NUL-terminated PTX image; writes one handle.
        self.check_drv("cuModuleLoadData (PTX JIT)", unsafe {
            (self.drv.module_load_data)(&mut module, text.as_ptr().cast())
        })?;
        Ok((module as usize, format!("PTX JIT, {} bytes unpacked in {unpacked:.1} ms", text.len() - 1)))
    }

    fn function(&self, module: usize, name: &CString) -> Result<usize> {
        let mut f: *mut c_void = std::ptr::null_mut();
        // SAFETY: a loaded module; writes one handle.
        let rc = unsafe { (self.drv.module_get_function)(&mut f, module as *mut c_void, name.as_ptr()) };
        self.check_drv(&format!("cuModuleGetFunction({})", name.to_string_lossy()), rc)?;
        Ok(f as usize)
    }

    fn sync(&self, stream: usize) -> Result<()> {
        // SAFETY: the library's stream.
        self.check("cudaStreamSynchronize (stream kernel globals)", unsafe {
            (self.rt.stream_synchronize)(stream as Stream)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes_and_versions() {
        assert_eq!(std::mem::size_of::<IpcMemHandle>(), 64);
        assert_eq!(version(13000), "13.0");
        assert_eq!(version(12080), "12.8");
        assert_eq!(cstr(std::ptr::null()), "unknown error");
    }

    #[test]
    fn load_fails_cleanly_or_works() {
        // Here (no CUDA) loading fails with a message naming the libraries; on a GPU machine it
        // loads and describes what it found.
        match Cuda::load() {
            Err(e) => assert!(e.to_string().contains("libcudart"), "{e}"),
            Ok(c) => assert!(c.summary().starts_with("nvidia:")),
        }
    }
}
