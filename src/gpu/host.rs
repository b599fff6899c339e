//! The host platform: heap memory is shared memory, one object per PE.
//!
//! Two backings (`ROCSHMEM_SHM_BACKING`):
//! - `memfd` (the default): anonymous shared memory (`memfd_create`), which no /dev/shm size
//!   limits. Peers get the descriptor over an abstract Unix socket (`SCM_RIGHTS`) that the PE
//!   serves from creation until every PE has mapped its heap; only processes of the same user
//!   are answered. Nothing is ever created in /dev/shm.
//! - `posix`: a POSIX shared-memory object in /dev/shm (`/rocshmem-<job tag>-<pe>`, 0600),
//!   unlinked once every PE has mapped it. Init refuses it when /dev/shm has less room than the
//!   node's heaps: past that, touching the heap would kill the PE with SIGBUS. `memfd` falls back
//!   to it when memfd or abstract sockets are not available.
//!
//! Either way the object is sized with ftruncate (sparse: nothing is touched until used, so
//! eight 1 GiB heaps fit a small machine) and mapped MAP_NORESERVE, and nothing is left behind
//! after a normal exit or a `kill -9`.

use super::{GpuRuntime, Platform, Segment};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// What backs a PE's shared memory (`ROCSHMEM_SHM_BACKING`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// memfd shared over a Unix socket; POSIX shared memory where that cannot be made.
    Memfd,
    /// POSIX shared memory in /dev/shm.
    Posix,
}

impl Backing {
    pub fn parse(text: &str) -> Result<Backing> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "memfd" => Ok(Backing::Memfd),
            "posix" => Ok(Backing::Posix),
            other => Err(Error::invalid(format!("ROCSHMEM_SHM_BACKING='{other}' is neither memfd nor posix"))),
        }
    }
}

static BACKING: AtomicU8 = AtomicU8::new(Backing::Memfd as u8);

/// Chooses the backing of the segments this process creates from now on.
pub fn set_backing(b: Backing) {
    BACKING.store(b as u8, Ordering::Relaxed);
}

/// The backing segments are created with: memfd unless `posix` was asked for or memfd cannot
/// be used here.
pub fn backing() -> Backing {
    if BACKING.load(Ordering::Relaxed) == Backing::Posix as u8 || !memfd_usable() {
        Backing::Posix
    } else {
        Backing::Memfd
    }
}

/// Whether memfd_create and abstract Unix sockets work in this process (seccomp profiles and
/// old kernels may refuse them). Probed once.
fn memfd_usable() -> bool {
    static USABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *USABLE.get_or_init(|| {
        // SAFETY: plain syscalls on descriptors closed right away.
        unsafe {
            let fd = libc::memfd_create(c"rocshmem-probe".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return false;
            }
            libc::close(fd);
            let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if s < 0 {
                return false;
            }
            libc::close(s);
        }
        true
    })
}

pub struct HostRuntime;

impl HostRuntime {
    pub fn new() -> HostRuntime {
        HostRuntime
    }
}

impl Default for HostRuntime {
    fn default() -> Self {
        Self::new()
    }
}

fn cname(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| Error::invalid(format!("segment name {name:?} has a NUL byte")))
}

/// Heaps are mapped at addresses that are multiples of this, in every process, so that the
/// user heap bases of all PEs agree modulo it and `rocshmem_align` can honour alignments up to
/// it (2 MiB: also a huge-page boundary).
pub const SEGMENT_ALIGN: usize = 2 << 20;

fn map(fd: i32, len: usize, what: &str) -> Result<*mut u8> {
    // Reserve len + SEGMENT_ALIGN of address space, place the mapping on an aligned address
    // inside it, and give back the slack on both sides.
    let span = len + SEGMENT_ALIGN;
    // SAFETY: an anonymous, inaccessible reservation; the kernel picks the address.
    let r = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if r == libc::MAP_FAILED {
        return Err(Error::last_os(format!("reserving {span} bytes of address space for {what}")));
    }
    let start = (r as usize).next_multiple_of(SEGMENT_ALIGN);
    // SAFETY: [start, start+len) lies inside the reservation, which MAP_FIXED replaces.
    let p = unsafe {
        libc::mmap(
            start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    let head = start - r as usize;
    let tail = span - head - len;
    // SAFETY: the slack ranges are parts of our reservation outside the mapping.
    unsafe {
        if head > 0 {
            libc::munmap(r, head);
        }
        if tail > 0 {
            libc::munmap((start + len) as *mut libc::c_void, tail);
        }
    }
    if p == libc::MAP_FAILED {
        let e = Error::last_os(format!("mmap of {len} bytes for {what}"));
        // SAFETY: the reservation part we meant to map over.
        unsafe { libc::munmap(start as *mut libc::c_void, len) };
        return Err(e);
    }
    Ok(p.cast())
}

impl GpuRuntime for HostRuntime {
    fn platform(&self) -> Platform {
        Platform::Host
    }

    fn describe(&self) -> String {
        match backing() {
            Backing::Memfd => "host platform (no GPU; heaps in shared memory: memfd)".into(),
            Backing::Posix => "host platform (no GPU; heaps in POSIX shared memory: /dev/shm)".into(),
        }
    }

    fn create_segment(&self, name: &str, len: usize) -> Result<Segment> {
        match backing() {
            Backing::Memfd => create_memfd(name, len),
            Backing::Posix => create_posix(name, len),
        }
    }

    fn open_peer_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        let fd = match handle.strip_prefix(b"@") {
            Some(sock) => receive_fd(sock)?,
            None => {
                let name = String::from_utf8_lossy(handle).into_owned();
                let c = cname(&name)?;
                // SAFETY: as above; the fd is closed once mapped.
                let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR, 0) };
                if fd < 0 {
                    return Err(Error::last_os(format!("shm_open({name}) of a peer's heap")));
                }
                fd
            }
        };
        let what = String::from_utf8_lossy(handle).into_owned();
        let r = check_size(fd, len, &what).and_then(|()| map(fd, len, &what));
        // SAFETY: our descriptor; the mapping keeps the memory.
        unsafe { libc::close(fd) };
        Ok(Segment::mmapped(r?, len, handle.to_vec()))
    }

    fn seal_segment(&self, own: &Segment) -> Result<()> {
        if own.handle.starts_with(b"@") {
            stop_server(&own.handle);
            return Ok(());
        }
        let c = cname(&String::from_utf8_lossy(&own.handle))?;
        // SAFETY: unlinking our own name; the mappings stay valid. ENOENT: a PE whose init failed
        // swept the job's names already; the name is gone, which is what sealing wants.
        if unsafe { libc::shm_unlink(c.as_ptr()) } != 0
            && std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT)
        {
            return Err(Error::last_os("shm_unlink of this PE's heap"));
        }
        Ok(())
    }

    fn discard_segment_name(&self, name: &str) {
        if let Ok(c) = cname(name) {
            // SAFETY: best-effort unlink; ENOENT is fine.
            unsafe { libc::shm_unlink(c.as_ptr()) };
        }
        stop_server(&memfd_handle(name));
    }
}

fn create_posix(name: &str, len: usize) -> Result<Segment> {
    let c = cname(name)?;
    // SAFETY: plain libc calls on a name we own; the fd is closed before returning.
    let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, 0o600) };
    if fd < 0 {
        return Err(Error::last_os(format!("shm_open({name})")));
    }
    let cleanup = |e: Error| {
        unsafe {
            libc::close(fd);
            libc::shm_unlink(c.as_ptr());
        }
        e
    };
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        return Err(cleanup(Error::last_os(format!("ftruncate({name}, {len})"))));
    }
    let base = map(fd, len, name).map_err(cleanup)?;
    unsafe { libc::close(fd) };
    Ok(Segment::mmapped(base, len, name.as_bytes().to_vec()))
}

/// The handle of a memfd segment: `@` and the abstract socket name that serves it (the
/// segment's name, and the user, so that two users' jobs never meet).
fn memfd_handle(name: &str) -> Vec<u8> {
    // SAFETY: geteuid cannot fail.
    format!("@rocshmem-heap-{}{name}", unsafe { libc::geteuid() }).into_bytes()
}

/// The servers of this process's memfd segments, by handle, until they are sealed.
static SERVERS: Mutex<Option<HashMap<Vec<u8>, Server>>> = Mutex::new(None);

struct Server {
    stop: std::sync::Arc<AtomicBool>,
    listener: libc::c_int,
    thread: std::thread::JoinHandle<()>,
}

/// Stops serving the segment `handle` (it is sealed, or init failed): closes the listener and
/// the descriptor; the mappings stay.
fn stop_server(handle: &[u8]) {
    let server = SERVERS.lock().unwrap_or_else(|e| e.into_inner()).as_mut().and_then(|m| m.remove(handle));
    if let Some(s) = server {
        s.stop.store(true, Ordering::SeqCst);
        // SAFETY: our listener; shutdown wakes the thread's poll.
        unsafe { libc::shutdown(s.listener, libc::SHUT_RDWR) };
        let _ = s.thread.join();
        unsafe { libc::close(s.listener) };
    }
}

/// A `sockaddr_un` for the abstract name `name` (no file anywhere) and its length.
fn abstract_addr(name: &[u8]) -> Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: a plain C struct, all zeroes is valid.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if name.len() + 1 > addr.sun_path.len() {
        return Err(Error::invalid(format!("socket name {} is too long", String::from_utf8_lossy(name))));
    }
    for (i, b) in name.iter().enumerate() {
        addr.sun_path[i + 1] = *b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    Ok((addr, len as libc::socklen_t))
}

/// Creates a memfd segment and starts serving its descriptor.
fn create_memfd(name: &str, len: usize) -> Result<Segment> {
    let c = cname(name.trim_start_matches('/'))?;
    // SAFETY: plain syscalls; every descriptor is closed on every path.
    let fd = unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(Error::last_os(format!("memfd_create({name})")));
    }
    let close_fd = |e: Error| {
        unsafe { libc::close(fd) };
        e
    };
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        return Err(close_fd(Error::last_os(format!("ftruncate(memfd {name}, {len})"))));
    }
    let handle = memfd_handle(name);
    let listener = listen_abstract(&handle[1..]).map_err(close_fd)?;
    let base = match map(fd, len, name) {
        Ok(b) => b,
        Err(e) => {
            unsafe { libc::close(listener) };
            return Err(close_fd(e));
        }
    };
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let thread = std::thread::Builder::new().name("rocshmem-heapfd".into()).spawn(move || serve_fd(listener, fd, s2));
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            // SAFETY: the mapping made above, and our descriptors.
            unsafe {
                libc::munmap(base.cast(), len);
                libc::close(listener);
            }
            return Err(close_fd(Error::io("starting the heap descriptor server", e)));
        }
    };
    SERVERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(handle.clone(), Server { stop, listener, thread });
    Ok(Segment::mmapped(base, len, handle))
}

fn listen_abstract(name: &[u8]) -> Result<libc::c_int> {
    let (addr, alen) = abstract_addr(name)?;
    // SAFETY: a new socket, bound and listening, or closed on failure.
    unsafe {
        let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(Error::last_os("socket(AF_UNIX) for the heap descriptor server"));
        }
        if libc::bind(s, (&addr as *const libc::sockaddr_un).cast(), alen) != 0 || libc::listen(s, 4096) != 0 {
            let e = Error::last_os(format!("binding the heap descriptor server @{}", String::from_utf8_lossy(name)));
            libc::close(s);
            return Err(e);
        }
        Ok(s)
    }
}

/// The user id of the process at the other end of Unix socket `s`.
fn peer_uid(s: libc::c_int) -> Option<libc::uid_t> {
    // SAFETY: getsockopt fills a ucred of the size given.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(s, libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len)
    };
    (rc == 0).then_some(cred.uid)
}

/// Answers every connection of the same user with the descriptor `fd`, until `stop`.
fn serve_fd(listener: libc::c_int, fd: libc::c_int, stop: std::sync::Arc<AtomicBool>) {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    while !stop.load(Ordering::SeqCst) {
        let mut p = libc::pollfd { fd: listener, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd; the timeout bounds how long a missed wake-up could delay the stop.
        if unsafe { libc::poll(&mut p, 1, 200) } <= 0 || stop.load(Ordering::SeqCst) {
            continue;
        }
        // SAFETY: accepting on our listener; the connection is closed below.
        let c = unsafe { libc::accept4(listener, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) };
        if c < 0 {
            continue;
        }
        if peer_uid(c) == Some(me) {
            send_fd(c, fd);
        }
        unsafe { libc::close(c) };
    }
    // SAFETY: the descriptor this thread owned; the mappings keep the memory.
    unsafe { libc::close(fd) };
}

/// Room for one descriptor in a control message.
const FD_CMSG: usize = 64;

fn send_fd(s: libc::c_int, fd: libc::c_int) {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut cbuf = [0u8; FD_CMSG];
    // SAFETY: a msghdr over the buffers above, with one SCM_RIGHTS control message.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
        let cm = libc::CMSG_FIRSTHDR(&msg);
        (*cm).cmsg_level = libc::SOL_SOCKET;
        (*cm).cmsg_type = libc::SCM_RIGHTS;
        (*cm).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cm).cast::<libc::c_int>(), fd);
        libc::sendmsg(s, &msg, libc::MSG_NOSIGNAL);
    }
}

/// Connects to a peer's heap descriptor server `sock` (abstract name) and receives the memfd.
fn receive_fd(sock: &[u8]) -> Result<libc::c_int> {
    let (addr, alen) = abstract_addr(sock)?;
    let shown = String::from_utf8_lossy(sock).into_owned();
    let fail = |what: &str| {
        let e = std::io::Error::last_os_error();
        Error::Bootstrap(format!(
            "{what} of a peer's heap (socket @{shown}): {e}; with ROCSHMEM_SHM_BACKING=memfd the PEs of a node \
             must share a network namespace: otherwise set ROCSHMEM_SHM_BACKING=posix on every PE"
        ))
    };
    // SAFETY: a new socket, closed on every path; recvmsg fills the buffers given.
    unsafe {
        let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(Error::last_os("socket(AF_UNIX)"));
        }
        let tv = libc::timeval { tv_sec: 30, tv_usec: 0 };
        libc::setsockopt(
            s,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
        if libc::connect(s, (&addr as *const libc::sockaddr_un).cast(), alen) != 0 {
            let e = fail("connecting to the descriptor server");
            libc::close(s);
            return Err(e);
        }
        if peer_uid(s) != Some(libc::geteuid()) {
            libc::close(s);
            return Err(Error::Bootstrap(format!("the heap descriptor server @{shown} belongs to another user")));
        }
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut cbuf = [0u8; FD_CMSG];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = cbuf.len() as _;
        let n = libc::recvmsg(s, &mut msg, libc::MSG_CMSG_CLOEXEC);
        let cm = libc::CMSG_FIRSTHDR(&msg);
        let fd =
            if n == 1 && !cm.is_null() && (*cm).cmsg_level == libc::SOL_SOCKET && (*cm).cmsg_type == libc::SCM_RIGHTS {
                std::ptr::read_unaligned(libc::CMSG_DATA(cm).cast::<libc::c_int>())
            } else {
                let e = fail("receiving the descriptor");
                libc::close(s);
                return Err(e);
            };
        libc::close(s);
        Ok(fd)
    }
}

/// Checks that the object behind `fd` holds at least `len` bytes (a short one would fault).
fn check_size(fd: libc::c_int, len: usize, what: &str) -> Result<()> {
    // SAFETY: fstat fills `st`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(Error::last_os(format!("fstat of {what}")));
    }
    if (st.st_size as u64) < len as u64 {
        return Err(Error::invalid(format!("{what} holds {} bytes, not the {len} expected", st.st_size)));
    }
    Ok(())
}

/// Name of PE `pe`'s heap in job `tag` (also how the launcher sweeps leftovers).
pub fn segment_name(tag: u64, pe: usize) -> String {
    format!("/rocshmem-{tag:016x}-{pe}")
}

/// With the `posix` backing, checks that /dev/shm can hold the heaps of this node's
/// `local_pes` PEs of `seg_len` bytes each: a PE touching its heap past what /dev/shm holds
/// would die of SIGBUS, so init refuses instead (memfd is not limited by /dev/shm).
pub fn check_room(seg_len: usize, local_pes: usize, cfg: &crate::env::Config) -> Result<()> {
    if backing() != Backing::Posix {
        return Ok(());
    }
    let Some(free) = shm_free_bytes() else { return Ok(()) };
    let need = seg_len as u64 * local_pes as u64;
    if need <= free {
        return Ok(());
    }
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    Err(Error::Unsupported(format!(
        "/dev/shm has {} free but the {local_pes} PE(s) of this node need {} for their heaps \
         ({local_pes} x {}, ROCSHMEM_HEAP_SIZE={}); a PE touching its heap past what /dev/shm holds would die of \
         SIGBUS. Enlarge /dev/shm (docker run --shm-size=...), lower ROCSHMEM_HEAP_SIZE, or {}",
        mib(free),
        mib(need),
        mib(seg_len as u64),
        cfg.heap_size,
        if memfd_usable() {
            "unset ROCSHMEM_SHM_BACKING (memfd, the default, does not use /dev/shm)"
        } else {
            "run where memfd_create and Unix sockets are allowed (ROCSHMEM_SHM_BACKING=memfd does not use /dev/shm)"
        }
    )))
}

/// Whether `count` reservations of `span` bytes of address space (as [`map`] makes for each
/// segment) can be made now; they are released again.
fn can_reserve(span: usize, count: usize) -> bool {
    let mut made = Vec::with_capacity(count);
    for _ in 0..count {
        // SAFETY: an anonymous, inaccessible reservation; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            break;
        }
        made.push(p);
    }
    let ok = made.len() == count;
    for p in made {
        // SAFETY: a reservation made above.
        unsafe { libc::munmap(p, span) };
    }
    ok
}

/// Checks that this PE can map `count` segments of `seg_len` bytes (its own heap and each
/// peer's it maps: a mapping takes address space whether or not it is touched), and if not,
/// says the largest `ROCSHMEM_HEAP_SIZE` (now `heap_size`) that fits, rounded down to whole
/// GiB (MiB below 1 GiB). Without this, a heap of 64T failed with ENOMEM naming no variable.
pub fn check_address_space(heap_size: usize, seg_len: usize, count: usize) -> Result<()> {
    let overhead = seg_len.saturating_sub(heap_size) + SEGMENT_ALIGN;
    if can_reserve(seg_len.saturating_add(SEGMENT_ALIGN), count) {
        return Ok(());
    }
    // The largest heap that fits, to 2 MiB: reservations either fit or not, monotonically.
    let (mut lo, mut hi) = (0usize, heap_size / SEGMENT_ALIGN);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if can_reserve(mid * SEGMENT_ALIGN + overhead, count) { lo = mid } else { hi = mid - 1 }
    }
    let fits = lo * SEGMENT_ALIGN;
    let (gib, mib) = (1usize << 30, 1usize << 20);
    let advice = match fits {
        f if f >= gib => format!("the largest value that fits is ROCSHMEM_HEAP_SIZE={}G", f / gib),
        f if f >= 4 * mib => format!("the largest value that fits is ROCSHMEM_HEAP_SIZE={}M", f / mib),
        _ => "no heap fits: raise the address space limit (ulimit -v)".to_string(),
    };
    let size = |b: usize| match b as f64 {
        b if b >= (1u64 << 40) as f64 => format!("{:.1} TiB", b / (1u64 << 40) as f64),
        b => format!("{:.1} GiB", b / gib as f64),
    };
    Err(Error::invalid(format!(
        "ROCSHMEM_HEAP_SIZE={heap_size} ({}) does not fit in this PE's address space: it maps {count} heaps (its \
         own and those of the PEs it reaches by load/store), {}, more than it can reserve (a process's address \
         space, or ulimit -v); {advice}",
        size(heap_size),
        size(count.saturating_mul(seg_len.saturating_add(SEGMENT_ALIGN)))
    )))
}

/// Free bytes of the filesystem behind POSIX shared memory, if it can be read.
pub fn shm_free_bytes() -> Option<u64> {
    let path = CString::new("/dev/shm").ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs fills `st`.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both backings: create, map from the handle, seal, and the mappings outlive the name.
    #[test]
    fn create_map_from_another_handle_and_seal() {
        let rt = HostRuntime::new();
        for (k, create) in [create_posix as fn(&str, usize) -> Result<Segment>, create_memfd].into_iter().enumerate() {
            let name = format!("/rocshmem-test-{}-{k}", std::process::id());
            let a = create(&name, 1 << 30).unwrap();
            let b = rt.open_peer_segment(&a.handle, 1 << 30).unwrap();
            assert_eq!(a.base as usize % SEGMENT_ALIGN, 0, "segments are mapped 2 MiB aligned");
            assert_eq!(b.base as usize % SEGMENT_ALIGN, 0);
            unsafe {
                *a.base.add(12345) = 7;
                assert_eq!(*b.base.add(12345), 7, "both mappings see the same memory");
            }
            assert!(rt.open_peer_segment(&a.handle, (1 << 30) + 4096).is_err(), "a short object is refused");
            rt.seal_segment(&a).unwrap();
            assert!(rt.open_peer_segment(&a.handle, 4096).is_err(), "the name is gone after sealing");
            unsafe { *b.base.add(1 << 29) = 1 };
            assert_eq!(unsafe { *a.base.add(1 << 29) }, 1, "mappings outlive the name");
            assert!(rt.seal_segment(&a).is_ok(), "sealing twice (a name swept by a failed PE) is not an error");
            let again = create(&name, 4096).unwrap();
            rt.discard_segment_name(&name);
            assert!(rt.open_peer_segment(&again.handle, 4096).is_err(), "discarded");
        }
    }

    #[test]
    fn memfd_segments_leave_nothing_in_dev_shm() {
        let name = format!("/rocshmem-test-memfd-{}", std::process::id());
        let a = create_memfd(&name, 1 << 20).unwrap();
        assert!(a.handle.starts_with(b"@"));
        assert!(std::fs::metadata(format!("/dev/shm{name}")).is_err());
        HostRuntime::new().discard_segment_name(&name);
    }

    #[test]
    fn segment_is_private_to_the_user() {
        let rt = HostRuntime::new();
        let name = format!("/rocshmem-test-mode-{}", std::process::id());
        let _a = create_posix(&name, 4096).unwrap();
        let meta = std::fs::metadata(format!("/dev/shm{name}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        rt.discard_segment_name(&name);
    }

    #[test]
    fn backings_parse() {
        assert_eq!(Backing::parse("").unwrap(), Backing::Memfd);
        assert_eq!(Backing::parse("POSIX").unwrap(), Backing::Posix);
        assert!(Backing::parse("hugetlb").unwrap_err().to_string().contains("ROCSHMEM_SHM_BACKING"));
    }
}
