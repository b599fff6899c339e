//! Structures shared by the core and device code. Defined once, here; cbindgen writes
//! `device/include/rocshmem_device/device_abi.h` from this file, so the device library and the
//! core cannot disagree on a layout. Append-only: bump [`ROCSHMEM_DEVICE_ABI_VERSION`] on any
//! change, and keep the size asserts below and in the C header in step.
//!
//! Handles given to users point into these tables: a team handle (`rocshmem_team_t`) is the
//! address of a [`rocshmem_team_device`], a context's `ctx_opaque` the address of a
//! [`rocshmem_ctx_device`]. On the host platform the tables live in process memory; on GPUs
//! they will live in device memory reached from the device state.
#![allow(non_camel_case_types)]

/// Version of the layouts below.
pub const ROCSHMEM_DEVICE_ABI_VERSION: u32 = 3;
/// `magic` of a live team entry ("TEAM").
pub const ROCSHMEM_TEAM_MAGIC: u32 = 0x5445_414d;
/// `magic` of a live context entry ("CTX!").
pub const ROCSHMEM_CTX_MAGIC: u32 = 0x4354_5821;

/// One team. Members are the world PEs `start + i * stride` for `i < n_pes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocshmem_team_device {
    /// [`ROCSHMEM_TEAM_MAGIC`] while the team exists, 0 otherwise.
    pub magic: u32,
    /// Synchronisation slot, the same on every member.
    pub slot: i32,
    /// This PE's index in the team.
    pub my_pe: i32,
    pub n_pes: i32,
    /// World PE of member 0.
    pub start: i32,
    /// Distance in world PEs between consecutive members.
    pub stride: i32,
    pub reserved: [i32; 2],
}

/// One communication context.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_ctx_device {
    /// [`ROCSHMEM_CTX_MAGIC`] while the context exists, 0 otherwise.
    pub magic: u32,
    /// Index in the context table (0 is the default context).
    pub index: i32,
    /// `options` given to the create call.
    pub options: i64,
    /// The team PE numbers of this context refer to.
    pub team: *mut rocshmem_team_device,
    /// The device state every operation on this context uses.
    pub state: *mut rocshmem_device_state,
}

impl Default for rocshmem_ctx_device {
    fn default() -> Self {
        rocshmem_ctx_device { magic: 0, index: 0, options: 0, team: std::ptr::null_mut(), state: std::ptr::null_mut() }
    }
}

/// Everything device code needs, reached through one pointer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_device_state {
    pub abi_version: u32,
    /// 0 host, 1 amd, 2 nvidia.
    pub platform: u32,
    pub my_pe: i32,
    pub n_pes: i32,
    /// Bytes of the control region at the start of every PE's segment.
    pub control_len: u64,
    /// Bytes of user heap per PE (`ROCSHMEM_HEAP_SIZE`).
    pub heap_size: u64,
    /// `heap_bases[p]`: where PE p's segment is mapped in this process (0 if unreachable).
    pub heap_bases: *mut u64,
    pub teams: *mut rocshmem_team_device,
    pub max_teams: i32,
    pub max_ctxs: i32,
    pub ctxs: *mut rocshmem_ctx_device,
    /// Offset, from the start of every PE's segment, of the device synchronisation area: one
    /// [`ROCSHMEM_DEV_SYNC_HEADER`]-byte header, `n_pes` flag words and `dev_scratch_bytes`
    /// of collective scratch per team slot, each slot `dev_sync_slot_bytes` long.
    pub dev_sync_off: u64,
    pub dev_sync_slot_bytes: u64,
    pub dev_scratch_bytes: u64,
    /// Contexts `ctxs[ctx_pool_start .. ctx_pool_start + ctx_pool_len]` are the pool
    /// `rocshmem_wg_ctx_create` takes from (`ROCSHMEM_MAX_NUM_CONTEXTS`); a free one has
    /// `magic == 0`.
    pub ctx_pool_start: i32,
    pub ctx_pool_len: i32,
}

/// Bytes of the per-slot header of the device synchronisation area (local sequence numbers),
/// before the per-peer flag words.
pub const ROCSHMEM_DEV_SYNC_HEADER: u64 = 64;

/// PEs whose heap bases [`rocshmem_device_fast`] holds.
pub const ROCSHMEM_FAST_PES: usize = 64;

/// What every RMA, AMO and signal reads, in the device global `rocshmemi_device_fast`: constant
/// memory on GPUs, where a read costs nothing after the first and is not lost when an acquire
/// (every poll of a flag) invalidates the L1 cache. Without it, the chain
/// `ROCSHMEM_CTX_DEFAULT` -> context -> state -> heap bases is four dependent loads per
/// operation, which on the H200 pair cost about 0.55 us per put and 2.2 us per ping-pong round
/// trip (measured; see docs/benchmarks-nvidia.md). Filled at init with the other device globals
/// and by `rocshmem_hipmodule_init`; never changes until finalize.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_device_fast {
    pub my_pe: i32,
    pub n_pes: i32,
    /// Entries of `heap_bases` that are filled: min(n_pes, ROCSHMEM_FAST_PES); 0 before init.
    pub n_bases: i32,
    pub reserved: i32,
    /// The default context's entry (`ROCSHMEM_CTX_DEFAULT.ctx_opaque`): a context that is this
    /// one, or NULL, addresses world PEs without reading its entry.
    pub default_ctx: *mut rocshmem_ctx_device,
    /// This PE's heap base (`heap_bases[my_pe]`).
    pub heap_base: u64,
    /// As `rocshmem_device_state::heap_bases`, for the first `n_bases` PEs.
    pub heap_bases: [u64; ROCSHMEM_FAST_PES],
}

impl Default for rocshmem_device_fast {
    fn default() -> Self {
        rocshmem_device_fast {
            my_pe: 0,
            n_pes: 0,
            n_bases: 0,
            reserved: 0,
            default_ctx: std::ptr::null_mut(),
            heap_base: 0,
            heap_bases: [0; ROCSHMEM_FAST_PES],
        }
    }
}

const _: () = assert!(std::mem::size_of::<rocshmem_device_fast>() == 32 + 8 * ROCSHMEM_FAST_PES);
const _: () = assert!(std::mem::size_of::<rocshmem_team_device>() == 32);
const _: () = assert!(std::mem::size_of::<rocshmem_ctx_device>() == 32);
const _: () = assert!(std::mem::size_of::<rocshmem_device_state>() == 96);
