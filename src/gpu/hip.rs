//! The AMD platform: the HIP runtime (`libamdhip64`), loaded at run time with libloading, so that
//! librocshmem has no link-time dependency on ROCm and still loads (and runs the host or NVIDIA
//! platform) where HIP is absent.
//!
//! What it provides (see `docs/design.md`, "The AMD platform"): the platform runtime shared with
//! NVIDIA ([`DeviceRuntime`], `vendor.rs`) over HIP's calls: each PE's device segment is one
//! allocation of the kind `ROCSHMEM_HEAP_ALLOCATOR_TYPE` asks for ([`HeapAllocator`],
//! `hip_arch.rs`); allocations and IPC mappings are made on the PE's device whichever thread
//! asks; host RMA runs on the library's non-blocking stream; the stream-ordered copy of
//! `rocshmem_hipmodule_init` is `hipModuleGetGlobal` + `hipMemcpyAsync`; the stream kernels are
//! code objects; RO's host heaps need the GPU to reach host memory at its host address.
//!
//! The HIP types and constants used are declared here and in `vendor.rs`, from the HIP headers'
//! ABI (checked against Debian's HIP 5.2 headers and ROCm 6/7's): `hipError_t` is a C enum
//! (i32), a `hipIpcMemHandle_t` is 64 opaque bytes passed by value, streams, events and modules
//! are pointers, `hipDeviceptr_t` is `void *`. The hip-runtime-sys crate is not used: its build
//! script panics where no HIP headers are installed and always emits `-lamdhip64`, and a build on
//! an NVIDIA-only or CPU-only machine must work (the CUDA runtime in `cuda.rs` declares its few
//! types the same way). Names, memory and PCI ids come from calls that take no structure; the
//! arch name from `hipDeviceProp_t` (`hip_arch.rs`).

use super::Platform;
use super::hip_arch::{
    DEVICE_PROP_BUFFER_BYTES, GCN_ARCH_NAME_OFFSET_R0000, GCN_ARCH_NAME_OFFSET_R0600, arch_from_props,
};
pub use super::hip_arch::{HeapAllocator, base_arch};
use super::modules::ModuleApi;
use super::vendor::{DeviceRuntime, Found, NOT_FOUND, Rt, SUCCESS, Stream, Vendor, cstr};
use crate::dl::{fn_table, symbol};
use crate::error::{Error, Result};
use crate::log_info;
use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::mem::ManuallyDrop;

type HipError = i32;

/// `hipErrorNoDevice`: what `hipGetDeviceCount` returns (with a count of 0) when there is no GPU.
const HIP_ERROR_NO_DEVICE: HipError = 100;
/// `hipMemcpyDeviceToDevice`.
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
/// `hipDeviceMallocFinegrained` (`hipExtMallocWithFlags`).
const HIP_DEVICE_MALLOC_FINEGRAINED: c_uint = 1;
/// `hipDeviceMallocUncached` (`hipExtMallocWithFlags`; not in HIP 5.2, which rejects it).
const HIP_DEVICE_MALLOC_UNCACHED: c_uint = 3;
/// `hipHostMallocPortable | hipHostMallocMapped | hipHostMallocCoherent` (as upstream's
/// `HIPHostAllocator` asks for coherent memory): fine-grained pinned host memory.
const HIP_HOST_MALLOC_PORTABLE_MAPPED_COHERENT: c_uint = 1 | 2 | 0x4000_0000;
/// `hipDeviceAttributeMultiprocessorCount` (the same value in HIP 5.2 and 6.4 headers).
const HIP_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 63;
/// `hipDeviceAttributePageableMemoryAccessUsesHostPageTables` (HIP 5.2 and 6.4): the GPU reaches
/// host memory at its host addresses through the CPU's page tables (XNACK on, or an APU).
const HIP_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: c_int = 66;
/// `hipStreamCaptureModeRelaxed`.
const HIP_STREAM_CAPTURE_MODE_RELAXED: c_int = 2;
/// `hipMemoryTypeDevice` in `hipPointerAttribute_t::type`: 1 before HIP 6, 2 from HIP 6 on (the
/// enum was renumbered to CUDA's values; see [`Vendor::memory_type_device`]).
const HIP_MEMORY_TYPE_DEVICE_HIP5: c_int = 1;
const HIP_MEMORY_TYPE_DEVICE_HIP6: c_int = 2;

/// The libraries tried, in order, when `ROCSHMEM_HIP_LIBRARY` is empty: the development link,
/// the sonames of HIP 7, 6 and 5, then ROCm's default install directory (not always on the
/// loader's path).
pub const HIP_NAMES: [&str; 5] =
    ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"];

fn_table!(
    /// The HIP runtime calls CUDA has under another name or not at all (the shared ones:
    /// `vendor::RtFns`).
    struct HipFns {
        ext_malloc_with_flags = "hipExtMallocWithFlags": fn(*mut *mut c_void, usize, c_uint) -> HipError;
        stream_destroy = "hipStreamDestroy": fn(Stream) -> HipError;
        device_get_name = "hipDeviceGetName": fn(*mut c_char, c_int, c_int) -> HipError;
        device_get_pci_bus_id = "hipDeviceGetPCIBusId": fn(*mut c_char, c_int, c_int) -> HipError;
        device_total_mem = "hipDeviceTotalMem": fn(*mut usize, c_int) -> HipError;
        module_get_global = "hipModuleGetGlobal": fn(*mut *mut c_void, *mut usize, *mut c_void, *const c_char) -> HipError;
        module_load_data = "hipModuleLoadData": fn(*mut *mut c_void, *const c_void) -> HipError;
        module_get_function = "hipModuleGetFunction": fn(*mut *mut c_void, *mut c_void, *const c_char) -> HipError;
        module_launch_kernel = "hipModuleLaunchKernel": fn(*mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void, *mut *mut c_void) -> HipError;
        thread_exchange_capture_mode = "hipThreadExchangeStreamCaptureMode": fn(*mut c_int) -> HipError;
        device_get_attribute = "hipDeviceGetAttribute": fn(*mut c_int, c_int, c_int) -> HipError;
        host_malloc = "hipHostMalloc": fn(*mut *mut c_void, usize, c_uint) -> HipError;
        host_free = "hipHostFree": fn(*mut c_void) -> HipError;
    }
);

/// `hipGetDeviceProperties` / `hipGetDevicePropertiesR0600` (the structure is a byte buffer here).
type GetDeviceProperties = unsafe extern "C" fn(*mut c_void, c_int) -> HipError;

/// The loaded HIP runtime.
pub struct Hip {
    rt: Rt,
    ext: HipFns,
    /// `hipGetDevicePropertiesR0600` (ROCm 6 and later) or `hipGetDeviceProperties` (earlier),
    /// with the offset of `gcnArchName` in the layout it fills; None if the library has neither.
    get_props: Option<(GetDeviceProperties, usize)>,
    /// The name it was loaded by and the file it is (for logs and rocshmem_info).
    pub lib_name: String,
    pub lib_path: String,
    /// Whether the program had already loaded it (its own HIP runtime, which we then share).
    pub already_loaded: bool,
    /// Never unloaded: the HIP runtime keeps process-wide state (and ROCr threads) that must not
    /// go away while the process runs, as for a library linked at build time.
    _lib: ManuallyDrop<Library>,
}

// SAFETY: the HIP runtime API is thread-safe; we hold only function pointers.
unsafe impl Send for Hip {}
unsafe impl Sync for Hip {}

/// `HIP_VERSION` as `hipRuntimeGetVersion` reports it: major·10⁷ + minor·10⁵ + patch.
fn version(v: c_int) -> String {
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// Whether device code can use host address `host` of registered or pinned host memory that HIP
/// maps for the GPU at `device` (see `Vendor::host_address_ok`).
fn host_address_check(host: usize, device: usize, host_page_tables: bool, what: &str) -> Result<()> {
    if device == host || host_page_tables {
        return Ok(());
    }
    Err(Error::Unsupported(format!(
        "ROCSHMEM_BACKEND=ro: {what}: HIP maps host address {host:#x} for the GPU at {device:#x}, and this GPU does \
         not reach host memory through the CPU's page tables (XNACK off); the RO backend on AMD keeps the heaps in \
         host memory at one address for the CPU, MPI and the GPU, so it cannot run here: set HSA_XNACK=1 (GPUs \
         with XNACK: gfx90a, gfx942, gfx950), or use the IPC backend (one node)"
    )))
}

/// `hipMemoryTypeDevice` of HIP `major` (see [`Vendor::memory_type_device`]).
fn memory_type_device_for(major: c_int) -> c_int {
    if major >= 6 { HIP_MEMORY_TYPE_DEVICE_HIP6 } else { HIP_MEMORY_TYPE_DEVICE_HIP5 }
}

/// `hipIpcMemLazyEnablePeerAccess` of HIP `major`: 0 in HIP 5, 1 (CUDA's value) from HIP 6 on,
/// and hipIpcOpenMemHandle refuses any other value (its header: "must be specified as
/// hipIpcMemLazyEnablePeerAccess").
fn ipc_lazy_for(major: c_int) -> c_uint {
    if major >= 6 { 1 } else { 0 }
}

/// The file the symbol at `addr` was loaded from (its library).
fn library_path_of(addr: *const c_void) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the loader.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    // The file behind the links (its name carries the full version).
    Some(std::fs::canonicalize(&path).map(|p| p.display().to_string()).unwrap_or(path))
}

impl Hip {
    /// The HIP runtime's major version (6 when it cannot say: today's releases).
    fn major(&self) -> c_int {
        let mut v = 0;
        // SAFETY: writes one int.
        if unsafe { (self.rt.f.runtime_get_version)(&mut v) } == SUCCESS { v / 10_000_000 } else { 6 }
    }

    /// Loads libamdhip64: the one the program already loaded if any (a HIP program is linked
    /// with it, and its device memory, current device and modules belong to that instance), else
    /// `library` (`ROCSHMEM_HIP_LIBRARY`) if not empty, else the first of [`HIP_NAMES`] (and
    /// `$ROCM_PATH/lib/libamdhip64.so`) that loads.
    pub fn load(library: &str) -> Result<Hip> {
        let library = library.trim();
        let mut tried = Vec::new();
        let mut found: Option<(String, Library, bool)> = None;
        if library.is_empty() {
            for name in HIP_NAMES.iter().skip(1).chain(HIP_NAMES.iter().take(1)) {
                // SAFETY: RTLD_NOLOAD only looks up a library the process already loaded.
                let l = unsafe { libloading::os::unix::Library::open(Some(*name), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
                if let Ok(l) = l {
                    found = Some((name.to_string(), l.into(), true));
                    break;
                }
            }
        }
        let mut candidates: Vec<String> = Vec::new();
        if library.is_empty() {
            candidates.extend(HIP_NAMES.iter().map(|s| s.to_string()));
            if let Ok(root) = std::env::var("ROCM_PATH") {
                if !root.trim().is_empty() {
                    candidates
                        .insert(candidates.len() - 1, format!("{}/lib/libamdhip64.so", root.trim_end_matches('/')));
                }
            }
        } else {
            candidates.push(library.to_string());
        }
        if found.is_none() {
            for name in &candidates {
                // SAFETY: loading the HIP runtime runs only its initialisers (no device work).
                match unsafe { Library::new(name) } {
                    Ok(l) => {
                        found = Some((name.clone(), l, false));
                        break;
                    }
                    Err(e) => tried.push(format!("{name}: {e}")),
                }
            }
        }
        let Some((lib_name, lib, already_loaded)) = found else {
            let what = if library.is_empty() {
                "the HIP runtime (libamdhip64) is not installed or not on the library path"
            } else {
                "the HIP runtime named by ROCSHMEM_HIP_LIBRARY could not be loaded"
            };
            return Err(Error::Unsupported(format!("{what} ({})", tried.join("; "))));
        };
        // Every symbol has the declared C signature in every HIP release we accept (prototypes of
        // hip_runtime_api.h, HIP 5.2 to 7).
        let rt = Rt::load(&lib, &lib_name, "hip")?;
        // SAFETY: as above.
        let ext = unsafe {
            HipFns::load_with(|s| symbol(&lib, s).map_err(|e| Error::Gpu(format!("{lib_name} has no {s}: {e}"))))
        }?;
        let get_props = {
            // SAFETY: both symbols take (hipDeviceProp_t *, int) and return hipError_t; the
            // buffer we pass is larger than either layout.
            let r0600 = unsafe { lib.get::<GetDeviceProperties>(b"hipGetDevicePropertiesR0600") };
            let r0000 = unsafe { lib.get::<GetDeviceProperties>(b"hipGetDeviceProperties") };
            match (r0600, r0000) {
                (Ok(f), _) => Some((*f, GCN_ARCH_NAME_OFFSET_R0600)),
                (Err(_), Ok(f)) => Some((*f, GCN_ARCH_NAME_OFFSET_R0000)),
                _ => None,
            }
        };
        let lib_path = library_path_of(rt.f.get_device_count as *const c_void).unwrap_or_else(|| lib_name.clone());
        Ok(Hip { rt, ext, get_props, lib_name, lib_path, already_loaded, _lib: ManuallyDrop::new(lib) })
    }

    /// `Err` naming `call` and HIP's own description unless `rc` is success.
    fn check(&self, call: &str, rc: HipError) -> Result<()> {
        self.rt.check(call, rc)
    }

    /// The number of AMD GPUs HIP sees (0, not an error, when there is none).
    pub fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: writes one int.
        let rc = unsafe { (self.rt.f.get_device_count)(&mut n) };
        if rc == HIP_ERROR_NO_DEVICE {
            self.clear_error();
            return Ok(0);
        }
        self.check("hipGetDeviceCount", rc)?;
        Ok(n.max(0) as usize)
    }

    /// The HIP runtime version (`major.minor.patch`).
    pub fn version(&self) -> String {
        let mut v = 0;
        // SAFETY: writes one int.
        match unsafe { (self.rt.f.runtime_get_version)(&mut v) } {
            SUCCESS => version(v),
            _ => "unknown".into(),
        }
    }

    /// `hipDeviceGetAttribute(attr, d)`, None if the runtime does not answer.
    fn attribute(&self, attr: c_int, d: c_int) -> Option<c_int> {
        let mut v = 0;
        // SAFETY: writes one int.
        if unsafe { (self.ext.device_get_attribute)(&mut v, attr, d) } == SUCCESS {
            Some(v)
        } else {
            self.clear_error();
            None
        }
    }

    fn device_name(&self, d: c_int) -> String {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the name is written into `buf`, NUL-terminated.
        match unsafe { (self.ext.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, d) } {
            SUCCESS => cstr(buf.as_ptr()),
            _ => "unknown GPU".into(),
        }
    }

    fn pci_bus_id(&self, d: c_int) -> Option<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the id is written into `buf`, NUL-terminated.
        (unsafe { (self.ext.device_get_pci_bus_id)(buf.as_mut_ptr(), buf.len() as c_int, d) } == SUCCESS)
            .then(|| cstr(buf.as_ptr()))
    }

    fn total_mem(&self, d: c_int) -> Option<usize> {
        let mut bytes = 0usize;
        // SAFETY: writes one size_t.
        (unsafe { (self.ext.device_total_mem)(&mut bytes, d) } == SUCCESS).then_some(bytes)
    }

    /// The device's arch name (`gcnArchName`, e.g. `gfx942:sramecc+:xnack-`), if it can be read.
    pub fn arch_name(&self, d: c_int) -> Option<String> {
        let (get, offset) = self.get_props?;
        let mut buf = vec![0u64; DEVICE_PROP_BUFFER_BYTES / 8];
        // SAFETY: the buffer is 8-byte aligned and larger than every hipDeviceProp_t layout.
        if unsafe { get(buf.as_mut_ptr().cast(), d) } != SUCCESS {
            self.clear_error();
            return None;
        }
        // SAFETY: viewing the u64 buffer as bytes.
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), DEVICE_PROP_BUFFER_BYTES) };
        arch_from_props(bytes, offset)
    }

    /// One device, for logs: `AMD Instinct MI300X (gfx942:sramecc+:xnack-, 192 GiB, PCI 0000:0c:00.0)`.
    fn device_line(&self, d: c_int) -> String {
        let mut extra = vec![self.arch_name(d).unwrap_or_else(|| "arch unknown".into())];
        if let Some(b) = self.total_mem(d) {
            extra.push(format!("{} GiB", b >> 30));
        }
        if let Some(p) = self.pci_bus_id(d) {
            extra.push(format!("PCI {p}"));
        }
        format!("{} ({})", self.device_name(d), extra.join(", "))
    }

    /// Library, path and version.
    fn identity(&self) -> String {
        let shared = if self.already_loaded { " (already in the process)" } else { "" };
        format!("{} loaded from {}{shared}, HIP {}", self.lib_name, self.lib_path, self.version())
    }

    /// One line: library, version, devices and their archs.
    pub fn summary(&self) -> String {
        let devices = match self.device_count() {
            Ok(0) => "no AMD GPU".to_string(),
            Ok(n) => {
                let list: Vec<String> = (0..n as c_int).map(|d| format!("{d}: {}", self.device_line(d))).collect();
                format!("{n} AMD GPU(s) ({})", list.join("; "))
            }
            Err(e) => format!("no usable AMD GPU ({e})"),
        };
        format!("amd: {}, {devices}", self.identity())
    }

    fn clear_error(&self) {
        self.rt.clear_error()
    }
}

/// The AMD platform runtime of this process.
pub type HipRuntime = DeviceRuntime<Hip>;

/// Per-PE state of the AMD platform.
pub struct HipPe {
    arch: Option<String>,
    /// How the heap (device segment) is allocated, and whether that was asked for.
    pub heap_allocator: HeapAllocator,
    allocator_asked: bool,
}

impl DeviceRuntime<Hip> {
    /// Picks this PE's device: the program's current device if it chose one (upstream requires
    /// `hipSetDevice` before init; HIP always has a current device, 0 by default, so a current
    /// device other than 0 is the program's choice), else `local_rank % device count` (the same
    /// rule as the NVIDIA platform). Then checks the heap allocator, enables peer access to every
    /// device that allows it and creates the library's stream.
    pub fn new(hip: Hip, local_rank: usize, allocator: Option<HeapAllocator>) -> Result<HipRuntime> {
        let n = hip.device_count()?;
        if n == 0 {
            return Err(Error::Gpu(format!(
                "{}, but it sees no AMD GPU: check that /dev/kfd and /dev/dri are there and accessible (the render \
                 and video groups), HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, and the amdgpu driver",
                hip.identity()
            )));
        }
        let cur = hip.rt.current_device()?;
        let (device, how_chosen) = if cur != 0 {
            (cur, "the program's current device (hipSetDevice)")
        } else {
            let d = (local_rank % n) as c_int;
            if d != 0 {
                hip.rt.set_device(d)?;
            }
            (d, "local rank modulo the GPU count (the current device was 0)")
        };
        let arch = hip.arch_name(device);
        let heap_allocator = HeapAllocator::resolve(allocator, arch.as_deref())?;
        let peers_unreachable = hip.rt.enable_peers(device, n)?;
        let stream = hip.rt.create_stream()?;
        // The compute-unit count (the grid of the large stream collectives); 1 if unknown.
        let max_groups =
            hip.attribute(HIP_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device).map_or(1, |n| n.max(1) as u32);
        log_info!(
            "rocshmem_init",
            "AMD GPU {device} ({}): heap allocator {}{}",
            arch.as_deref().unwrap_or("arch unknown"),
            heap_allocator.name(),
            if allocator.is_some() { " (ROCSHMEM_HEAP_ALLOCATOR_TYPE)" } else { " (default for the arch)" }
        );
        let pe = HipPe { arch, heap_allocator, allocator_asked: allocator.is_some() };
        let found = Found { api: hip, device, how_chosen, n_devices: n, peers_unreachable, stream, max_groups, pe };
        Ok(DeviceRuntime::assemble(found))
    }
}

/// The stream helper kernels on AMD: two offload bundles (device/stream/module_*.cu, a code
/// object per arch of the device build: device/amd_build.rs) embedded at build time, loaded by
/// the thread of [`modules`](super::modules).
#[cfg(rocshmem_stream_amd)]
const CODE_OBJECTS: Option<[&[u8]; 2]> = Some([
    include_bytes!(concat!(env!("OUT_DIR"), "/amd/stream_core.hipfb")),
    include_bytes!(concat!(env!("OUT_DIR"), "/amd/stream_reduce.hipfb")),
]);
#[cfg(not(rocshmem_stream_amd))]
const CODE_OBJECTS: Option<[&[u8]; 2]> = None;
/// The arches of the embedded code objects (build.rs).
#[cfg(rocshmem_stream_amd)]
const CODE_OBJECT_ARCHES: &str = env!("ROCSHMEMI_STREAM_AMD_ARCHES");
#[cfg(not(rocshmem_stream_amd))]
const CODE_OBJECT_ARCHES: &str = "no arch";

const CODE_OBJECTS_NOT_BUILT: &str = "librocshmem was built without its AMD stream kernels (the AMD device library \
                                      was not built: no hipcc at build time, or ROCSHMEM_AMD=OFF), so the \
                                      *_on_stream calls are not available: rebuild it with hipcc installed and \
                                      ROCSHMEM_AMD=AUTO or REQUIRE (docs/amd.md)";

impl ModuleApi for Hip {
    fn binding(&self) -> usize {
        let mut d = 0;
        // SAFETY: writes one int.
        unsafe { (self.rt.f.get_device)(&mut d) };
        d.max(0) as usize
    }

    fn bind_loader(&self, binding: usize) {
        // SAFETY: the initialising thread's device; this thread's capture mode only.
        unsafe {
            (self.rt.f.set_device)(binding as c_int);
            let mut mode = HIP_STREAM_CAPTURE_MODE_RELAXED;
            (self.ext.thread_exchange_capture_mode)(&mut mode);
        }
    }

    fn load(&self, image: &[u8]) -> Result<(usize, String)> {
        // An 8-byte aligned copy that lives as long as the process (HIP may read the image
        // after loading it; the images are the library's own, loaded once).
        let mut words = vec![0u64; image.len().div_ceil(8)].into_boxed_slice();
        // SAFETY: the buffer holds at least image.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(image.as_ptr(), words.as_mut_ptr().cast::<u8>(), image.len()) };
        let words: &'static [u64] = Box::leak(words);
        let mut module: *mut c_void = std::ptr::null_mut();
        // SAFETY: an offload bundle of code objects; writes one handle.
        self.check("hipModuleLoadData (stream kernels)", unsafe {
            (self.ext.module_load_data)(&mut module, words.as_ptr().cast())
        })?;
        Ok((module as usize, format!("code objects for {CODE_OBJECT_ARCHES}, a {} byte bundle", image.len())))
    }

    fn function(&self, module: usize, name: &CString) -> Result<usize> {
        let mut f: *mut c_void = std::ptr::null_mut();
        // SAFETY: a loaded module; writes one handle.
        let rc = unsafe { (self.ext.module_get_function)(&mut f, module as *mut c_void, name.as_ptr()) };
        self.check(&format!("hipModuleGetFunction({})", name.to_string_lossy()), rc)?;
        Ok(f as usize)
    }

    fn sync(&self, stream: usize) -> Result<()> {
        self.rt.sync("hipStreamSynchronize (stream kernel globals)", stream)
    }
}

impl Vendor for Hip {
    const PLATFORM: Platform = Platform::Amd;
    const GUARD_DEVICE: bool = true;
    const IMAGES: Option<[&'static [u8]; 2]> = CODE_OBJECTS;
    const IMAGES_NOT_BUILT: &'static str = CODE_OBJECTS_NOT_BUILT;
    type Pe = HipPe;

    fn rt(&self) -> &Rt {
        &self.rt
    }

    fn describe(rt: &HipRuntime) -> String {
        let pe = &rt.pe;
        let mut s = format!(
            "amd platform ({}; GPU {} of {}: {}, chosen as {}; heap {} ({})){}",
            rt.api.identity(),
            rt.device,
            rt.n_devices,
            rt.api.device_line(rt.device),
            rt.how_chosen,
            pe.heap_allocator.name(),
            if pe.allocator_asked {
                "ROCSHMEM_HEAP_ALLOCATOR_TYPE".to_string()
            } else {
                format!("default for {}", pe.arch.as_deref().map(base_arch).unwrap_or("an unknown arch"))
            },
            rt.peers_note()
        );
        if rt.host_heaps_on() {
            s.push_str("; heaps in registered host memory (ROCSHMEM_BACKEND=ro)");
        }
        s
    }

    /// The PCI bus id. AMD GPUs have no MPS: their hardware scheduler runs the queues of several
    /// processes at once, so PEs sharing one GPU run concurrently (not yet run on AMD hardware).
    fn identity(rt: &HipRuntime) -> Option<super::share::GpuIdentity> {
        Some(super::share::GpuIdentity {
            id: rt.api.pci_bus_id(rt.device)?,
            concurrent: Some(true),
            note: "AMD GPUs run several processes' queues concurrently".into(),
            mps_share: None,
        })
    }

    /// The value `hipPointerGetAttributes` reports for device memory: HIP 6 renumbered
    /// `hipMemoryType` (Device 1 -> 2), so the runtime's major version decides.
    fn memory_type_device(&self) -> c_int {
        memory_type_device_for(self.major())
    }

    fn ipc_open_flags(&self) -> c_uint {
        ipc_lazy_for(self.major())
    }

    /// The heap: the kind of [`HipPe::heap_allocator`]; tables device code reads: coarse-grained
    /// `hipMalloc` memory (written only by copies between kernels, or by device code itself).
    fn alloc(rt: &HipRuntime, len: usize, heap: bool) -> Result<*mut c_void> {
        let h = &rt.api;
        let kind = if heap { rt.pe.heap_allocator } else { HeapAllocator::Coarsegrained };
        let mut p: *mut c_void = std::ptr::null_mut();
        let (rc, call) = match kind {
            // SAFETY (all three): each writes one pointer.
            HeapAllocator::Coarsegrained => (unsafe { (h.rt.f.malloc)(&mut p, len) }, "hipMalloc"),
            HeapAllocator::Finegrained => (
                unsafe { (h.ext.ext_malloc_with_flags)(&mut p, len, HIP_DEVICE_MALLOC_FINEGRAINED) },
                "hipExtMallocWithFlags(hipDeviceMallocFinegrained)",
            ),
            HeapAllocator::Uncached => (
                unsafe { (h.ext.ext_malloc_with_flags)(&mut p, len, HIP_DEVICE_MALLOC_UNCACHED) },
                "hipExtMallocWithFlags(hipDeviceMallocUncached)",
            ),
            HeapAllocator::VmmPosix | HeapAllocator::VmmFabric => {
                return Err(HeapAllocator::resolve(Some(kind), None).unwrap_err());
            }
        };
        if rc != SUCCESS {
            let mut msg = format!("{call} of {len} bytes on GPU {} failed: {}", rt.device, h.rt.error_text(rc));
            if heap {
                msg.push_str(&format!(
                    " (heap allocator {}; ROCSHMEM_HEAP_ALLOCATOR_TYPE picks another: uncached, finegrained, \
                     coarsegrained; HIP 5.2 and older have no uncached memory)",
                    kind.name()
                ));
            }
            return Err(Error::Gpu(msg));
        }
        Ok(p)
    }

    unsafe fn module_global(&self, module: *mut c_void, name: &CStr) -> Result<Option<(usize, usize)>> {
        let (mut dptr, mut bytes): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: `module` is the caller's hipModule_t; writes a pointer and a size.
        let rc = unsafe { (self.ext.module_get_global)(&mut dptr, &mut bytes, module, name.as_ptr()) };
        if rc == NOT_FOUND {
            self.clear_error();
            return Ok(None);
        }
        self.check(&format!("hipModuleGetGlobal({})", name.to_string_lossy()), rc)?;
        Ok(Some((dptr as usize, bytes)))
    }

    unsafe fn copy_to_global(&self, dst: usize, src: *const u8, len: usize, stream: Stream, name: &str) -> Result<()> {
        // SAFETY: the caller's contract.
        let rc = unsafe {
            (self.rt.f.memcpy_async)(dst as *mut c_void, src.cast(), len, HIP_MEMCPY_DEVICE_TO_DEVICE, stream)
        };
        self.check(&format!("hipMemcpyAsync into {name}"), rc)
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
            (self.ext.module_launch_kernel)(f, blocks, 1, 1, threads, 1, 1, 0, stream, params, std::ptr::null_mut())
        };
        self.check(&format!("hipModuleLaunchKernel(rocshmemi_stream_{kernel}, {blocks} x {threads} threads)"), rc)
    }

    /// A kernel that is not there: which arches the embedded code objects have, and this GPU's.
    fn kernel_error(rt: &HipRuntime, e: Error) -> Error {
        match e {
            Error::Unsupported(s) | Error::Gpu(s) => Error::Unsupported(format!(
                "{s} (the stream kernels were built for {}; this GPU: {})",
                CODE_OBJECT_ARCHES,
                rt.pe.arch.as_deref().unwrap_or("arch unknown")
            )),
            other => other,
        }
    }

    /// `hipHostMalloc(Portable | Mapped | Coherent)`: fine-grained, as upstream's
    /// `HIPHostAllocator`.
    fn host_alloc(&self, len: usize) -> Result<*mut u8> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.check(&format!("hipHostMalloc({len} bytes, portable | mapped | coherent)"), unsafe {
            (self.ext.host_malloc)(&mut p, len, HIP_HOST_MALLOC_PORTABLE_MAPPED_COHERENT)
        })?;
        Ok(p.cast())
    }

    fn host_free(&self, base: *mut u8) {
        // SAFETY: from hipHostMalloc, freed once.
        unsafe { (self.ext.host_free)(base.cast()) };
    }

    /// HIP maps registered host memory at its host address on many systems; where it names
    /// another address, the GPU still reaches the host address when it walks the CPU's page
    /// tables (XNACK on, or an APU). Otherwise this PE cannot run RO with heaps in host memory,
    /// and says why ([`host_address_check`]).
    fn host_address_ok(&self, device: c_int, base: *mut u8, mapped: *mut c_void, what: &str) -> Result<()> {
        let host_page_tables =
            self.attribute(HIP_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, device);
        host_address_check(base as usize, mapped as usize, host_page_tables == Some(1), what)
    }

    /// At finalize (every segment of ours is gone): the library's stream, destroyed once.
    fn release_stream(&self, stream: usize) {
        // SAFETY: our stream, destroyed once.
        unsafe { (self.ext.stream_destroy)(stream as Stream) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::GpuRuntime;
    use super::*;

    #[test]
    fn abi_sizes_and_versions() {
        assert_eq!(version(50221153), "5.2.21153");
        assert_eq!(version(60443483), "6.4.43483");
        assert_eq!(version(70051831), "7.0.51831");
    }

    #[test]
    fn ro_host_heap_address_rules() {
        // HIP maps registered host memory at its own address: RO keeps it.
        assert!(host_address_check(0x7000_0000, 0x7000_0000, false, "this PE's heap").is_ok());
        // Another GPU address, but the GPU walks the CPU's page tables (XNACK on): the host
        // address works as it is.
        assert!(host_address_check(0x7000_0000, 0x6000_0000, true, "this PE's heap").is_ok());
        // Another address and no XNACK: refused, saying why and what to change.
        let e = host_address_check(0x7000_0000, 0x6000_0000, false, "a peer's heap").unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("ROCSHMEM_BACKEND=ro") && e.contains("a peer's heap"), "{e}");
        assert!(e.contains("0x70000000") && e.contains("0x60000000") && e.contains("HSA_XNACK=1"), "{e}");
    }

    #[test]
    fn memory_type_device_follows_the_hip_release() {
        // hipMemoryTypeDevice: 1 in HIP 5 (host 0, device 1), 2 from HIP 6 on (CUDA's values).
        assert_eq!(memory_type_device_for(5), 1);
        assert_eq!(memory_type_device_for(6), 2);
        assert_eq!(memory_type_device_for(7), 2);
    }

    #[test]
    fn ipc_open_flags_follow_the_hip_release() {
        // hip_runtime_api.h: `#define hipIpcMemLazyEnablePeerAccess 0` in HIP 5.2, `0x01` in 6.4.
        assert_eq!(ipc_lazy_for(5), 0);
        assert_eq!(ipc_lazy_for(6), 1);
        assert_eq!(ipc_lazy_for(7), 1);
    }

    #[test]
    fn load_by_name_fails_cleanly() {
        let e = Hip::load("/nonexistent/libamdhip64.so").err().unwrap().to_string();
        assert!(e.contains("ROCSHMEM_HIP_LIBRARY") && e.contains("/nonexistent/libamdhip64.so"), "{e}");
        // A library that loads but is not HIP: the first missing function is named.
        let e = Hip::load("libc.so.6").err().unwrap().to_string();
        assert!(e.contains("libc.so.6 has no hipGetDeviceCount"), "{e}");
    }

    #[test]
    fn load_finds_hip_or_says_it_is_missing() {
        // Without HIP: a message naming libamdhip64. With HIP but no AMD GPU (CI, this machine):
        // the runtime loads, reports its version and path, and the platform refuses to start
        // with a message saying so. On an AMD GPU machine: a runtime on a GPU.
        match Hip::load("") {
            Err(e) => assert!(e.to_string().contains("libamdhip64"), "{e}"),
            Ok(h) => {
                assert!(h.lib_name.contains("libamdhip64"), "{}", h.lib_name);
                assert!(h.lib_path.contains("libamdhip64"), "{}", h.lib_path);
                assert!(h.version().starts_with(|c: char| c.is_ascii_digit()), "{}", h.version());
                let summary = h.summary();
                assert!(summary.starts_with("amd: "), "{summary}");
                // It stays loaded, and a second load shares it (as it shares a HIP program's).
                let again = Hip::load("").unwrap();
                assert!(again.already_loaded && again.lib_path == h.lib_path, "{} {}", again.lib_name, again.lib_path);
                let n = h.device_count().unwrap();
                match HipRuntime::new(h, 0, None) {
                    Err(e) => {
                        assert_eq!(n, 0, "{e}");
                        let e = e.to_string();
                        assert!(e.contains("no AMD GPU") && e.contains("libamdhip64"), "{e}");
                        assert!(summary.contains("no AMD GPU"), "{summary}");
                    }
                    Ok(rt) => {
                        assert!(n > 0);
                        assert_eq!(rt.platform(), Platform::Amd);
                        assert!(rt.describe().starts_with("amd platform"));
                    }
                }
            }
        }
    }
}
