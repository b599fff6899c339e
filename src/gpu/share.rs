//! Several PEs on one GPU: detected at init, then run or refused on every PE alike.
//!
//! Each PE says which GPU it uses (an identity unique on its node: the CUDA UUID, MIG instances
//! included; the PCI bus id on AMD) and whether kernels of different processes run on that GPU
//! at the same time (NVIDIA: the MPS control daemon serves the process, as the driver reports
//! it with `CU_DEVICE_ATTRIBUTE_MPS_ENABLED`; AMD: always, its hardware scheduler runs several
//! processes' queues together). This rides on init's platform exchange, so every PE sees every
//! PE's answer and takes the same decision ([`check`]). `ROCSHMEM_GPU_SHARING` is the policy:
//!
//! | value | PEs sharing a GPU |
//! |---|---|
//! | `mps` (default) | run when their processes run concurrently (MPS on NVIDIA, always on AMD); otherwise init fails on every PE, saying how to fix it |
//! | `timeslice` | also run without MPS: the GPU time-slices between the processes, so every wait on another PE's kernel costs a time slice |
//! | `none` | never: one PE per GPU |
//!
//! Under MPS a resident thread block is never preempted for another client's, so a kernel that
//! fills the GPU while it waits for another PE's kernel would wait forever: the PEs' shares
//! (`CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`, 100 when unset) should sum to at most 100, and init
//! warns when they do not.
//!
//! The RO backend on NVIDIA keeps the heaps in host memory and needs neither (docs/design.md,
//! "Several PEs on one GPU").

use crate::error::{Error, Result};

/// What a PE tells the others about its GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuIdentity {
    /// Unique per device on a node (CUDA UUID, PCI bus id).
    pub id: String,
    /// Whether kernels of several processes run on this device at the same time: `Some(true)`
    /// under MPS (NVIDIA) or on AMD, `Some(false)` when they time-slice, `None` when the driver
    /// cannot say (CUDA drivers before 12.3 have no MPS attribute).
    pub concurrent: Option<bool>,
    /// Why not, in words (e.g. "no MPS daemon serves this process; /tmp/nvidia-mps/control exists").
    pub note: String,
    /// Under MPS (NVIDIA): this process's share of the SMs in percent
    /// (`CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`; 100 when unset). None elsewhere.
    pub mps_share: Option<u8>,
}

impl GpuIdentity {
    pub fn encode(&self) -> Vec<u8> {
        let c = match self.concurrent {
            Some(false) => 0u8,
            Some(true) => 1,
            None => 2,
        };
        let mut b = vec![c, self.mps_share.unwrap_or(255), self.id.len().min(255) as u8];
        b.extend_from_slice(&self.id.as_bytes()[..self.id.len().min(255)]);
        b.extend_from_slice(self.note.as_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<GpuIdentity> {
        let bad = || Error::Bootstrap("malformed GPU identity in the init exchange".into());
        let (&c, rest) = b.split_first().ok_or_else(bad)?;
        let (&share, rest) = rest.split_first().ok_or_else(bad)?;
        let (&n, rest) = rest.split_first().ok_or_else(bad)?;
        if rest.len() < n as usize {
            return Err(bad());
        }
        let (id, note) = rest.split_at(n as usize);
        Ok(GpuIdentity {
            id: String::from_utf8_lossy(id).into_owned(),
            concurrent: match c {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
            note: String::from_utf8_lossy(note).into_owned(),
            mps_share: (share != 255).then_some(share),
        })
    }

    /// `ROCSHMEM_TEST_FAKE_GPU` (tests only, any platform): `<id>[:mps|:nomps|:unknown]`, so
    /// that the check runs where there is no GPU (`:mps` takes its share from the environment,
    /// as a real MPS client does). Empty: None.
    pub fn fake(text: &str) -> Result<Option<GpuIdentity>> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(None);
        }
        let (id, how) = t.rsplit_once(':').unwrap_or((t, "nomps"));
        let concurrent = match how {
            "mps" => Some(true),
            "nomps" => Some(false),
            "unknown" => None,
            _ => {
                return Err(Error::invalid(format!("ROCSHMEM_TEST_FAKE_GPU='{t}' is not <id>[:mps|:nomps|:unknown]")));
            }
        };
        if id.is_empty() {
            return Err(Error::invalid(format!("ROCSHMEM_TEST_FAKE_GPU='{t}' has no GPU id")));
        }
        Ok(Some(GpuIdentity {
            id: id.to_string(),
            concurrent,
            note: "ROCSHMEM_TEST_FAKE_GPU".into(),
            mps_share: (concurrent == Some(true)).then(mps_share_from_env),
        }))
    }
}

/// `ROCSHMEM_GPU_SHARING`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Mps,
    Timeslice,
    Never,
}

impl Policy {
    pub fn parse(text: &str) -> Result<Policy> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "mps" => Ok(Policy::Mps),
            "timeslice" => Ok(Policy::Timeslice),
            "none" => Ok(Policy::Never),
            other => Err(Error::invalid(format!("ROCSHMEM_GPU_SHARING='{other}' is not mps, timeslice or none"))),
        }
    }
}

/// What init does about PEs sharing GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No two PEs share a GPU (or no PE has one).
    Alone,
    /// Sharing, and it runs: a line for the log, at WARN when something is amiss (time-sliced,
    /// MPS shares past 100), else at INFO.
    Runs { line: String, warn: bool },
}

/// Decides for the whole job (every PE computes the same answer from the same exchange).
/// `hosts[p]` and `gpus[p]` are PE p's node and GPU; `gpu_heap` is false when the heaps are not
/// GPU memory (RO on NVIDIA: host memory), where sharing needs nothing. Err: init must fail.
pub fn check(hosts: &[&str], gpus: &[Option<GpuIdentity>], policy: Policy, gpu_heap: bool) -> Result<Verdict> {
    // Groups of PEs on one node and one GPU, in PE order.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (p, g) in gpus.iter().enumerate() {
        let Some(g) = g else { continue };
        match groups.iter_mut().find(|grp| {
            let q = grp[0];
            hosts[q] == hosts[p] && gpus[q].as_ref().is_some_and(|h| h.id == g.id)
        }) {
            Some(grp) => grp.push(p),
            None => groups.push(vec![p]),
        }
    }
    groups.retain(|g| g.len() > 1);
    if groups.is_empty() {
        return Ok(Verdict::Alone);
    }
    let name = |grp: &Vec<usize>| {
        let pes: Vec<String> = grp.iter().map(|p| p.to_string()).collect();
        let id = gpus[grp[0]].as_ref().map_or("", |g| g.id.as_str());
        format!("PEs {} share GPU {id} on {}", pes.join(", "), hosts[grp[0]])
    };
    let all: Vec<String> = groups.iter().map(name).collect();
    if policy == Policy::Never {
        return Err(Error::Unsupported(format!(
            "{} and ROCSHMEM_GPU_SHARING=none: give each PE its own GPU (fewer PEs per node, or \
             CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES per PE)",
            all.join("; ")
        )));
    }
    if !gpu_heap {
        return Ok(Verdict::Runs {
            line: format!(
                "{}; the heaps are host memory (RO backend), so the processes need not run concurrently",
                all.join("; ")
            ),
            warn: false,
        });
    }
    // The first group with a PE whose processes do not run concurrently, and that PE.
    let serial = groups.iter().find_map(|grp| {
        grp.iter().find(|p| gpus[**p].as_ref().and_then(|g| g.concurrent) != Some(true)).map(|p| (grp, *p))
    });
    let Some((grp, p)) = serial else {
        // Under MPS: shares that sum past 100 let one PE's kernel take every SM.
        let over: Vec<String> = groups
            .iter()
            .filter_map(|grp| {
                let shares: Vec<u32> = grp.iter().filter_map(|p| gpus[*p].as_ref()?.mps_share.map(u32::from)).collect();
                (shares.len() == grp.len() && shares.iter().sum::<u32>() > 100).then(|| {
                    let each: Vec<String> = shares.iter().map(|s| s.to_string()).collect();
                    format!("PEs {:?}: {}", grp, each.join(" + "))
                })
            })
            .collect();
        if !over.is_empty() {
            return Ok(Verdict::Runs {
                line: format!(
                    "{}; their processes run concurrently (MPS), but their CUDA_MPS_ACTIVE_THREAD_PERCENTAGE shares \
                     ({}) sum past 100: a kernel that fills the GPU while it waits for another PE's kernel waits \
                     forever; set it to 100 / (PEs per GPU) for every PE",
                    all.join("; "),
                    over.join("; ")
                ),
                warn: true,
            });
        }
        return Ok(Verdict::Runs {
            line: format!("{}; their processes run concurrently (MPS on NVIDIA)", all.join("; ")),
            warn: false,
        });
    };
    let g = gpus[p].as_ref().expect("grouped PEs have a GPU");
    let why = match g.concurrent {
        None => format!("PE {p} cannot tell whether MPS serves it ({})", g.note),
        _ => format!("PE {p}: {}", g.note),
    };
    if policy == Policy::Timeslice {
        return Ok(Verdict::Runs {
            line: format!(
                "{}; {why}; ROCSHMEM_GPU_SHARING=timeslice: the GPU time-slices between their processes, so a wait \
                 on another PE's kernel can take a time slice (milliseconds)",
                all.join("; ")
            ),
            warn: true,
        });
    }
    Err(Error::Unsupported(format!(
        "{} without MPS ({why}): start the MPS control daemon (nvidia-cuda-mps-control -d, with \
         CUDA_MPS_ACTIVE_THREAD_PERCENTAGE so the PEs' shares sum to 100), or run one PE per GPU, or \
         ROCSHMEM_BACKEND=ro (heaps in host memory), or ROCSHMEM_GPU_SHARING=timeslice to run time-sliced",
        name(grp)
    )))
}

/// This process's MPS share of the SMs: `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` (1 to 100; a
/// fraction is rounded up), 100 when unset or not a number (MPS then gives the client all SMs).
pub fn mps_share_from_env() -> u8 {
    std::env::var("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .map_or(100, |p| p.ceil() as u8)
}

/// Where an MPS control pipe would be (for the message when MPS does not serve the process).
pub fn mps_pipe_note() -> String {
    let dir = std::env::var("CUDA_MPS_PIPE_DIRECTORY")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/tmp/nvidia-mps".into());
    let control = format!("{dir}/control");
    if std::path::Path::new(&control).exists() {
        format!(
            "the driver reports no MPS, although {control} exists (a daemon of another user, or started after this process?)"
        )
    } else {
        format!("the driver reports no MPS and there is no MPS control pipe at {control}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(id: &str, c: Option<bool>) -> Option<GpuIdentity> {
        Some(GpuIdentity { id: id.into(), concurrent: c, note: "note".into(), mps_share: None })
    }

    #[test]
    fn identity_round_trips() {
        for c in [Some(true), Some(false), None] {
            for mps_share in [None, Some(0), Some(50), Some(100)] {
                let g = GpuIdentity { id: "GPU-0123".into(), concurrent: c, note: "why: here".into(), mps_share };
                assert_eq!(GpuIdentity::decode(&g.encode()).unwrap(), g);
            }
        }
        assert!(GpuIdentity::decode(&[1]).is_err());
        assert!(GpuIdentity::decode(&[1, 255, 9, b'x']).is_err());
    }

    #[test]
    fn fake_ids_parse() {
        assert_eq!(GpuIdentity::fake("").unwrap(), None);
        assert_eq!(GpuIdentity::fake("g0:mps").unwrap().unwrap().concurrent, Some(true));
        assert_eq!(GpuIdentity::fake("g0").unwrap().unwrap().concurrent, Some(false));
        assert_eq!(GpuIdentity::fake("a:b:unknown").unwrap().unwrap().id, "a:b");
        assert!(GpuIdentity::fake("g0:maybe").is_err());
        assert!(GpuIdentity::fake(":mps").is_err());
    }

    #[test]
    fn policy_parses() {
        assert_eq!(Policy::parse("").unwrap(), Policy::Mps);
        assert_eq!(Policy::parse(" TimeSlice ").unwrap(), Policy::Timeslice);
        assert_eq!(Policy::parse("none").unwrap(), Policy::Never);
        assert!(Policy::parse("always").is_err());
    }

    #[test]
    fn one_pe_per_gpu_or_no_gpu_is_alone() {
        let h = ["n0", "n0", "n1", "n1"];
        let g = [gpu("a", Some(false)), gpu("b", Some(false)), gpu("a", Some(false)), None];
        assert_eq!(check(&h, &g, Policy::Never, true).unwrap(), Verdict::Alone);
        assert_eq!(check(&h, &[None, None, None, None], Policy::Mps, true).unwrap(), Verdict::Alone);
    }

    #[test]
    fn sharing_under_mps_runs() {
        let h = ["n0"; 4];
        let g = [gpu("a", Some(true)), gpu("a", Some(true)), gpu("b", Some(false)), gpu("c", None)];
        match check(&h, &g, Policy::Mps, true).unwrap() {
            Verdict::Runs { line, warn } => {
                assert!(!warn);
                assert!(line.contains("PEs 0, 1 share GPU a on n0"), "{line}");
            }
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn sharing_without_mps_is_refused_with_the_remedies() {
        let h = ["n0"; 3];
        let g = [gpu("b", Some(false)), gpu("a", Some(true)), gpu("a", Some(false))];
        let e = check(&h, &g, Policy::Mps, true).unwrap_err().to_string();
        for want in [
            "PEs 1, 2 share GPU a on n0 without MPS (PE 2: note)",
            "nvidia-cuda-mps-control -d",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
            "one PE per GPU",
            "ROCSHMEM_BACKEND=ro",
            "ROCSHMEM_GPU_SHARING=timeslice",
        ] {
            assert!(e.contains(want), "missing '{want}' in: {e}");
        }
        assert!(!e.contains('\n'));
        // The driver cannot say: refused too, saying so.
        let u = check(&h[..2], &[gpu("a", Some(true)), gpu("a", None)], Policy::Mps, true).unwrap_err().to_string();
        assert!(u.contains("PE 1 cannot tell whether MPS serves it"), "{u}");
    }

    #[test]
    fn mps_shares_past_100_warn() {
        let h = ["n0"; 3];
        let with = |a: u8, b: u8| {
            [gpu("a", Some(true)), gpu("a", Some(true)), gpu("b", Some(true))]
                .into_iter()
                .zip([Some(a), Some(b), Some(100)])
                .map(|(g, s)| g.map(|g| GpuIdentity { mps_share: s, ..g }))
                .collect::<Vec<_>>()
        };
        assert!(matches!(check(&h, &with(50, 50), Policy::Mps, true).unwrap(), Verdict::Runs { warn: false, .. }));
        match check(&h, &with(100, 50), Policy::Mps, true).unwrap() {
            Verdict::Runs { line, warn: true } => assert!(line.contains("PEs [0, 1]: 100 + 50"), "{line}"),
            v => panic!("{v:?}"),
        }
        // AMD (no MPS share): nothing to sum.
        let amd = [gpu("a", Some(true)), gpu("a", Some(true))];
        assert!(matches!(check(&h[..2], &amd, Policy::Mps, true).unwrap(), Verdict::Runs { warn: false, .. }));
    }

    #[test]
    fn timeslice_runs_and_says_so_none_refuses_everything() {
        let h = ["n0"; 2];
        let g = [gpu("a", Some(false)), gpu("a", Some(false))];
        assert!(matches!(check(&h, &g, Policy::Timeslice, true).unwrap(), Verdict::Runs { warn: true, .. }));
        let mps = [gpu("a", Some(true)), gpu("a", Some(true))];
        let e = check(&h, &mps, Policy::Never, true).unwrap_err().to_string();
        assert!(e.contains("ROCSHMEM_GPU_SHARING=none"), "{e}");
    }

    #[test]
    fn host_memory_heaps_need_no_mps_and_other_nodes_do_not_count() {
        let g = [gpu("a", Some(false)), gpu("a", Some(false))];
        assert!(matches!(check(&["n0", "n0"], &g, Policy::Mps, false).unwrap(), Verdict::Runs { warn: false, .. }));
        // The same id on two nodes is two GPUs.
        assert_eq!(check(&["n0", "n1"], &g, Policy::Mps, true).unwrap(), Verdict::Alone);
    }
}
