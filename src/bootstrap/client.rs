//! A PE's side of the rendezvous: join the hub, all-gather through it, and watch it.
//!
//! After the join a reader thread owns the socket. Replies go to the caller through a channel;
//! an `Abort` from the hub, or losing the hub before `Bye`, calls the abort hook, which ends
//! this process (a peer died or called `rocshmem_global_exit`).

use super::uid::UniqueId;
use super::wire::{Msg, PROTOCOL};
use crate::error::{Error, Result};
use crate::watchdog::Ask;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvError, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Called from the reader thread when the job must end: (exit status, one-line reason, whether
/// the reason is an error worth printing).
pub type AbortHook = Arc<dyn Fn(i32, String, bool) + Send + Sync>;

pub struct HubClient {
    pub rank: usize,
    pub nranks: usize,
    /// What each rank sent when it joined.
    pub infos: Vec<Vec<u8>>,
    writer: Arc<Mutex<TcpStream>>,
    replies: Mutex<Receiver<Msg>>,
    seq: AtomicU64,
    leaving: Arc<AtomicBool>,
    /// Why the watcher stopped (an abort from the hub, or the hub vanished), for the error of a
    /// call that was waiting for a reply (during init the abort hook does not end the process).
    ended: Arc<Mutex<Option<String>>>,
}

impl HubClient {
    /// Joins the job described by `uid` as `rank` of `nranks`, waiting up to `timeout` for all.
    pub fn join(
        uid: &UniqueId,
        rank: usize,
        nranks: usize,
        info: Vec<u8>,
        timeout: Duration,
        on_abort: AbortHook,
    ) -> Result<HubClient> {
        if nranks == 0 || rank >= nranks {
            return Err(Error::invalid(format!("rank {rank} is outside 0..{nranks}")));
        }
        let deadline = Instant::now() + timeout;
        let mut stream = connect_until(uid.addr, deadline)?;
        let _ = stream.set_nodelay(true);
        Msg::Hello { protocol: PROTOCOL, rank: rank as u32, nranks: nranks as u32, secret: uid.secret, info }
            .write_to(&mut stream)
            .map_err(|e| Error::io("bootstrap: sending hello", e))?;
        // The hub enforces the timeout and says so; our own limit only covers a hub that vanished.
        let _ = stream.set_read_timeout(Some(timeout + Duration::from_secs(2)));
        let infos = match Msg::read_from(&mut stream) {
            Ok(Some(Msg::Welcome { infos })) if infos.len() == nranks => infos,
            Ok(Some(Msg::Refuse { reason })) => {
                return Err(Error::Bootstrap(format!("the rendezvous refused PE {rank}: {reason}")));
            }
            Ok(Some(Msg::Abort { reason, .. })) => return Err(Error::Bootstrap(reason)),
            Ok(Some(other)) => return Err(Error::Bootstrap(format!("unexpected reply to hello: {other:?}"))),
            Ok(None) => return Err(Error::Bootstrap("the rendezvous closed the connection during init".into())),
            Err(e) => {
                return Err(Error::Bootstrap(format!(
                    "no answer from the rendezvous at {} within {:.1} s ({e}); are all PEs started? \
                     (ROCSHMEM_BOOTSTRAP_TIMEOUT)",
                    uid.addr,
                    timeout.as_secs_f64()
                )));
            }
        };
        let _ = stream.set_read_timeout(None);
        let reader = stream.try_clone().map_err(|e| Error::io("bootstrap: socket clone", e))?;
        let (tx, rx) = channel();
        let leaving = Arc::new(AtomicBool::new(false));
        let l2 = leaving.clone();
        let ended = Arc::new(Mutex::new(None));
        let e2 = ended.clone();
        let writer = Arc::new(Mutex::new(stream));
        let w2 = writer.clone();
        std::thread::Builder::new()
            .name("rocshmem-watch".into())
            .spawn(move || watch(reader, w2, tx, l2, e2, on_abort))
            .map_err(|e| Error::io("bootstrap: starting the watcher thread", e))?;
        // Asks for hang reports (and Ctrl-C's) go to the hub over this connection.
        let w3 = writer.clone();
        crate::watchdog::set_sink(Some(Arc::new(move |ask, waited, report| {
            send_on(&w3, Msg::Status { ask, waited_ms: waited.as_millis() as u64, report }).is_ok()
        })));
        Ok(HubClient { rank, nranks, infos, writer, replies: Mutex::new(rx), seq: AtomicU64::new(0), leaving, ended })
    }

    /// The error for a reply that will never come.
    fn lost(&self, during: &str) -> Error {
        match self.ended.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            Some(reason) => Error::PeerFailed(reason),
            None => Error::Bootstrap(format!("lost the rendezvous connection{during}")),
        }
    }

    fn send(&self, msg: Msg) -> Result<()> {
        send_on(&self.writer, msg)
    }

    /// Waits for the hub's next reply, watched by the hang watchdog.
    fn reply(&self, replies: &Receiver<Msg>) -> std::result::Result<Msg, RecvError> {
        let Some(mut wait) = crate::watchdog::Wait::begin(Instant::now()) else { return replies.recv() };
        loop {
            match replies.recv_timeout(Duration::from_millis(100)) {
                Ok(m) => return Ok(m),
                Err(RecvTimeoutError::Timeout) => wait.check(),
                Err(RecvTimeoutError::Disconnected) => return Err(RecvError),
            }
        }
    }

    /// Tells the hub that this PE's init failed and why, so that the hub ends the job with that
    /// reason for every PE (instead of "PE n disconnected").
    pub fn report_failure(&self, reason: String) {
        if self.send(Msg::Failed { reason }).is_err() {
            return;
        }
        // The hub answers with the Abort it sends everyone: wait for it (briefly), so that this
        // process, which may host the hub, does not exit before the others were told.
        let t0 = Instant::now();
        while self.ended.lock().unwrap_or_else(|e| e.into_inner()).is_none() && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Every rank contributes `data`; everyone gets all contributions in rank order. Blocks
    /// until all ranks call it (a dead rank ends the job through the abort hook instead).
    pub fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let replies = self.replies.lock().unwrap();
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        self.send(Msg::Gather { seq, data: data.to_vec() })?;
        match self.reply(&replies) {
            Ok(Msg::Gathered { seq: s, parts }) if s == seq && parts.len() == self.nranks => Ok(parts),
            Ok(other) => Err(Error::Bootstrap(format!("unexpected bootstrap reply {other:?}"))),
            Err(_) => Err(self.lost("")),
        }
    }

    pub fn barrier(&self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }

    /// Tells the hub this PE is done and waits until every PE is (the last collective step).
    pub fn finalize(&self) -> Result<()> {
        let replies = self.replies.lock().unwrap();
        self.leaving.store(true, Ordering::SeqCst);
        self.send(Msg::Finalize)?;
        match self.reply(&replies) {
            Ok(Msg::Bye) => Ok(()),
            Ok(other) => Err(Error::Bootstrap(format!("unexpected reply to finalize: {other:?}"))),
            Err(_) => Err(self.lost(" during finalize")),
        }
    }

    /// Asks the hub to end the whole job with `status`. The hub's answer reaches the abort hook,
    /// which exits this process too.
    pub fn global_exit(&self, status: i32) {
        let _ = self.send(Msg::Exit { status });
    }
}

fn send_on(writer: &Mutex<TcpStream>, msg: Msg) -> Result<()> {
    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
    msg.write_to(&mut *w).map_err(|e| Error::io("bootstrap: send", e))
}

impl Drop for HubClient {
    fn drop(&mut self) {
        crate::watchdog::set_sink(None);
        // The watcher holds a second descriptor of the socket; shutting the socket down (not just
        // closing ours) is what tells the hub we are gone.
        self.leaving.store(true, Ordering::SeqCst);
        if let Ok(w) = self.writer.lock() {
            let _ = w.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn connect_until(addr: std::net::SocketAddr, deadline: Instant) -> Result<TcpStream> {
    let mut last = None;
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(10));
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => return Ok(s),
            Err(e) => {
                last = Some(e);
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    Err(Error::Bootstrap(format!(
        "could not reach the rendezvous at {addr}: {}; is the unique id from this job, and is the PE \
         that made it still running? (ROCSHMEM_BOOTSTRAP_TIMEOUT)",
        last.map(|e| e.to_string()).unwrap_or_else(|| "timed out".into())
    )))
}

fn watch(
    mut stream: TcpStream,
    writer: Arc<Mutex<TcpStream>>,
    replies: Sender<Msg>,
    leaving: Arc<AtomicBool>,
    ended: Arc<Mutex<Option<String>>>,
    on_abort: AbortHook,
) {
    let record = |reason: &str| {
        ended.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| reason.to_string());
    };
    loop {
        match Msg::read_from(&mut stream) {
            Ok(Some(Msg::Abort { status, pe, reason })) => {
                // A global_exit is the user's own request: not an error to print.
                let is_error = !reason.contains("rocshmem_global_exit");
                let _ = pe;
                record(&reason);
                // Returns only during init; then dropping `replies` fails the waiting call with
                // `ended` as its reason.
                on_abort(status, reason, is_error);
                return;
            }
            Ok(Some(Msg::Query)) => {
                // A PE is stuck: say where this one waits (this thread runs whatever the
                // program's threads are doing).
                let status = Msg::Status { ask: Ask::Answer, waited_ms: 0, report: crate::watchdog::report() };
                let _ = send_on(&writer, status);
            }
            Ok(Some(Msg::Report { text })) => crate::watchdog::print_report(&text),
            Ok(Some(msg @ (Msg::Gathered { .. } | Msg::Bye))) => {
                let bye = matches!(msg, Msg::Bye);
                let _ = replies.send(msg);
                if bye {
                    return;
                }
            }
            Ok(Some(other)) => {
                let reason = format!("unexpected message from the rendezvous: {other:?}");
                record(&reason);
                on_abort(1, reason, true);
                return;
            }
            Ok(None) | Err(_) => {
                let reason = "lost the connection to the rendezvous (the PE or launcher hosting it exited)";
                record(reason);
                if !leaving.load(Ordering::SeqCst) {
                    on_abort(1, reason.into(), true);
                }
                return;
            }
        }
    }
}
