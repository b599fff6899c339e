//! Device-module glue: `rocshmem_hipmodule_init` and the deprecated `rocshmem_get_device_ctx`.

use super::*;
use std::ffi::{c_int, c_void};

/// Copies the library's device globals (`ROCSHMEM_CTX_DEFAULT`, team handles) into a separately
/// loaded GPU module (a `hipModule_t` on AMD, a `CUmodule` on NVIDIA), stream-ordered on
/// `stream` (NULL: the per-thread default stream) and without synchronising, so it can be
/// captured in a graph. On the host platform there are no modules: this returns ROCSHMEM_ERROR
/// with a message saying so.
///
/// # Safety
/// `module` must be a loaded module and `stream` NULL or a stream of the platform's runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_hipmodule_init(module: *mut c_void, stream: *mut c_void) -> c_int {
    // SAFETY: the caller's module and stream.
    status_call("rocshmem_hipmodule_init", || unsafe { rt()?.module_init(module, stream) })
}

/// Deprecated upstream (use `rocshmem_hipmodule_init`): the default context's device handle
/// (`ROCSHMEM_CTX_DEFAULT.ctx_opaque`), or NULL before init.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_get_device_ctx() -> *mut c_void {
    value_call("rocshmem_get_device_ctx", std::ptr::null_mut(), || Ok(rt()?.ctxs.opaque(0)))
}
