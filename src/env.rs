//! Every `ROCSHMEM_*` environment variable, in one table.
//!
//! The table below is the single source: it defines the parsed [`Config`] fields, their
//! defaults (as the same text a user would write, parsed by the same code), and what
//! `rocshmem_info` prints. Names and defaults follow upstream rocSHMEM (`src/envvar.cpp`);
//! variables marked "extension" are ours.

use crate::error::{Error, Result};
use std::fmt::Write as _;

/// How a variable's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes: a number with an optional K/M/G/T suffix (binary multiples; `KiB`/`KB` also accepted).
    Size,
    /// A signed integer.
    Int,
    /// 0/1, true/false, yes/no, on/off.
    Bool,
    /// Seconds, integer or decimal.
    Seconds,
    /// Free text (validated where it is used).
    Text,
}

/// One row of the table, as `rocshmem_info` shows it.
#[derive(Debug, Clone, Copy)]
pub struct EnvVar {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    /// The values accepted, written as a user would write values of this kind: `lo..=hi`, or
    /// `a|b|...` for a short list; empty for text and booleans (checked where they are used).
    pub range: &'static str,
    pub category: &'static str,
    pub doc: &'static str,
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Size(usize),
    Int(i64),
    Bool(bool),
    Seconds(f64),
    Text(String),
}

macro_rules! env_table {
    ($( $field:ident : $kind:ident = $name:literal, default $default:literal, range $range:literal, $category:literal, $doc:literal; )*) => {
        /// The table of every variable this library reads.
        pub const ENV_VARS: &[EnvVar] = &[
            $( EnvVar { name: $name, kind: Kind::$kind, default: $default, range: $range, category: $category, doc: $doc }, )*
        ];

        /// The parsed configuration: one field per row of [`ENV_VARS`].
        #[derive(Debug, Clone)]
        pub struct Config {
            $( pub $field: <Kind as KindType>::$kind, )*
        }

        impl Config {
            /// Reads every variable through `lookup` (the process environment in production,
            /// a map in tests). A malformed value is an error naming the variable.
            pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
                let (cfg, bad) = Config::from_lookup_lenient(lookup);
                match bad.into_iter().next() {
                    Some((_, e)) => Err(e),
                    None => Ok(cfg),
                }
            }

            /// As [`Config::from_lookup`], but a malformed value takes its default and is
            /// returned beside the configuration with the variable's name (init joins the job
            /// with it to tell the other PEs why it fails).
            pub fn from_lookup_lenient(lookup: &dyn Fn(&str) -> Option<String>) -> (Config, Vec<(&'static str, Error)>) {
                let mut bad = Vec::new();
                let cfg = Config {
                    $( $field: {
                        let text = lookup($name);
                        let text = text.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or($default);
                        let v = parse_in_range(Kind::$kind, $name, text, $range).unwrap_or_else(|e| {
                            bad.push(($name, e));
                            parse(Kind::$kind, $name, $default).expect("table defaults parse")
                        });
                        into_typed!($kind, v)
                    }, )*
                };
                (cfg, bad)
            }
        }
    };
}

/// Maps a [`Kind`] to the Rust type of its parsed value (used by the table macro).
pub trait KindType {
    type Size;
    type Int;
    type Bool;
    type Seconds;
    type Text;
}
impl KindType for Kind {
    type Size = usize;
    type Int = i64;
    type Bool = bool;
    type Seconds = f64;
    type Text = String;
}

macro_rules! into_typed {
    (Size, $v:expr) => {
        match $v {
            Value::Size(x) => x,
            _ => unreachable!(),
        }
    };
    (Int, $v:expr) => {
        match $v {
            Value::Int(x) => x,
            _ => unreachable!(),
        }
    };
    (Bool, $v:expr) => {
        match $v {
            Value::Bool(x) => x,
            _ => unreachable!(),
        }
    };
    (Seconds, $v:expr) => {
        match $v {
            Value::Seconds(x) => x,
            _ => unreachable!(),
        }
    };
    (Text, $v:expr) => {
        match $v {
            Value::Text(x) => x,
            _ => unreachable!(),
        }
    };
}

env_table! {
    heap_size: Size = "ROCSHMEM_HEAP_SIZE", default "1073741824", range "4K..=64T", "memory",
        "Symmetric heap bytes per PE (reserved, not touched, until used).";
    shm_backing: Text = "ROCSHMEM_SHM_BACKING", default "memfd", range "", "memory",
        "Extension, host memory of the heaps (all of it on the host platform, the control part on GPUs): memfd (anonymous shared memory passed to the node's PEs over a Unix socket; /dev/shm's size does not matter) or posix (an object in /dev/shm; init refuses it if /dev/shm is smaller than the node's heaps).";
    heap_allocator_type: Text = "ROCSHMEM_HEAP_ALLOCATOR_TYPE", default "", range "", "memory",
        "AMD: what the heap is allocated as: uncached, finegrained, coarsegrained (vmm_posix, vmm_fabric: not supported yet); empty: finegrained on gfx1100/gfx1201, uncached elsewhere.";
    debug_level: Text = "ROCSHMEM_DEBUG_LEVEL", default "ERROR", range "", "debug",
        "Log verbosity: NONE, ERROR, WARN, ENV, VERSION, INFO, API, TRACE, with :modifiers (:noerror, :nowarn, :env, :stats counts operations).";
    gpu: Text = "ROCSHMEM_GPU", default "auto", range "", "platform",
        "Extension: GPU platform: auto (amd when libamdhip64 loads and sees a GPU, else nvidia when libcudart does, else host), host, nvidia, amd.";
    gpu_sharing: Text = "ROCSHMEM_GPU_SHARING", default "mps", range "", "platform",
        "Extension: several PEs on one GPU: mps (run when their processes run concurrently: MPS on NVIDIA, always on AMD; else init fails), timeslice (also without MPS, time-sliced), none (one PE per GPU).";
    hip_library: Text = "ROCSHMEM_HIP_LIBRARY", default "", range "", "platform",
        "Extension: path or name of the HIP runtime to load; empty: the program's own, else libamdhip64.so (.so.7, .so.6, .so.5), $ROCM_PATH/lib, /opt/rocm/lib.";
    backend: Text = "ROCSHMEM_BACKEND", default "", range "", "backend",
        "Force a backend (ipc, ro, gda); empty picks the best one that can run.";
    max_num_contexts: Int = "ROCSHMEM_MAX_NUM_CONTEXTS", default "32", range "0..=65536", "contexts",
        "Device contexts available to work-groups.";
    max_num_host_contexts: Int = "ROCSHMEM_MAX_NUM_HOST_CONTEXTS", default "1", range "0..=65536", "contexts",
        "Host contexts that rocshmem_ctx_create can hand out (besides the default context).";
    host_wave_size: Int = "ROCSHMEM_HOST_WAVE_SIZE", default "64", range "32|64", "device",
        "Host platform: lanes per wave of kernels run by the host launcher (32 or 64).";
    max_num_teams: Int = "ROCSHMEM_MAX_NUM_TEAMS", default "40", range "2..=4096", "teams",
        "Team slots, ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED included.";
    disable_mixed_ipc: Bool = "ROCSHMEM_DISABLE_MIXED_IPC", default "0", range "", "backend",
        "Send intra-node traffic through the network backend instead of IPC (RO/GDA only).";
    ro_progress_delay: Int = "ROCSHMEM_RO_PROGRESS_DELAY", default "0", range "0..=1000000", "backend",
        "RO: microseconds the proxy thread sleeps when it found no work; 0 yields, and sleeps 50 us only after 2 ms idle.";
    ro_net_cpu_queue: Bool = "ROCSHMEM_RO_NET_CPU_QUEUE", default "0", range "", "backend",
        "RO: keep the command queues in host memory (on the host platform they always are).";
    ro_queues: Int = "ROCSHMEM_RO_QUEUES", default "32", range "1..=4096", "backend",
        "Extension, RO: command queues the proxy serves (a work-group uses queue wg_id % n).";
    init_on_demand: Bool = "ROCSHMEM_INIT_ON_DEMAND", default "0", range "", "bootstrap",
        "Extension: a call that needs the library before rocshmem_init (rocshmem_my_pe, rocshmem_malloc, ...) initialises it as rocshmem_init() would, as rocSHMEM 2.x did; 0: that call fails and says so once.";
    gda_provider: Text = "ROCSHMEM_GDA_PROVIDER", default "", range "", "gda",
        "GDA: NIC family to use: mlx5, bnxt, ionic (or pensando); empty picks the NIC nearest the GPU (this build posts to mlx5 only); model: the NIC model of the host platform (development and tests; the only provider ROCSHMEM_BACKEND=gda runs with in this build).";
    use_ib_hca: Text = "ROCSHMEM_USE_IB_HCA", default "", range "", "gda",
        "GDA: the NIC this PE uses (e.g. mlx5_0, or mlx5_0:1 for a port); disables the choice by PCIe distance.";
    hca_list: Text = "ROCSHMEM_HCA_LIST", default "", range "", "gda",
        "GDA: comma-separated NICs the choice may use (name or name:port); a leading ^ excludes them instead.";
    gda_sq_size: Int = "ROCSHMEM_GDA_SQ_SIZE", default "1024", range "128..=32768", "gda",
        "GDA: send queue depth in 64-byte WQE blocks (a power of two, 128 to 32768).";
    gda_num_qps_per_pe_default_ctx: Int = "ROCSHMEM_GDA_NUM_QPS_PER_PE_DEFAULT_CTX", default "1", range "1..=64", "gda",
        "GDA: queue pairs per peer for the default context (read; this build builds one per peer, shared by every context).";
    gda_num_qps_per_pe_usr_ctx: Int = "ROCSHMEM_GDA_NUM_QPS_PER_PE_USR_CTX", default "1", range "1..=64", "gda",
        "GDA: queue pairs per peer for each user context (read; this build builds one per peer, shared by every context).";
    gda_traffic_class: Int = "ROCSHMEM_GDA_TRAFFIC_CLASS", default "0", range "0..=255", "gda",
        "GDA: traffic class of the queue pairs on an Ethernet (RoCE) link; the DSCP is its upper 6 bits.";
    gda_service_level: Int = "ROCSHMEM_GDA_SERVICE_LEVEL", default "0", range "0..=15", "gda",
        "Extension, GDA: InfiniBand service level (RoCE: priority) of the queue pairs (NVSHMEM_IB_SL).";
    gda_gid_index: Int = "ROCSHMEM_GDA_GID_INDEX", default "-1", range "-1..=255", "gda",
        "Extension, GDA: GID table index of the port (NVSHMEM_IB_GID_INDEX); -1 picks an IPv4 RoCE v2 GID.";
    gda_alternate_qp_ports: Bool = "ROCSHMEM_GDA_ALTERNATE_QP_PORTS", default "1", range "", "gda",
        "GDA: alternate queue pairs of successive contexts over the ports of a multi-port (bonded) NIC.";
    gda_pcie_relaxed_ordering: Bool = "ROCSHMEM_GDA_PCIE_RELAXED_ORDERING", default "0", range "", "gda",
        "GDA: register the symmetric heap with PCIe relaxed ordering.";
    gda_enable_dmabuf: Bool = "ROCSHMEM_GDA_ENABLE_DMABUF", default "0", range "", "gda",
        "GDA: register GPU memory through a dma-buf (cuMemGetHandleForAddressRange / hsa_amd_portable_export_dmabuf).";
    gda_override_nic_firmware_check: Bool = "ROCSHMEM_GDA_OVERRIDE_NIC_FIRMWARE_CHECK", default "0", range "", "gda",
        "GDA: use a NIC whose firmware is not known to work (at your own risk).";
    gda_alltoallv_wg_algo: Text = "ROCSHMEM_GDA_ALLTOALLV_WG_ALGO", default "", range "", "gda",
        "GDA: work-group alltoallv algorithm, GET or COPY (empty: GET).";
    gda_num_user_buffers: Int = "ROCSHMEM_GDA_NUM_USER_BUFFERS", default "4", range "0..=1024", "gda",
        "GDA: user buffers rocshmem_buffer_register may register with the NICs.";
    bootstrap_timeout: Seconds = "ROCSHMEM_BOOTSTRAP_TIMEOUT", default "60", range "0.1..=31536000", "bootstrap",
        "Seconds PEs wait for each other during init (unique-id / launcher / MPI rendezvous); 60 by default, so that PEs which import large Python packages (torch) on a loaded node first still meet.";
    bootstrap_hostid: Text = "ROCSHMEM_BOOTSTRAP_HOSTID", default "", range "", "bootstrap",
        "Node identity used to group PEs into ROCSHMEM_TEAM_SHARED; empty means the hostname.";
    bootstrap_socket_family: Text = "ROCSHMEM_BOOTSTRAP_SOCKET_FAMILY", default "AF_UNSPEC", range "", "bootstrap",
        "Address family of the bootstrap socket: AF_INET, AF_INET6 or AF_UNSPEC.";
    bootstrap_socket_ifname: Text = "ROCSHMEM_BOOTSTRAP_SOCKET_IFNAME", default "", range "", "bootstrap",
        "Network interface the unique-id listener binds to; empty means loopback.";
    uniqueid_with_mpi: Bool = "ROCSHMEM_UNIQUEID_WITH_MPI", default "0", range "", "bootstrap",
        "Also build an MPI sub-communicator in unique-id mode (RO backend only).";
    mpi_library: Text = "ROCSHMEM_MPI_LIBRARY", default "", range "", "bootstrap",
        "Extension: path or name of the MPI library to load; empty: the MPI the program already loaded, else the launcher's (Open MPI: libmpi.so.40, libmpi.so; MPICH ABI: libmpich.so.12, libmpi.so.12).";
    test_fake_gpu: Text = "ROCSHMEM_TEST_FAKE_GPU", default "", range "", "debug",
        "Tests only: pretend this PE uses GPU <id>, as <id>[:mps|:nomps|:unknown], so the several-PEs-per-GPU check runs without a GPU.";
    test_gpu_heap_route: Bool = "ROCSHMEM_TEST_GPU_HEAP_ROUTE", default "0", range "", "debug",
        "Tests only: on the host platform (IPC), host atomics and team collectives run as on a GPU heap (IPC's executor: the stream kernels on the library's stream), so that path runs without a GPU.";
    hang_report_timeout: Seconds = "ROCSHMEM_HANG_REPORT_TIMEOUT", default "60", range "0..=31536000", "hang",
        "Extension: seconds a wait (barrier, wait_until, collective, an init or finalize exchange) may last before one report of where every PE waits is printed; the job keeps waiting. 0: never.";
    hang_timeout: Seconds = "ROCSHMEM_HANG_TIMEOUT", default "0", range "0..=31536000", "hang",
        "Extension: seconds a wait (as above) may last before the job is stopped with that report; 0 (the default) never stops it.";
    run_uniqueid: Text = "ROCSHMEM_RUN_UNIQUEID", default "", range "", "launcher",
        "Set by rocshmem-run: the unique id (hex) of the job's rendezvous.";
    run_rank: Int = "ROCSHMEM_RUN_RANK", default "-1", range "-1..=2147483646", "launcher",
        "Set by rocshmem-run: this process's PE number.";
    run_nranks: Int = "ROCSHMEM_RUN_NRANKS", default "0", range "0..=2147483647", "launcher",
        "Set by rocshmem-run: the number of PEs.";
}

/// Parses one value of the given kind; the error names the variable and shows examples.
pub fn parse(kind: Kind, name: &str, text: &str) -> Result<Value> {
    let bad = |what: &str| Error::invalid(format!("{name}='{text}' is not {what}"));
    match kind {
        Kind::Size => parse_size(text).map(Value::Size).ok_or_else(|| bad("a size (examples: 1073741824, 512M, 6GiB)")),
        Kind::Int => text.parse::<i64>().map(Value::Int).map_err(|_| bad("an integer")),
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" | "y" => Ok(Value::Bool(true)),
            "0" | "false" | "no" | "off" | "n" => Ok(Value::Bool(false)),
            _ => Err(bad("a boolean (0/1, true/false, yes/no, on/off)")),
        },
        Kind::Seconds => match text.parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Ok(Value::Seconds(s)),
            _ => Err(bad("a non-negative number of seconds")),
        },
        Kind::Text => Ok(Value::Text(text.to_string())),
    }
}

/// A value as a number to compare with the bounds of a range (sizes and integers are exact in
/// an f64 up to 2^53, far beyond every bound in the table).
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Size(x) => Some(*x as f64),
        Value::Int(x) => Some(*x as f64),
        Value::Seconds(x) => Some(*x),
        _ => None,
    }
}

/// The accepted values of `range` in words ("2 to 4096", "32 or 64", "0.1 to 31536000 seconds").
pub fn describe_range(kind: Kind, range: &str) -> String {
    let unit = if kind == Kind::Seconds {
        " seconds"
    } else if kind == Kind::Size {
        " bytes"
    } else {
        ""
    };
    if let Some((lo, hi)) = range.split_once("..=") {
        format!("{lo} to {hi}{unit}")
    } else {
        let items: Vec<&str> = range.split('|').collect();
        match items.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}{unit}", rest.join(", ")),
            _ => format!("{range}{unit}"),
        }
    }
}

/// Parses `text` as [`parse`] does and checks it against the row's `range` (see
/// [`EnvVar::range`]); the error names the variable and its valid values.
pub fn parse_in_range(kind: Kind, name: &str, text: &str, range: &str) -> Result<Value> {
    let out_of_range = || {
        Error::invalid(format!(
            "{name}='{text}' is out of range: valid values are {}; unset it for the default",
            describe_range(kind, range)
        ))
    };
    let v = match parse(kind, name, text) {
        Ok(v) => v,
        Err(e) if range.is_empty() => return Err(e),
        // The message of `parse`'s error, without its "invalid argument: " prefix (the new error
        // adds it again).
        Err(Error::InvalidArgument(e)) => {
            return Err(Error::invalid(format!("{e}; valid values are {}", describe_range(kind, range))));
        }
        Err(e) => return Err(e),
    };
    if range.is_empty() {
        return Ok(v);
    }
    let x = as_number(&v).ok_or_else(out_of_range)?;
    // The bounds are table text, parsed by the same code (a unit test checks every row's).
    let bound = |t: &str| parse(kind, name, t).ok().as_ref().and_then(as_number);
    let ok = match range.split_once("..=") {
        Some((lo, hi)) => matches!((bound(lo), bound(hi)), (Some(lo), Some(hi)) if lo <= x && x <= hi),
        None => range.split('|').any(|item| bound(item) == Some(x)),
    };
    if ok { Ok(v) } else { Err(out_of_range()) }
}

/// The value of one variable of the table in this process's environment (its default when
/// unset), or None when the variable is not in the table or its value is malformed.
pub fn lookup(name: &str) -> Option<Value> {
    let v = ENV_VARS.iter().find(|v| v.name == name)?;
    let text = std::env::var(name).ok();
    let text = text.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or(v.default);
    parse_in_range(v.kind, v.name, text, v.range).ok()
}

/// Whether the rendezvous reads variable `name` (a PE with a malformed one cannot join).
pub fn needed_by_bootstrap(name: &str) -> bool {
    ENV_VARS.iter().any(|v| v.name == name && matches!(v.category, "bootstrap" | "launcher"))
}

/// `"6GiB"` → 6·2³⁰. Suffixes are binary multiples, case-insensitive, with optional `iB`/`B`.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    let v = n.checked_mul(1u64 << shift)?;
    usize::try_from(v).ok()
}

impl Config {
    /// The configuration of this process's environment.
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(&|name| std::env::var(name).ok())
    }

    /// [`Config::from_lookup_lenient`] of this process's environment.
    pub fn from_env_lenient() -> (Config, Vec<(&'static str, Error)>) {
        Config::from_lookup_lenient(&|name| std::env::var(name).ok())
    }

    /// Defaults only (what a process with no `ROCSHMEM_*` variables gets).
    pub fn defaults() -> Config {
        Config::from_lookup(&|_| None).expect("table defaults parse")
    }
}

/// The table as text, one variable a line, with this process's value next to the default.
pub fn describe(show_all: bool) -> String {
    let mut out = String::new();
    // Categories in the order they first appear in the table, each listed once.
    let mut categories: Vec<&str> = Vec::new();
    for v in ENV_VARS {
        if !categories.contains(&v.category) {
            categories.push(v.category);
        }
    }
    let rows = categories.iter().flat_map(|c| ENV_VARS.iter().filter(move |v| v.category == *c));
    let mut category = "";
    for v in rows {
        if v.category == "launcher" && !show_all {
            continue;
        }
        if v.category != category {
            category = v.category;
            let _ = writeln!(out, "[{category}]");
        }
        let value = std::env::var(v.name).ok();
        let shown = match &value {
            Some(val) => format!("{val} (set)"),
            None if v.default.is_empty() => "(empty)".to_string(),
            None => v.default.to_string(),
        };
        let valid =
            if v.range.is_empty() { String::new() } else { format!(" Valid: {}.", describe_range(v.kind, v.range)) };
        let _ = writeln!(
            out,
            "  {:<36} = {:<22} default: {:<12} {}{valid}",
            v.name,
            shown,
            if v.default.is_empty() { "(empty)" } else { v.default },
            v.doc
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(&move |n| map.get(n).cloned())
    }

    #[test]
    fn defaults_match_upstream() {
        let c = Config::defaults();
        assert_eq!(c.heap_size, 1 << 30);
        assert_eq!(c.max_num_teams, 40);
        assert_eq!(c.max_num_contexts, 32);
        assert_eq!(c.max_num_host_contexts, 1);
        assert_eq!(c.bootstrap_timeout, 60.0);
        assert_eq!(c.debug_level, "ERROR");
        assert!(!c.disable_mixed_ipc);
    }

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("6GiB"), Some(6 << 30));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("1 GB"), Some(1 << 30));
        assert_eq!(parse_size("abc"), None);
        assert_eq!(parse_size("1X"), None);
        assert_eq!(parse_size("99999999999999999999"), None);
        assert_eq!(parse_size("20000000000T"), None, "overflow is refused");
    }

    #[test]
    fn values_are_read_and_bad_ones_named() {
        let c = cfg(&[("ROCSHMEM_HEAP_SIZE", "256M"), ("ROCSHMEM_DISABLE_MIXED_IPC", "yes")]).unwrap();
        assert_eq!(c.heap_size, 256 << 20);
        assert!(c.disable_mixed_ipc);
        let e = cfg(&[("ROCSHMEM_HEAP_SIZE", "lots")]).unwrap_err().to_string();
        assert!(e.contains("ROCSHMEM_HEAP_SIZE='lots'"), "{e}");
        let e = cfg(&[("ROCSHMEM_BOOTSTRAP_TIMEOUT", "-1")]).unwrap_err().to_string();
        assert!(e.contains("ROCSHMEM_BOOTSTRAP_TIMEOUT"), "{e}");
        let e = cfg(&[("ROCSHMEM_MAX_NUM_TEAMS", "4x")]).unwrap_err().to_string();
        assert!(e.contains("integer"), "{e}");
    }

    /// Every numeric variable refuses values outside its range (and non-numbers) with an error
    /// naming the variable and its valid values; nothing panics, whatever the text.
    #[test]
    fn out_of_range_values_are_refused_by_name() {
        let bad = ["1e19", "1e300", "inf", "-inf", "nan", "-1", "-5", "99999999999999999999", "1x", "0x10", "1e-400"];
        let mut checked = 0;
        for v in ENV_VARS.iter().filter(|v| !v.range.is_empty()) {
            for text in bad {
                let r = cfg(&[(v.name, text)]);
                // A few are valid somewhere (-1 for ROCSHMEM_RUN_RANK, tiny seconds round to 0).
                if let Err(e) = r {
                    let e = e.to_string();
                    assert!(e.contains(v.name) && e.contains("valid values are"), "{}={text}: {e}", v.name);
                    checked += 1;
                }
            }
            // Just past each end of a lo..=hi range is refused, each end itself accepted.
            if let Some((lo, hi)) = v.range.split_once("..=") {
                assert!(cfg(&[(v.name, lo)]).is_ok(), "{}={lo}", v.name);
                assert!(cfg(&[(v.name, hi)]).is_ok(), "{}={hi}", v.name);
                let (l, h) = (
                    as_number(&parse(v.kind, v.name, lo).unwrap()).unwrap(),
                    as_number(&parse(v.kind, v.name, hi).unwrap()).unwrap(),
                );
                assert!(l <= h, "{}: empty range", v.name);
                if v.kind != Kind::Seconds {
                    let above = format!("{}", h as u64 + 1);
                    assert!(cfg(&[(v.name, &above)]).is_err(), "{}={above}", v.name);
                    if l >= 1.0 {
                        let below = format!("{}", l as u64 - 1);
                        assert!(cfg(&[(v.name, &below)]).is_err(), "{}={below}", v.name);
                    }
                } else {
                    assert!(cfg(&[(v.name, &format!("{}", h * 1.5))]).is_err(), "{} above", v.name);
                }
            }
        }
        assert!(checked > 50, "{checked}");
        let e = cfg(&[("ROCSHMEM_BOOTSTRAP_TIMEOUT", "1e19")]).unwrap_err().to_string();
        assert!(e.contains("0.1 to 31536000 seconds"), "{e}");
        let e = cfg(&[("ROCSHMEM_HEAP_SIZE", "1")]).unwrap_err().to_string();
        assert!(e.contains("4K to 64T bytes"), "{e}");
        let e = cfg(&[("ROCSHMEM_HOST_WAVE_SIZE", "48")]).unwrap_err().to_string();
        assert!(e.contains("32 or 64"), "{e}");
        assert_eq!(cfg(&[("ROCSHMEM_HOST_WAVE_SIZE", "32")]).unwrap().host_wave_size, 32);
    }

    /// A value that is not a number says "invalid argument:" once (it said it twice).
    #[test]
    fn malformed_values_carry_one_prefix() {
        for (name, text) in [("ROCSHMEM_BOOTSTRAP_TIMEOUT", "nan"), ("ROCSHMEM_MAX_NUM_TEAMS", "bogus")] {
            let e = cfg(&[(name, text)]).unwrap_err().to_string();
            assert_eq!(e.matches("invalid argument").count(), 1, "{e}");
            assert!(e.starts_with(&format!("invalid argument: {name}='{text}' is not ")), "{e}");
        }
    }

    #[test]
    fn every_range_parses_and_holds_its_default() {
        for v in ENV_VARS {
            if v.range.is_empty() {
                assert!(matches!(v.kind, Kind::Text | Kind::Bool), "{}: numeric variables need a range", v.name);
                continue;
            }
            assert!(
                parse_in_range(v.kind, v.name, v.default, v.range).is_ok(),
                "{}: default outside its range",
                v.name
            );
        }
    }

    #[test]
    fn empty_value_means_default() {
        let c = cfg(&[("ROCSHMEM_HEAP_SIZE", "  ")]).unwrap();
        assert_eq!(c.heap_size, 1 << 30);
    }

    #[test]
    fn every_name_is_unique_and_prefixed() {
        let mut names: Vec<_> = ENV_VARS.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ENV_VARS.len());
        assert!(ENV_VARS.iter().all(|v| v.name.starts_with("ROCSHMEM_")));
    }
}
