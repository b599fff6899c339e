//! The modules of the stream helper kernels (device/stream/module_core.cu and module_reduce.cu),
//! loaded at run time by a GPU platform: PTX on NVIDIA (`cuda.rs`), code objects on AMD
//! (`hip.rs`), embedded in the library at build time. Two modules: the 14 kernels of the untyped
//! calls, and the 163 reductions.
//!
//! Init only starts a thread that loads the core module and fills its device globals with what
//! init hands it ([`FillGlobals`]: `Runtime::module_init` on the library's stream once the
//! runtime is up), and then waits: the
//! reductions' module (on NVIDIA 5 MB of PTX: measured 20.7 s to JIT on an H200 with a cold JIT
//! cache, 30 ms cached) is loaded by the same thread when the first reduction asks for it, so a
//! program that never reduces on a stream never pays for it. Kernels are resolved on demand; a
//! launch waits for its module. A call made during graph capture never loads a module itself
//! (the loader thread runs in relaxed capture mode).

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Arc, Condvar, Mutex};

/// What the loader needs from a GPU runtime.
pub trait ModuleApi: Send + Sync + 'static {
    /// On the initialising thread: what a loader thread needs to act for it (CUDA: its context;
    /// HIP: its device).
    fn binding(&self) -> usize;
    /// On the loader thread: takes the binding and relaxes the thread's stream-capture mode, so
    /// that loading never interferes with a capture in progress on another thread.
    fn bind_loader(&self, binding: usize);
    /// Loads one module image; returns its handle and how it was loaded (for the log).
    fn load(&self, image: &[u8]) -> Result<(usize, String)>;
    /// The function `name` of a loaded module.
    fn function(&self, module: usize, name: &CString) -> Result<usize>;
    /// Waits for the work enqueued on `stream` (the library's own stream).
    fn sync(&self, stream: usize) -> Result<()>;
    /// Loads every function of a loaded module now and returns them by name (empty where the
    /// runtime cannot: each is then resolved at its first launch).
    fn preload(&self, module: usize) -> Result<Vec<(String, usize)>> {
        let _ = module;
        Ok(Vec::new())
    }
}

#[derive(Default)]
struct State {
    /// Per module (0: core, 1: reductions): the loaded module, or why it is not.
    modules: [Option<std::result::Result<usize, String>>; 2],
    started: bool,
    /// A kernel of the reductions' module was asked for: the loader thread loads it.
    reduce_wanted: bool,
    /// Finalize: the loader thread stops instead of waiting for a request.
    closing: bool,
    /// Every module is loaded at start (`start`'s `all_now`), and no kernel is launched before
    /// they all are.
    all_now: bool,
    functions: HashMap<String, usize>,
}

/// The two modules of one process, and the kernels resolved so far.
#[derive(Default)]
pub struct Modules {
    state: Mutex<State>,
    cv: Condvar,
}

impl Modules {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, which: usize, r: std::result::Result<usize, String>) {
        self.lock().modules[which] = Some(r);
        self.cv.notify_all();
    }

    /// Stops the loader thread and waits until it is done with every module it started
    /// (loaded or failed): it uses the runtime, so finalize must not free it under the thread
    /// (measured on NVIDIA: a segfault at exit in 12 of 104 short GPU tests while a module was
    /// still JIT-loading). A reductions' module nobody asked for is not loaded.
    pub fn wait_loaded(&self) {
        let mut s = self.lock();
        s.closing = true;
        self.cv.notify_all();
        while s.started && s.modules.iter().any(|m| m.is_none()) {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits up to `limit` for the core module to be loaded (or to have failed); true if it is
    /// settled. Init calls it last: a module the library carries code for this GPU for loads in
    /// a few ms, which the first `*_on_stream` call would otherwise wait for (2.4 ms on an
    /// H200), while a JIT from PTX (hundreds of ms cold) goes on in the background.
    pub fn wait_core(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut s = self.lock();
        while s.started && s.modules[0].is_none() {
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            s = self.cv.wait_timeout(s, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }

    /// The loader thread, between the two modules: true once the reductions are wanted,
    /// false if finalize came first.
    fn reduce_requested(&self) -> bool {
        let mut s = self.lock();
        while !s.reduce_wanted && !s.closing {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.reduce_wanted
    }

    /// The kernel `rocshmemi_stream_<kernel>`, waiting for its module if it is still loading.
    pub fn function(&self, api: &dyn ModuleApi, kernel: &str) -> Result<*mut c_void> {
        let which = usize::from(kernel.starts_with("reduce_"));
        let mut s = self.lock();
        // `all_now` (RO): the first launch waits until every module is loaded, so that no stream
        // kernel runs (and perhaps waits for the proxy) while the loader thread still loads one.
        while s.all_now && s.started && !s.closing && s.modules.iter().any(|m| m.is_none()) {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if let Some(f) = s.functions.get(kernel) {
            return Ok(*f as *mut c_void);
        }
        if !s.started {
            return Err(Error::Gpu("the stream kernels were not started (rocshmem_init did not finish)".into()));
        }
        if which == 1 && !s.reduce_wanted {
            s.reduce_wanted = true;
            self.cv.notify_all();
        }
        while s.modules[which].is_none() {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let module = match s.modules[which].as_ref().unwrap() {
            Ok(m) => *m,
            Err(e) => return Err(Error::Unsupported(e.clone())),
        };
        let name = CString::new(format!("rocshmemi_stream_{kernel}")).map_err(|_| Error::invalid("kernel name"))?;
        let f = api.function(module, &name)?;
        s.functions.insert(kernel.to_string(), f);
        Ok(f as *mut c_void)
    }
}

/// Starts the loader thread (called on the thread that initialises, whose context or device
/// the modules belong to). `images` are the core and reductions' modules, None when the library
/// was built without them (`not_built` then says why, at the first `*_on_stream` call).
/// `all_now`: load the reductions' module right away too, not at the first reduction (RO: no
/// module may load while a stream kernel waits for the proxy, see [`ModuleApi::preload`]).
pub fn start<A: ModuleApi>(
    api: &Arc<A>,
    m: &Arc<Modules>,
    images: Option<[&'static [u8]; 2]>,
    not_built: &'static str,
    lib_stream: usize,
    fill: FillGlobals,
    all_now: bool,
) {
    {
        let mut s = m.lock();
        s.started = true;
        s.reduce_wanted |= all_now;
        s.all_now = all_now;
    }
    let Some(images) = images else {
        m.set(0, Err(not_built.into()));
        m.set(1, Err(not_built.into()));
        return;
    };
    let (api, mine, binding) = (Arc::clone(api), Arc::clone(m), api.binding());
    let spawned = std::thread::Builder::new().name("rocshmem-modules".into()).spawn(move || {
        api.bind_loader(binding);
        for (which, image) in images.iter().enumerate() {
            let what = ["stream kernels", "reduce_on_stream kernels"][which];
            if which == 1 && !mine.reduce_requested() {
                mine.set(1, Err("rocshmem_finalize came before any reduction on a stream".into()));
                break;
            }
            let t0 = std::time::Instant::now();
            let r = load(api.as_ref(), image, lib_stream, &fill).map_err(|e| format!("loading the {what}: {e}"));
            // Every kernel loaded now, none at its first launch (ModuleApi::preload).
            let preloaded = match &r {
                Ok((module, _)) => match api.preload(*module) {
                    Ok(fs) => {
                        let n = fs.len();
                        let mut s = mine.lock();
                        for (name, f) in fs {
                            if let Some(k) = name.strip_prefix("rocshmemi_stream_") {
                                s.functions.insert(k.to_string(), f);
                            }
                        }
                        n
                    }
                    Err(e) => {
                        crate::log_info!(
                            "rocshmem_init",
                            "{what}: kernels not preloaded ({e}): each loads at its first launch"
                        );
                        0
                    }
                },
                Err(_) => 0,
            };
            crate::log_info!(
                "rocshmem_init",
                "{what}: module {} in {:.1} ms ({}, then device globals; {preloaded} kernels loaded)",
                if r.is_ok() { "ready" } else { "failed" },
                t0.elapsed().as_secs_f64() * 1e3,
                match &r {
                    Ok((_, how)) => how.as_str(),
                    Err(e) => e.as_str(),
                }
            );
            mine.set(which, r.map(|(m, _)| m));
        }
    });
    if let Err(e) = spawned {
        let why = format!("cannot start the thread that loads the stream kernels: {e}");
        m.set(0, Err(why.clone()));
        m.set(1, Err(why));
    }
}

/// Fills the device globals of a loaded module (`Runtime::module_init`) on the library's stream
/// (the arguments: module, stream), once the runtime is up: given by init, which knows the
/// runtime; `gpu/` does not.
pub type FillGlobals = Arc<dyn Fn(usize, usize) -> Result<()> + Send + Sync>;

/// Loads one image and fills its device globals with `fill`; returns the module and how it was
/// loaded.
fn load(api: &dyn ModuleApi, image: &[u8], lib_stream: usize, fill: &FillGlobals) -> Result<(usize, String)> {
    let (module, how) = api.load(image)?;
    fill(module, lib_stream)?;
    // Wait for the copies on the library's stream only.
    api.sync(lib_stream)?;
    Ok((module, how))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// What init's globals fill answers while no runtime is up.
    fn no_runtime() -> FillGlobals {
        Arc::new(|_, _| Err(Error::NotInitialized))
    }

    /// Loads succeed (a fake handle) and are counted; functions resolve to fixed handles.
    #[derive(Default)]
    struct FakeApi {
        loads: AtomicUsize,
        bound: AtomicUsize,
        /// Calls of `function` (a driver lookup, which may load the kernel then).
        lookups: AtomicUsize,
        /// `preload` names one kernel per module.
        preloads: bool,
    }

    impl ModuleApi for FakeApi {
        fn binding(&self) -> usize {
            7
        }
        fn bind_loader(&self, binding: usize) {
            self.bound.store(binding, Ordering::SeqCst);
        }
        fn load(&self, image: &[u8]) -> Result<(usize, String)> {
            self.loads.fetch_add(1, Ordering::SeqCst);
            Ok((0x1000 + image.len(), "fake".into()))
        }
        fn function(&self, module: usize, name: &CString) -> Result<usize> {
            self.lookups.fetch_add(1, Ordering::SeqCst);
            Ok(module + name.as_bytes().len())
        }
        fn sync(&self, _: usize) -> Result<()> {
            Ok(())
        }
        fn preload(&self, module: usize) -> Result<Vec<(String, usize)>> {
            if !self.preloads {
                return Ok(Vec::new());
            }
            let name = if module == 0x1001 { "rocshmemi_stream_putmem" } else { "rocshmemi_stream_reduce_int_sum" };
            Ok(vec![(name.to_string(), module + 7)])
        }
    }

    #[test]
    fn all_now_loads_every_module_and_kernel_at_start() {
        static CORE: [u8; 1] = [1];
        static REDUCE: [u8; 2] = [2, 3];
        let api = Arc::new(FakeApi { preloads: true, ..Default::default() });
        let m = Arc::new(Modules::default());
        start(&api, &m, Some([&CORE, &REDUCE]), "unused", 0, Arc::new(|_, _| Ok(())), true);
        // Both modules load with no kernel asked for (RO: none may load while a stream kernel
        // waits for the proxy).
        let t0 = std::time::Instant::now();
        while api.loads.load(Ordering::SeqCst) < 2 {
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(30),
                "the reductions' module was not loaded at start"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        m.wait_loaded();
        assert_eq!(m.function(api.as_ref(), "putmem").unwrap() as usize, 0x1001 + 7);
        assert_eq!(m.function(api.as_ref(), "reduce_int_sum").unwrap() as usize, 0x1002 + 7);
        assert_eq!(api.lookups.load(Ordering::SeqCst), 0, "preloaded kernels need no lookup at their first launch");
        // A kernel the preload did not name is still looked up.
        assert!(m.function(api.as_ref(), "quiet").is_ok());
        assert_eq!(api.lookups.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn with_all_now_the_first_launch_waits_for_every_module() {
        static CORE: [u8; 1] = [1];
        static REDUCE: [u8; 2] = [2, 3];
        let api = Arc::new(FakeApi::default());
        let m = Arc::new(Modules::default());
        // The reductions' module loads until `go` is set (its globals' fill waits).
        let go = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let g = Arc::clone(&go);
        let fill: FillGlobals = Arc::new(move |module, _| {
            while module == 0x1002 && !g.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(())
        });
        start(&api, &m, Some([&CORE, &REDUCE]), "unused", 0, fill, true);
        let (m2, api2) = (Arc::clone(&m), Arc::clone(&api));
        let launch = std::thread::spawn(move || m2.function(api2.as_ref(), "putmem").map(|f| f as usize));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!launch.is_finished(), "a core kernel was handed out while the reductions' module still loaded");
        go.store(true, Ordering::SeqCst);
        assert!(launch.join().unwrap().is_ok());
        m.wait_loaded();
    }

    #[test]
    fn not_built_says_why() {
        let api = Arc::new(FakeApi::default());
        let m = Arc::new(Modules::default());
        let e = m.function(api.as_ref(), "putmem").unwrap_err().to_string();
        assert!(e.contains("not started"), "{e}");
        start(&api, &m, None, "built without them (test)", 0, no_runtime(), false);
        for k in ["putmem", "reduce_int_sum"] {
            let e = m.function(api.as_ref(), k).unwrap_err().to_string();
            assert!(e.contains("built without them (test)"), "{k}: {e}");
        }
        m.wait_loaded();
        assert_eq!(api.loads.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn loader_thread_loads_core_then_reductions_on_demand() {
        static CORE: [u8; 3] = [1, 2, 3];
        static REDUCE: [u8; 5] = [4, 5, 6, 7, 8];
        let api = Arc::new(FakeApi::default());
        let m = Arc::new(Modules::default());
        start(&api, &m, Some([&CORE, &REDUCE]), "unused", 0, no_runtime(), false);
        // The module loads, then filling its device globals fails (no runtime is up), and every kernel of it reports that failure, naming the module.
        let e = m.function(api.as_ref(), "quiet").unwrap_err().to_string();
        assert!(e.contains("loading the stream kernels"), "{e}");
        assert_eq!(api.bound.load(Ordering::SeqCst), 7, "the loader thread took the initialising thread's binding");
        assert_eq!(api.loads.load(Ordering::SeqCst), 1, "the reductions are not loaded until asked for");
        let e = m.function(api.as_ref(), "reduce_int_sum").unwrap_err().to_string();
        assert!(e.contains("loading the reduce_on_stream kernels"), "{e}");
        assert_eq!(api.loads.load(Ordering::SeqCst), 2);
        m.wait_loaded();
    }

    #[test]
    fn init_waits_for_the_core_module_up_to_its_bound() {
        static CORE: [u8; 2] = [1, 2];
        let api = Arc::new(FakeApi::default());
        let m = Arc::new(Modules::default());
        assert!(m.wait_core(std::time::Duration::ZERO), "nothing started: nothing to wait for");
        // A load that takes until `go` is set (a JIT): the wait gives up at its bound.
        let go = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let g = Arc::clone(&go);
        let slow: FillGlobals = Arc::new(move |_, _| {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(())
        });
        start(&api, &m, Some([&CORE, &CORE]), "unused", 0, slow, false);
        let t0 = std::time::Instant::now();
        assert!(!m.wait_core(std::time::Duration::from_millis(20)));
        assert!(t0.elapsed() >= std::time::Duration::from_millis(20));
        go.store(true, Ordering::SeqCst);
        assert!(m.wait_core(std::time::Duration::from_secs(30)), "settled once the load ends");
        assert!(m.function(api.as_ref(), "putmem").is_ok());
        m.wait_loaded();
    }

    #[test]
    fn finalize_before_any_reduction_skips_their_module() {
        static CORE: [u8; 1] = [1];
        let api = Arc::new(FakeApi::default());
        let m = Arc::new(Modules::default());
        start(&api, &m, Some([&CORE, &CORE]), "unused", 0, no_runtime(), false);
        m.wait_loaded();
        assert_eq!(api.loads.load(Ordering::SeqCst), 1);
        let e = m.function(api.as_ref(), "reduce_long_max").unwrap_err().to_string();
        assert!(e.contains("rocshmem_finalize came before any reduction"), "{e}");
    }
}
