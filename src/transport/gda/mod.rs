//! The GDA transport (GPU-initiated RDMA: device threads build WQEs and ring the NIC's
//! doorbell), mlx5 first; see docs/gda.md.
//!
//! - `host`: the host side, the `transport::Transport` of the peers this PE does not map.
//! - `abi`: the queue-pair descriptor device code posts through (cbindgen writes
//!   `device/include/rocshmem_device/gda_abi.h` from it); the posting code is `device/src/gda/`.
//! - `mlx5`: the wire formats a NIC reads and writes (WQEs, CQEs, doorbells).
//! - `model`: a NIC model serving the send queues on the host platform.
//! - `layout`, `devx`, `setup`: queue memory, the mlx5 DEVX commands, and the sequence that
//!   builds queue pairs on a NIC (never run on one).
//! - `verbs`: rdma-core loaded at run time; `discovery`: which NIC, from sysfs; `dmabuf`: GPU
//!   memory exported for registration.
//!
//! `ROCSHMEM_BACKEND=gda` with `ROCSHMEM_GDA_PROVIDER=model` runs this transport against the
//! NIC model on the host platform; with any other provider init refuses with [`refusal`], which
//! says what this node has (queue pairs on a NIC, `setup.rs`, are not wired into init yet). The
//! tests drive the model and the parsers through `crate::test_hooks`.

pub mod abi;
pub mod devx;
pub mod discovery;
pub mod dmabuf;
// The GDA transport runs only against the NIC model until queue pairs on a NIC are wired into
// init, so it comes and goes with the model (feature `test-doubles`, off in shipped builds).
#[cfg(feature = "test-doubles")]
pub mod host;
pub mod layout;
pub mod mlx5;
#[cfg(feature = "test-doubles")]
pub mod model;
pub mod setup;
pub mod verbs;

use crate::env::Config;
use abi::*;
use std::path::Path;

/// The environment's NIC filters.
pub fn filters(cfg: &Config) -> discovery::Filters {
    discovery::Filters {
        provider: cfg.gda_provider.clone(),
        hca_list: cfg.hca_list.clone(),
        use_hca: cfg.use_ib_hca.clone(),
        gid_index: cfg.gda_gid_index,
    }
}

/// The NIC this PE would use, or one line saying why there is none: rdma-core missing, no RDMA
/// device, none left by the filters or with an active port, or not an mlx5.
pub fn probe(cfg: &Config, sysfs: &Path) -> Result<discovery::Choice, String> {
    verbs::Verbs::load()?;
    let nics = discovery::scan(sysfs)?;
    let mut f = filters(cfg);
    let implicit = f.provider.trim().is_empty();
    if implicit {
        f.provider = "mlx5".into();
    }
    let c = discovery::choose(&nics, None, &f, 0)
        .map_err(|e| if implicit { format!("{e} (the GDA posting code of this build is mlx5 only)") } else { e })?;
    if c.provider != discovery::Provider::Mlx5 {
        return Err(format!(
            "{} is a {} NIC: the GDA posting code of this build is mlx5 only (docs/gda.md, \"Other NICs\")",
            c.nic,
            c.provider.name()
        ));
    }
    Ok(c)
}

/// `ROCSHMEM_GDA_PROVIDER=model`: the NIC model of the host platform (a development and test
/// provider: it serves the queue pairs in this process, between PEs of one machine).
pub const MODEL_PROVIDER: &str = "model";

/// Whether `ROCSHMEM_GDA_PROVIDER` names the NIC model and this build has it.
pub fn wants_model(cfg: &Config) -> bool {
    cfg!(feature = "test-doubles") && cfg.gda_provider.trim().eq_ignore_ascii_case(MODEL_PROVIDER)
}

/// Why init refuses `ROCSHMEM_BACKEND=gda` (any provider but the model), with what this node has.
pub fn refusal(cfg: &Config) -> String {
    let node = match probe(cfg, Path::new("/sys")) {
        Ok(c) => format!("this node's NIC would be {} port {}", c.nic, c.port),
        Err(why) => format!("and on this node: {why}"),
    };
    let model = if cfg!(feature = "test-doubles") {
        "runs only against its NIC model in this build (ROCSHMEM_GDA_PROVIDER=model, host platform; docs/gda.md)"
    } else {
        "runs only against its NIC model (a test double this build leaves out: cargo feature test-doubles; docs/gda.md)"
    };
    format!(
        "ROCSHMEM_BACKEND=gda: the GDA backend {model}: queue pairs on a NIC are not set up yet; use ipc or ro ({node})"
    )
}

/// The one line for a queue pair's status (`ROCSHMEM_GDA_ERR_*`) and `err_info`: which peer,
/// which side posted (host or device), and the NIC's syndrome.
pub fn describe_status(status: u32, err_info: u32, side: &str, peer: usize) -> String {
    let what = match status & 0xf00 {
        ROCSHMEM_GDA_ERR_CQE => {
            let synd = (status & 0xff) as u8;
            let name = match synd {
                mlx5::SYND_LOCAL_LENGTH => "local length error",
                mlx5::SYND_LOCAL_QP_OP => "local QP operation error",
                mlx5::SYND_LOCAL_PROT => "local protection error (a source or destination outside registered memory)",
                mlx5::SYND_WR_FLUSH => "work request flushed (after an earlier error)",
                mlx5::SYND_REMOTE_INVAL_REQ => "remote invalid request (a misaligned atomic?)",
                mlx5::SYND_REMOTE_ACCESS => "remote access error (an address outside the peer's heap)",
                mlx5::SYND_REMOTE_OP => "remote operation error",
                _ => "error completion",
            };
            format!(
                "the NIC completed WQE {} with syndrome {synd:#04x}: {name} (vendor syndrome {:#04x})",
                err_info & 0xffff,
                (err_info >> 16) & 0xff
            )
        }
        ROCSHMEM_GDA_ERR_BAD_CQE => format!("an unexpected completion (opcode {:#x})", status & 0xff),
        ROCSHMEM_GDA_ERR_STOPPED => "the queue pair was stopped (finalize began, or a PE failed)".to_string(),
        ROCSHMEM_GDA_ERR_ARG => "an argument the queue pair cannot carry (atomic size or alignment)".to_string(),
        _ => format!("status {status:#x}"),
    };
    format!("the {side} queue pair to PE {peer} failed: {what}; later operations on it fail too")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_is_one_line_and_names_the_reason() {
        let cfg = Config::from_lookup(&|_| None).unwrap();
        let m = refusal(&cfg);
        assert!(m.starts_with("ROCSHMEM_BACKEND=gda: ") && !m.contains('\n'), "{m}");
        let s = discovery::tests::FakeSys::new("probe");
        let e = probe(&cfg, &s.root.join("none")).unwrap_err();
        assert!(e.contains("no RDMA device") || e.contains("not installed"), "{e}");
        s.nic("bnxt_re0", "bnxt_en", "pci0000:00/0000:00:01.0", &[("4: ACTIVE", "Ethernet", &[][..])]);
        if verbs::Verbs::load().is_ok() {
            let e = probe(&cfg, &s.root).unwrap_err();
            assert!(e.contains("bnxt_re0 is bnxt") && e.contains("mlx5 only"), "{e}");
            let bnxt = Config::from_lookup(&|k| (k == "ROCSHMEM_GDA_PROVIDER").then(|| "bnxt".to_string())).unwrap();
            assert!(probe(&bnxt, &s.root).unwrap_err().contains("bnxt_re0 is a bnxt NIC"));
            s.nic("mlx5_0", "mlx5_core", "pci0000:00/0000:00:02.0", &[("4: ACTIVE", "InfiniBand", &[][..])]);
            assert_eq!(probe(&cfg, &s.root).unwrap().nic, "mlx5_0");
        }
    }
}
