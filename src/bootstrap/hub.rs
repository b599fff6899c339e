//! The rendezvous hub: a TCP listener every PE of a job connects to.
//!
//! It lives in the process that made the unique id (`rocshmem_get_uniqueid`, usually PE 0), or
//! in `rocshmem-run`. It admits PEs that present the id's secret, tells everyone about everyone
//! once all joined (or tells them it timed out), runs the few all-gathers init and finalize
//! need, and watches the connections: a PE that disconnects before `rocshmem_finalize` makes
//! the hub tell every other PE to stop, so nobody waits forever for a dead peer.

use super::uid::UniqueId;
use super::wire::{Msg, PROTOCOL};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the hub waits after a PE disconnected before it tells the others (see `serve`).
const DISCONNECT_GRACE: Duration = Duration::from_millis(250);

/// Handle on a running hub.
#[derive(Clone)]
pub struct Hub {
    shared: Arc<Shared>,
    pub uid: UniqueId,
}

struct Shared {
    secret: [u8; 16],
    timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    nranks: Option<u32>,
    writers: Vec<Option<TcpStream>>,
    infos: Vec<Option<Vec<u8>>>,
    joined: usize,
    welcomed: bool,
    first_hello: Option<Instant>,
    gathers: HashMap<u64, Vec<Option<Vec<u8>>>>,
    finalized: Vec<bool>,
    /// The job ended (everyone said goodbye, or it was aborted): ignore later events.
    over: bool,
}

impl State {
    fn missing(&self) -> Vec<usize> {
        (0..self.infos.len()).filter(|r| self.infos[*r].is_none()).collect()
    }

    fn broadcast(&mut self, msg: &Msg) {
        let frame = msg.encode();
        for w in self.writers.iter_mut().flatten() {
            let _ = std::io::Write::write_all(w, &frame);
        }
    }

    fn abort(&mut self, status: i32, pe: i32, reason: String) {
        if self.over {
            return;
        }
        self.over = true;
        self.broadcast(&Msg::Abort { status, pe, reason });
        for w in self.writers.iter().flatten() {
            let _ = w.shutdown(std::net::Shutdown::Write);
        }
    }
}

impl Hub {
    /// Starts a hub listening on `ip` (kernel-chosen port). `nranks` is known to a launcher and
    /// unknown (None) to `rocshmem_get_uniqueid`, where the first PE to join sets it.
    pub fn start(ip: std::net::IpAddr, nranks: Option<u32>, timeout: Duration) -> Result<Hub> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0))
            .map_err(|e| Error::io(format!("bootstrap: listening on {ip}"), e))?;
        let addr = listener.local_addr().map_err(|e| Error::io("bootstrap: local address", e))?;
        let uid = UniqueId::new(addr)?;
        let mut state = State { nranks, ..Default::default() };
        if let Some(n) = nranks {
            state.size_for(n as usize);
        }
        let shared = Arc::new(Shared { secret: uid.secret, timeout, state: Mutex::new(state) });
        let s2 = shared.clone();
        std::thread::Builder::new()
            .name("rocshmem-hub".into())
            .spawn(move || accept_loop(s2, listener))
            .map_err(|e| Error::io("bootstrap: starting the hub thread", e))?;
        Ok(Hub { shared, uid })
    }

    /// Ends the job from outside (the launcher saw a PE die before it joined).
    pub fn abort(&self, status: i32, pe: i32, reason: String) {
        self.shared.state.lock().unwrap().abort(status, pe, reason);
    }

    /// True once every PE said goodbye or the job was aborted.
    pub fn is_over(&self) -> bool {
        self.shared.state.lock().unwrap().over
    }
}

impl State {
    fn size_for(&mut self, n: usize) {
        self.writers = (0..n).map(|_| None).collect();
        self.infos = vec![None; n];
        self.finalized = vec![false; n];
    }
}

fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let _ = listener.set_nonblocking(true);
    loop {
        {
            let mut st = shared.state.lock().unwrap();
            if st.welcomed || st.over {
                return; // everyone is in: stop listening, late connections are refused by the kernel
            }
            if let Some(t0) = st.first_hello {
                if t0.elapsed() > shared.timeout {
                    let missing = st.missing();
                    let reason = format!(
                        "timed out after {:.1} s waiting for PE(s) {:?} of {} to join; start every PE, \
                         or raise ROCSHMEM_BOOTSTRAP_TIMEOUT",
                        shared.timeout.as_secs_f64(),
                        missing,
                        st.infos.len()
                    );
                    st.abort(1, -1, reason);
                    return;
                }
            }
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let s2 = shared.clone();
                let _ = std::thread::Builder::new().name("rocshmem-hub-conn".into()).spawn(move || serve(s2, stream));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// One PE's connection: admission, then its requests until it leaves.
fn serve(shared: Arc<Shared>, mut stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(shared.timeout.max(Duration::from_secs(1))));
    let refuse = |mut s: &TcpStream, reason: String| {
        let _ = Msg::Refuse { reason }.write_to(&mut s);
    };
    let rank = match Msg::read_from(&mut stream) {
        Ok(Some(Msg::Hello { protocol, rank, nranks, secret, info })) => {
            if secret != shared.secret {
                refuse(&stream, "wrong secret: this unique id belongs to another job".into());
                return;
            }
            if protocol != PROTOCOL {
                refuse(&stream, format!("bootstrap protocol {protocol} != {PROTOCOL}: mixed rocSHMEM versions"));
                return;
            }
            let mut st = shared.state.lock().unwrap();
            if st.over {
                refuse(&stream, "this job already ended".into());
                return;
            }
            if st.nranks.is_none() {
                if nranks == 0 {
                    refuse(&stream, "nranks must be at least 1".into());
                    return;
                }
                st.nranks = Some(nranks);
                st.size_for(nranks as usize);
            }
            let expected = st.nranks.unwrap();
            if nranks != expected {
                refuse(&stream, format!("PE {rank} says the job has {nranks} PEs, others say {expected}"));
                return;
            }
            if rank >= expected {
                refuse(&stream, format!("rank {rank} is outside 0..{}", expected - 1));
                return;
            }
            let r = rank as usize;
            if st.infos[r].is_some() {
                refuse(&stream, format!("rank {rank} joined twice"));
                return;
            }
            let Ok(writer) = stream.try_clone() else { return };
            st.writers[r] = Some(writer);
            st.infos[r] = Some(info);
            st.joined += 1;
            st.first_hello.get_or_insert_with(Instant::now);
            if st.joined == expected as usize {
                st.welcomed = true;
                let infos: Vec<Vec<u8>> = st.infos.iter().map(|i| i.clone().unwrap()).collect();
                st.broadcast(&Msg::Welcome { infos });
            }
            r
        }
        _ => return, // not a PE, or it gave up: nothing to clean
    };
    let _ = stream.set_read_timeout(None);
    loop {
        let msg = Msg::read_from(&mut stream);
        let mut st = shared.state.lock().unwrap();
        match msg {
            Ok(Some(Msg::Gather { seq, data })) => {
                let n = st.infos.len();
                let slot = st.gathers.entry(seq).or_insert_with(|| vec![None; n]);
                slot[rank] = Some(data);
                if slot.iter().all(Option::is_some) {
                    let parts = st.gathers.remove(&seq).unwrap().into_iter().map(Option::unwrap).collect();
                    st.broadcast(&Msg::Gathered { seq, parts });
                }
            }
            Ok(Some(Msg::Exit { status })) => {
                st.abort(status, rank as i32, format!("PE {rank} called rocshmem_global_exit({status})"));
            }
            Ok(Some(Msg::Finalize)) => {
                st.finalized[rank] = true;
                if st.finalized.iter().all(|f| *f) && !st.over {
                    st.broadcast(&Msg::Bye);
                    st.over = true;
                }
            }
            Ok(Some(other)) => {
                let reason = format!("PE {rank} sent an unexpected bootstrap message {other:?}");
                st.abort(1, rank as i32, reason);
                return;
            }
            Ok(None) | Err(_) => {
                if !st.finalized[rank] && !st.over {
                    // Give a launcher hosting this hub (rocshmem-run) time to see the PE's own
                    // exit status first and end the job with it: otherwise the others, told at
                    // once, may exit before it is reaped, and the job's status would be theirs
                    // (1), not the dead PE's.
                    drop(st);
                    std::thread::sleep(DISCONNECT_GRACE);
                    st = shared.state.lock().unwrap();
                }
                if !st.finalized[rank] {
                    let reason = if st.welcomed {
                        format!("PE {rank} disconnected (exited or was killed) before rocshmem_finalize")
                    } else {
                        format!("PE {rank} disconnected during rocshmem_init")
                    };
                    st.abort(1, rank as i32, reason);
                }
                st.writers[rank] = None;
                return;
            }
        }
    }
}
