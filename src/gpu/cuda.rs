//! The NVIDIA platform: the CUDA runtime (`libcudart`) and driver (`libcuda`), loaded at run
//! time with libloading, so that librocshmem has no link-time dependency on CUDA and still
//! loads (and runs the host platform) where CUDA is absent.
//!
//! What it provides (see `docs/design.md`, "The NVIDIA platform"): the platform runtime shared
//! with AMD ([`DeviceRuntime`], `vendor.rs`) over CUDA's calls: each PE's device segment is one
//! `cudaMalloc` allocation; the device is the program's current one (a CUDA context is current)
//! or `local rank % device count`; host RMA is `cudaMemcpy`; the stream-ordered copy of
//! `rocshmem_hipmodule_init` is `cuModuleGetGlobal_v2` + `cuMemcpyDtoDAsync_v2`; the stream
//! kernels are PTX/SASS modules.
//!
//! The few CUDA types and constants needed are declared here and in `vendor.rs`, from the CUDA
//! headers' ABI (stable across CUDA 11 to 13): `cudaError_t` and `CUresult` are C enums (i32), a
//! `cudaIpcMemHandle_t` is 64 opaque bytes passed by value, streams and modules are pointers,
//! `CUdeviceptr` is a 64-bit integer.

use super::Platform;
use super::modules::ModuleApi;
use super::vendor::{DeviceRuntime, Found, MEMCPY_DEFAULT, NOT_FOUND, Rt, RtError, Stream, Vendor, cstr};
use crate::dl::{fn_table, symbol};
use crate::error::{Error, Result};
use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};

type CuResult = i32;
type CuDevicePtr = u64;

/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
/// `CU_DEVICE_ATTRIBUTE_MPS_ENABLED` (CUDA 12.3 on): contexts on the device are shared via MPS.
const CU_DEVICE_ATTRIBUTE_MPS_ENABLED: c_int = 133;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `cudaHostAllocPortable | cudaHostAllocMapped`: every context of the process, and a device
/// address.
const CUDA_HOST_ALLOC_PORTABLE_MAPPED: c_uint = 1 | 2;
/// `cudaMemoryTypeDevice` in `cudaPointerAttributes::type`.
const CUDA_MEMORY_TYPE_DEVICE: c_int = 2;

/// The libraries tried, in order, for the runtime.
pub const CUDART_NAMES: [&str; 3] = ["libcudart.so", "libcudart.so.13", "libcudart.so.12"];
/// The driver library.
pub const CUDA_DRIVER_NAME: &str = "libcuda.so.1";

fn_table!(
    /// The CUDA runtime calls HIP has under another name or not at all.
    struct CudaOnlyFns {
        memcpy = "cudaMemcpy": fn(*mut c_void, *const c_void, usize, c_int) -> RtError;
        driver_get_version = "cudaDriverGetVersion": fn(*mut c_int) -> RtError;
        host_alloc = "cudaHostAlloc": fn(*mut *mut c_void, usize, c_uint) -> RtError;
        free_host = "cudaFreeHost": fn(*mut c_void) -> RtError;
    }
);

fn_table!(
    struct DriverFns {
        init = "cuInit": fn(c_uint) -> CuResult;
        ctx_get_current = "cuCtxGetCurrent": fn(*mut *mut c_void) -> CuResult;
        device_get = "cuDeviceGet": fn(*mut c_int, c_int) -> CuResult;
        device_get_name = "cuDeviceGetName": fn(*mut c_char, c_int, c_int) -> CuResult;
        device_get_attribute = "cuDeviceGetAttribute": fn(*mut c_int, c_int, c_int) -> CuResult;
        device_get_uuid = "cuDeviceGetUuid_v2": fn(*mut [u8; 16], c_int) -> CuResult;
        module_get_global = "cuModuleGetGlobal_v2":
            fn(*mut CuDevicePtr, *mut usize, *mut c_void, *const c_char) -> CuResult;
        memcpy_dtod_async = "cuMemcpyDtoDAsync_v2": fn(CuDevicePtr, CuDevicePtr, usize, Stream) -> CuResult;
        get_error_string = "cuGetErrorString": fn(CuResult, *mut *const c_char) -> CuResult;
        ctx_set_current = "cuCtxSetCurrent": fn(*mut c_void) -> CuResult;
        module_load_data = "cuModuleLoadData": fn(*mut *mut c_void, *const c_void) -> CuResult;
        module_get_function = "cuModuleGetFunction": fn(*mut *mut c_void, *mut c_void, *const c_char) -> CuResult;
        launch_kernel = "cuLaunchKernel": fn(
            *mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void,
            *mut *mut c_void
        ) -> CuResult;
        thread_exchange_capture_mode = "cuThreadExchangeStreamCaptureMode": fn(*mut c_int) -> CuResult;
    }
);

fn_table!(
    /// The driver's calls that load every function of a module at once (CUDA 12.4 and later;
    /// None with an older driver).
    struct EagerFns {
        module_get_function_count = "cuModuleGetFunctionCount": fn(*mut c_uint, *mut c_void) -> CuResult;
        module_enumerate_functions = "cuModuleEnumerateFunctions": fn(*mut *mut c_void, c_uint, *mut c_void) -> CuResult;
        func_load = "cuFuncLoad": fn(*mut c_void) -> CuResult;
        func_get_name = "cuFuncGetName": fn(*mut *const c_char, *mut c_void) -> CuResult;
    }
);

/// The loaded CUDA libraries.
pub struct Cuda {
    rt: Rt,
    cu: CudaOnlyFns,
    drv: DriverFns,
    eager: Option<EagerFns>,
    /// Which runtime library was loaded (for logs).
    pub lib_name: &'static str,
    _cudart: Library,
    _driver: Library,
}

// SAFETY: the CUDA runtime and driver APIs are thread-safe; we hold only function pointers.
unsafe impl Send for Cuda {}
unsafe impl Sync for Cuda {}

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
        let rt = Rt::load(&cudart, lib_name, "cuda")?;
        let missing = |lib: &str, sym: &str, e| Error::Gpu(format!("{lib} has no {sym}: {e}"));
        // SAFETY: every symbol has the declared C signature in every CUDA release we accept.
        let cu = unsafe { CudaOnlyFns::load_with(|s| symbol(&cudart, s).map_err(|e| missing(lib_name, s, e))) }?;
        // SAFETY: as above.
        let drv = unsafe { DriverFns::load_with(|s| symbol(&driver, s).map_err(|e| missing(CUDA_DRIVER_NAME, s, e))) }?;
        // SAFETY: as above (each present symbol has the declared C signature).
        let eager = unsafe { EagerFns::load_with(|s| symbol(&driver, s)) }.ok();
        Ok(Cuda { rt, cu, drv, eager, lib_name, _cudart: cudart, _driver: driver })
    }

    /// `Err` naming `call` and CUDA's own description unless `rc` is success.
    fn check(&self, call: &str, rc: RtError) -> Result<()> {
        self.rt.check(call, rc)
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
        self.check("cudaGetDeviceCount", unsafe { (self.rt.f.get_device_count)(&mut n) })?;
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
            (self.rt.f.runtime_get_version)(&mut r);
            (self.cu.driver_get_version)(&mut d);
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

    /// The multiprocessor count of `device` (the grid of the large stream collectives); 1 if
    /// unknown.
    fn sm_count(&self, device: c_int) -> u32 {
        let (mut cu_dev, mut sms) = (0, 0);
        // SAFETY: cuInit was called; each call writes one int.
        unsafe {
            if (self.drv.device_get)(&mut cu_dev, device) == 0
                && (self.drv.device_get_attribute)(&mut sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_dev) == 0
            {
                sms.max(1) as u32
            } else {
                1
            }
        }
    }

    /// This PE's device: the program's current device if it made one current (a CUDA context
    /// is current on this thread), else `local_rank % n`, made current.
    fn choose_device(&self, local_rank: usize, n: usize) -> Result<(c_int, &'static str)> {
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: cuInit is idempotent; cuCtxGetCurrent writes one pointer.
        let has_ctx = unsafe { (self.drv.init)(0) == 0 && (self.drv.ctx_get_current)(&mut ctx) == 0 && !ctx.is_null() };
        if has_ctx {
            return Ok((self.rt.current_device()?, "the program's current device"));
        }
        let d = (local_rank % n) as c_int;
        self.rt.set_device(d)?;
        Ok((d, "local rank modulo the GPU count"))
    }
}

/// The NVIDIA platform runtime of this process.
pub type CudaRuntime = DeviceRuntime<Cuda>;

impl DeviceRuntime<Cuda> {
    /// Picks this PE's device ([`Cuda::choose_device`]), then enables peer access to every
    /// device that allows it and creates the library's stream.
    pub fn new(cuda: Cuda, local_rank: usize) -> Result<CudaRuntime> {
        // Where init's GPU time goes (ROCSHMEM_DEBUG_LEVEL=INFO).
        let t0 = std::time::Instant::now();
        let ms = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e3;
        let n = cuda.device_count()?;
        let t_count = ms(t0);
        if n == 0 {
            return Err(Error::Gpu("the CUDA runtime sees no GPU (check CUDA_VISIBLE_DEVICES and the driver)".into()));
        }
        let (device, how_chosen) = cuda.choose_device(local_rank, n)?;
        let t_device = ms(t0);
        let peers_unreachable = cuda.rt.enable_peers(device, n)?;
        let max_groups = cuda.sm_count(device);
        let t_peers = ms(t0);
        let stream = cuda.rt.create_stream()?;
        crate::log_info!(
            "rocshmem_init",
            "CUDA set-up (ms, cumulative): cudaGetDeviceCount {t_count:.1}, cuInit + device/context {t_device:.1}, \
             peer access {t_peers:.1}, stream {:.1}",
            ms(t0)
        );
        let found =
            Found { api: cuda, device, how_chosen, n_devices: n, peers_unreachable, stream, max_groups, pe: () };
        Ok(DeviceRuntime::assemble(found))
    }
}

impl Vendor for Cuda {
    const PLATFORM: Platform = Platform::Nvidia;
    // Not guarded: every device allocation and IPC mapping is made by init, on the thread where
    // init made the PE's device current; and a guard's restore would call cudaSetDevice(0) on a
    // thread that never chose a device, which since CUDA 12 makes a context on GPU 0.
    const GUARD_DEVICE: bool = false;
    const IMAGES: Option<[&'static [u8]; 2]> = PACKS;
    const IMAGES_NOT_BUILT: &'static str = PACKS_NOT_BUILT;
    type Pe = ();

    fn rt(&self) -> &Rt {
        &self.rt
    }

    fn describe(rt: &CudaRuntime) -> String {
        let c = &rt.api;
        format!(
            "nvidia platform ({}, {}; GPU {} of {}: {}, chosen as {}){}",
            c.lib_name,
            c.versions(),
            rt.device,
            rt.n_devices,
            c.device_name(rt.device),
            rt.how_chosen,
            rt.peers_note()
        )
    }

    /// The device's UUID (a MIG instance's own, under MIG) and whether MPS serves this process,
    /// as the driver reports it (`CU_DEVICE_ATTRIBUTE_MPS_ENABLED`, CUDA 12.3 on; older drivers
    /// cannot say). Asked after the context exists, so it is this process's real state.
    fn identity(rt: &CudaRuntime) -> Option<super::share::GpuIdentity> {
        let c = &rt.api;
        let (mut dev, mut uuid, mut mps) = (0, [0u8; 16], 0);
        // SAFETY: cuInit was called when the device was chosen; each call writes its output.
        let rc = unsafe {
            if (c.drv.device_get)(&mut dev, rt.device) != 0 || (c.drv.device_get_uuid)(&mut uuid, dev) != 0 {
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

    fn memory_type_device(&self) -> c_int {
        CUDA_MEMORY_TYPE_DEVICE
    }

    /// `cudaIpcMemLazyEnablePeerAccess`.
    fn ipc_open_flags(&self) -> c_uint {
        1
    }

    /// `cudaMalloc`, for the heap and for tables alike.
    fn alloc(rt: &CudaRuntime, len: usize, _heap: bool) -> Result<*mut c_void> {
        let c = &rt.api;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        let rc = unsafe { (c.rt.f.malloc)(&mut p, len) };
        c.check(&format!("cudaMalloc({len} bytes) on GPU {}", rt.device), rc)?;
        Ok(p)
    }

    /// `cudaMemcpy` (direction inferred), then a synchronisation of the legacy default stream:
    /// host-to-device copies from pageable memory and device-to-device copies may still be in
    /// flight when `cudaMemcpy` returns, and host RMA is complete when it returns.
    unsafe fn copy(rt: &CudaRuntime, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let c = &rt.api;
        // SAFETY: the caller's contract.
        c.check("cudaMemcpy", unsafe { (c.cu.memcpy)(dst.cast(), src.cast(), len, MEMCPY_DEFAULT) })?;
        c.rt.sync("cudaStreamSynchronize", 0)
    }

    unsafe fn module_global(&self, module: *mut c_void, name: &CStr) -> Result<Option<(usize, usize)>> {
        let (mut dptr, mut bytes): (CuDevicePtr, usize) = (0, 0);
        // SAFETY: `module` is the caller's CUmodule; writes a pointer and a size.
        let rc = unsafe { (self.drv.module_get_global)(&mut dptr, &mut bytes, module, name.as_ptr()) };
        if rc == NOT_FOUND {
            return Ok(None);
        }
        self.check_drv(&format!("cuModuleGetGlobal_v2({})", name.to_string_lossy()), rc)?;
        Ok(Some((dptr as usize, bytes)))
    }

    unsafe fn copy_to_global(&self, dst: usize, src: *const u8, len: usize, stream: Stream, name: &str) -> Result<()> {
        // SAFETY: the caller's contract.
        let rc = unsafe { (self.drv.memcpy_dtod_async)(dst as CuDevicePtr, src as CuDevicePtr, len, stream) };
        self.check_drv(&format!("cuMemcpyDtoDAsync_v2 into {name}"), rc)
    }

    unsafe fn launch(
        &self,
        f: *mut c_void,
        blocks: u32,
        threads: u32,
        stream: Stream,
        params: *mut *mut c_void,
        kernel: &str,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let rc = unsafe {
            (self.drv.launch_kernel)(f, blocks, 1, 1, threads, 1, 1, 0, stream, params, std::ptr::null_mut())
        };
        self.check_drv(&format!("cuLaunchKernel(rocshmemi_stream_{kernel}, {blocks} x {threads} threads)"), rc)
    }

    fn host_alloc(&self, len: usize) -> Result<*mut u8> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.check(&format!("cudaHostAlloc({len} bytes, portable | mapped)"), unsafe {
            (self.cu.host_alloc)(&mut p, len, CUDA_HOST_ALLOC_PORTABLE_MAPPED)
        })?;
        Ok(p.cast())
    }

    fn host_free(&self, base: *mut u8) {
        // SAFETY: from cudaHostAlloc, freed once.
        unsafe { (self.cu.free_host)(base.cast()) };
    }

    /// The device address of registered or mapped host memory must be the host address
    /// (unified addressing, every 64-bit CUDA system).
    fn host_address_ok(&self, _device: c_int, base: *mut u8, mapped: *mut c_void, what: &str) -> Result<()> {
        if mapped.cast::<u8>() != base {
            return Err(Error::Gpu(format!(
                "{what}: the GPU maps host address {base:p} at {mapped:p}; the RO backend needs unified addressing"
            )));
        }
        Ok(())
    }
}

/// The stream helper kernels on NVIDIA: two modules embedded at build time (build.rs,
/// device/stream/module_*.cu), the 14 kernels of the untyped calls and the 163 reductions, each a
/// compressed container (src/gpu/stream_pack.rs) of its PTX and, when ptxas was there at build time,
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
            (self.rt.f.get_device)(&mut dev) == 0
                && (self.drv.device_get)(&mut dev, dev) == 0
                && (self.drv.device_get_attribute)(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0
                && (self.drv.device_get_attribute)(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0
        }
        .then(|| (major * 10 + minor) as u32)
    }
}

impl ModuleApi for Cuda {
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
        let images = super::stream_pack::read(pack).map_err(Error::Gpu)?;
        let sm = self.current_sm();
        let mut module: *mut c_void = std::ptr::null_mut();
        if let Some(img) = images.iter().find(|i| i.kind == super::stream_pack::KIND_CUBIN && Some(i.sm) == sm) {
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
            .find(|i| i.kind == super::stream_pack::KIND_PTX)
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
        self.rt.sync("cudaStreamSynchronize (stream kernel globals)", stream)
    }

    /// Every function of the module, loaded now (`cuFuncLoad`) rather than at its first
    /// `cuModuleGetFunction`: with lazy loading (CUDA's default since 12.2) that first call can
    /// wait for the context's running kernels, and under RO a running stream kernel waits for
    /// the proxy thread, whose CUDA calls (the staging copies) wait for that load.
    fn preload(&self, module: usize) -> Result<Vec<(String, usize)>> {
        let Some(e) = &self.eager else { return Ok(Vec::new()) };
        let m = module as *mut c_void;
        let mut n: c_uint = 0;
        // SAFETY: a loaded module; writes one count.
        self.check_drv("cuModuleGetFunctionCount", unsafe { (e.module_get_function_count)(&mut n, m) })?;
        let mut fs = vec![std::ptr::null_mut::<c_void>(); n as usize];
        // SAFETY: room for `n` handles.
        self.check_drv("cuModuleEnumerateFunctions", unsafe { (e.module_enumerate_functions)(fs.as_mut_ptr(), n, m) })?;
        let mut out = Vec::with_capacity(fs.len());
        for f in fs {
            let mut name: *const c_char = std::ptr::null();
            // SAFETY: a function handle of the module; the name is the driver's, valid while the module is.
            self.check_drv("cuFuncLoad", unsafe { (e.func_load)(f) })?;
            self.check_drv("cuFuncGetName", unsafe { (e.func_get_name)(&mut name, f) })?;
            if !name.is_null() {
                // SAFETY: a NUL-terminated string of the driver.
                let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned();
                out.push((name, f as usize));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes_and_versions() {
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
