//! `rocshmem-run`: start N PEs of a program on this machine.
//!
//! `rocshmem-run -n 4 ./app args...` hosts the job's rendezvous, starts 4 copies of the program
//! with `ROCSHMEM_RUN_UNIQUEID/RANK/NRANKS` set (rocshmem_init picks them up), forwards their
//! output (optionally prefixed with the PE), and returns the first non-zero exit status. If a
//! PE dies, the others are told at once (through the rendezvous); those that have not joined
//! yet, and those that do not exit by themselves within a second, are stopped with a signal,
//! each named on stderr.

use rocshmem::bootstrap::{hub::Hub, net};
use rocshmem::env::Config;
use rocshmem::gpu::host::segment_name;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: rocshmem-run [-n N] [-p|--prefix] [--] program [args...]

  -n, -np, --np N   number of PEs to start (default 1)
  -p, --prefix      prefix every output line with [PE i]
  -h, --help        this text
      --version     the library version

The PEs find each other through a rendezvous this launcher hosts (loopback unless
ROCSHMEM_BOOTSTRAP_SOCKET_IFNAME says otherwise). The exit status is the first non-zero
status of a PE (128+signal for a PE killed by a signal), or 0.";

/// A signal the launcher received (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::SeqCst);
}

struct Options {
    n: usize,
    prefix: bool,
    program: Vec<String>,
}

fn fail(msg: &str) -> ! {
    eprintln!("rocshmem-run: {msg}");
    std::process::exit(2)
}

fn parse(args: Vec<String>) -> Options {
    let mut o = Options { n: 1, prefix: false, program: Vec::new() };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-n" | "-np" | "--np" | "-N" => {
                let v = it.next().unwrap_or_else(|| fail("-n needs a number"));
                o.n = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=4096).contains(n))
                    .unwrap_or_else(|| fail(&format!("-n {v}: need 1..4096 PEs")));
            }
            "-p" | "--prefix" => o.prefix = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            "--version" => {
                println!("rocshmem-run {}", rocshmem::VERSION);
                std::process::exit(0)
            }
            "--" => {
                o.program = it.collect();
                break;
            }
            s if s.starts_with('-') && o.program.is_empty() => fail(&format!("unknown option {s}\n{USAGE}")),
            _ => {
                o.program.push(a);
                o.program.extend(it);
                break;
            }
        }
    }
    if o.program.is_empty() {
        fail(&format!("no program given\n{USAGE}"));
    }
    o
}

/// Copies a child's output to ours, line by line, with the PE prefix.
fn forward(pe: usize, src: impl std::io::Read + Send + 'static, to_stderr: bool) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let reader = BufReader::new(src);
        for line in reader.split(b'\n') {
            let Ok(line) = line else { break };
            let mut out = format!("[PE {pe}] ").into_bytes();
            out.extend_from_slice(&line);
            out.push(b'\n');
            if to_stderr {
                let _ = std::io::stderr().lock().write_all(&out);
            } else {
                let _ = std::io::stdout().lock().write_all(&out);
            }
        }
    })
}

fn exit_code(st: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    }
}

fn describe(st: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "ended".into(),
    }
}

fn signal_all(children: &mut [Option<Child>], sig: i32) {
    for c in children.iter().flatten() {
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(c.id() as libc::pid_t, sig) };
    }
}

/// Sends `sig` to the running PEs that `which` selects and says which ones, and why, in one
/// line.
fn stop_pes(children: &[Option<Child>], sig: i32, which: impl Fn(usize) -> bool, why: &str) {
    let mut stopped = Vec::new();
    for (pe, c) in children.iter().enumerate() {
        if let (Some(c), true) = (c, which(pe)) {
            // SAFETY: sending a signal to our own child.
            unsafe { libc::kill(c.id() as libc::pid_t, sig) };
            stopped.push(format!("PE {pe}"));
        }
    }
    if !stopped.is_empty() {
        let name = if sig == libc::SIGKILL { "SIGKILL" } else { "SIGTERM" };
        eprintln!("rocshmem-run: stopped {} ({name}): {why}", stopped.join(", "));
    }
}

/// Starts the `o.n` PEs with the hub's unique id; with `--prefix`, the threads that forward
/// their output. A PE that cannot start ends the job (exit 127).
fn spawn_pes(o: &Options, hub: &Hub) -> (Vec<Option<Child>>, Vec<std::thread::JoinHandle<()>>) {
    let uid_hex = hub.uid.to_hex();
    let mut children: Vec<Option<Child>> = Vec::with_capacity(o.n);
    let mut pumps = Vec::new();
    for pe in 0..o.n {
        let mut cmd = Command::new(&o.program[0]);
        cmd.args(&o.program[1..])
            .env("ROCSHMEM_RUN_UNIQUEID", &uid_hex)
            .env("ROCSHMEM_RUN_RANK", pe.to_string())
            .env("ROCSHMEM_RUN_NRANKS", o.n.to_string());
        if o.prefix {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        match cmd.spawn() {
            Ok(mut child) => {
                if o.prefix {
                    pumps.push(forward(pe, child.stdout.take().unwrap(), false));
                    pumps.push(forward(pe, child.stderr.take().unwrap(), true));
                }
                children.push(Some(child));
            }
            Err(e) => {
                eprintln!("rocshmem-run: cannot start '{}': {e}", o.program[0]);
                hub.abort(127, pe as i32, format!("rocshmem-run could not start PE {pe}"));
                signal_all(&mut children, libc::SIGKILL);
                for c in children.iter_mut().flatten() {
                    let _ = c.wait();
                }
                std::process::exit(127);
            }
        }
    }
    (children, pumps)
}

/// How long PEs that were told the job ended (by the hub) have to exit by themselves, before
/// the launcher sends them SIGTERM.
const EXIT_BY_THEMSELVES: Duration = Duration::from_secs(1);
/// The same after a SIGINT or SIGTERM forwarded to the PEs: they first gather the report of
/// where every PE waits (at most 2 s at the hub, then 4 s for a PE on its own).
const REPORT_AND_EXIT: Duration = Duration::from_secs(5);
/// How long a PE has after SIGTERM before SIGKILL.
const KILL_AFTER: Duration = Duration::from_secs(2);

/// The launcher's steps once the job is being stopped: SIGTERM to the PEs still running, then
/// SIGKILL.
enum Step {
    Term,
    Kill,
    Done,
}

struct Stopping {
    next: Instant,
    step: Step,
    by_signal: bool,
}

impl Stopping {
    fn new(by_signal: bool) -> Stopping {
        let wait = if by_signal { REPORT_AND_EXIT } else { EXIT_BY_THEMSELVES };
        Stopping { next: Instant::now() + wait, step: Step::Term, by_signal }
    }

    /// Takes the next step when its time has come.
    fn step(&mut self, children: &[Option<Child>]) {
        if Instant::now() < self.next {
            return;
        }
        match self.step {
            Step::Term => {
                let waited = if self.by_signal { REPORT_AND_EXIT } else { EXIT_BY_THEMSELVES };
                let why = format!("still running {} s after the job was stopped", waited.as_secs());
                stop_pes(children, libc::SIGTERM, |_| true, &why);
                (self.next, self.step) = (Instant::now() + KILL_AFTER, Step::Kill);
            }
            Step::Kill => {
                let why = format!("still running {} s after SIGTERM", KILL_AFTER.as_secs());
                stop_pes(children, libc::SIGKILL, |_| true, &why);
                self.step = Step::Done;
            }
            Step::Done => {}
        }
    }
}

/// Waits for every PE; on the first failure tells the others (through the hub) and stops at
/// once those that have not joined (nobody else can tell them), then stops the stragglers.
/// Returns the job's exit code.
fn wait_pes(children: &mut [Option<Child>], hub: &Hub) -> i32 {
    let mut first_failure: Option<i32> = None;
    let mut stopping: Option<Stopping> = None;
    let mut told = vec![false; children.len()];
    let mut running = children.len();
    while running > 0 {
        let sig = SIGNALLED.swap(0, Ordering::SeqCst);
        if sig != 0 {
            if stopping.as_ref().is_some_and(|s| s.by_signal) {
                // A second Ctrl-C: no more waiting for reports.
                stop_pes(children, libc::SIGKILL, |_| true, "a second signal");
            } else {
                // The PEs report where they wait and end the job (src/interrupt.rs).
                signal_all(children, sig);
                first_failure.get_or_insert(128 + sig);
                stopping = Some(Stopping::new(true));
            }
        }
        for (pe, slot) in children.iter_mut().enumerate() {
            let Some(child) = slot else { continue };
            match child.try_wait() {
                Ok(Some(st)) => {
                    *slot = None;
                    running -= 1;
                    let code = exit_code(st);
                    if code != 0 && first_failure.is_none() {
                        first_failure = Some(code);
                        if running > 0 {
                            eprintln!("rocshmem-run: PE {pe} {}; stopping the other PEs", describe(st));
                        }
                        hub.abort(code, pe as i32, format!("PE {pe} {}", describe(st)));
                        stopping.get_or_insert_with(|| Stopping::new(false));
                    }
                }
                Ok(None) => {}
                Err(_) => {
                    *slot = None;
                    running -= 1;
                }
            }
        }
        if let Some(s) = stopping.as_mut() {
            if !s.by_signal {
                // PEs that have not joined (busy before rocshmem_init) would wait for the others
                // until ROCSHMEM_BOOTSTRAP_TIMEOUT: stop them now.
                let joined = hub.joined();
                let late = |pe: usize| !joined[pe] && !told[pe];
                stop_pes(children, libc::SIGTERM, late, "the job was stopped before they joined it (rocshmem_init)");
                for (pe, t) in told.iter_mut().enumerate() {
                    *t |= !joined[pe];
                }
            }
            s.step(children);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    first_failure.unwrap_or(0)
}

fn main() {
    let o = parse(std::env::args().skip(1).collect());
    let cfg = Config::from_env().unwrap_or_else(|e| fail(&e.to_string()));
    let family = net::parse_family(&cfg.bootstrap_socket_family).unwrap_or_else(|e| fail(&e.to_string()));
    let ip = net::listen_ip(&cfg.bootstrap_socket_ifname, family).unwrap_or_else(|e| fail(&e.to_string()));
    let timeout = Duration::from_secs_f64(cfg.bootstrap_timeout.max(0.1));
    let hub = Hub::start(ip, Some(o.n as u32), timeout).unwrap_or_else(|e| fail(&e.to_string()));

    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_signal as *const () as libc::sighandler_t);
    }

    let (mut children, pumps) = spawn_pes(&o, &hub);
    let code = wait_pes(&mut children, &hub);
    for p in pumps {
        let _ = p.join();
    }
    // Segment names exist only between creation and every PE's mapping; if a PE died in
    // between, they are still there: sweep them.
    let host = rocshmem::gpu::host::HostRuntime::new();
    for pe in 0..o.n {
        rocshmem::gpu::GpuRuntime::discard_segment_name(&host, &segment_name(hub.uid.job_tag, pe));
    }
    std::process::exit(code);
}
