//! Which GPU runtime this process uses (`ROCSHMEM_GPU`), and what a look for them finds.

use super::{GpuRuntime, cuda, hip, host};
use crate::error::{Error, Result};
use crate::log_info;
use std::sync::Arc;

/// How the platform is chosen (`ROCSHMEM_GPU`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Auto,
    Host,
    Nvidia,
    Amd,
}

impl Choice {
    pub fn parse(text: &str) -> Result<Choice> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Choice::Auto),
            "host" | "cpu" | "none" => Ok(Choice::Host),
            "nvidia" | "cuda" => Ok(Choice::Nvidia),
            "amd" | "hip" | "rocm" => Ok(Choice::Amd),
            other => Err(Error::invalid(format!("ROCSHMEM_GPU='{other}' is not one of auto, host, nvidia, amd"))),
        }
    }
}

/// What a look for GPU runtimes found, without choosing a device (for logs and rocshmem_info):
/// one line per GPU platform.
pub fn probe() -> Vec<String> {
    let hip_library = crate::env::Config::from_env().map(|c| c.hip_library).unwrap_or_default();
    let amd = match hip::Hip::load(&hip_library) {
        Ok(h) => h.summary(),
        Err(e) => format!("amd: not available ({e})"),
    };
    let nvidia = match cuda::Cuda::load() {
        Ok(c) => c.summary(),
        Err(e) => format!("nvidia: not available ({e})"),
    };
    vec![amd, nvidia]
}

/// The runtime for this process, chosen by `ROCSHMEM_GPU` (`choice_text`). `local_rank` is
/// this PE's index among the PEs of its node: a GPU platform uses device
/// `local_rank % device count` unless the program already chose a device. The AMD platform's
/// knobs (`ROCSHMEM_HEAP_ALLOCATOR_TYPE`, `ROCSHMEM_HIP_LIBRARY`) are read from the
/// environment here; a malformed allocator type is refused on every platform.
pub fn open(choice_text: &str, local_rank: usize) -> Result<Arc<dyn GpuRuntime>> {
    let choice = Choice::parse(choice_text)?;
    let cfg = crate::env::Config::from_env()?;
    let allocator = hip::HeapAllocator::parse(&cfg.heap_allocator_type)?;
    open_with(choice, local_rank, || hip::Hip::load(&cfg.hip_library), allocator, cuda::Cuda::load)
}

/// `what: ` in front of a runtime error's text, keeping its kind.
fn prefixed(what: &str, e: Error) -> Error {
    match e {
        Error::Unsupported(s) => Error::Unsupported(format!("{what}: {s}")),
        Error::Gpu(s) => Error::Gpu(format!("{what}: {s}")),
        other => other,
    }
}

/// [`open`] with the HIP and CUDA loaders given (tests pass ones that fail).
pub(crate) fn open_with(
    choice: Choice,
    local_rank: usize,
    load_hip: impl FnOnce() -> Result<hip::Hip>,
    allocator: Option<hip::HeapAllocator>,
    load_cuda: impl FnOnce() -> Result<cuda::Cuda>,
) -> Result<Arc<dyn GpuRuntime>> {
    let host = || -> Arc<dyn GpuRuntime> { Arc::new(host::HostRuntime::new()) };
    let rt: Arc<dyn GpuRuntime> = match choice {
        Choice::Host => host(),
        Choice::Amd => {
            let h = load_hip().map_err(|e| prefixed("ROCSHMEM_GPU=amd", e))?;
            Arc::new(hip::HipRuntime::new(h, local_rank, allocator).map_err(|e| prefixed("ROCSHMEM_GPU=amd", e))?)
        }
        Choice::Nvidia => {
            let t0 = std::time::Instant::now();
            let c = load_cuda().map_err(|e| Error::Unsupported(format!("ROCSHMEM_GPU=nvidia: {e}")))?;
            log_info!("rocshmem_init", "CUDA libraries loaded in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
            Arc::new(cuda::CudaRuntime::new(c, local_rank)?)
        }
        // AMD first (the product's first target), then NVIDIA, then the host platform.
        Choice::Auto => match load_hip().and_then(|h| h.device_count().map(|n| (h, n))) {
            Ok((h, n)) if n > 0 => Arc::new(hip::HipRuntime::new(h, local_rank, allocator)?),
            found => {
                match found {
                    Ok(_) => log_info!("rocshmem_init", "HIP runtime found but no AMD GPU"),
                    Err(e) => log_info!("rocshmem_init", "no HIP runtime ({e})"),
                }
                match load_cuda().and_then(|c| c.device_count().map(|n| (c, n))) {
                    Ok((c, n)) if n > 0 => Arc::new(cuda::CudaRuntime::new(c, local_rank)?),
                    Ok(_) => {
                        log_info!("rocshmem_init", "CUDA runtime found but no GPU: using the host platform");
                        host()
                    }
                    Err(e) => {
                        log_info!("rocshmem_init", "no GPU runtime ({e}): using the host platform");
                        host()
                    }
                }
            }
        },
    };
    log_info!("rocshmem_init", "platform {}: {}", rt.platform().name(), rt.describe());
    Ok(rt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Platform;

    #[test]
    fn choice_parses() {
        assert_eq!(Choice::parse("").unwrap(), Choice::Auto);
        assert_eq!(Choice::parse(" AUTO ").unwrap(), Choice::Auto);
        assert_eq!(Choice::parse("host").unwrap(), Choice::Host);
        assert_eq!(Choice::parse("nvidia").unwrap(), Choice::Nvidia);
        assert_eq!(Choice::parse("amd").unwrap(), Choice::Amd);
        assert!(Choice::parse("intel").unwrap_err().to_string().contains("ROCSHMEM_GPU"));
    }

    fn no_cuda() -> Result<cuda::Cuda> {
        Err(Error::Unsupported("libcudart not found (test)".into()))
    }

    fn no_hip() -> Result<hip::Hip> {
        Err(Error::Unsupported("libamdhip64 not found (test)".into()))
    }

    #[test]
    fn auto_falls_back_to_host_without_cuda() {
        let rt = open_with(Choice::Auto, 3, no_hip, None, no_cuda).unwrap();
        assert_eq!(rt.platform(), Platform::Host);
        assert!(!rt.separate_device_segment());
        assert!(rt.alloc_device(64).unwrap().is_none());
    }

    #[test]
    fn forced_platforms_fail_clearly() {
        let e = open_with(Choice::Nvidia, 0, no_hip, None, no_cuda).err().unwrap().to_string();
        assert!(e.contains("ROCSHMEM_GPU=nvidia") && e.contains("libcudart"), "{e}");
        let e = open_with(Choice::Amd, 0, no_hip, None, || panic!("amd must not load CUDA")).err().unwrap().to_string();
        assert!(e.contains("ROCSHMEM_GPU=amd") && e.contains("libamdhip64"), "{e}");
        assert_eq!(
            open_with(Choice::Host, 0, || panic!("host must not load HIP"), None, || panic!("host must not load CUDA"))
                .unwrap()
                .platform(),
            Platform::Host
        );
    }

    #[test]
    fn hip_without_an_amd_gpu() {
        // Where libamdhip64 is installed but sees no GPU (CI, this machine): amd refuses with one
        // message saying so, auto goes on to CUDA and then the host platform. Elsewhere (no HIP,
        // or an AMD GPU) there is nothing to check here (hip.rs checks the loader).
        match hip::Hip::load("") {
            Ok(h) if h.device_count().unwrap() == 0 => {}
            _ => return,
        }
        let e = open_with(Choice::Amd, 0, || hip::Hip::load(""), None, no_cuda).err().unwrap();
        assert!(matches!(e, Error::Gpu(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("ROCSHMEM_GPU=amd") && e.contains("libamdhip64") && e.contains("no AMD GPU"), "{e}");
        let mut tried_cuda = false;
        let load_cuda = || {
            tried_cuda = true;
            no_cuda()
        };
        let rt = open_with(Choice::Auto, 0, || hip::Hip::load(""), None, load_cuda).unwrap();
        assert_eq!(rt.platform(), Platform::Host);
        assert!(tried_cuda, "auto tries CUDA after a HIP without GPU");
    }
}
