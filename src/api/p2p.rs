//! The helpers every typed wait/test name calls.

use super::*;
use crate::p2p::Against;
use crate::scalar::Scalar;
use std::ffi::c_int;

/// A C array of `n` elements as a slice (`None` for NULL; empty for n = 0).
fn opt_slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    // SAFETY: the caller promises `n` readable elements when `p` is not NULL.
    (!p.is_null()).then(|| if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p, n) } })
}

fn need<'a, T>(p: *const T, n: usize, what: &'static str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    opt_slice(p, n).ok_or(Error::NullPointer(what))
}

pub(crate) fn wait_until<T: Scalar>(call: &'static str, ivar: *mut T, cmp: c_int, value: T) {
    void_call(call, || crate::p2p::wait_until(rt()?, ivar, cmp, value))
}

pub(crate) fn test<T: Scalar>(call: &'static str, ivar: *mut T, cmp: c_int, value: T) -> c_int {
    value_call(call, 0, || crate::p2p::test(rt()?, ivar, cmp, value).map(c_int::from))
}

pub(crate) fn wait_until_all<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    value: T,
) {
    void_call(call, || crate::p2p::wait_until_all(rt()?, ivars, n, opt_slice(status, n), cmp, Against::One(value)))
}

pub(crate) fn wait_until_all_vector<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    values: *const T,
) {
    void_call(call, || {
        let v = need(values, n, "cmp_values")?;
        crate::p2p::wait_until_all(rt()?, ivars, n, opt_slice(status, n), cmp, Against::Each(v))
    })
}

pub(crate) fn wait_until_any<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    value: T,
) -> usize {
    value_call(call, usize::MAX, || {
        crate::p2p::wait_until_any(rt()?, ivars, n, opt_slice(status, n), cmp, Against::One(value))
    })
}

pub(crate) fn wait_until_any_vector<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    status: *const c_int,
    cmp: c_int,
    values: *const T,
) -> usize {
    value_call(call, usize::MAX, || {
        let v = need(values, n, "cmp_values")?;
        crate::p2p::wait_until_any(rt()?, ivars, n, opt_slice(status, n), cmp, Against::Each(v))
    })
}

fn indices_out<'a>(p: *mut usize, n: usize) -> Result<&'a mut [usize]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Error::NullPointer("indices"));
    }
    // SAFETY: the caller provides room for n indices.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

pub(crate) fn wait_until_some<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    indices: *mut usize,
    status: *const c_int,
    cmp: c_int,
    value: T,
) -> usize {
    value_call(call, 0, || {
        let out = indices_out(indices, n)?;
        crate::p2p::wait_until_some(rt()?, ivars, n, out, opt_slice(status, n), cmp, Against::One(value))
    })
}

pub(crate) fn wait_until_some_vector<T: Scalar>(
    call: &'static str,
    ivars: *mut T,
    n: usize,
    indices: *mut usize,
    status: *const c_int,
    cmp: c_int,
    values: *const T,
) -> usize {
    value_call(call, 0, || {
        let out = indices_out(indices, n)?;
        let v = need(values, n, "cmp_values")?;
        crate::p2p::wait_until_some(rt()?, ivars, n, out, opt_slice(status, n), cmp, Against::Each(v))
    })
}
