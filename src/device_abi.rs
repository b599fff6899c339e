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
pub const ROCSHMEM_DEVICE_ABI_VERSION: u32 = 7;
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
    /// Members this PE reaches through another transport than IPC (RO or GDA; 0 when it maps
    /// every member). Device barriers and collectives on a team with such members go through
    /// that transport (under RO, the proxy runs them with MPI).
    pub remote_members: i32,
    pub reserved: i32,
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
    /// RO backend: the command queues the host proxy serves; NULL on the IPC backend.
    pub ro: *mut rocshmem_ro_device,
    /// `peer_route[p]`: the transport of puts, gets and signals' data to world PE `p`, a
    /// `ROCSHMEM_ROUTE_*` value (`n_pes` bytes). Read by device code only when
    /// `rocshmem_device_fast::flags` has a [`ROCSHMEM_FAST_REMOTE`] bit.
    pub peer_route: *const u8,
    /// `amo_route[p]`: the transport of atomics (and signal updates) to world PE `p` (`n_pes`
    /// bytes). With RO every atomic goes through the proxy, with GDA too once some peer is GDA:
    /// MPI and NIC atomics are atomic only among themselves.
    pub amo_route: *const u8,
    /// GDA backend: the queue pairs device threads post to; NULL when GDA does not run.
    pub gda: *mut rocshmem_gda_device,
}

/// `rocshmem_device_state::peer_route` / `amo_route`: load/store to the peer's mapped heap.
pub const ROCSHMEM_ROUTE_IPC: u8 = 0;
/// The RO backend's proxy (MPI).
pub const ROCSHMEM_ROUTE_RO: u8 = 1;
/// GPU-initiated RDMA through the device's queue pairs (docs/gda.md).
pub const ROCSHMEM_ROUTE_GDA: u8 = 2;

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
    /// Entries of `heap_bases` that are filled: min(n_pes, ROCSHMEM_FAST_PES); 0 before init
    /// and while a remote transport is active (`flags`), so that device code's IPC fast path
    /// (default context, `pe < n_bases`) is also its "IPC only" test.
    pub n_bases: i32,
    /// One bit per active transport other than IPC ([`ROCSHMEM_FAST_RO`], [`ROCSHMEM_FAST_GDA`]);
    /// 0: every operation is IPC, and device code reads no route table.
    pub flags: i32,
    /// The default context's entry (`ROCSHMEM_CTX_DEFAULT.ctx_opaque`): a context that is this
    /// one, or NULL, addresses world PEs without reading its entry.
    pub default_ctx: *mut rocshmem_ctx_device,
    /// This PE's heap base (`heap_bases[my_pe]`).
    pub heap_base: u64,
    /// As `rocshmem_device_state::heap_bases`, for the first `n_bases` PEs.
    pub heap_bases: [u64; ROCSHMEM_FAST_PES],
    /// The world team's entry (`ROCSHMEM_TEAM_WORLD`): barriers and syncs of the world team
    /// read its members and its synchronisation slot from here instead of the entry, the state
    /// and the heap bases (a chain of dependent loads that an acquire poll sends back to L2).
    pub world_team: *mut rocshmem_team_device,
    /// Bytes from a heap base to the world team's device synchronisation slot
    /// (`dev_sync_off + slot * dev_sync_slot_bytes`).
    pub world_sync_off: u64,
}

impl Default for rocshmem_device_fast {
    fn default() -> Self {
        rocshmem_device_fast {
            my_pe: 0,
            n_pes: 0,
            n_bases: 0,
            flags: 0,
            default_ctx: std::ptr::null_mut(),
            heap_base: 0,
            heap_bases: [0; ROCSHMEM_FAST_PES],
            world_team: std::ptr::null_mut(),
            world_sync_off: 0,
        }
    }
}

/// `rocshmem_device_fast::flags`: the RO backend is active (`rocshmem_device_state::ro` is set).
pub const ROCSHMEM_FAST_RO: i32 = 1;
/// `rocshmem_device_fast::flags`: GDA is active (`rocshmem_device_state::gda` is set).
pub const ROCSHMEM_FAST_GDA: i32 = 2;
/// `rocshmem_device_fast::flags`: some transport other than IPC is active, so the route tables
/// of the device state decide each operation (device code tests this mask off the IPC fast
/// path: `n_bases` is 0 then).
pub const ROCSHMEM_FAST_REMOTE: i32 = ROCSHMEM_FAST_RO | ROCSHMEM_FAST_GDA;

/// The GDA backend's device table (docs/gda.md), reached from `rocshmem_device_state::gda`.
/// Which peers GDA carries is in the state's route tables (`ROCSHMEM_ROUTE_GDA`).
#[repr(C)]
#[derive(Debug)]
pub struct rocshmem_gda_device {
    /// `rocshmem_gda_qp` descriptors (gda_abi.h): queue pair `q` to world PE `p` is entry
    /// `p * qps_per_pe + q`.
    pub qps: *mut core::ffi::c_void,
    pub n_pes: i32,
    pub qps_per_pe: i32,
    /// Registered 8-byte words where fetching atomics and `g` receive their value (key
    /// `fetch_lkey`), `n_fetch` of them (a power of two); a thread claims word `i` by setting
    /// `fetch_busy[i]` from 0 to 1 and frees it after reading.
    pub fetch: *mut u64,
    pub fetch_busy: *mut u32,
    pub n_fetch: u32,
    pub fetch_lkey: u32,
}

// ---------------------------------------------------------------------------------------------
// RO backend (reverse offload): device code hands operations on PEs it cannot reach by
// load/store (heap_bases[pe] == 0), and every atomic, to a proxy thread of the core, which runs
// them with MPI one-sided operations and collectives.
//
// Queues are bounded multi-producer, single-consumer rings of 64-byte commands. Slot i of a
// queue starts with `seq == i`. A producer takes ticket t = fetch_add(tail, 1), waits until
// slot t % slots has `seq == t` (free for this lap: back-pressure, never an overrun), fills it,
// then release-stores `seq = t + 1` (ready). The proxy takes tickets in order; after running
// ticket t it either frees the slot (`seq = t + slots`), or, when the producer waits
// ([`ROCSHMEM_RO_FLAG_WAIT`]), stores `result` and release-stores `seq = t + 2` (done); the
// producer reads `result` and frees the slot itself. Commands of one queue start in order;
// collectives complete in any order (the proxy does not hold a queue for one in flight).
// On the host platform waiters block on a futex on the low 32 bits of `seq`: whoever changes
// `seq` for a waiter (the proxy on done; the proxy or producer on free, when `tail` shows a
// producer of the next lap) wakes it (FUTEX_WAKE_PRIVATE); a waiter also re-checks every 1 ms.
// ---------------------------------------------------------------------------------------------

/// Commands in each RO queue (a power of two, at least 4).
pub const ROCSHMEM_RO_QUEUE_SLOTS: u32 = 64;

/// One command. Field use per `op`:
/// - PUT / PUT_NBI: `dst` symmetric address (as mapped here), `src` local source, `len` bytes.
/// - P: `dst`, `value` (the low `len` bytes, len 1/2/4/8).
/// - GET: `dst` local destination, `src` symmetric source, `len` bytes. G: `src`, `len`; the
///   value comes back in `result`.
/// - AMO: `dst` symmetric word, `sub` a `ROCSHMEM_RO_AMO_<op>` code, `len` 4 or 8, `value`, `cond`
///   (compare value); the old value comes back in `result` when fetching.
/// - PUT_SIGNAL: PUT of `dst/src/len`, then the signal: `cond` symmetric signal address, `value`
///   signal value, `sub` 0 set / 1 add (upstream's ROCSHMEM_SIGNAL_SET / _ADD).
/// - FENCE, QUIET: nothing; QUIET completes when every earlier command of every queue has
///   completed remotely.
/// - BARRIER / SYNC: `cond` team slot. Completes every earlier command first (barrier).
/// - BROADCAST: `cond` team slot, `pe` root (team index), `dst`, `src`, `len` bytes.
/// - FCOLLECT / ALLTOALL: `cond` team slot, `dst`, `src`, `len` bytes per member.
/// - ALLTOALLV: `cond` team slot, `src` address of the slot's [`rocshmem_ro_alltoallv`] in the
///   queue's `args` (the producer fills it before the command: a GPU thread's own memory is
///   not host-visible); `dtype` element type.
/// - REDUCE / REDUCE_SCATTER: `cond` team slot, `dst`, `src`, `len` elements (per member for
///   the scatter form), `dtype` a `ROCSHMEM_RO_<type>` code, `sub` the operation (0 sum, 1 max,
///   2 min, 3 prod, 4 and, 5 or, 6 xor: the device library's `Op`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rocshmem_ro_cmd {
    /// Ring sequence word (see above). Written last by the producer, with release.
    pub seq: u64,
    /// A `ROCSHMEM_RO_<op>` code.
    pub op: u8,
    pub sub: u8,
    pub dtype: u8,
    /// [`ROCSHMEM_RO_FLAG_WAIT`].
    pub flags: u8,
    /// Target world PE (RMA, AMO, signal); root member (broadcast).
    pub pe: i32,
    pub dst: u64,
    pub src: u64,
    pub len: u64,
    pub value: u64,
    pub cond: u64,
    /// Written by the proxy before it marks a waited-for command done.
    pub result: u64,
}

/// The producer waits for this command: the proxy stores `result` and marks it done.
pub const ROCSHMEM_RO_FLAG_WAIT: u8 = 1;

/// `rocshmem_ro_cmd::op`.
pub const ROCSHMEM_RO_NOP: u8 = 0;
pub const ROCSHMEM_RO_PUT: u8 = 1;
pub const ROCSHMEM_RO_PUT_NBI: u8 = 2;
pub const ROCSHMEM_RO_P: u8 = 3;
pub const ROCSHMEM_RO_GET: u8 = 4;
pub const ROCSHMEM_RO_G: u8 = 5;
pub const ROCSHMEM_RO_AMO: u8 = 6;
pub const ROCSHMEM_RO_PUT_SIGNAL: u8 = 7;
pub const ROCSHMEM_RO_FENCE: u8 = 8;
pub const ROCSHMEM_RO_QUIET: u8 = 9;
pub const ROCSHMEM_RO_BARRIER: u8 = 10;
pub const ROCSHMEM_RO_SYNC: u8 = 11;
pub const ROCSHMEM_RO_BROADCAST: u8 = 12;
pub const ROCSHMEM_RO_FCOLLECT: u8 = 13;
pub const ROCSHMEM_RO_ALLTOALL: u8 = 14;
pub const ROCSHMEM_RO_ALLTOALLV: u8 = 15;
pub const ROCSHMEM_RO_REDUCE: u8 = 16;
pub const ROCSHMEM_RO_REDUCE_SCATTER: u8 = 17;

/// `rocshmem_ro_cmd::sub` of an AMO (the device library's `AmoOp` order).
pub const ROCSHMEM_RO_AMO_FETCH: u8 = 0;
pub const ROCSHMEM_RO_AMO_SET: u8 = 1;
pub const ROCSHMEM_RO_AMO_SWAP: u8 = 2;
pub const ROCSHMEM_RO_AMO_COMPARE_SWAP: u8 = 3;
pub const ROCSHMEM_RO_AMO_FETCH_INC: u8 = 4;
pub const ROCSHMEM_RO_AMO_INC: u8 = 5;
pub const ROCSHMEM_RO_AMO_FETCH_ADD: u8 = 6;
pub const ROCSHMEM_RO_AMO_ADD: u8 = 7;
pub const ROCSHMEM_RO_AMO_FETCH_AND: u8 = 8;
pub const ROCSHMEM_RO_AMO_AND: u8 = 9;
pub const ROCSHMEM_RO_AMO_FETCH_OR: u8 = 10;
pub const ROCSHMEM_RO_AMO_OR: u8 = 11;
pub const ROCSHMEM_RO_AMO_FETCH_XOR: u8 = 12;
pub const ROCSHMEM_RO_AMO_XOR: u8 = 13;

/// `rocshmem_ro_cmd::dtype`: element types of reductions and alltoallv.
pub const ROCSHMEM_RO_I8: u8 = 0;
pub const ROCSHMEM_RO_I16: u8 = 1;
pub const ROCSHMEM_RO_I32: u8 = 2;
pub const ROCSHMEM_RO_I64: u8 = 3;
pub const ROCSHMEM_RO_U8: u8 = 4;
pub const ROCSHMEM_RO_U16: u8 = 5;
pub const ROCSHMEM_RO_U32: u8 = 6;
pub const ROCSHMEM_RO_U64: u8 = 7;
pub const ROCSHMEM_RO_F32: u8 = 8;
pub const ROCSHMEM_RO_F64: u8 = 9;
/// IEEE binary16, as its bits.
pub const ROCSHMEM_RO_F16: u8 = 10;
/// bfloat16, as its bits.
pub const ROCSHMEM_RO_BF16: u8 = 11;

/// The arguments of an ALLTOALLV command (element counts and displacements per member).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_ro_alltoallv {
    pub dest: u64,
    pub dest_nelems: *const usize,
    pub dest_displs: *const usize,
    pub source: u64,
    pub source_nelems: *const usize,
    pub source_displs: *const usize,
}

/// One queue: the producers' ticket counter and the proxy's progress on separate 64-byte
/// lines, then the commands.
#[repr(C)]
#[derive(Debug)]
pub struct rocshmem_ro_queue {
    /// Next ticket (producers, fetch_add).
    pub tail: u64,
    pub pad0: [u64; 7],
    /// Tickets the proxy has taken (for diagnostics; producers never wait on it).
    pub head: u64,
    pub pad1: [u64; 7],
    /// `ROCSHMEM_RO_QUEUE_SLOTS` commands.
    pub cmds: *mut rocshmem_ro_cmd,
    /// One ALLTOALLV argument block per slot (slot i's producer owns `args[i]` with the slot).
    pub args: *mut rocshmem_ro_alltoallv,
    pub pad2: [u64; 6],
}

/// The RO backend's device-visible part, reached from `rocshmem_device_state::ro`.
#[repr(C)]
#[derive(Debug)]
pub struct rocshmem_ro_device {
    /// Queues; a work-group uses queue `wg_id % n_queues`.
    pub n_queues: u32,
    /// Commands per queue ([`ROCSHMEM_RO_QUEUE_SLOTS`]).
    pub slots: u32,
    pub queues: *mut rocshmem_ro_queue,
    /// Set by the proxy when it stops (finalize or a fatal error): producers give up instead of
    /// waiting for ever.
    pub stopped: u32,
    pub reserved: u32,
}

const _: () = assert!(std::mem::size_of::<rocshmem_ro_cmd>() == 64);
const _: () = assert!(std::mem::size_of::<rocshmem_ro_queue>() == 192);
const _: () = assert!(std::mem::size_of::<rocshmem_ro_device>() == 24);
const _: () = assert!(std::mem::size_of::<rocshmem_device_fast>() == 48 + 8 * ROCSHMEM_FAST_PES);
const _: () = assert!(std::mem::size_of::<rocshmem_team_device>() == 32);
const _: () = assert!(std::mem::size_of::<rocshmem_ctx_device>() == 32);
const _: () = assert!(std::mem::size_of::<rocshmem_device_state>() == 128);
const _: () = assert!(std::mem::size_of::<rocshmem_gda_device>() == 40);
