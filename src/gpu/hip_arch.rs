//! AMD GPU arch names and what follows from them: `gcnArchName` read from a `hipDeviceProp_t`
//! filled by the HIP runtime (`hip.rs` calls it), and the heap allocator
//! (`ROCSHMEM_HEAP_ALLOCATOR_TYPE`) with upstream's default per arch.
//!
//! `hipDeviceProp_t` changed layout in ROCm 6 (`hipGetDevicePropertiesR0600`), so the only field
//! read from it, `gcnArchName`, is read at the offset of the layout the symbol called belongs to,
//! into a buffer larger than either layout, and kept only if it looks like an arch name.

use crate::error::{Error, Result};

/// Offset of `gcnArchName` in `hipDeviceProp_t` as `hipGetDeviceProperties` fills it (the layout
/// before ROCm 6, `hipDeviceProp_tR0000`, 792 bytes).
pub const GCN_ARCH_NAME_OFFSET_R0000: usize = 396;
/// Offset of `gcnArchName` in `hipDeviceProp_tR0600` (ROCm 6 and later, 1472 bytes), as
/// `hipGetDevicePropertiesR0600` fills it.
pub const GCN_ARCH_NAME_OFFSET_R0600: usize = 1160;
/// Bytes of `gcnArchName`.
const GCN_ARCH_NAME_BYTES: usize = 256;
/// Bytes given to `hipGetDeviceProperties*`: more than any layout, so a newer one cannot write
/// past the buffer.
pub const DEVICE_PROP_BUFFER_BYTES: usize = 8192;

// Both property layouts (792 and 1472 bytes) hold the arch name and fit the buffer.
const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0000 + GCN_ARCH_NAME_BYTES <= 792);
const _: () = assert!(GCN_ARCH_NAME_OFFSET_R0600 + GCN_ARCH_NAME_BYTES <= 1472);
const _: () = assert!(1472 <= DEVICE_PROP_BUFFER_BYTES && DEVICE_PROP_BUFFER_BYTES % 8 == 0);

/// The arch name at `offset` of a filled `hipDeviceProp_t` buffer, if it looks like one
/// (`gfx...`, possibly with target features such as `gfx90a:sramecc+:xnack-`).
pub fn arch_from_props(buf: &[u8], offset: usize) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
