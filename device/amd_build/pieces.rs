//! The second level of the products' cache: single steps kept by the hash of what they read.
//!
//! The first level (`cache`) keeps the products whole, by a hash of every file under device/: any
//! change there rebuilds them. But many changes leave what the compiler sees as it was (a
//! comment, a host-only or NVIDIA-only file, code no source instantiates), so each step is also
//! kept here by its input:
//! - each front end (a source compiled for one arch to unoptimised bitcode) by the source's
//!   preprocessed text (`clang -E -P`, about a third of a front end's time) and its flags: a
//!   comment or a branch for another platform costs the preprocessor only;
//! - the optimiser and the code generator (`opt -O3` of each arch's linked library, each stream
//!   kernel's code object: about 90 CPU seconds per arch) by the hash of their input bitcode: a
//!   change to the code costs the front ends it reaches and the optimiser of the modules whose
//!   bitcode it changes.
//!
//! The outputs are the same in every checkout folder because sources are named relative to the
//! root and each gets a fixed `-cuid` (plan::source_args), and no device source reads its own
//! line number (`__builtin_LINE`, `source_location`) or is compiled with debug information, so
//! the preprocessed text without its blank lines decides a front end's output.

use super::cache::cache_dir;
use super::shell::run_ok;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Entries kept (the newest by use): a run with a change makes at most 18 per arch (the front
/// ends of 13 sources and two stream modules, the library, two stream code objects: 126 with
/// five arches and HIP 5.2's two), 0.1-10 MB each; three runs' worth.
const KEEP: usize = 400;

pub(super) struct Pieces {
    dir: Option<PathBuf>,
    hits: Mutex<(usize, usize)>,
}

impl Pieces {
    /// The pieces' folder of the device cache (none without one: everything is made).
    pub(super) fn open() -> Pieces {
        let dir = cache_dir("amd-pieces");
        if let Some(d) = &dir {
            let _ = std::fs::create_dir_all(d);
        }
        Pieces { dir, hits: Mutex::new((0, 0)) }
    }

    /// Puts in `dest` the output of the step keyed `key`: from the cache, else made by `make`
    /// (which writes `dest`) and then kept.
    pub(super) fn get_or_make(
        &self,
        key: &str,
        dest: &Path,
        make: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let kept = self.dir.as_ref().map(|d| d.join(key));
        if let Some(k) = kept.as_ref().filter(|k| k.is_file()) {
            if std::fs::copy(k, dest).is_ok() {
                // The newest by use are kept (`trim`).
                let _ = std::fs::File::options().append(true).open(k).and_then(|f| f.set_modified(now()));
                self.hits.lock().unwrap().0 += 1;
                return Ok(());
            }
        }
        make()?;
        self.hits.lock().unwrap().1 += 1;
        if let Some(k) = kept {
            // Written beside, then renamed: a build beside this one never reads half a file.
            let tmp = k.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::copy(dest, &tmp).is_ok() {
                let _ = std::fs::rename(&tmp, &k);
            }
            let _ = std::fs::remove_file(&tmp);
        }
        Ok(())
    }

    /// Writes `out`, the front end's output of the compile `tool args -o out` run in `root`, from
    /// the cache when a compile with the same flags and preprocessed source made it before.
    /// `args` name no output (they are the key).
    pub(super) fn front_end(&self, tool: &Path, args: &[String], root: &Path, out: &Path) -> Result<(), String> {
        let ii = out.with_extension("ii");
        let pre = Command::new(tool)
            .current_dir(root)
            .args(args)
            .args(["-E", "-P", "-Wno-unused-command-line-argument", "-o"])
            .arg(&ii)
            .output()
            .map_err(|e| format!("{}: {e}", tool.display()))?;
        let compile = || run_ok(Command::new(tool).current_dir(root).args(args).arg("-o").arg(out)).map(|_| ());
        if !pre.status.success() {
            // The compile itself says what is wrong.
            let _ = std::fs::remove_file(&ii);
            return compile();
        }
        let text = std::fs::read(&ii).map_err(|e| format!("{}: {e}", ii.display()));
        let _ = std::fs::remove_file(&ii);
        let text = text?;
        // Blank lines stand where comments and directives were: they change nothing compiled
        // (no device source has a raw string literal, the one place a blank line is code).
        let code: Vec<&[u8]> =
            text.split(|b| *b == b'\n').filter(|l| l.iter().any(|b| !b.is_ascii_whitespace())).collect();
        let key = key_bytes("front", tool, args, root, &code.join(&b'\n'));
        self.get_or_make(&key, out, compile)
    }

    /// "N of M reused", for the products' warning lines.
    pub(super) fn summary(&self) -> String {
        let (hit, made) = *self.hits.lock().unwrap();
        format!("{hit} of {} compile steps reused (front ends, optimiser, code objects)", hit + made)
    }

    /// Removes all but the `KEEP` newest entries.
    pub(super) fn trim(&self) {
        let Some(d) = &self.dir else { return };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        entries.sort();
        for (_, old) in entries.iter().rev().skip(KEEP) {
            let _ = std::fs::remove_file(old);
        }
    }
}

fn now() -> std::time::SystemTime {
    std::time::SystemTime::now()
}

/// The key of a step: its kind, the tool (path and `--version`), its arguments with the source
/// root written as `.` (every checkout folder gives the same key), and the bytes of its input.
pub(super) fn key(kind: &str, tool: &Path, args: &[String], root: &Path, input: &Path) -> Result<String, String> {
    let bytes = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    Ok(key_bytes(kind, tool, args, root, &bytes))
}

/// `key` of an input given as bytes.
fn key_bytes(kind: &str, tool: &Path, args: &[String], root: &Path, input: &[u8]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    kind.hash(&mut h);
    tool_id(tool).hash(&mut h);
    let root = root.to_string_lossy();
    for a in args {
        a.replace(root.as_ref(), ".").hash(&mut h);
    }
    input.hash(&mut h);
    format!("{kind}-{:016x}", h.finish())
}

/// The arguments of a command as text (for `key`).
pub(super) fn args_of(c: &Command) -> Vec<String> {
    c.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
}

/// A tool's path and version text, asked once per tool and build.
fn tool_id(tool: &Path) -> String {
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(v) = seen.lock().unwrap().get(tool) {
        return v.clone();
    }
    let version = Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let id = format!("{}\n{version}", tool.display());
    seen.lock().unwrap().insert(tool.to_path_buf(), id.clone());
    id
}
