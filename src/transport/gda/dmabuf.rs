//! Exporting GPU memory as a dma-buf, so the NIC can register the symmetric heap in GPU memory
//! with `ibv_reg_dmabuf_mr` (`ROCSHMEM_GDA_ENABLE_DMABUF=1`, as upstream):
//!
//! - NVIDIA: `cuMemGetHandleForAddressRange(&fd, ptr, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
//!   0)` from libcuda (CUDA 11.7+, open kernel modules); the range must be page-aligned.
//! - AMD: `hsa_amd_portable_export_dmabuf(ptr, len, &fd, &offset)` from libhsa-runtime64 (the
//!   call upstream makes), which also returns the offset of `ptr` in the exported buffer.
//!
//! The calls are named and wrapped here, and loading them is tested; **no export has ever run**
//! (no GPU with a NIC here; docs/gda.md, "Never run on a NIC").

use libloading::Library;
use std::ffi::{c_int, c_void};

/// `CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD`.
pub const CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD: c_int = 1;

/// An exported dma-buf: the file descriptor and the offset of the exported address in it.
#[derive(Debug)]
pub struct DmaBuf {
    pub fd: c_int,
    pub offset: u64,
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // SAFETY: our descriptor (ibv_reg_dmabuf_mr keeps its own reference).
        unsafe { libc::close(self.fd) };
    }
}

type CuExport = unsafe extern "C" fn(*mut c_int, u64, usize, c_int, u64) -> c_int;
type HsaExport = unsafe extern "C" fn(*const c_void, usize, *mut c_int, *mut u64) -> c_int;

/// The exporter of the GPU runtime in use.
pub enum Exporter {
    Cuda(Library, CuExport),
    Hsa(Library, HsaExport),
}

impl Exporter {
    /// libcuda's exporter (the library the CUDA platform already loaded).
    pub fn cuda() -> Result<Exporter, String> {
        // SAFETY: loading libcuda runs no user-visible initialisation.
        let lib = unsafe { Library::new("libcuda.so.1") }.map_err(|e| format!("dma-buf export: libcuda.so.1: {e}"))?;
        // SAFETY: the documented signature of cuMemGetHandleForAddressRange.
        let f = unsafe { lib.get::<CuExport>(b"cuMemGetHandleForAddressRange") }.map(|s| *s).map_err(|_| {
            "dma-buf export: libcuda.so.1 has no cuMemGetHandleForAddressRange (CUDA 11.7 or newer is needed)"
                .to_string()
        })?;
        Ok(Exporter::Cuda(lib, f))
    }

    /// ROCm's exporter.
    pub fn hsa() -> Result<Exporter, String> {
        // SAFETY: as above; HSA is initialised by HIP before any export.
        let lib = unsafe { Library::new("libhsa-runtime64.so.1") }
            .map_err(|e| format!("dma-buf export: libhsa-runtime64.so.1: {e}"))?;
        // SAFETY: the documented signature of hsa_amd_portable_export_dmabuf.
        let f = unsafe { lib.get::<HsaExport>(b"hsa_amd_portable_export_dmabuf") }
            .map(|s| *s)
            .map_err(|_| "dma-buf export: libhsa-runtime64.so.1 has no hsa_amd_portable_export_dmabuf (ROCm 5.6 or newer is needed)".to_string())?;
        Ok(Exporter::Hsa(lib, f))
    }

    /// Exports `[ptr, ptr + len)` of GPU memory. Never run (see the module documentation).
    pub fn export(&self, ptr: *mut c_void, len: usize) -> Result<DmaBuf, String> {
        let mut fd: c_int = -1;
        match self {
            Exporter::Cuda(_, f) => {
                // SAFETY: the caller passes GPU memory of this process.
                let rc = unsafe { f(&mut fd, ptr as u64, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) };
                if rc != 0 {
                    return Err(format!("cuMemGetHandleForAddressRange({len} bytes) failed: CUresult {rc}"));
                }
                Ok(DmaBuf { fd, offset: 0 })
            }
            Exporter::Hsa(_, f) => {
                let mut offset = 0u64;
                // SAFETY: as above.
                let rc = unsafe { f(ptr, len, &mut fd, &mut offset) };
                if rc != 0 {
                    return Err(format!("hsa_amd_portable_export_dmabuf({len} bytes) failed: hsa_status_t {rc:#x}"));
                }
                Ok(DmaBuf { fd, offset })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the GPU runtimes (CI), each loader says which library or symbol is missing.
    #[test]
    fn loaders_name_what_is_missing() {
        for r in [Exporter::cuda(), Exporter::hsa()] {
            if let Err(e) = r {
                assert!(e.starts_with("dma-buf export: lib"), "{e}");
            }
        }
    }
}
