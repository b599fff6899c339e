//! The C types of the API. Layouts match upstream rocSHMEM's C++ types (see the asserts).
#![allow(non_camel_case_types)]

use std::ffi::c_void;

pub use super::generated::consts::*;

/// A communication context, passed by value (16 bytes, as upstream's `rocshmem_ctx_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_ctx_t {
    pub ctx_opaque: *mut c_void,
    pub team_opaque: *mut c_void,
}

/// A team handle (upstream: `uint64_t *`). NULL is ROCSHMEM_TEAM_INVALID.
pub type rocshmem_team_t = *mut u64;

/// Team configuration for the split calls (ignored, as upstream).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_team_config_t {
    pub num_contexts: i32,
}

/// The 128-byte unique id (upstream: `std::array<uint8_t, 128>`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_uniqueid_t {
    pub internal: [u8; 128],
}

/// Attributes for `rocshmem_init_attr` (144 bytes; `mpi_comm` points to an `MPI_Comm`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_init_attr_t {
    pub rank: i32,
    pub nranks: i32,
    pub uid: rocshmem_uniqueid_t,
    pub mpi_comm: *mut c_void,
}

const _: () = assert!(std::mem::size_of::<rocshmem_ctx_t>() == 16);
const _: () = assert!(std::mem::size_of::<rocshmem_uniqueid_t>() == 128);
const _: () = assert!(std::mem::size_of::<rocshmem_init_attr_t>() == 144);
const _: () = assert!(std::mem::offset_of!(rocshmem_init_attr_t, mpi_comm) == 136);

/// The default host context, for C programs (`ROCSHMEM_CTX_DEFAULT` in C is this variable).
/// Set by `rocshmem_init`.
#[unsafe(no_mangle)]
pub static mut ROCSHMEM_HOST_CTX_DEFAULT: rocshmem_ctx_t =
    rocshmem_ctx_t { ctx_opaque: std::ptr::null_mut(), team_opaque: std::ptr::null_mut() };

/// The world team, for C programs (`ROCSHMEM_TEAM_WORLD` in C). Set by `rocshmem_init`.
#[unsafe(no_mangle)]
pub static mut ROCSHMEM_HOST_TEAM_WORLD: rocshmem_team_t = std::ptr::null_mut();

/// The team of PEs sharing this node's memory, for C programs (`ROCSHMEM_TEAM_SHARED` in C).
#[unsafe(no_mangle)]
pub static mut ROCSHMEM_HOST_TEAM_SHARED: rocshmem_team_t = std::ptr::null_mut();
