//! Streams on the host platform: ordered host queues owned by the core.
//!
//! A queue is a worker thread that runs its operations one after the other, in the order they
//! were enqueued; each operation is a helper kernel run on the host launcher's CPU threads
//! (device/stream/host_launch.cpp): one work-group, or a few for a large collective. The handle a program holds (its
//! `hipStream_t`) is the queue's address; NULL is a per-process default queue, made on first
//! use. An operation that fails is reported at once (one line naming the call and the stream)
//! and again by the next synchronize of that queue, which returns an error.

use super::stream_args::StreamArgs;
use super::stream_plan::{self as plan, Work};
use crate::error::{Error, Result};
use crate::log::{self, Level};
use std::collections::VecDeque;
use std::ffi::{CString, c_char, c_int, c_uint};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

unsafe extern "C" {
    /// device/stream/host_launch.cpp: runs kernel `name` on `blocks` work-groups of `threads`
    /// threads; 0, or -1 if unknown.
    fn rocshmemi_host_stream_launch(
        name: *const c_char,
        args: *const StreamArgs,
        blocks: c_uint,
        threads: c_uint,
    ) -> c_int;
}

type Job = (&'static str, Work);

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// An operation is running (taken off `jobs`).
    busy: bool,
    /// The first failure since the last synchronize.
    error: Option<String>,
    closing: bool,
}

struct Queue {
    state: Mutex<State>,
    /// Signalled when work arrives, when an operation ends, and on close.
    cv: Condvar,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A live queue: its handle, the queue, its worker thread.
type Entry = (usize, Arc<Queue>, Option<std::thread::JoinHandle<()>>);

/// Every live queue by handle (the default queue included, under its own address).
static QUEUES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static DEFAULT: OnceLock<usize> = OnceLock::new();

fn queues() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    QUEUES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one operation on this thread.
pub(crate) fn run(work: Work) -> Result<()> {
    match work {
        Work::Kernel { name, args, spread } => {
            let threads = plan::threads(crate::gpu::Platform::Host, &name, args.count);
            let blocks = plan::groups(spread, plan::HOST_BYTES_PER_GROUP, plan::HOST_MAX_GROUPS);
            let cname = CString::new(name.clone()).map_err(|_| Error::invalid("kernel name has a NUL byte"))?;
            // SAFETY: a NUL-terminated name and an 80-byte argument block that outlives the call
            // (the launch returns when every thread has finished).
            let rc = unsafe { rocshmemi_host_stream_launch(cname.as_ptr(), &args, blocks, threads) };
            if rc != 0 {
                return Err(Error::Unsupported(format!("the host platform has no stream kernel '{name}'")));
            }
            Ok(())
        }
        Work::Copy { dst, src, len } => {
            // SAFETY: the enqueuing call checked both ranges.
            unsafe { std::ptr::copy(src, dst, len) };
            Ok(())
        }
    }
}

fn worker(handle: usize, q: Arc<Queue>) {
    loop {
        let (call, work) = {
            let mut s = q.lock();
            loop {
                if let Some(j) = s.jobs.pop_front() {
                    s.busy = true;
                    break j;
                }
                if s.closing {
                    return;
                }
                s = q.cv.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(work))).unwrap_or_else(|_| {
            Err(Error::Unsupported("internal error (a panic was caught); please report it".into()))
        });
        let mut s = q.lock();
        s.busy = false;
        if let Err(e) = r {
            let line = format!("{call} (queued on stream {handle:#x}) failed: {e}");
            log::write(Level::Error, call, format_args!("queued on stream {handle:#x}: {e}"));
            s.error.get_or_insert(line);
        }
        q.cv.notify_all();
    }
}

fn spawn(handle_of: impl FnOnce(&Arc<Queue>) -> usize) -> Result<usize> {
    let q = Arc::new(Queue { state: Mutex::new(State::default()), cv: Condvar::new() });
    let handle = handle_of(&q);
    let qw = Arc::clone(&q);
    let t = std::thread::Builder::new()
        .name("rocshmem-stream".into())
        .spawn(move || worker(handle, qw))
        .map_err(|e| Error::io("starting a stream worker thread", e))?;
    queues().push((handle, q, Some(t)));
    Ok(handle)
}

/// Creates a queue; its handle is what the program passes as a stream.
pub fn create() -> Result<usize> {
    spawn(|q| Arc::as_ptr(q) as usize)
}

fn default_queue() -> Result<usize> {
    if let Some(h) = DEFAULT.get() {
        return Ok(*h);
    }
    let mut err = None;
    let h = *DEFAULT.get_or_init(|| match create() {
        Ok(h) => h,
        Err(e) => {
            err = Some(e);
            0
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(h),
    }
}

fn find(handle: usize) -> Result<Arc<Queue>> {
    let h = if handle == 0 { default_queue()? } else { handle };
    queues().iter().find(|(k, _, _)| *k == h).map(|(_, q, _)| Arc::clone(q)).ok_or_else(|| {
        Error::invalid(format!(
            "stream {handle:#x} is not a stream of this process (on the host platform streams come from \
             rocshmem_host_stream_create / hipStreamCreate, or NULL; was it destroyed?)"
        ))
    })
}

/// Is `handle` a live queue (not the default one)?
pub fn is_queue(handle: usize) -> bool {
    handle != 0 && queues().iter().any(|(k, _, _)| *k == handle)
}

/// Appends `work` to queue `handle` (0: the default queue).
pub fn enqueue(call: &'static str, handle: usize, work: Work) -> Result<()> {
    let q = find(handle)?;
    let mut s = q.lock();
    if s.closing {
        return Err(Error::invalid(format!("stream {handle:#x} is being destroyed")));
    }
    s.jobs.push_back((call, work));
    q.cv.notify_all();
    Ok(())
}

fn wait_idle(q: &Queue) -> Option<String> {
    let mut s = q.lock();
    while !s.jobs.is_empty() || s.busy {
        s = q.cv.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    s.error.take()
}

/// Waits until everything enqueued on `handle` (0: the default queue) has run; an error if an
/// operation failed since the last synchronize.
pub fn synchronize(handle: usize) -> Result<()> {
    let q = find(handle)?;
    match wait_idle(&q) {
        None => Ok(()),
        Some(first) => Err(Error::Gpu(format!("stream {handle:#x}: {first}"))),
    }
}

/// Waits for the queue's work, then ends its thread and forgets the handle. The default
/// queue cannot be destroyed.
pub fn destroy(handle: usize) -> Result<()> {
    if handle == 0 || DEFAULT.get() == Some(&handle) {
        return Err(Error::invalid("the default stream (NULL) cannot be destroyed"));
    }
    let q = find(handle)?;
    let first = wait_idle(&q);
    let thread = {
        let mut all = queues();
        let i = all.iter().position(|(k, _, _)| *k == handle);
        i.and_then(|i| all.remove(i).2)
    };
    q.lock().closing = true;
    q.cv.notify_all();
    if let Some(t) = thread {
        let _ = t.join();
    }
    match first {
        None => Ok(()),
        Some(first) => Err(Error::Gpu(format!("stream {handle:#x}: {first}"))),
    }
}

/// Waits until every queue is idle (rocshmem_finalize: nothing may run after the heaps go).
/// Failures were reported when they happened and stay for the queue's next synchronize.
pub fn drain_all() {
    let all: Vec<Arc<Queue>> = queues().iter().map(|(_, q, _)| Arc::clone(q)).collect();
    for q in all {
        let mut s = q.lock();
        while !s.jobs.is_empty() || s.busy {
            s = q.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_run_in_order_and_synchronize_waits() {
        let h = create().unwrap();
        assert!(is_queue(h));
        let mut buf = vec![0u8; 4096];
        let src: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; 4096]).collect();
        for s in &src {
            enqueue("test", h, Work::Copy { dst: buf.as_mut_ptr(), src: s.as_ptr(), len: s.len() }).unwrap();
        }
        synchronize(h).unwrap();
        assert!(buf.iter().all(|b| *b == 63), "the last copy ran last");
        destroy(h).unwrap();
        assert!(!is_queue(h));
        assert!(synchronize(h).unwrap_err().to_string().contains("not a stream"));
        assert!(destroy(0).is_err());
    }

    #[test]
    fn a_failed_operation_is_surfaced_at_synchronize() {
        let h = create().unwrap();
        let k = Work::Kernel { name: "no_such_kernel".into(), args: StreamArgs::default(), spread: 0 };
        enqueue("rocshmem_test_on_stream", h, k).unwrap();
        let e = synchronize(h).unwrap_err().to_string();
        assert!(e.contains("no_such_kernel") && e.contains("rocshmem_test_on_stream"), "{e}");
        synchronize(h).unwrap();
        destroy(h).unwrap();
    }
}
