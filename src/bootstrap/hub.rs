//! The rendezvous hub: a TCP listener every PE of a job connects to.
//!
//! It lives in the process that made the unique id (`rocshmem_get_uniqueid`, usually PE 0), or
//! in `rocshmem-run`. It admits PEs that present the id's secret, tells everyone about everyone
//! once all joined (or tells them it timed out), runs the few all-gathers init and finalize
//! need, and watches the connections: a PE that disconnects before `rocshmem_finalize` makes
//! the hub tell every other PE to stop, so nobody waits forever for a dead peer.

use super::uid::UniqueId;
use super::wire::{Deadline, MAX_HELLO, Msg, PROTOCOL};
use crate::error::{Error, Result};
use crate::watchdog::Ask;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the hub waits after a PE disconnected before it tells the others (see `serve`).
const DISCONNECT_GRACE: Duration = Duration::from_millis(250);
/// Connections that have not presented the secret yet, at most: a new connection beyond it
/// closes the oldest of them. A PE sends its Hello right after connecting, so a legitimate
/// connection leaves this set at once, and idle connections (an attack, a port scanner) cannot
/// keep PEs out: they are the oldest.
pub const MAX_UNAUTHENTICATED: usize = 256;

/// How long a connection may take to send its Hello: the bootstrap timeout, within 1 to 10 s.
fn hello_deadline(timeout: Duration) -> Duration {
    timeout.clamp(Duration::from_secs(1), Duration::from_secs(10))
}

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
    /// Accepted connections whose Hello has not been handled yet, oldest first (id, socket).
    unauthenticated: Mutex<std::collections::VecDeque<(usize, TcpStream)>>,
    next_conn: AtomicUsize,
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
    /// A report of where every PE waits is being gathered (a PE asked: see `watchdog::Ask`).
    round: Option<Round>,
    /// When the last report round that was sent back (not one that ended the job) began: a wait
    /// in progress then is in that report, and does not get another.
    last_report: Option<Instant>,
}

/// A report round: the strongest ask so far, who asked for a report, what each PE answered.
struct Round {
    ask: Ask,
    began: Instant,
    reporters: Vec<usize>,
    answers: Vec<Option<String>>,
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

/// The hubs this process hosts, so that it does not exit in the middle of one's broadcast.
static HOSTED: Mutex<Vec<std::sync::Weak<Shared>>> = Mutex::new(Vec::new());

/// Before this process exits: lets a broadcast of a hub it hosts finish (the job's end goes out
/// to every PE under the hub's lock; a PE that exits on receiving it may host the hub: MPI rank
/// 0, the process that made a unique id). Waits at most `limit`.
pub fn settle_hosted(limit: Duration) {
    let hubs: Vec<Arc<Shared>> =
        HOSTED.lock().unwrap_or_else(|e| e.into_inner()).iter().filter_map(std::sync::Weak::upgrade).collect();
    let t0 = Instant::now();
    for h in hubs {
        while h.state.try_lock().is_err() && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(1));
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
        let shared = Arc::new(Shared {
            secret: uid.secret,
            timeout,
            state: Mutex::new(state),
            unauthenticated: Mutex::new(std::collections::VecDeque::new()),
            next_conn: AtomicUsize::new(0),
        });
        HOSTED.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(&shared));
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

    /// Which PEs have joined the job (a launcher's PE that has not is not told when the job
    /// ends: the launcher stops it).
    pub fn joined(&self) -> Vec<bool> {
        self.shared.state.lock().unwrap().infos.iter().map(Option::is_some).collect()
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
                let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
                {
                    let mut pending = shared.unauthenticated.lock().unwrap();
                    while pending.len() >= MAX_UNAUTHENTICATED {
                        // Its thread's read ends, and the thread with it.
                        let (_, oldest) = pending.pop_front().unwrap();
                        let _ = oldest.shutdown(std::net::Shutdown::Both);
                    }
                    if let Ok(s) = stream.try_clone() {
                        pending.push_back((id, s));
                    }
                }
                let s2 = shared.clone();
                let spawned =
                    std::thread::Builder::new().name("rocshmem-hub-conn".into()).spawn(move || serve(s2, stream, id));
                if spawned.is_err() {
                    shared.unauthenticated.lock().unwrap().retain(|(i, _)| *i != id);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// How long the hub waits for every PE to say what it waits in before it reports.
const HANG_ANSWERS: Duration = Duration::from_secs(2);

impl State {
    /// PE `rank` asks for a report round (or answers the current one): starts a round unless
    /// one is running (the stronger ask wins: ending the job beats a report) or, for a report,
    /// unless a report made while this PE's wait was already in progress exists.
    fn status(&mut self, shared: &Arc<Shared>, rank: usize, ask: Ask, waited: Duration, report: String) {
        if self.over {
            return;
        }
        let covered = self.last_report.is_some_and(|t| t.elapsed() < waited);
        if ask == Ask::Report && covered && self.round.is_none() {
            return;
        }
        if ask != Ask::Answer && self.round.is_none() {
            // Ask everyone what they wait in; a PE that cannot answer (stopped, or gone) is
            // named as such when the round ends.
            let n = self.infos.len();
            self.round = Some(Round { ask, began: Instant::now(), reporters: Vec::new(), answers: vec![None; n] });
            self.broadcast(&Msg::Query);
            let s2 = Arc::clone(shared);
            let _ = std::thread::Builder::new().name("rocshmem-hub-hang".into()).spawn(move || hang_round(s2));
        }
        if let Some(round) = self.round.as_mut() {
            round.ask = round.ask.max(ask);
            if ask == Ask::Report && !covered {
                round.reporters.push(rank);
            }
            round.answers[rank] = Some(report);
        }
    }
}

/// Ends a report round once every PE answered the hub's `Query` (or `HANG_ANSWERS` passed): the
/// report, "PE 0 waits in ...; PE 1 ...", goes back to the first PE that asked for it, or ends
/// the job (hang timeout, Ctrl-C) with it as the reason.
fn hang_round(shared: Arc<Shared>) {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let mut st = shared.state.lock().unwrap();
        let Some(round) = &st.round else { return };
        if !(round.answers.iter().all(Option::is_some) || round.began.elapsed() >= HANG_ANSWERS) {
            continue;
        }
        let round = st.round.take().expect("a round");
        let parts: Vec<String> = round
            .answers
            .iter()
            .enumerate()
            .map(|(pe, a)| match a {
                Some(report) => format!("PE {pe} {report}"),
                None => format!("PE {pe} did not answer (stopped, or not running)"),
            })
            .collect();
        let parts = parts.join("; ");
        match round.ask {
            Ask::Stop => {
                st.abort(1, -1, format!("a wait passed ROCSHMEM_HANG_TIMEOUT, so the job is stopped: {parts}"))
            }
            Ask::Interrupt | Ask::Terminate => {
                let (status, what) = round.ask.signal().expect("a signal's ask");
                st.abort(status, -1, format!("{what}: {parts}"))
            }
            Ask::Report | Ask::Answer => {
                st.last_report = Some(round.began);
                let to = round.reporters.first().and_then(|r| st.writers[*r].as_mut());
                if let Some(w) = to {
                    let _ = std::io::Write::write_all(w, &Msg::Report { text: parts }.encode());
                }
            }
        }
        return;
    }
}

/// Takes a connection out of the unauthenticated ones when its Hello has been handled.
struct Admission<'a>(&'a Shared, usize);

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        self.0.unauthenticated.lock().unwrap_or_else(|e| e.into_inner()).retain(|(i, _)| *i != self.1);
    }
}

/// One PE's connection: admission, then its requests until it leaves.
fn serve(shared: Arc<Shared>, mut stream: TcpStream, id: usize) {
    let admission = Admission(&shared, id);
    let Some(rank) = admit(&shared, &stream) else { return };
    drop(admission);
    let _ = stream.set_read_timeout(None);
    requests(&shared, &mut stream, rank);
}

/// Reads the connection's Hello (before the secret is checked: one frame, no larger than a
/// Hello, within a deadline) and admits the PE, or refuses it saying why. Returns its rank;
/// None when it was refused or was not a PE.
fn admit(shared: &Arc<Shared>, stream: &TcpStream) -> Option<usize> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let refuse = |mut s: &TcpStream, reason: String| {
        let _ = Msg::Refuse { reason }.write_to(&mut s);
    };
    // Before the secret is checked: one frame, no larger than a Hello, within a deadline.
    let deadline = Instant::now() + hello_deadline(shared.timeout);
    let hello = Msg::read_capped(&mut Deadline { stream, deadline }, MAX_HELLO);
    match hello {
        Ok(Some(Msg::Hello { protocol, rank, nranks, secret, info })) => {
            if secret != shared.secret {
                refuse(stream, "wrong secret: this unique id belongs to another job".into());
                return None;
            }
            if protocol != PROTOCOL {
                refuse(stream, format!("bootstrap protocol {protocol} != {PROTOCOL}: mixed rocSHMEM versions"));
                return None;
            }
            let mut st = shared.state.lock().unwrap();
            if st.over {
                refuse(stream, "this job already ended".into());
                return None;
            }
            if st.nranks.is_none() {
                if nranks == 0 {
                    refuse(stream, "nranks must be at least 1".into());
                    return None;
                }
                st.nranks = Some(nranks);
                st.size_for(nranks as usize);
            }
            let expected = st.nranks.unwrap();
            if nranks != expected {
                refuse(stream, format!("PE {rank} says the job has {nranks} PEs, others say {expected}"));
                return None;
            }
            if rank >= expected {
                refuse(stream, format!("rank {rank} is outside 0..{}", expected - 1));
                return None;
            }
            let r = rank as usize;
            if st.infos[r].is_some() {
                refuse(stream, format!("rank {rank} joined twice"));
                return None;
            }
            let Ok(writer) = stream.try_clone() else { return None };
            st.writers[r] = Some(writer);
            st.infos[r] = Some(info);
            st.joined += 1;
            st.first_hello.get_or_insert_with(Instant::now);
            if st.joined == expected as usize {
                st.welcomed = true;
                let infos: Vec<Vec<u8>> = st.infos.iter().map(|i| i.clone().unwrap()).collect();
                st.broadcast(&Msg::Welcome { infos });
            }
            Some(r)
        }
        _ => None, // not a PE, too slow, or it gave up: nothing to clean
    }
}

/// A PE's requests after its admission, until it leaves (finalize, exit, or disconnection).
fn requests(shared: &Arc<Shared>, stream: &mut TcpStream, rank: usize) {
    loop {
        let msg = Msg::read_from(stream);
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
            Ok(Some(Msg::Failed { reason })) => {
                st.abort(1, rank as i32, format!("PE {rank} failed in rocshmem_init: {reason}"));
            }
            Ok(Some(Msg::Status { ask, waited_ms, report })) => {
                st.status(shared, rank, ask, Duration::from_millis(waited_ms), report);
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
