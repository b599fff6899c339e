//! `cargo xtask gen`: writes the generated files (codegen/generated-files.txt) from the table
//! in codegen/ and, with cbindgen, the Rust sources; removes files left over in the
//! generated-only folders. `cargo xtask gen --check` writes nothing and fails, listing them,
//! when a file is not current (what every build and the ctest `generated_files_current` check).

#[path = "../../codegen/mod.rs"]
mod codegen;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask gen [--check]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["gen"] => false,
        ["gen", "--check"] => true,
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ is in the repository").into();
    let version = match crate_version(&root) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("xtask gen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let files = codegen::outputs(&root, version);
    if check {
        let problems = codegen::check(&root, &files);
        for p in &problems {
            eprintln!("{p}");
        }
        if problems.is_empty() {
            println!("generated files: {} current", files.len());
            return ExitCode::SUCCESS;
        }
        eprintln!("{} generated file(s) not current: run `{}` and commit them", problems.len(), codegen::COMMAND);
        return ExitCode::FAILURE;
    }
    match write(&root, &files) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask gen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the files whose text changed and removes the left-over ones, saying which.
fn write(root: &Path, files: &[(String, String)]) -> Result<(), String> {
    let mut changed = 0;
    for (path, text) in files {
        let dst = root.join(path);
        if std::fs::read_to_string(&dst).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Some(dir) = dst.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&dst, text).map_err(|e| format!("writing {path}: {e}"))?;
        println!("wrote {path}");
        changed += 1;
    }
    for path in codegen::left_over(root, files) {
        std::fs::remove_file(root.join(&path)).map_err(|e| format!("removing {path}: {e}"))?;
        println!("removed {path} (no longer generated)");
        changed += 1;
    }
    println!("generated files: {} ({changed} changed)", files.len());
    Ok(())
}

/// The library's version, from the first `version = "X.Y.Z"` line of the root Cargo.toml (the
/// one source of the version, as in CMakeLists.txt).
fn crate_version(root: &Path) -> Result<(u32, u32, u32), String> {
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    let line = toml
        .lines()
        .find_map(|l| l.strip_prefix("version = \"")?.strip_suffix('"'))
        .ok_or("Cargo.toml: no `version = \"X.Y.Z\"` line")?;
    let parts: Vec<u32> = line.split('.').filter_map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [a, b, c] => Ok((*a, *b, *c)),
        _ => Err(format!("Cargo.toml: version \"{line}\" is not X.Y.Z")),
    }
}
