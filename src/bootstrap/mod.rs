//! How PEs find each other.
//!
//! Every multi-PE path ends in the same TCP rendezvous ([`hub`], [`client`]); they differ only in
//! how the unique id reaches each PE:
//! - `rocshmem-run` hosts the hub and passes the id in `ROCSHMEM_RUN_UNIQUEID` ([`from_launcher`]);
//! - unique-id init: the application moves the 128 bytes itself;
//! - MPI (`mpi` feature): rank 0 makes the id and `MPI_Bcast`s it.
//!
//! With no launcher at all, the process is a single PE.

pub mod client;
pub mod hub;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod net;
pub mod uid;
pub mod wire;

use crate::env::Config;
use crate::error::{Error, Result};
use client::{AbortHook, HubClient};
use std::time::Duration;
use uid::UniqueId;

/// What this PE tells the others when it joins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeInfo {
    pub pid: u32,
    /// Node identity (`ROCSHMEM_BOOTSTRAP_HOSTID`, else the hostname): PEs with equal ids share
    /// memory (ROCSHMEM_TEAM_SHARED).
    pub host_id: String,
}

impl PeInfo {
    pub fn mine(cfg: &Config) -> PeInfo {
        let host_id = if cfg.bootstrap_hostid.is_empty() { hostname() } else { cfg.bootstrap_hostid.clone() };
        PeInfo { pid: std::process::id(), host_id }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.pid.to_be_bytes().to_vec();
        v.extend_from_slice(self.host_id.as_bytes());
        v
    }

    pub fn decode(b: &[u8]) -> Result<PeInfo> {
        if b.len() < 4 {
            return Err(Error::Bootstrap("PE info too short".into()));
        }
        Ok(PeInfo {
            pid: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            host_id: String::from_utf8_lossy(&b[4..]).into_owned(),
        })
    }
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// How `rocshmem_init*` asked to be started.
pub enum Method {
    /// `rocshmem_init()`: launcher, else MPI launcher, else a single PE.
    Auto,
    /// `rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, ...)`.
    UniqueId { rank: usize, nranks: usize, uid: Box<[u8]> },
    /// `rocshmem_init_attr(ROCSHMEM_INIT_WITH_MPI_COMM, ...)`; None means MPI_COMM_WORLD.
    MpiComm(Option<*mut std::ffi::c_void>),
}

/// The job as this PE sees it after the rendezvous.
pub struct Job {
    pub my_pe: usize,
    pub n_pes: usize,
    /// Random per job: names the job's shared-memory segments.
    pub job_tag: u64,
    pub infos: Vec<PeInfo>,
    /// How it was started, for rocshmem_info / logs.
    pub how: &'static str,
    link: Link,
}

#[allow(clippy::large_enum_variant)] // one per process
enum Link {
    Single,
    Hub {
        client: HubClient,
        // The hub thread, when this process hosts it (MPI rank 0).
        _hub: Option<hub::Hub>,
        /// The loaded MPI and the communicator the job was started on (MPI init only).
        #[cfg(feature = "mpi")]
        mpi: Option<(mpi::Mpi, mpi_sys::MPI_Comm)>,
    },
}

impl Job {
    /// All-gather of small blobs (init-time exchanges, not a data path).
    pub fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        match &self.link {
            Link::Single => Ok(vec![data.to_vec()]),
            Link::Hub { client, .. } => client.allgather(data),
        }
    }

    pub fn barrier(&self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }

    /// The last collective step of `rocshmem_finalize`; also finalises MPI if we initialised it.
    pub fn finalize(&self) -> Result<()> {
        match &self.link {
            Link::Single => Ok(()),
            Link::Hub { client, .. } => {
                let r = client.finalize();
                #[cfg(feature = "mpi")]
                if let Link::Hub { mpi: Some((m, _)), .. } = &self.link {
                    m.finalize_if_ours();
                }
                r
            }
        }
    }

    /// The loaded MPI and the communicator whose rank i is PE i, when the job was started
    /// through MPI (mpirun, or init with an MPI communicator).
    #[cfg(feature = "mpi")]
    pub fn mpi(&self) -> Option<(&mpi::Mpi, mpi_sys::MPI_Comm)> {
        match &self.link {
            Link::Hub { mpi: Some((m, c)), .. } => Some((m, *c)),
            _ => None,
        }
    }

    /// Tells the other PEs that this PE's init failed with `e` (not needed when `e` is another
    /// PE's failure: everyone knows it already).
    pub fn report_init_failure(&self, e: &Error) {
        if let (Link::Hub { client, .. }, false) = (&self.link, matches!(e, Error::PeerFailed(_))) {
            client.report_failure(e.to_string());
        }
    }

    /// Ends every PE of the job with `status`. Returns only if the job could not be reached, and
    /// then the caller exits alone.
    pub fn global_exit(&self, status: i32) {
        if let Link::Hub { client, .. } = &self.link {
            client.global_exit(status);
            // The hub's Abort arrives at our watcher, which exits this process; wait for it.
            std::thread::sleep(Duration::from_secs(2));
        }
    }
}

/// True when this process was started by an MPI launcher (Open MPI, MPICH/Hydra, PMIx).
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"].iter().any(|v| std::env::var_os(v).is_some())
}

/// This process's PE number as far as it is known before the rendezvous (for the prefix of
/// init's errors): the rank given to unique-id init, `ROCSHMEM_RUN_RANK` under rocshmem-run,
/// the world rank under an MPI launcher when the job is MPI's world.
pub fn rank_before_rendezvous(method: &Method) -> Option<usize> {
    let env_rank = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok());
    match method {
        Method::UniqueId { rank, .. } => Some(*rank),
        Method::MpiComm(Some(_)) => None,
        Method::Auto | Method::MpiComm(None) => {
            if let Some(crate::env::Value::Int(pe)) = crate::env::lookup("ROCSHMEM_RUN_RANK") {
                if pe >= 0 {
                    return usize::try_from(pe).ok();
                }
            }
            if !launched_by_mpi() {
                return None;
            }
            ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"].iter().find_map(|v| env_rank(v))
        }
    }
}

fn timeout(cfg: &Config) -> Duration {
    Duration::from_secs_f64(cfg.bootstrap_timeout.max(0.1))
}

/// Runs the rendezvous for `method` and returns the job.
pub fn start(method: Method, cfg: &Config, on_abort: AbortHook) -> Result<Job> {
    let info = PeInfo::mine(cfg);
    if info.encode().len() > wire::MAX_HELLO_INFO {
        return Err(Error::invalid(format!(
            "the node identity '{}...' is {} bytes long; at most {} are allowed: set a shorter \
             ROCSHMEM_BOOTSTRAP_HOSTID",
            info.host_id.chars().take(32).collect::<String>(),
            info.host_id.len(),
            wire::MAX_HELLO_INFO - 4
        )));
    }
    match method {
        Method::UniqueId { rank, nranks, uid } => {
            let uid = UniqueId::from_bytes(&uid)?;
            join(&uid, rank, nranks, info, cfg, on_abort, None, "unique id")
        }
        Method::MpiComm(comm) => {
            // Under rocshmem-run with no MPI launcher, every communicator holds this process
            // alone (an MPI singleton). Programs built against rocSHMEM 2.x pass one without
            // asking (their `rocshmem_init()` is `rocshmem_init(MPI_Comm = MPI_COMM_WORLD)`),
            // and each PE would silently be a job of one: the job is rocshmem-run's.
            if !cfg.run_uniqueid.is_empty() && !launched_by_mpi() {
                crate::log_info!(
                    "rocshmem_init",
                    "an MPI communicator was given under rocshmem-run without an MPI launcher: it can only \
                     hold this process, so the PEs are rocshmem-run's job"
                );
                return from_launcher(info, cfg, on_abort);
            }
            start_mpi(comm, info, cfg, on_abort)
        }
        Method::Auto => {
            if !cfg.run_uniqueid.is_empty() {
                return from_launcher(info, cfg, on_abort);
            }
            if launched_by_mpi() {
                return start_mpi(None, info, cfg, on_abort);
            }
            single(info)
        }
    }
}

fn single(info: PeInfo) -> Result<Job> {
    let mut tag = [0u8; 8];
    uid::random_bytes(&mut tag)?;
    Ok(Job {
        my_pe: 0,
        n_pes: 1,
        job_tag: u64::from_be_bytes(tag),
        infos: vec![info],
        how: "single PE",
        link: Link::Single,
    })
}

/// The environment `rocshmem-run` gives each child.
fn from_launcher(info: PeInfo, cfg: &Config, on_abort: AbortHook) -> Result<Job> {
    let uid = UniqueId::from_hex(&cfg.run_uniqueid)?;
    let (rank, nranks) = (cfg.run_rank, cfg.run_nranks);
    if nranks < 1 || rank < 0 || rank >= nranks {
        return Err(Error::Bootstrap(format!(
            "ROCSHMEM_RUN_RANK={rank} / ROCSHMEM_RUN_NRANKS={nranks} are inconsistent (set by rocshmem-run; \
             do not set them by hand)"
        )));
    }
    join(&uid, rank as usize, nranks as usize, info, cfg, on_abort, None, "rocshmem-run")
}

#[allow(clippy::too_many_arguments)]
fn join(
    uid: &UniqueId,
    rank: usize,
    nranks: usize,
    info: PeInfo,
    cfg: &Config,
    on_abort: AbortHook,
    hub: Option<hub::Hub>,
    how: &'static str,
) -> Result<Job> {
    let client = HubClient::join(uid, rank, nranks, info.encode(), timeout(cfg), on_abort)?;
    let infos = client.infos.iter().map(|b| PeInfo::decode(b)).collect::<Result<Vec<_>>>()?;
    Ok(Job {
        my_pe: rank,
        n_pes: nranks,
        job_tag: uid.job_tag,
        infos,
        how,
        link: Link::Hub {
            client,
            _hub: hub,
            #[cfg(feature = "mpi")]
            mpi: None,
        },
    })
}

/// Starts a hub in this process and returns its id (`rocshmem_get_uniqueid`).
pub fn new_unique_id(cfg: &Config) -> Result<UniqueId> {
    let family = net::parse_family(&cfg.bootstrap_socket_family)?;
    let ip = net::listen_ip(&cfg.bootstrap_socket_ifname, family)?;
    let hub = hub::Hub::start(ip, None, timeout(cfg))?;
    let uid = hub.uid;
    // The hub thread runs on its own; the handle is not needed to keep it alive.
    drop(hub);
    Ok(uid)
}

#[cfg(feature = "mpi")]
fn start_mpi(comm: Option<*mut std::ffi::c_void>, info: PeInfo, cfg: &Config, on_abort: AbortHook) -> Result<Job> {
    let m = mpi::Mpi::load(&cfg.mpi_library)?;
    // SAFETY: the caller passed a pointer to an MPI_Comm (rocshmem_init_attr_t::mpi_comm).
    let comm = match comm {
        Some(p) if !p.is_null() => unsafe { m.comm_at(p) },
        _ => m.world(),
    };
    let (rank, size) = m.rank_size(comm)?;
    crate::log::set_pe(rank as i32);
    let mut bytes = [0u8; uid::UID_BYTES];
    let mut hub = None;
    if rank == 0 {
        let family = net::parse_family(&cfg.bootstrap_socket_family)?;
        // Ranks may be on other hosts: listen where they can reach us unless told otherwise.
        let ip = if cfg.bootstrap_socket_ifname.is_empty() && size > 1 {
            net::listen_ip("", family)?
        } else {
            net::listen_ip(&cfg.bootstrap_socket_ifname, family)?
        };
        let h = hub::Hub::start(ip, Some(size as u32), timeout(cfg))?;
        bytes = h.uid.to_bytes();
        hub = Some(h);
    }
    m.bcast(&mut bytes, 0, comm)?;
    let uid = UniqueId::from_bytes(&bytes)?;
    let mut job = join(&uid, rank, size, info, cfg, on_abort, hub, "MPI")?;
    if let Link::Hub { mpi, .. } = &mut job.link {
        *mpi = Some((m, comm));
    }
    Ok(job)
}

#[cfg(not(feature = "mpi"))]
fn start_mpi(_comm: Option<*mut std::ffi::c_void>, _info: PeInfo, _cfg: &Config, _on_abort: AbortHook) -> Result<Job> {
    Err(Error::Unsupported(
        "this librocshmem was built without the `mpi` feature, so it cannot start under mpirun or from an \
         MPI communicator; rebuild with `--features mpi`, or use rocshmem-run / unique-id init"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pe_info_round_trips() {
        let i = PeInfo { pid: 4242, host_id: "node-7".into() };
        assert_eq!(PeInfo::decode(&i.encode()).unwrap(), i);
        assert!(PeInfo::decode(&[1, 2]).is_err());
    }

    fn panic_hook() -> AbortHook {
        Arc::new(|status, reason, _| panic!("abort {status}: {reason}"))
    }

    /// Four PEs (threads) join one hub, all-gather, and say goodbye.
    #[test]
    fn hub_joins_gathers_and_finalizes() {
        let hub = hub::Hub::start("127.0.0.1".parse().unwrap(), None, Duration::from_secs(5)).unwrap();
        let uid = hub.uid;
        let handles: Vec<_> = (0..4)
            .map(|r| {
                std::thread::spawn(move || {
                    let c = HubClient::join(
                        &uid,
                        r,
                        4,
                        format!("pe{r}").into_bytes(),
                        Duration::from_secs(5),
                        panic_hook(),
                    )
                    .unwrap();
                    assert_eq!(c.infos.len(), 4);
                    assert_eq!(c.infos[3], b"pe3");
                    for round in 0..3u8 {
                        let parts = c.allgather(&[r as u8, round]).unwrap();
                        for (k, p) in parts.iter().enumerate() {
                            assert_eq!(p, &[k as u8, round]);
                        }
                    }
                    c.finalize().unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(hub.is_over());
    }

    #[test]
    fn wrong_secret_is_refused() {
        let hub = hub::Hub::start("127.0.0.1".parse().unwrap(), Some(2), Duration::from_secs(5)).unwrap();
        let mut forged = hub.uid;
        forged.secret[0] ^= 1;
        let e = HubClient::join(&forged, 0, 2, vec![], Duration::from_secs(2), panic_hook()).err().unwrap().to_string();
        assert!(e.contains("wrong secret"), "{e}");
    }

    #[test]
    fn missing_pe_times_out_with_its_number() {
        let hub = hub::Hub::start("127.0.0.1".parse().unwrap(), None, Duration::from_millis(300)).unwrap();
        let e = HubClient::join(&hub.uid, 0, 2, vec![], Duration::from_millis(300), panic_hook())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("[1]") && e.contains("ROCSHMEM_BOOTSTRAP_TIMEOUT"), "{e}");
    }

    #[test]
    fn disconnect_aborts_the_others() {
        let hub = hub::Hub::start("127.0.0.1".parse().unwrap(), None, Duration::from_secs(5)).unwrap();
        let uid = hub.uid;
        let (tx, rx) = std::sync::mpsc::channel::<(i32, String)>();
        let tx = std::sync::Mutex::new(tx);
        let hook: AbortHook = Arc::new(move |s, r, _| {
            let _ = tx.lock().unwrap().send((s, r));
        });
        let h2 = hook.clone();
        let survivor =
            std::thread::spawn(move || HubClient::join(&uid, 0, 2, vec![], Duration::from_secs(5), h2).unwrap());
        let doomed = HubClient::join(&uid, 1, 2, vec![], Duration::from_secs(5), hook).unwrap();
        let survivor = survivor.join().unwrap();
        drop(doomed); // the socket closes without Finalize
        let (status, reason) = rx.recv_timeout(Duration::from_secs(5)).expect("abort reaches the survivor");
        assert_eq!(status, 1);
        assert!(reason.contains("PE 1 disconnected"), "{reason}");
        drop(survivor);
    }
}
