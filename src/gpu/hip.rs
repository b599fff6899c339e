//! The AMD platform: the HIP runtime (`libamdhip64`), loaded at run time with libloading, so that
//! librocshmem has no link-time dependency on ROCm and still loads (and runs the host or NVIDIA
//! platform) where HIP is absent.
//!
//! What it provides (see `docs/design.md`, "The AMD platform"), the same as the NVIDIA one:
//! - the host control segments stay host shared memory ([`HostRuntime`] does them);
//! - each PE's device segment (device synchronisation area + user heap) is one allocation of the
//!   kind `ROCSHMEM_HEAP_ALLOCATOR_TYPE` asks for ([`HeapAllocator`]), exported with
//!   `hipIpcGetMemHandle` and opened by every peer with `hipIpcOpenMemHandle` after peer access
//!   is enabled;
//! - device memory for the tables device code reads, copies and fills of device memory on a
//!   private non-blocking stream, and the stream-ordered copy of `rocshmem_hipmodule_init`
//!   (`hipModuleGetGlobal` + `hipMemcpyAsync`).
//!
//! The HIP types and constants used are declared here, from the HIP headers' ABI (checked against
//! Debian's HIP 5.2 headers and ROCm 6/7's): `hipError_t` is a C enum (i32), a `hipIpcMemHandle_t`
//! is 64 opaque bytes passed by value, streams, events and modules are pointers, `hipDeviceptr_t`
//! is `void *`. The hip-runtime-sys crate is not used: its build script panics where no HIP
//! headers are installed and always emits `-lamdhip64`, and a build on an NVIDIA-only or
//! CPU-only machine must work (the CUDA runtime in `cuda.rs` declares its few types the same way).
//!
//! `hipDeviceProp_t` changed layout in ROCm 6 (`hipGetDevicePropertiesR0600`), so the only field
//! read from it, `gcnArchName`, is read at the offset of the layout the symbol called belongs to,
//! into a buffer larger than either layout, and kept only if it looks like an arch name; names,
//! memory and PCI ids come from calls that take no structure.

use super::host::HostRuntime;
use super::host_heap::{HostHeaps, MappedHostApi};
use super::{GpuRuntime, Platform, Segment};
use crate::dl::{fn_table, symbol};
use crate::error::{Error, Result};
use crate::log_info;
use libloading::Library;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::mem::ManuallyDrop;
use std::sync::Arc;

type HipError = i32;
type Stream = *mut c_void;

const HIP_SUCCESS: HipError = 0;
/// `hipErrorNoDevice`: what `hipGetDeviceCount` returns (with a count of 0) when there is no GPU.
const HIP_ERROR_NO_DEVICE: HipError = 100;
/// `hipErrorNotFound` (a module global that does not exist).
const HIP_ERROR_NOT_FOUND: HipError = 500;
/// `hipErrorPeerAccessAlreadyEnabled`.
const HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED: HipError = 704;
/// `hipMemcpyDeviceToDevice`.
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
/// `hipMemcpyDefault`: the direction is inferred from the addresses (unified addressing).
const HIP_MEMCPY_DEFAULT: c_int = 4;
/// `hipIpcMemLazyEnablePeerAccess` (0 in HIP, where CUDA's is 1).
const HIP_IPC_MEM_LAZY_ENABLE_PEER_ACCESS: c_uint = 0;
/// `hipStreamNonBlocking`: no implicit synchronisation with the null stream.
const HIP_STREAM_NON_BLOCKING: c_uint = 1;
/// `hipDeviceMallocFinegrained` (`hipExtMallocWithFlags`).
const HIP_DEVICE_MALLOC_FINEGRAINED: c_uint = 1;
/// `hipDeviceMallocUncached` (`hipExtMallocWithFlags`; not in HIP 5.2, which rejects it).
const HIP_DEVICE_MALLOC_UNCACHED: c_uint = 3;
/// `hipStreamPerThread`.
pub const STREAM_PER_THREAD: usize = 0x2;
/// `hipHostRegisterPortable | hipHostRegisterMapped`: every device, and a device address. Without
/// `hipExtHostRegisterCoarseGrained` (8) the registration is fine-grained: the GPU's accesses
/// stay coherent with the CPU's while kernels run.
const HIP_HOST_REGISTER_PORTABLE_MAPPED: c_uint = 1 | 2;
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
/// enum was renumbered to CUDA's values; see [`Hip::memory_type_device`]).
const HIP_MEMORY_TYPE_DEVICE_HIP5: c_int = 1;
const HIP_MEMORY_TYPE_DEVICE_HIP6: c_int = 2;

/// `hipPointerAttribute_t` (HIP 5 and 6: type, device, device and host pointers, isManaged,
/// allocationFlags; 32 bytes). Padded, so a later release that appends fields cannot write past it.
#[repr(C)]
struct PointerAttributes {
    kind: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    is_managed: c_int,
    allocation_flags: c_uint,
    reserved: [u64; 8],
}
/// Bytes of a `hipIpcMemHandle_t` (`HIP_IPC_HANDLE_SIZE`).
pub const IPC_HANDLE_BYTES: usize = 64;

/// Offset of `gcnArchName` in `hipDeviceProp_t` as `hipGetDeviceProperties` fills it (the layout
/// before ROCm 6, `hipDeviceProp_tR0000`, 792 bytes).
const GCN_ARCH_NAME_OFFSET_R0000: usize = 396;
/// Offset of `gcnArchName` in `hipDeviceProp_tR0600` (ROCm 6 and later, 1472 bytes), as
/// `hipGetDevicePropertiesR0600` fills it.
const GCN_ARCH_NAME_OFFSET_R0600: usize = 1160;
/// Bytes of `gcnArchName`.
const GCN_ARCH_NAME_BYTES: usize = 256;
/// Bytes given to `hipGetDeviceProperties*`: more than any layout, so a newer one cannot write
/// past the buffer.
const DEVICE_PROP_BUFFER_BYTES: usize = 8192;

// Both property layouts (792 and 1472 bytes) hold the arch name and fit the buffer.
const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0000 + GCN_ARCH_NAME_BYTES <= 792);
const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0600 + GCN_ARCH_NAME_BYTES <= 1472);
const _: () = assert!(1472 <= DEVICE_PROP_BUFFER_BYTES && DEVICE_PROP_BUFFER_BYTES % 8 == 0);

/// `hipIpcMemHandle_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct IpcMemHandle {
    reserved: [u8; IPC_HANDLE_BYTES],
}

/// The libraries tried, in order, when `ROCSHMEM_HIP_LIBRARY` is empty: the development link,
/// the sonames of HIP 7, 6 and 5, then ROCm's default install directory (not always on the
/// loader's path).
pub const HIP_NAMES: [&str; 5] =
    ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"];

fn_table!(struct HipFns {
    get_device_count = "hipGetDeviceCount": fn(*mut c_int) -> HipError;
    get_device = "hipGetDevice": fn(*mut c_int) -> HipError;
    set_device = "hipSetDevice": fn(c_int) -> HipError;
    malloc = "hipMalloc": fn(*mut *mut c_void, usize) -> HipError;
    ext_malloc_with_flags = "hipExtMallocWithFlags": fn(*mut *mut c_void, usize, c_uint) -> HipError;
    free = "hipFree": fn(*mut c_void) -> HipError;
    memcpy_async = "hipMemcpyAsync": fn(*mut c_void, *const c_void, usize, c_int, Stream) -> HipError;
    memset_async = "hipMemsetAsync": fn(*mut c_void, c_int, usize, Stream) -> HipError;
    stream_create_with_flags = "hipStreamCreateWithFlags": fn(*mut Stream, c_uint) -> HipError;
    stream_synchronize = "hipStreamSynchronize": fn(Stream) -> HipError;
    stream_destroy = "hipStreamDestroy": fn(Stream) -> HipError;
    ipc_get_mem_handle = "hipIpcGetMemHandle": fn(*mut IpcMemHandle, *mut c_void) -> HipError;
    ipc_open_mem_handle = "hipIpcOpenMemHandle": fn(*mut *mut c_void, IpcMemHandle, c_uint) -> HipError;
    ipc_close_mem_handle = "hipIpcCloseMemHandle": fn(*mut c_void) -> HipError;
    device_can_access_peer = "hipDeviceCanAccessPeer": fn(*mut c_int, c_int, c_int) -> HipError;
    device_enable_peer_access = "hipDeviceEnablePeerAccess": fn(c_int, c_uint) -> HipError;
    get_last_error = "hipGetLastError": fn() -> HipError;
    get_error_string = "hipGetErrorString": fn(HipError) -> *const c_char;
    get_error_name = "hipGetErrorName": fn(HipError) -> *const c_char;
    runtime_get_version = "hipRuntimeGetVersion": fn(*mut c_int) -> HipError;
    device_get_name = "hipDeviceGetName": fn(*mut c_char, c_int, c_int) -> HipError;
    device_get_pci_bus_id = "hipDeviceGetPCIBusId": fn(*mut c_char, c_int, c_int) -> HipError;
    device_total_mem = "hipDeviceTotalMem": fn(*mut usize, c_int) -> HipError;
    module_get_global = "hipModuleGetGlobal": fn(*mut *mut c_void, *mut usize, *mut c_void, *const c_char) -> HipError;
    module_load_data = "hipModuleLoadData": fn(*mut *mut c_void, *const c_void) -> HipError;
    module_get_function = "hipModuleGetFunction": fn(*mut *mut c_void, *mut c_void, *const c_char) -> HipError;
    module_launch_kernel = "hipModuleLaunchKernel": fn(*mut c_void, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void, *mut *mut c_void) -> HipError;
    thread_exchange_capture_mode = "hipThreadExchangeStreamCaptureMode": fn(*mut c_int) -> HipError;
    device_get_attribute = "hipDeviceGetAttribute": fn(*mut c_int, c_int, c_int) -> HipError;
    host_register = "hipHostRegister": fn(*mut c_void, usize, c_uint) -> HipError;
    host_unregister = "hipHostUnregister": fn(*mut c_void) -> HipError;
    host_malloc = "hipHostMalloc": fn(*mut *mut c_void, usize, c_uint) -> HipError;
    host_free = "hipHostFree": fn(*mut c_void) -> HipError;
    host_get_device_pointer = "hipHostGetDevicePointer": fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError;
    pointer_get_attributes = "hipPointerGetAttributes": fn(*mut PointerAttributes, *const c_void) -> HipError;
});

/// `hipGetDeviceProperties` / `hipGetDevicePropertiesR0600` (the structure is a byte buffer here).
type GetDeviceProperties = unsafe extern "C" fn(*mut c_void, c_int) -> HipError;

/// The loaded HIP runtime.
pub struct Hip {
    rt: HipFns,
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

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return "unknown error".into();
    }
    // SAFETY: HIP returns static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `HIP_VERSION` as `hipRuntimeGetVersion` reports it: major·10⁷ + minor·10⁵ + patch.
fn version(v: c_int) -> String {
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// Whether device code can use host address `host` of registered or pinned host memory that HIP
/// maps for the GPU at `device` (see `HipHost::same_address`).
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

/// `hipMemoryTypeDevice` of HIP `major` (see [`Hip::memory_type_device`]).
fn memory_type_device_for(major: c_int) -> c_int {
    if major >= 6 { HIP_MEMORY_TYPE_DEVICE_HIP6 } else { HIP_MEMORY_TYPE_DEVICE_HIP5 }
}

/// The arch name at `offset` of a filled `hipDeviceProp_t` buffer, if it looks like one
/// (`gfx...`, possibly with target features such as `gfx90a:sramecc+:xnack-`).
fn arch_from_props(buf: &[u8], offset: usize) -> Option<String> {
    let field = buf.get(offset..offset + GCN_ARCH_NAME_BYTES)?;
    let end = field.iter().position(|b| *b == 0)?;
    let name = std::str::from_utf8(&field[..end]).ok()?;
    let ok = name.starts_with("gfx")
        && name.len() > 3
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b':' || b == b'+' || b == b'-' || b == b'_');
    ok.then(|| name.to_string())
}

/// The processor part of an arch name: `gfx90a:sramecc+:xnack-` → `gfx90a`.
pub fn base_arch(arch: &str) -> &str {
    arch.split(':').next().unwrap_or(arch)
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
        // SAFETY: every symbol has the declared C signature in every HIP release we accept
        // (prototypes of hip_runtime_api.h, HIP 5.2 to 7).
        let rt = unsafe {
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
        let lib_path = library_path_of(rt.get_device_count as *const c_void).unwrap_or_else(|| lib_name.clone());
        Ok(Hip { rt, get_props, lib_name, lib_path, already_loaded, _lib: ManuallyDrop::new(lib) })
    }

    /// HIP's description of `rc` (HIP 5 returns the name as the description: said once).
    fn error_text(&self, rc: HipError) -> String {
        // SAFETY: plain queries returning static strings.
        let (name, text) = unsafe { (cstr((self.rt.get_error_name)(rc)), cstr((self.rt.get_error_string)(rc))) };
        if name == text { format!("{name} ({rc})") } else { format!("{text} ({name} = {rc})") }
    }

    /// `Err` naming `call` and HIP's own description unless `rc` is success.
    fn check(&self, call: &str, rc: HipError) -> Result<()> {
        if rc == HIP_SUCCESS {
            return Ok(());
        }
        Err(Error::Gpu(format!("{call} failed: {}", self.error_text(rc))))
    }

    /// The number of AMD GPUs HIP sees (0, not an error, when there is none).
    pub fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: writes one int.
        let rc = unsafe { (self.rt.get_device_count)(&mut n) };
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
        match unsafe { (self.rt.runtime_get_version)(&mut v) } {
            HIP_SUCCESS => version(v),
            _ => "unknown".into(),
        }
    }

    /// The value `hipPointerGetAttributes` reports for device memory: HIP 6 renumbered
    /// `hipMemoryType` (Device 1 -> 2), so the runtime's major version decides.
    fn memory_type_device(&self) -> c_int {
        let mut v = 0;
        // SAFETY: writes one int.
        let major = if unsafe { (self.rt.runtime_get_version)(&mut v) } == HIP_SUCCESS { v / 10_000_000 } else { 6 };
        memory_type_device_for(major)
    }

    /// `hipDeviceGetAttribute(attr, d)`, None if the runtime does not answer.
    fn attribute(&self, attr: c_int, d: c_int) -> Option<c_int> {
        let mut v = 0;
        // SAFETY: writes one int.
        if unsafe { (self.rt.device_get_attribute)(&mut v, attr, d) } == HIP_SUCCESS {
            Some(v)
        } else {
            self.clear_error();
            None
        }
    }

    fn device_name(&self, d: c_int) -> String {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the name is written into `buf`, NUL-terminated.
        match unsafe { (self.rt.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, d) } {
            HIP_SUCCESS => cstr(buf.as_ptr()),
            _ => "unknown GPU".into(),
        }
    }

    fn pci_bus_id(&self, d: c_int) -> Option<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the id is written into `buf`, NUL-terminated.
        (unsafe { (self.rt.device_get_pci_bus_id)(buf.as_mut_ptr(), buf.len() as c_int, d) } == HIP_SUCCESS)
            .then(|| cstr(buf.as_ptr()))
    }

    fn total_mem(&self, d: c_int) -> Option<usize> {
        let mut bytes = 0usize;
        // SAFETY: writes one size_t.
        (unsafe { (self.rt.device_total_mem)(&mut bytes, d) } == HIP_SUCCESS).then_some(bytes)
    }

    /// The device's arch name (`gcnArchName`, e.g. `gfx942:sramecc+:xnack-`), if it can be read.
    pub fn arch_name(&self, d: c_int) -> Option<String> {
        let (get, offset) = self.get_props?;
        let mut buf = vec![0u64; DEVICE_PROP_BUFFER_BYTES / 8];
        // SAFETY: the buffer is 8-byte aligned and larger than every hipDeviceProp_t layout.
        if unsafe { get(buf.as_mut_ptr().cast(), d) } != HIP_SUCCESS {
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

    /// Clears the last-error state after an error we ignore on purpose.
    fn clear_error(&self) {
        // SAFETY: plain query.
        unsafe { (self.rt.get_last_error)() };
    }
}

/// What the symmetric heap is allocated as (`ROCSHMEM_HEAP_ALLOCATOR_TYPE`, upstream 3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapAllocator {
    /// `hipExtMallocWithFlags(hipDeviceMallocUncached)`: device memory that bypasses the GPU
    /// caches, so a peer's stores are seen by a running kernel (upstream's default).
    Uncached,
    /// `hipExtMallocWithFlags(hipDeviceMallocFinegrained)` (the default on gfx1100 and gfx1201).
    Finegrained,
    /// `hipMalloc`: coarse-grained device memory (coherent only at kernel boundaries).
    Coarsegrained,
    /// Upstream's virtual-memory allocators (POSIX fd / fabric handles): not implemented here.
    VmmPosix,
    VmmFabric,
}

impl HeapAllocator {
    pub fn name(self) -> &'static str {
        match self {
            HeapAllocator::Uncached => "uncached",
            HeapAllocator::Finegrained => "finegrained",
            HeapAllocator::Coarsegrained => "coarsegrained",
            HeapAllocator::VmmPosix => "vmm_posix",
            HeapAllocator::VmmFabric => "vmm_fabric",
        }
    }

    /// Parses `ROCSHMEM_HEAP_ALLOCATOR_TYPE`; `None` (empty) means the default of the device's arch.
    pub fn parse(text: &str) -> Result<Option<HeapAllocator>> {
        Ok(Some(match text.trim().to_ascii_lowercase().as_str() {
            "" => return Ok(None),
            "uncached" => HeapAllocator::Uncached,
            "finegrained" => HeapAllocator::Finegrained,
            "coarsegrained" => HeapAllocator::Coarsegrained,
            "vmm_posix" => HeapAllocator::VmmPosix,
            "vmm_fabric" => HeapAllocator::VmmFabric,
            other => {
                return Err(Error::invalid(format!(
                    "ROCSHMEM_HEAP_ALLOCATOR_TYPE='{other}' is not one of uncached, finegrained, coarsegrained, \
                     vmm_posix, vmm_fabric"
                )));
            }
        }))
    }

    /// Upstream's default for an arch: fine-grained on gfx1100 and gfx1201, uncached elsewhere
    /// (also when the arch is unknown).
    pub fn default_for(arch: Option<&str>) -> HeapAllocator {
        match arch.map(base_arch) {
            Some("gfx1100" | "gfx1201") => HeapAllocator::Finegrained,
            _ => HeapAllocator::Uncached,
        }
    }

    /// The allocator to use: the one asked for, else the arch's default; the VMM ones are refused.
    pub fn resolve(asked: Option<HeapAllocator>, arch: Option<&str>) -> Result<HeapAllocator> {
        let a = asked.unwrap_or_else(|| HeapAllocator::default_for(arch));
        match a {
            HeapAllocator::VmmPosix | HeapAllocator::VmmFabric => Err(Error::Unsupported(format!(
                "ROCSHMEM_HEAP_ALLOCATOR_TYPE={}: the virtual-memory heap allocators are not supported yet by this \
                 library; use uncached, finegrained or coarsegrained",
                a.name()
            ))),
            _ => Ok(a),
        }
    }
}

/// Makes `device` current on the calling thread for the guard's life, then restores the
/// thread's device: allocations and IPC mappings land on the PE's GPU whichever thread asks.
struct DeviceGuard<'a> {
    hip: &'a Hip,
    restore: Option<c_int>,
}

impl<'a> DeviceGuard<'a> {
    fn new(hip: &'a Hip, device: c_int) -> Result<DeviceGuard<'a>> {
        let mut cur = 0;
        // SAFETY: writes one int.
        hip.check("hipGetDevice", unsafe { (hip.rt.get_device)(&mut cur) })?;
        if cur == device {
            return Ok(DeviceGuard { hip, restore: None });
        }
        // SAFETY: a valid ordinal (checked at init).
        hip.check(&format!("hipSetDevice({device})"), unsafe { (hip.rt.set_device)(device) })?;
        Ok(DeviceGuard { hip, restore: Some(cur) })
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        if let Some(d) = self.restore {
            // SAFETY: the device that was current before.
            unsafe { (self.hip.rt.set_device)(d) };
        }
    }
}

/// The RO backend's host heaps on AMD ([`HostHeaps`]): HIP's calls, on the PE's GPU whichever
/// thread asks.
struct HipHost {
    hip: Arc<Hip>,
    device: c_int,
}

impl MappedHostApi for HipHost {
    /// `hipHostRegister(Portable | Mapped)`: fine-grained (no `hipExtHostRegisterCoarseGrained`).
    fn register(&self, base: *mut u8, len: usize, what: &str) -> Result<()> {
        let h = &self.hip;
        let _on = DeviceGuard::new(h, self.device)?;
        // SAFETY: a live mapping of `len` bytes.
        h.check(&format!("hipHostRegister({what}, {len} bytes)"), unsafe {
            (h.rt.host_register)(base.cast(), len, HIP_HOST_REGISTER_PORTABLE_MAPPED)
        })
    }

    fn unregister(&self, base: *mut u8) {
        // SAFETY: registered by `register`, unregistered once.
        unsafe { (self.hip.rt.host_unregister)(base.cast()) };
    }

    /// `hipHostMalloc(Portable | Mapped | Coherent)`: fine-grained, as upstream's
    /// `HIPHostAllocator`.
    fn alloc(&self, len: usize) -> Result<*mut u8> {
        let h = &self.hip;
        let _on = DeviceGuard::new(h, self.device)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        h.check(&format!("hipHostMalloc({len} bytes, portable | mapped | coherent)"), unsafe {
            (h.rt.host_malloc)(&mut p, len, HIP_HOST_MALLOC_PORTABLE_MAPPED_COHERENT)
        })?;
        Ok(p.cast())
    }

    fn free(&self, base: *mut u8) {
        // SAFETY: from hipHostMalloc, freed once.
        unsafe { (self.hip.rt.host_free)(base.cast()) };
    }

    /// Device code uses host pointers as they are (the heap bases it reads are the host
    /// addresses the proxy and MPI use): the GPU must reach registered or pinned host memory at
    /// its host address. HIP maps it there on many systems; where `hipHostGetDevicePointer`
    /// names another address, the GPU still reaches the host address when it walks the CPU's
    /// page tables (XNACK on, or an APU). Otherwise this PE cannot run RO with heaps in host
    /// memory, and says why ([`host_address_check`]).
    fn same_address(&self, base: *mut u8, what: &str) -> Result<()> {
        let h = &self.hip;
        let mut d: *mut c_void = std::ptr::null_mut();
        // SAFETY: `base` is registered or hipHostMalloc memory; writes one pointer.
        h.check(&format!("hipHostGetDevicePointer({what})"), unsafe {
            (h.rt.host_get_device_pointer)(&mut d, base.cast(), 0)
        })?;
        let host_page_tables =
            h.attribute(HIP_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, self.device);
        host_address_check(base as usize, d as usize, host_page_tables == Some(1), what)
    }

    fn create_stream(&self) -> Result<usize> {
        let mut stream: Stream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.hip.check("hipStreamCreateWithFlags", unsafe {
            (self.hip.rt.stream_create_with_flags)(&mut stream, HIP_STREAM_NON_BLOCKING)
        })?;
        Ok(stream as usize)
    }

    unsafe fn copy_and_wait(&self, stream: usize, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let (h, s) = (&self.hip, stream as Stream);
        // SAFETY: the caller's contract; the library's non-blocking stream.
        h.check("hipMemcpyAsync (RO staging)", unsafe {
            (h.rt.memcpy_async)(dst.cast(), src.cast(), len, HIP_MEMCPY_DEFAULT, s)
        })?;
        // SAFETY: that stream.
        h.check("hipStreamSynchronize (RO staging)", unsafe { (h.rt.stream_synchronize)(s) })
    }
}

/// The AMD platform runtime of this process.
pub struct HipRuntime {
    hip: Arc<Hip>,
    host: HostRuntime,
    /// The device this PE uses.
    pub device: c_int,
    how_chosen: &'static str,
    arch: Option<String>,
    /// How the heap (device segment) is allocated, and whether that was asked for.
    pub heap_allocator: HeapAllocator,
    allocator_asked: bool,
    /// Non-blocking stream for the library's own copies (host RMA, table pushes, fills): they
    /// never wait for the program's kernels on the null stream.
    stream: usize,
    n_devices: usize,
    peers_unreachable: Vec<c_int>,
    /// The helper kernels of the `*_on_stream` calls (see [`super::modules`]).
    streams: Arc<super::modules::Modules>,
    /// Compute units of the device: the most work-groups of a stream collective.
    cu_count: u32,
    /// The heaps in registered host memory, for RO ([`GpuRuntime::use_host_heap`]).
    host_heaps: HostHeaps<HipHost>,
}

impl HipRuntime {
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
        let mut cur = 0;
        // SAFETY: writes one int.
        hip.check("hipGetDevice", unsafe { (hip.rt.get_device)(&mut cur) })?;
        let (device, how_chosen) = if cur != 0 {
            (cur, "the program's current device (hipSetDevice)")
        } else {
            let d = (local_rank % n) as c_int;
            if d != 0 {
                // SAFETY: a valid ordinal.
                hip.check(&format!("hipSetDevice({d})"), unsafe { (hip.rt.set_device)(d) })?;
            }
            (d, "local rank modulo the GPU count (the current device was 0)")
        };
        let arch = hip.arch_name(device);
        let heap_allocator = HeapAllocator::resolve(allocator, arch.as_deref())?;
        let mut peers_unreachable = Vec::new();
        for peer in (0..n as c_int).filter(|p| *p != device) {
            let mut can = 0;
            // SAFETY: writes one int.
            hip.check("hipDeviceCanAccessPeer", unsafe { (hip.rt.device_can_access_peer)(&mut can, device, peer) })?;
            if can == 0 {
                peers_unreachable.push(peer);
                continue;
            }
            // SAFETY: both are valid ordinals; `device` is current on this thread.
            let rc = unsafe { (hip.rt.device_enable_peer_access)(peer, 0) };
            if rc == HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                hip.clear_error();
            } else {
                hip.check(&format!("hipDeviceEnablePeerAccess({peer})"), rc)?;
            }
        }
        let mut stream: Stream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        hip.check("hipStreamCreateWithFlags", unsafe {
            (hip.rt.stream_create_with_flags)(&mut stream, HIP_STREAM_NON_BLOCKING)
        })?;
        // The compute-unit count (the grid of the large stream collectives); 1 if unknown.
        let cu_count = hip.attribute(HIP_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device).map_or(1, |n| n.max(1) as u32);
        log_info!(
            "rocshmem_init",
            "AMD GPU {device} ({}): heap allocator {}{}",
            arch.as_deref().unwrap_or("arch unknown"),
            heap_allocator.name(),
            if allocator.is_some() { " (ROCSHMEM_HEAP_ALLOCATOR_TYPE)" } else { " (default for the arch)" }
        );
        let hip = Arc::new(hip);
        Ok(HipRuntime {
            host_heaps: HostHeaps::new(Arc::new(HipHost { hip: Arc::clone(&hip), device })),
            hip,
            host: HostRuntime::new(),
            device,
            how_chosen,
            arch,
            heap_allocator,
            allocator_asked: allocator.is_some(),
            stream: stream as usize,
            n_devices: n,
            peers_unreachable,
            streams: Arc::new(super::modules::Modules::default()),
            cu_count,
        })
    }

    fn stream(&self) -> Stream {
        self.stream as Stream
    }

    fn sync_stream(&self, call: &str) -> Result<()> {
        // SAFETY: our stream.
        self.hip.check(call, unsafe { (self.hip.rt.stream_synchronize)(self.stream()) })
    }

    /// `len` bytes of device memory of kind `kind` on this PE's GPU, zeroed, freed with
    /// `hipFree` when the segment drops; with its IPC handle if `handle`.
    fn malloc(&self, len: usize, kind: HeapAllocator, handle: bool) -> Result<Segment> {
        let h = &self.hip;
        let _on = DeviceGuard::new(h, self.device)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        let (rc, call) = match kind {
            // SAFETY (all three): each writes one pointer.
            HeapAllocator::Coarsegrained => (unsafe { (h.rt.malloc)(&mut p, len) }, "hipMalloc"),
            HeapAllocator::Finegrained => (
                unsafe { (h.rt.ext_malloc_with_flags)(&mut p, len, HIP_DEVICE_MALLOC_FINEGRAINED) },
                "hipExtMallocWithFlags(hipDeviceMallocFinegrained)",
            ),
            HeapAllocator::Uncached => (
                unsafe { (h.rt.ext_malloc_with_flags)(&mut p, len, HIP_DEVICE_MALLOC_UNCACHED) },
                "hipExtMallocWithFlags(hipDeviceMallocUncached)",
            ),
            HeapAllocator::VmmPosix | HeapAllocator::VmmFabric => {
                return Err(HeapAllocator::resolve(Some(kind), None).unwrap_err());
            }
        };
        if rc != HIP_SUCCESS {
            let mut msg = format!("{call} of {len} bytes on GPU {} failed: {}", self.device, h.error_text(rc));
            if handle {
                msg.push_str(&format!(
                    " (heap allocator {}; ROCSHMEM_HEAP_ALLOCATOR_TYPE picks another: uncached, finegrained, \
                     coarsegrained; HIP 5.2 and older have no uncached memory)",
                    kind.name()
                ));
            }
            return Err(Error::Gpu(msg));
        }
        let keep = Arc::clone(h);
        let free: Box<dyn FnOnce(*mut u8, usize) + Send + Sync> = Box::new(move |base, _| {
            // SAFETY: `base` came from hipMalloc / hipExtMallocWithFlags and is freed once.
            unsafe { (keep.rt.free)(base.cast()) };
        });
        let mut ipc = IpcMemHandle { reserved: [0; IPC_HANDLE_BYTES] };
        if handle {
            // SAFETY: `p` is the base of an allocation of this runtime.
            if let Err(e) =
                h.check("hipIpcGetMemHandle of this PE's heap", unsafe { (h.rt.ipc_get_mem_handle)(&mut ipc, p) })
            {
                // SAFETY: freeing what we just allocated.
                unsafe { (h.rt.free)(p) };
                return Err(e);
            }
        }
        let seg = Segment::new(p.cast(), len, if handle { ipc.reserved.to_vec() } else { Vec::new() }, free);
        // SAFETY: the whole allocation.
        unsafe { self.fill(seg.base, 0, len)? };
        Ok(seg)
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

impl super::modules::ModuleApi for Hip {
    fn binding(&self) -> usize {
        let mut d = 0;
        // SAFETY: writes one int.
        unsafe { (self.rt.get_device)(&mut d) };
        d.max(0) as usize
    }

    fn bind_loader(&self, binding: usize) {
        // SAFETY: the initialising thread's device; this thread's capture mode only.
        unsafe {
            (self.rt.set_device)(binding as c_int);
            let mut mode = HIP_STREAM_CAPTURE_MODE_RELAXED;
            (self.rt.thread_exchange_capture_mode)(&mut mode);
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
            (self.rt.module_load_data)(&mut module, words.as_ptr().cast())
        })?;
        Ok((module as usize, format!("code objects for {CODE_OBJECT_ARCHES}, a {} byte bundle", image.len())))
    }

    fn function(&self, module: usize, name: &CString) -> Result<usize> {
        let mut f: *mut c_void = std::ptr::null_mut();
        // SAFETY: a loaded module; writes one handle.
        let rc = unsafe { (self.rt.module_get_function)(&mut f, module as *mut c_void, name.as_ptr()) };
        self.check(&format!("hipModuleGetFunction({})", name.to_string_lossy()), rc)?;
        Ok(f as usize)
    }

    fn sync(&self, stream: usize) -> Result<()> {
        // SAFETY: the library's stream.
        self.check("hipStreamSynchronize (stream kernel globals)", unsafe {
            (self.rt.stream_synchronize)(stream as Stream)
        })
    }
}

impl Drop for HipRuntime {
    fn drop(&mut self) {
        // At finalize: every segment of ours is gone (they are dropped before the runtime).
        // SAFETY: our stream, destroyed once.
        unsafe { (self.hip.rt.stream_destroy)(self.stream()) };
    }
}

impl GpuRuntime for HipRuntime {
    fn platform(&self) -> Platform {
        Platform::Amd
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "amd platform ({}; GPU {} of {}: {}, chosen as {}; heap {} ({}))",
            self.hip.identity(),
            self.device,
            self.n_devices,
            self.hip.device_line(self.device),
            self.how_chosen,
            self.heap_allocator.name(),
            if self.allocator_asked {
                "ROCSHMEM_HEAP_ALLOCATOR_TYPE".to_string()
            } else {
                format!("default for {}", self.arch.as_deref().map(base_arch).unwrap_or("an unknown arch"))
            }
        );
        if !self.peers_unreachable.is_empty() {
            s.push_str(&format!("; no peer access to GPU(s) {:?}", self.peers_unreachable));
        }
        if self.host_heaps.on() {
            s.push_str("; heaps in registered host memory (ROCSHMEM_BACKEND=ro)");
        }
        s
    }

    /// The PCI bus id. AMD GPUs have no MPS: their hardware scheduler runs the queues of several
    /// processes at once, so PEs sharing one GPU run concurrently (not yet run on AMD hardware).
    fn identity(&self) -> Option<super::share::GpuIdentity> {
        Some(super::share::GpuIdentity {
            id: self.hip.pci_bus_id(self.device)?,
            concurrent: Some(true),
            note: "AMD GPUs run several processes' queues concurrently".into(),
            mps_share: None,
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

    /// `hipHostMalloc(Portable | Mapped | Coherent)`: fine-grained pinned memory that the GPU
    /// reaches at its host address (checked).
    fn alloc_host_mapped(&self, len: usize) -> Result<Segment> {
        self.host_heaps.alloc_mapped(len)
    }

    fn is_device_memory(&self, addr: usize) -> bool {
        let h = &self.hip;
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
        let rc = unsafe { (h.rt.pointer_get_attributes)(&mut a, addr as *const c_void) };
        if rc != HIP_SUCCESS {
            h.clear_error();
            return false;
        }
        a.kind == h.memory_type_device()
    }

    fn bind_thread(&self) -> Result<()> {
        // SAFETY: a valid ordinal (chosen at init).
        self.hip.check(&format!("hipSetDevice({})", self.device), unsafe { (self.hip.rt.set_device)(self.device) })
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
        self.malloc(len, self.heap_allocator, true)
    }

    fn open_peer_device_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        let h = &self.hip;
        let ipc = IpcMemHandle {
            reserved: handle.try_into().map_err(|_| {
                Error::Gpu(format!("a peer's HIP IPC handle has {} bytes, not {IPC_HANDLE_BYTES}", handle.len()))
            })?,
        };
        let _on = DeviceGuard::new(h, self.device)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the handle came from a peer's hipIpcGetMemHandle.
        h.check("hipIpcOpenMemHandle of a peer's heap", unsafe {
            (h.rt.ipc_open_mem_handle)(&mut p, ipc, HIP_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        })?;
        let keep = Arc::clone(h);
        Ok(Segment::new(
            p.cast(),
            len,
            handle.to_vec(),
            Box::new(move |base, _| {
                // SAFETY: `base` came from hipIpcOpenMemHandle and is closed once.
                unsafe { (keep.rt.ipc_close_mem_handle)(base.cast()) };
            }),
        ))
    }

    /// Tables device code reads: coarse-grained `hipMalloc` memory (written only by copies
    /// between kernels, or by device code itself).
    fn alloc_device(&self, len: usize) -> Result<Option<Segment>> {
        self.malloc(len, HeapAllocator::Coarsegrained, false).map(Some)
    }

    /// `hipMemcpyAsync` (direction inferred) on the library's stream, then a synchronisation of
    /// that stream: host RMA is complete when it returns and never waits for the program's
    /// kernels (a kernel may be waiting for this very put).
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let h = &self.hip;
        // SAFETY: the caller's contract; our stream.
        h.check("hipMemcpyAsync", unsafe {
            (h.rt.memcpy_async)(dst.cast(), src.cast(), len, HIP_MEMCPY_DEFAULT, self.stream())
        })?;
        self.sync_stream("hipStreamSynchronize after hipMemcpyAsync")
    }

    unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
        let h = &self.hip;
        // SAFETY: the caller's contract; our stream.
        h.check("hipMemsetAsync", unsafe { (h.rt.memset_async)(dst.cast(), byte as c_int, len, self.stream()) })?;
        self.sync_stream("hipStreamSynchronize after hipMemsetAsync")
    }

    unsafe fn upload(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        let h = &self.hip;
        // SAFETY: the caller's contract; our stream.
        h.check("hipMemcpyAsync (device tables)", unsafe {
            (h.rt.memcpy_async)(dst.cast(), src.as_ptr().cast(), src.len(), HIP_MEMCPY_DEFAULT, self.stream())
        })?;
        self.sync_stream("hipStreamSynchronize after hipMemcpyAsync")
    }

    fn stream_kernels_start(&self) {
        super::modules::start(&self.hip, &self.streams, CODE_OBJECTS, CODE_OBJECTS_NOT_BUILT, self.stream);
    }

    fn stream_kernels_wait(&self) {
        self.streams.wait_loaded();
    }

    fn stream_max_groups(&self) -> u32 {
        self.cu_count
    }

    /// `hipModuleLaunchKernel` of the helper kernel on the caller's stream (NULL:
    /// `hipStreamPerThread`), without synchronising: HIP captures it into a graph like any
    /// kernel launch.
    unsafe fn stream_launch(
        &self,
        stream: *mut c_void,
        kernel: &str,
        args: &crate::stream::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let h = &self.hip;
        let f = self.streams.function(h.as_ref(), kernel).map_err(|e| match e {
            Error::Unsupported(s) | Error::Gpu(s) => Error::Unsupported(format!(
                "{s} (the stream kernels were built for {}; this GPU: {})",
                CODE_OBJECT_ARCHES,
                self.arch.as_deref().unwrap_or("arch unknown")
            )),
            other => other,
        })?;
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        let mut a = *args;
        let mut params = [(&mut a as *mut crate::stream::StreamArgs).cast::<c_void>()];
        // SAFETY: a function of our module taking one rocshmem_stream_args; HIP copies the
        // parameters before it returns. Stream-ordered, no synchronisation.
        let rc = unsafe {
            (h.rt.module_launch_kernel)(
                f,
                blocks,
                1,
                1,
                threads,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        h.check(&format!("hipModuleLaunchKernel(rocshmemi_stream_{kernel}, {blocks} x {threads} threads)"), rc)
    }

    /// `hipMemcpyAsync` (direction inferred) on the caller's stream (NULL: `hipStreamPerThread`),
    /// without synchronising.
    unsafe fn stream_copy(&self, stream: *mut c_void, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let h = &self.hip;
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        // SAFETY: the caller's ranges and stream; stream-ordered, no synchronisation.
        h.check(&format!("hipMemcpyAsync({len} bytes) on the caller's stream"), unsafe {
            (h.rt.memcpy_async)(dst.cast(), src.cast(), len, HIP_MEMCPY_DEFAULT, stream)
        })
    }

    /// `hipModuleGetGlobal` (the global must have `len` bytes), then `hipMemcpyAsync`
    /// device-to-device on `stream` (NULL: `hipStreamPerThread`, never the null stream), without
    /// synchronising, so it can be captured in a HIP graph.
    unsafe fn module_global_copy(
        &self,
        module: *mut c_void,
        stream: *mut c_void,
        name: &str,
        src: *const u8,
        len: usize,
    ) -> Result<bool> {
        let h = &self.hip;
        let cname = CString::new(name).map_err(|_| Error::invalid("global name has a NUL byte"))?;
        let (mut dptr, mut bytes): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: `module` is the caller's hipModule_t; writes a pointer and a size.
        let rc = unsafe { (h.rt.module_get_global)(&mut dptr, &mut bytes, module, cname.as_ptr()) };
        if rc == HIP_ERROR_NOT_FOUND {
            h.clear_error();
            return Ok(false);
        }
        h.check(&format!("hipModuleGetGlobal({name})"), rc)?;
        if bytes != len {
            return Err(Error::invalid(format!(
                "the module's {name} has {bytes} bytes where {len} are expected: was it built against another \
                 rocSHMEM device library?"
            )));
        }
        let stream = if stream.is_null() { STREAM_PER_THREAD as Stream } else { stream };
        // SAFETY: both are device addresses of `len` bytes; stream-ordered, no synchronisation.
        let rc = unsafe { (h.rt.memcpy_async)(dptr, src.cast(), len, HIP_MEMCPY_DEVICE_TO_DEVICE, stream) };
        h.check(&format!("hipMemcpyAsync into {name}"), rc)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes_and_versions() {
        assert_eq!(std::mem::size_of::<IpcMemHandle>(), 64);
        assert_eq!(std::mem::align_of::<IpcMemHandle>(), 1, "hipIpcMemHandle_t is a char array");
        assert_eq!(version(50221153), "5.2.21153");
        assert_eq!(version(60443483), "6.4.43483");
        assert_eq!(version(70051831), "7.0.51831");
        assert_eq!(cstr(std::ptr::null()), "unknown error");
    }

    #[test]
    fn arch_name_is_read_and_checked() {
        let mut buf = vec![0u8; DEVICE_PROP_BUFFER_BYTES];
        let name = b"gfx90a:sramecc+:xnack-";
        buf[GCN_ARCH_NAME_OFFSET_R0600..GCN_ARCH_NAME_OFFSET_R0600 + name.len()].copy_from_slice(name);
        assert_eq!(arch_from_props(&buf, GCN_ARCH_NAME_OFFSET_R0600).as_deref(), Some("gfx90a:sramecc+:xnack-"));
        assert_eq!(arch_from_props(&buf, GCN_ARCH_NAME_OFFSET_R0000), None, "zeroes are no name");
        buf[GCN_ARCH_NAME_OFFSET_R0000..GCN_ARCH_NAME_OFFSET_R0000 + 8].copy_from_slice(b"gfx9\xff\0\0\0");
        assert_eq!(arch_from_props(&buf, GCN_ARCH_NAME_OFFSET_R0000), None, "garbage is no name");
        buf[GCN_ARCH_NAME_OFFSET_R0000..GCN_ARCH_NAME_OFFSET_R0000 + 8].copy_from_slice(b"gfx1201\0");
        assert_eq!(arch_from_props(&buf, GCN_ARCH_NAME_OFFSET_R0000).as_deref(), Some("gfx1201"));
        let mut unterminated = vec![b'g'; DEVICE_PROP_BUFFER_BYTES];
        unterminated[..3].copy_from_slice(b"gfx");
        assert_eq!(arch_from_props(&unterminated, 0), None, "no NUL inside the field");
        assert_eq!(arch_from_props(&buf, DEVICE_PROP_BUFFER_BYTES - 10), None, "past the buffer");
        assert_eq!(base_arch("gfx942:sramecc+:xnack-"), "gfx942");
        assert_eq!(base_arch("gfx1100"), "gfx1100");
    }

    #[test]
    fn heap_allocator_parse_default_and_refusals() {
        assert_eq!(HeapAllocator::parse("").unwrap(), None);
        assert_eq!(HeapAllocator::parse(" Uncached ").unwrap(), Some(HeapAllocator::Uncached));
        assert_eq!(HeapAllocator::parse("finegrained").unwrap(), Some(HeapAllocator::Finegrained));
        assert_eq!(HeapAllocator::parse("coarsegrained").unwrap(), Some(HeapAllocator::Coarsegrained));
        assert_eq!(HeapAllocator::parse("vmm_posix").unwrap(), Some(HeapAllocator::VmmPosix));
        assert_eq!(HeapAllocator::parse("vmm_fabric").unwrap(), Some(HeapAllocator::VmmFabric));
        let e = HeapAllocator::parse("fine").unwrap_err().to_string();
        assert!(e.contains("ROCSHMEM_HEAP_ALLOCATOR_TYPE='fine'") && e.contains("coarsegrained"), "{e}");
        for a in ["uncached", "finegrained", "coarsegrained", "vmm_posix", "vmm_fabric"] {
            assert_eq!(HeapAllocator::parse(a).unwrap().unwrap().name(), a);
        }

        assert_eq!(HeapAllocator::default_for(Some("gfx1100")), HeapAllocator::Finegrained);
        assert_eq!(HeapAllocator::default_for(Some("gfx1201:xnack-")), HeapAllocator::Finegrained);
        assert_eq!(HeapAllocator::default_for(Some("gfx942:sramecc+:xnack-")), HeapAllocator::Uncached);
        assert_eq!(HeapAllocator::default_for(Some("gfx11000")), HeapAllocator::Uncached);
        assert_eq!(HeapAllocator::default_for(None), HeapAllocator::Uncached);

        assert_eq!(HeapAllocator::resolve(None, Some("gfx1100")).unwrap(), HeapAllocator::Finegrained);
        assert_eq!(
            HeapAllocator::resolve(Some(HeapAllocator::Coarsegrained), Some("gfx1100")).unwrap(),
            HeapAllocator::Coarsegrained,
            "an explicit choice wins over the arch default"
        );
        for vmm in [HeapAllocator::VmmPosix, HeapAllocator::VmmFabric] {
            let e = HeapAllocator::resolve(Some(vmm), Some("gfx942")).unwrap_err().to_string();
            assert!(e.contains(vmm.name()) && e.contains("not supported yet"), "{e}");
        }
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
        assert_eq!(std::mem::offset_of!(PointerAttributes, device_pointer), 8);
        assert_eq!(std::mem::offset_of!(PointerAttributes, allocation_flags), 28);
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
