//! `rocshmem_info`: version, build configuration, platforms and backends, and every
//! `ROCSHMEM_*` variable with its value and default. Needs no GPU, MPI or NIC.

use rocshmem::env;

fn usage() -> ! {
    println!(
        "usage: rocshmem_info [--env] [--env:all]\n\
         \n  (no option)  version, build configuration and variables\n  --env        only the variables\n  --env:all    also the variables rocshmem-run sets for its children"
    );
    std::process::exit(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut only_env = false;
    let mut all = false;
    for a in &args {
        match a.as_str() {
            "--env" => only_env = true,
            "--env:all" | "--env:full" => {
                only_env = true;
                all = true
            }
            "-h" | "--help" => usage(),
            other => {
                eprintln!("rocshmem_info: unknown option {other}");
                usage()
            }
        }
    }
    if !only_env {
        println!("rocSHMEM (Rust core) {}", rocshmem::VERSION);
        println!("  vendor string     : {}", rocshmem::api::ROCSHMEM_VENDOR_STRING);
        println!(
            "  OpenSHMEM version : {}.{}",
            rocshmem::api::ROCSHMEM_MAJOR_VERSION,
            rocshmem::api::ROCSHMEM_MINOR_VERSION
        );
        println!("  platforms         : host (built-in); amd (HIP) and nvidia (CUDA), loaded at run time");
        for (i, line) in rocshmem::gpu::select::probe().iter().enumerate() {
            println!("  {:<18}: {line}", if i == 0 { "GPU runtime found" } else { "" });
        }
        println!("  backends          : ipc");
        println!(
            "  MPI bootstrap     : {}",
            if cfg!(feature = "mpi") {
                "yes (libmpi loaded at run time)"
            } else {
                "no (built without the mpi feature)"
            }
        );
        println!("  device ABI version: {}", rocshmem::device_abi::ROCSHMEM_DEVICE_ABI_VERSION);
        println!();
    }
    match env::Config::from_env() {
        Ok(_) => {}
        Err(e) => println!("warning: {e}\n"),
    }
    println!("Environment variables (value, default, meaning):");
    print!("{}", env::describe(all));
}
