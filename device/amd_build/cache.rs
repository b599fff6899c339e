//! Reuse of the products: `inputs.hash` beside them in the build folder, and a cache of earlier
//! builds by that hash shared between build folders (`ROCSHMEM_DEVICE_CACHE`).

use super::plan::file_arch;
use super::shell::{env, warn};
use std::path::{Path, PathBuf};

/// Whether the products in `work` are current for `hash`, or were copied from `cache` (each
/// said in a warning line). Otherwise `work` holds no product.
pub(super) fn reuse(work: &Path, hash: &str, cache: Option<&Path>) -> bool {
    if std::fs::read_to_string(work.join("inputs.hash")).is_ok_and(|h| h.trim() == hash)
        && product_files(work).is_some_and(|f| f.iter().all(|f| work.join(f).is_file()))
    {
        warn(&format!("AMD device library up to date (inputs unchanged): {}", work.display()));
        return true;
    }
    clear_products(work);
    if let Some(c) = cache {
        match from_cache(c, work, hash) {
            Ok(true) => {
                warn(&format!("AMD device library from the cache (inputs unchanged): {}", c.display()));
                return true;
            }
            Ok(false) => {}
            Err(e) => warn(&format!("AMD products cache {} not used: {e}", c.display())),
        }
    }
    clear_products(work);
    false
}

/// Writes `products.txt` (what the CMake build stages and installs, `files`, and what build.rs
/// embeds, `stream`) and `inputs.hash` (which marks the products current), and keeps the
/// products in `cache`. Nothing when nothing was built.
pub(super) fn finish(
    work: &Path,
    hash: &str,
    cache: Option<&Path>,
    built: &[(String, PathBuf)],
    archive_arches: &[String],
    stream: &[String],
) {
    let bc_names: Vec<String> = built.iter().map(|(a, _)| file_arch(a).to_string()).collect();
    let mut files: Vec<String> = bc_names.iter().map(|a| format!("librocshmem_device_{a}.bc")).collect();
    if !archive_arches.is_empty() {
        files.push("librocshmem_device.a".into());
    }
    if files.is_empty() {
        return;
    }
    let text = format!(
        "archive_arches={}\nbitcode_arches={}\nfiles={}\nstream={}\n",
        archive_arches.join(";"),
        bc_names.join(";"),
        files.join(";"),
        stream.join(";")
    );
    let manifest = work.join("products.txt");
    if let Err(e) = std::fs::write(&manifest, text).and_then(|_| std::fs::write(work.join("inputs.hash"), hash)) {
        warn(&format!("AMD products manifest not written: {e}"));
    }
    if let Some(c) = cache {
        if let Err(e) = to_cache(work, c) {
            warn(&format!("AMD products not cached in {}: {e}", c.display()));
        }
    }
}

/// Every file under `dir`, recursively, sorted.
pub(super) fn files_under(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files_under(&p, acc);
        } else {
            acc.push(p);
        }
    }
}

/// A hash of everything the products depend on: everything under device/ (this build code,
/// device/amd_build/, included), the public headers they include, the arch plan and the
/// compilers.
pub fn inputs_hash(root: &Path, plan: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    for d in ["device", "include/rocshmem"] {
        files_under(&root.join(d), &mut files);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    plan.hash(&mut h);
    for f in files {
        f.strip_prefix(root).unwrap_or(&f).hash(&mut h);
        std::fs::read(&f).unwrap_or_default().hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// The products of a previous run in `work` (deleted before a new one and in `off` mode).
pub(super) fn clear_products(work: &Path) {
    for e in std::fs::read_dir(work).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("librocshmem_device")
            || name.ends_with(".hipfb")
            || name == "products.txt"
            || name == "inputs.hash"
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The product files products.txt in `work` lists (staged ones, then the stream kernels).
pub(super) fn product_files(work: &Path) -> Option<Vec<String>> {
    let m = std::fs::read_to_string(work.join("products.txt")).ok()?;
    Some(
        m.lines()
            .filter_map(|l| l.strip_prefix("files=").or_else(|| l.strip_prefix("stream=")))
            .flat_map(|f| f.split(';'))
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
    )
}

/// Copies the products of an earlier build with the same inputs from `cache` (a folder named by
/// the inputs hash under the AMD cache folder) into `work`: true when it had them all.
pub(super) fn from_cache(cache: &Path, work: &Path, hash: &str) -> Result<bool, String> {
    let Some(files) = product_files(cache) else { return Ok(false) };
    let mut names: Vec<&str> = files.iter().map(String::as_str).collect();
    names.push("products.txt");
    if !cache_get(cache, &names, work)? {
        return Ok(false);
    }
    std::fs::write(work.join("inputs.hash"), hash).map_err(|e| e.to_string())?;
    Ok(true)
}

pub(super) fn to_cache(work: &Path, cache: &Path) -> Result<(), String> {
    let files = product_files(work).ok_or("no products.txt")?;
    let mut names: Vec<&str> = files.iter().map(String::as_str).collect();
    names.push("products.txt");
    cache_put(work, &names, cache)
}

/// The folder that keeps device products by the hash of their inputs, shared by every cargo
/// profile and build folder that names it: `$ROCSHMEM_DEVICE_CACHE/<kind>` (CI: under
/// /var/cache/rocshmem-ci), else `<cargo target folder>/device-cache/<kind>`, so that the dev
/// and release profiles of one build folder compile the same device code once. None outside a
/// build script without that variable (device/amd_main.rs).
pub fn cache_dir(kind: &str) -> Option<PathBuf> {
    if let Some(d) = env("ROCSHMEM_DEVICE_CACHE") {
        return Some(PathBuf::from(d).join(kind));
    }
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    Some(out.ancestors().nth(4)?.join("device-cache").join(kind))
}

/// Copies `files` from `cache` into `work`: true when the cache had them all (false, nothing
/// copied, when it had not).
pub fn cache_get(cache: &Path, files: &[&str], work: &Path) -> Result<bool, String> {
    if !files.iter().all(|f| cache.join(f).is_file()) {
        return Ok(false);
    }
    for f in files {
        std::fs::copy(cache.join(f), work.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    Ok(true)
}

/// Keeps `files` of `work` in `cache` for later builds with the same inputs (written to a
/// temporary folder, then renamed, so that a reader never sees half of it), and removes all but
/// the four newest entries beside it.
pub fn cache_put(work: &Path, files: &[&str], cache: &Path) -> Result<(), String> {
    let parent = cache.parent().ok_or("no parent")?;
    let tmp = parent.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    for f in files {
        std::fs::copy(work.join(f), tmp.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    let _ = std::fs::remove_dir_all(cache);
    std::fs::rename(&tmp, cache).map_err(|e| e.to_string())?;
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(parent)
        .map_err(|e| e.to_string())?
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    entries.sort();
    for (_, old) in entries.iter().rev().skip(4) {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
}
