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
    ($( $field:ident : $kind:ident = $name:literal, default $default:literal, $category:literal, $doc:literal; )*) => {
        /// The table of every variable this library reads.
        pub const ENV_VARS: &[EnvVar] = &[
            $( EnvVar { name: $name, kind: Kind::$kind, default: $default, category: $category, doc: $doc }, )*
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
                Ok(Config {
                    $( $field: {
                        let text = lookup($name);
                        let text = text.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or($default);
                        into_typed!($kind, parse(Kind::$kind, $name, text)?)
                    }, )*
                })
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
    heap_size: Size = "ROCSHMEM_HEAP_SIZE", default "1073741824", "memory",
        "Symmetric heap bytes per PE (reserved, not touched, until used).";
    heap_allocator_type: Text = "ROCSHMEM_HEAP_ALLOCATOR_TYPE", default "", "memory",
        "AMD: what the heap is allocated as: uncached, finegrained, coarsegrained (vmm_posix, vmm_fabric: not supported yet); empty: finegrained on gfx1100/gfx1201, uncached elsewhere.";
    debug_level: Text = "ROCSHMEM_DEBUG_LEVEL", default "ERROR", "debug",
        "Log verbosity: NONE, ERROR, WARN, ENV, VERSION, INFO, API, TRACE, with :modifiers (:noerror, :nowarn, :env, :stats counts operations).";
    gpu: Text = "ROCSHMEM_GPU", default "auto", "platform",
        "Extension: GPU platform: auto (amd when libamdhip64 loads and sees a GPU, else nvidia when libcudart does, else host), host, nvidia, amd.";
    hip_library: Text = "ROCSHMEM_HIP_LIBRARY", default "", "platform",
        "Extension: path or name of the HIP runtime to load; empty: the program's own, else libamdhip64.so (.so.7, .so.6, .so.5), $ROCM_PATH/lib, /opt/rocm/lib.";
    backend: Text = "ROCSHMEM_BACKEND", default "", "backend",
        "Force a backend (ipc, ro, gda); empty picks the best one that can run.";
    max_num_contexts: Int = "ROCSHMEM_MAX_NUM_CONTEXTS", default "32", "contexts",
        "Device contexts available to work-groups.";
    max_num_host_contexts: Int = "ROCSHMEM_MAX_NUM_HOST_CONTEXTS", default "1", "contexts",
        "Host contexts that rocshmem_ctx_create can hand out (besides the default context).";
    host_wave_size: Int = "ROCSHMEM_HOST_WAVE_SIZE", default "64", "device",
        "Host platform: lanes per wave of kernels run by the host launcher (32 or 64).";
    max_num_teams: Int = "ROCSHMEM_MAX_NUM_TEAMS", default "40", "teams",
        "Team slots, ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED included.";
    disable_mixed_ipc: Bool = "ROCSHMEM_DISABLE_MIXED_IPC", default "0", "backend",
        "Send intra-node traffic through the network backend instead of IPC (RO/GDA only).";
    ro_progress_delay: Int = "ROCSHMEM_RO_PROGRESS_DELAY", default "0", "backend",
        "RO: microseconds the proxy thread sleeps when it found no work; 0 yields, and sleeps 50 us only after 2 ms idle.";
    ro_net_cpu_queue: Bool = "ROCSHMEM_RO_NET_CPU_QUEUE", default "0", "backend",
        "RO: keep the command queues in host memory (on the host platform they always are).";
    ro_queues: Int = "ROCSHMEM_RO_QUEUES", default "32", "backend",
        "Extension, RO: command queues the proxy serves (a work-group uses queue wg_id % n).";
    gda_provider: Text = "ROCSHMEM_GDA_PROVIDER", default "", "gda",
        "GDA: NIC family to use: mlx5, bnxt, ionic (or pensando); empty picks the NIC nearest the GPU (this build posts to mlx5 only).";
    use_ib_hca: Text = "ROCSHMEM_USE_IB_HCA", default "", "gda",
        "GDA: the NIC this PE uses (e.g. mlx5_0, or mlx5_0:1 for a port); disables the choice by PCIe distance.";
    hca_list: Text = "ROCSHMEM_HCA_LIST", default "", "gda",
        "GDA: comma-separated NICs the choice may use (name or name:port); a leading ^ excludes them instead.";
    gda_sq_size: Int = "ROCSHMEM_GDA_SQ_SIZE", default "1024", "gda",
        "GDA: send queue depth in 64-byte WQE blocks (a power of two, 128 to 32768).";
    gda_num_qps_per_pe_default_ctx: Int = "ROCSHMEM_GDA_NUM_QPS_PER_PE_DEFAULT_CTX", default "1", "gda",
        "GDA: queue pairs per peer for the default context.";
    gda_num_qps_per_pe_usr_ctx: Int = "ROCSHMEM_GDA_NUM_QPS_PER_PE_USR_CTX", default "1", "gda",
        "GDA: queue pairs per peer for each user context.";
    gda_traffic_class: Int = "ROCSHMEM_GDA_TRAFFIC_CLASS", default "0", "gda",
        "GDA: traffic class of the queue pairs on an Ethernet (RoCE) link; the DSCP is its upper 6 bits.";
    gda_service_level: Int = "ROCSHMEM_GDA_SERVICE_LEVEL", default "0", "gda",
        "Extension, GDA: InfiniBand service level (RoCE: priority) of the queue pairs (NVSHMEM_IB_SL).";
    gda_gid_index: Int = "ROCSHMEM_GDA_GID_INDEX", default "-1", "gda",
        "Extension, GDA: GID table index of the port (NVSHMEM_IB_GID_INDEX); -1 picks an IPv4 RoCE v2 GID.";
    gda_alternate_qp_ports: Bool = "ROCSHMEM_GDA_ALTERNATE_QP_PORTS", default "1", "gda",
        "GDA: alternate queue pairs of successive contexts over the ports of a multi-port (bonded) NIC.";
    gda_pcie_relaxed_ordering: Bool = "ROCSHMEM_GDA_PCIE_RELAXED_ORDERING", default "0", "gda",
        "GDA: register the symmetric heap with PCIe relaxed ordering.";
    gda_enable_dmabuf: Bool = "ROCSHMEM_GDA_ENABLE_DMABUF", default "0", "gda",
        "GDA: register GPU memory through a dma-buf (cuMemGetHandleForAddressRange / hsa_amd_portable_export_dmabuf).";
    gda_override_nic_firmware_check: Bool = "ROCSHMEM_GDA_OVERRIDE_NIC_FIRMWARE_CHECK", default "0", "gda",
        "GDA: use a NIC whose firmware is not known to work (at your own risk).";
    gda_alltoallv_wg_algo: Text = "ROCSHMEM_GDA_ALLTOALLV_WG_ALGO", default "", "gda",
        "GDA: work-group alltoallv algorithm, GET or COPY (empty: GET).";
    gda_num_user_buffers: Int = "ROCSHMEM_GDA_NUM_USER_BUFFERS", default "4", "gda",
        "GDA: user buffers rocshmem_buffer_register may register with the NICs.";
    bootstrap_timeout: Seconds = "ROCSHMEM_BOOTSTRAP_TIMEOUT", default "5", "bootstrap",
        "Seconds PEs wait for each other during init (unique-id / launcher / MPI rendezvous).";
    bootstrap_hostid: Text = "ROCSHMEM_BOOTSTRAP_HOSTID", default "", "bootstrap",
        "Node identity used to group PEs into ROCSHMEM_TEAM_SHARED; empty means the hostname.";
    bootstrap_socket_family: Text = "ROCSHMEM_BOOTSTRAP_SOCKET_FAMILY", default "AF_UNSPEC", "bootstrap",
        "Address family of the bootstrap socket: AF_INET, AF_INET6 or AF_UNSPEC.";
    bootstrap_socket_ifname: Text = "ROCSHMEM_BOOTSTRAP_SOCKET_IFNAME", default "", "bootstrap",
        "Network interface the unique-id listener binds to; empty means loopback.";
    uniqueid_with_mpi: Bool = "ROCSHMEM_UNIQUEID_WITH_MPI", default "0", "bootstrap",
        "Also build an MPI sub-communicator in unique-id mode (RO backend only).";
    mpi_library: Text = "ROCSHMEM_MPI_LIBRARY", default "", "bootstrap",
        "Extension: path or name of the MPI library to load; empty tries libmpi.so.40, then libmpi.so.";
    run_uniqueid: Text = "ROCSHMEM_RUN_UNIQUEID", default "", "launcher",
        "Set by rocshmem-run: the unique id (hex) of the job's rendezvous.";
    run_rank: Int = "ROCSHMEM_RUN_RANK", default "-1", "launcher",
        "Set by rocshmem-run: this process's PE number.";
    run_nranks: Int = "ROCSHMEM_RUN_NRANKS", default "0", "launcher",
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
        let _ = writeln!(
            out,
            "  {:<36} = {:<22} default: {:<12} {}",
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
        assert_eq!(c.bootstrap_timeout, 5.0);
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
