//! Host contexts.

use super::*;
use crate::team::WORLD_SLOT;
use std::ffi::c_int;

/// Creates a host context on the world team (`options` are recorded, as upstream they do not
/// change behaviour). Returns 0, or non-zero when ROCSHMEM_MAX_NUM_HOST_CONTEXTS are in use.
///
/// # Safety
/// `ctx` must point to a writable `rocshmem_ctx_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_ctx_create(options: i64, ctx: *mut rocshmem_ctx_t) -> c_int {
    status_call("rocshmem_ctx_create", || {
        if ctx.is_null() {
            return Err(Error::NullPointer("ctx"));
        }
        let rt = rt()?;
        let world = rt.teams.handle(WORLD_SLOT);
        let c = rt.ctxs.create(options, world.cast())?;
        // SAFETY: checked non-null.
        unsafe { *ctx = rocshmem_ctx_t { ctx_opaque: rt.ctxs.opaque(c.index), team_opaque: world.cast() } };
        Ok(())
    })
}

/// Destroys a context from `rocshmem_ctx_create` after completing its operations.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_ctx_destroy(ctx: rocshmem_ctx_t) {
    void_call("rocshmem_ctx_destroy", || {
        let rt = rt()?;
        if ctx.ctx_opaque.is_null() {
            return Err(Error::invalid("the default context cannot be destroyed"));
        }
        let c = rt.ctxs.get(ctx.ctx_opaque)?;
        crate::rma::quiet();
        rt.ctxs.destroy(c)
    })
}
