//! Device-module glue: `rocshmem_hipmodule_init` and the deprecated `rocshmem_get_device_ctx`.

use super::*;
use std::ffi::{c_int, c_void};

/// Copies the library's device globals (`ROCSHMEM_CTX_DEFAULT`, team handles) into a separately
/// loaded GPU module, stream-ordered. Needs a GPU runtime: on the host platform there are no
/// modules, so this returns ROCSHMEM_ERROR with a message saying so.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_hipmodule_init(module: *mut c_void, stream: *mut c_void) -> c_int {
    status_call("rocshmem_hipmodule_init", || {
        let rt = rt()?;
        let _ = (module, stream);
        Err(Error::Unsupported(format!(
            "rocshmem_hipmodule_init needs a GPU runtime; this process runs the {} platform, where device code \
             is linked in and needs no module initialisation",
            rt.gpu.platform().name()
        )))
    })
}

/// Deprecated upstream (use `rocshmem_hipmodule_init`): the default context's device handle
/// (`ROCSHMEM_CTX_DEFAULT.ctx_opaque`), or NULL before init.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_get_device_ctx() -> *mut c_void {
    value_call("rocshmem_get_device_ctx", std::ptr::null_mut(), || Ok(rt()?.ctxs.opaque(0)))
}
