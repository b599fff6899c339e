//! The structures the GDA backend shares with device code. Defined once, here; cbindgen writes
//! `device/include/rocshmem_device/gda_abi.h` from this file (build.rs), so the posting code in
//! `device/src/gda/` and the core (queue setup, the NIC model) cannot disagree on a layout.
//!
//! One [`rocshmem_gda_qp`] describes one RC queue pair to one peer: where its send queue,
//! completion queue, doorbell records and doorbell register are, the keys of the memory it
//! moves, and the counters device threads share while posting (see docs/gda.md, "Posting").
#![allow(non_camel_case_types)]

/// Version of the layouts below.
pub const ROCSHMEM_GDA_ABI_VERSION: u32 = 1;

/// `rocshmem_gda_qp::vendor` (upstream's `QpInfoVendor` values).
pub const ROCSHMEM_GDA_VENDOR_IONIC: u32 = 1;
pub const ROCSHMEM_GDA_VENDOR_BNXT: u32 = 2;
pub const ROCSHMEM_GDA_VENDOR_MLX5: u32 = 3;

/// `rocshmem_gda_qp::flags`: the send queue is in GPU memory, so a device-scope fence orders
/// WQE stores before the doorbell (host memory needs a system-scope fence).
pub const ROCSHMEM_GDA_QP_SQ_DEVICE_MEM: u32 = 1;

/// Send-queue depths (WQEBBs) a queue pair may have: powers of two in this range. The lower
/// bound lets one wave of 64 lanes post two-block WQEs at once without waiting on itself; the
/// upper bound keeps the 16-bit WQE counter of a CQE unambiguous (docs/gda.md).
pub const ROCSHMEM_GDA_MIN_SQ_DEPTH: u32 = 128;
pub const ROCSHMEM_GDA_MAX_SQ_DEPTH: u32 = 32768;

/// Status values of the device posting functions (0 is success). An error completion is
/// `ROCSHMEM_GDA_ERR_CQE | syndrome` (the mlx5 syndrome byte, e.g. 0x13 remote access error).
pub const ROCSHMEM_GDA_ERR_CQE: u32 = 0x100;
/// A completion that is neither a requester completion nor a requester error (its opcode in
/// the low bits).
pub const ROCSHMEM_GDA_ERR_BAD_CQE: u32 = 0x200;
/// The core stopped the queue pair (finalize, or a fatal error elsewhere): waiting gave up.
pub const ROCSHMEM_GDA_ERR_STOPPED: u32 = 0x300;
/// An argument the queue pair cannot carry (an atomic size other than 4 or 8, a misaligned
/// atomic target).
pub const ROCSHMEM_GDA_ERR_ARG: u32 = 0x400;

/// One RC queue pair, as device code uses it. The first part is written by the core before any
/// kernel runs; the counters after it are changed by device threads with atomics, each group on
/// its own 64-byte line.
#[repr(C)]
#[derive(Debug)]
pub struct rocshmem_gda_qp {
    /// Send queue: `sq_depth` blocks of 64 bytes (WQEBBs), a ring.
    pub sq: *mut u8,
    /// Completion queue: `cq_depth` entries of 64 bytes, a ring.
    pub cq: *mut u8,
    /// Send-queue doorbell record (mlx5: the 16-bit producer counter, big-endian, in 32 bits).
    pub sq_dbrec: *mut u32,
    /// Completion-queue doorbell record (mlx5: the 24-bit consumer counter, big-endian).
    pub cq_dbrec: *mut u32,
    /// The 8-byte doorbell register (the UAR's BlueFlame register, mapped for the GPU).
    pub db: *mut u64,
    /// Queue pair number (24 bits).
    pub qpn: u32,
    /// `ROCSHMEM_GDA_VENDOR_*`.
    pub vendor: u32,
    /// WQEBBs in the send queue (a power of two, see [`ROCSHMEM_GDA_MIN_SQ_DEPTH`]).
    pub sq_depth: u32,
    /// Entries in the completion queue (a power of two, at least `sq_depth`).
    pub cq_depth: u32,
    /// `ROCSHMEM_GDA_QP_*` flags.
    pub flags: u32,
    /// Largest byte count one WQE may carry (the HCA's maximum message size); longer
    /// transfers are split.
    pub max_msg: u32,
    /// Largest put whose data is copied into the WQE (0: never inline).
    pub inline_max: u32,
    /// World PE at the other end.
    pub peer: i32,
    /// Key of this PE's registered heap (local buffers).
    pub lkey: u32,
    /// Key of the peer's registered heap.
    pub rkey: u32,
    /// This PE's heap as registered: addresses `[local_base, local_base + heap_len)` are
    /// covered by `lkey`, and translate to the peer's heap at the same offset.
    pub local_base: u64,
    /// The peer's heap base in the peer's address space (what `rkey` covers).
    pub remote_base: u64,
    pub heap_len: u64,
    /// 8 bytes of registered memory (key `scratch_lkey`) where non-fetching atomics return
    /// the old value, which nobody reads.
    pub scratch: u64,
    pub scratch_lkey: u32,
    pub reserved0: u32,
    pub pad0: [u64; 1],

    /// WQEBBs reserved by posting threads (the next free index). Line 3.
    pub resv_head: u64,
    pub pad1: [u64; 7],
    /// WQEBBs written and published, in order (every block below it is complete). Line 4.
    pub ready_head: u64,
    pub pad2: [u64; 7],
    /// WQEBBs announced to the NIC (doorbell record and doorbell), under `post_lock`. Line 5.
    pub prod_idx: u64,
    pub post_lock: u32,
    pub reserved1: u32,
    pub pad3: [u64; 6],
    /// WQEBBs the NIC has completed (from the completion queue), and the completion queue's
    /// consumer index, both advanced under `cq_lock` by whichever thread polls. Line 6.
    pub done: u64,
    pub cq_ci: u64,
    pub cq_lock: u32,
    /// First error: 0, or a `ROCSHMEM_GDA_ERR_*` status. Set once.
    pub error: u32,
    /// The failing WQE's counter (low 16 bits) and the vendor syndrome (bits 16..23).
    pub err_info: u32,
    /// Set by the core: waiting threads give up with [`ROCSHMEM_GDA_ERR_STOPPED`].
    pub stopped: u32,
    /// Times a posting thread found the send queue full and waited for completions.
    pub full_waits: u64,
    pub pad4: [u64; 3],
}

/// What the NIC model (host platform) is asked to build: one queue pair per PE, this PE's
/// heap registered. Used by the model's test entry points (`rocshmemi_gda_model_*`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocshmem_gda_model_config {
    /// Send-queue depth in WQEBBs (0: `ROCSHMEM_GDA_SQ_SIZE`).
    pub sq_depth: u32,
    /// Completion-queue depth (0: the send-queue depth).
    pub cq_depth: u32,
    /// Largest byte count per WQE (0: 1 GiB, mlx5's maximum message).
    pub max_msg: u32,
    /// Largest inline put (0: 28 bytes, mlx5's one-block maximum).
    pub inline_max: u32,
    /// Non-zero: never inline (every put reads its source through a data segment).
    pub no_inline: u32,
    /// Hold every queue until it is full (or no doorbell came for 2 s), then serve it: makes
    /// posting threads meet a full send queue.
    pub hold_until_full: u32,
}

/// Counters of the NIC model for this PE (all queue pairs), for tests.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocshmem_gda_model_stats {
    /// WQEs executed (successfully) and WQEBBs consumed.
    pub wqes: u64,
    pub wqebbs: u64,
    /// Doorbell writes seen (changes of a doorbell register).
    pub doorbells: u64,
    /// CQEs written: successful, error, flush.
    pub cqes: u64,
    pub error_cqes: u64,
    pub flush_cqes: u64,
    /// Highest WQEBB index (64-bit, so past the 16-bit counter's wrap) a WQE started at.
    pub max_wqe_index: u64,
    /// Times a held queue was found full (`hold_until_full`).
    pub full_events: u64,
    /// Protocol violations seen (doorbell record behind or too far ahead, wrong QPN or WQE
    /// index in a WQE, a CQ overrun); each also puts the queue pair into the error state.
    pub protocol_errors: u64,
    /// Bytes moved by RDMA write and read.
    pub bytes: u64,
}

/// A WQE as the NIC model parsed it (for the layout tests: WQEs written by rdma-core's own
/// helpers must parse to what they say).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocshmem_gda_wqe_desc {
    pub opcode: u32,
    pub opmod: u32,
    pub wqe_index: u32,
    pub qpn: u32,
    /// Size in 16-byte units, and in 64-byte blocks.
    pub ds: u32,
    pub nbb: u32,
    pub fm_ce_se: u32,
    /// Inline data bytes (0: a data segment).
    pub inline_len: u32,
    pub raddr: u64,
    pub rkey: u32,
    pub lkey: u32,
    pub laddr: u64,
    pub byte_count: u32,
    pub reserved: u32,
    /// Atomic operands, host order: add / swap data, compare, and for masked forms the masks
    /// (or the field boundary of a masked fetch-add in `swap_mask`).
    pub swap_add: u64,
    pub compare: u64,
    pub swap_mask: u64,
    pub compare_mask: u64,
    /// The inline bytes (up to 28 used).
    pub inline_data: [u8; 32],
}

const _: () = assert!(std::mem::size_of::<rocshmem_gda_qp>() == 6 * 64);
const _: () = assert!(std::mem::offset_of!(rocshmem_gda_qp, resv_head) == 2 * 64);
const _: () = assert!(std::mem::offset_of!(rocshmem_gda_qp, ready_head) == 3 * 64);
const _: () = assert!(std::mem::offset_of!(rocshmem_gda_qp, prod_idx) == 4 * 64);
const _: () = assert!(std::mem::offset_of!(rocshmem_gda_qp, done) == 5 * 64);
const _: () = assert!(std::mem::size_of::<rocshmem_gda_model_stats>() == 80);
const _: () = assert!(std::mem::size_of::<rocshmem_gda_wqe_desc>() == 128);
