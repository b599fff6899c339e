//! The helper every typed atomic name calls.

use super::*;
pub(crate) use crate::amo::AmoOp;
use crate::amo::AmoWord;
use std::ffi::c_int;

/// Runs `op` and returns the fetched value (ignored by the non-fetching names); zero bits
/// after reporting an error.
pub(crate) fn op<T: AmoWord>(
    call: &'static str,
    ctx: Option<rocshmem_ctx_t>,
    op: AmoOp,
    dest: *mut T,
    value: T,
    cond: T,
    pe: c_int,
) -> T {
    value_call(call, T::from_bits(0), || {
        let rt = rt()?;
        let pe = ctx_pe(rt, ctx, pe)?;
        crate::amo::amo(rt, op, dest, value, cond, pe)
    })
}

/// The zero of an atomic type (placeholder operand of operations that take none).
pub(crate) fn zero<T: AmoWord>() -> T {
    T::from_bits(0)
}
