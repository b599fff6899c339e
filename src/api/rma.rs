//! RMA: the byte forms (`putmem`/`getmem`) and the helpers every typed RMA name calls.

use super::*;
use crate::scalar::Scalar;
use std::ffi::{c_int, c_void};

/// `put` of `nelems` elements of `T`; also serves `put_nbi` (complete on return here).
pub(crate) fn put<T>(
    call: &'static str,
    ctx: Option<rocshmem_ctx_t>,
    dest: *mut T,
    src: *const T,
    nelems: usize,
    pe: c_int,
) {
    void_call(call, || {
        let rt = rt()?;
        let pe = ctx_pe(rt, ctx, pe)?;
        let bytes = crate::rma::byte_len(nelems, std::mem::size_of::<T>())?;
        // SAFETY: the caller's buffer; the symmetric side is checked.
        unsafe { crate::rma::put(rt, dest.cast(), src.cast(), bytes, pe) }
    })
}

/// `get` of `nelems` elements of `T`; also serves `get_nbi`.
pub(crate) fn get<T>(
    call: &'static str,
    ctx: Option<rocshmem_ctx_t>,
    dest: *mut T,
    src: *const T,
    nelems: usize,
    pe: c_int,
) {
    void_call(call, || {
        let rt = rt()?;
        let pe = ctx_pe(rt, ctx, pe)?;
        let bytes = crate::rma::byte_len(nelems, std::mem::size_of::<T>())?;
        // SAFETY: the caller's buffer; the symmetric side is checked.
        unsafe { crate::rma::get(rt, dest.cast(), src.cast(), bytes, pe) }
    })
}

pub(crate) fn p<T: Scalar>(call: &'static str, ctx: Option<rocshmem_ctx_t>, dest: *mut T, value: T, pe: c_int) {
    void_call(call, || {
        let rt = rt()?;
        let pe = ctx_pe(rt, ctx, pe)?;
        crate::rma::p(rt, dest, value, pe)
    })
}

/// Returns the element, or zero bits after reporting an error.
pub(crate) fn g<T: Scalar + Default>(call: &'static str, ctx: Option<rocshmem_ctx_t>, src: *const T, pe: c_int) -> T {
    value_call(call, T::default(), || {
        let rt = rt()?;
        let pe = ctx_pe(rt, ctx, pe)?;
        crate::rma::g(rt, src, pe)
    })
}

/// Copies `nelems` bytes from local `source` to symmetric `dest` on PE `pe`.
///
/// # Safety
/// `source` must be readable for `nelems` bytes; `dest` a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_putmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    put::<u8>("rocshmem_putmem", None, dest.cast(), source.cast(), nelems, pe)
}

/// Copies `nelems` bytes from symmetric `source` on PE `pe` to local `dest`.
///
/// # Safety
/// `dest` must be writable for `nelems` bytes; `source` a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_getmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    get::<u8>("rocshmem_getmem", None, dest.cast(), source.cast(), nelems, pe)
}

/// Non-blocking `rocshmem_putmem` (completed by `rocshmem_quiet`).
///
/// # Safety
/// As `rocshmem_putmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_putmem_nbi(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    put::<u8>("rocshmem_putmem_nbi", None, dest.cast(), source.cast(), nelems, pe)
}

/// Non-blocking `rocshmem_getmem` (completed by `rocshmem_quiet`).
///
/// # Safety
/// As `rocshmem_getmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_getmem_nbi(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    get::<u8>("rocshmem_getmem_nbi", None, dest.cast(), source.cast(), nelems, pe)
}

/// `rocshmem_putmem` on context `ctx` (`pe` numbered in the context's team).
///
/// # Safety
/// As `rocshmem_putmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_ctx_putmem(
    ctx: rocshmem_ctx_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    put::<u8>("rocshmem_ctx_putmem", Some(ctx), dest.cast(), source.cast(), nelems, pe)
}

/// `rocshmem_getmem` on context `ctx`.
///
/// # Safety
/// As `rocshmem_getmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_ctx_getmem(
    ctx: rocshmem_ctx_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    get::<u8>("rocshmem_ctx_getmem", Some(ctx), dest.cast(), source.cast(), nelems, pe)
}

/// `rocshmem_putmem_nbi` on context `ctx`.
///
/// # Safety
/// As `rocshmem_putmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_ctx_putmem_nbi(
    ctx: rocshmem_ctx_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    put::<u8>("rocshmem_ctx_putmem_nbi", Some(ctx), dest.cast(), source.cast(), nelems, pe)
}

/// `rocshmem_getmem_nbi` on context `ctx`.
///
/// # Safety
/// As `rocshmem_getmem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_ctx_getmem_nbi(
    ctx: rocshmem_ctx_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    get::<u8>("rocshmem_ctx_getmem_nbi", Some(ctx), dest.cast(), source.cast(), nelems, pe)
}
