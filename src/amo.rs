//! Host atomics: real CPU atomics on the peer's mapped word, so they are atomic with respect
//! to every other PE's atomics on the same word (the heaps are shared memory). On the RO
//! backend every atomic is an MPI atomic (flushed), mapped peer or not.

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::sync::ring;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

pub use crate::transport::AmoOp;

/// A 4- or 8-byte element type usable with atomics, seen as its bits.
pub trait AmoWord: Copy + 'static {
    fn to_bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
}

macro_rules! amo_word {
    ($($t:ty)*) => {$(
        impl AmoWord for $t {
            fn to_bits(self) -> u64 {
                const { assert!(std::mem::size_of::<$t>() == 4 || std::mem::size_of::<$t>() == 8) };
                // SAFETY: same-size reinterpretation of a plain value.
                if std::mem::size_of::<$t>() == 4 {
                    unsafe { std::mem::transmute_copy::<$t, u32>(&self) as u64 }
                } else {
                    unsafe { std::mem::transmute_copy::<$t, u64>(&self) }
                }
            }
            fn from_bits(b: u64) -> Self {
                if std::mem::size_of::<$t>() == 4 {
                    unsafe { std::mem::transmute_copy::<u32, $t>(&(b as u32)) }
                } else {
                    unsafe { std::mem::transmute_copy::<u64, $t>(&b) }
                }
            }
        }
    )*};
}
amo_word!(i32 i64 u32 u64 isize usize f32 f64);

macro_rules! apply {
    ($a:expr, $op:expr, $v:expr, $cond:expr, $one:expr) => {
        match $op {
            AmoOp::Fetch => $a.load(SeqCst),
            AmoOp::Set => {
                $a.store($v, SeqCst);
                0
            }
            AmoOp::Swap => $a.swap($v, SeqCst),
            AmoOp::CompareSwap => match $a.compare_exchange($cond, $v, SeqCst, SeqCst) {
                Ok(old) | Err(old) => old,
            },
            AmoOp::FetchInc | AmoOp::Inc => $a.fetch_add($one, SeqCst),
            AmoOp::FetchAdd | AmoOp::Add => $a.fetch_add($v, SeqCst),
            AmoOp::FetchAnd | AmoOp::And => $a.fetch_and($v, SeqCst),
            AmoOp::FetchOr | AmoOp::Or => $a.fetch_or($v, SeqCst),
            AmoOp::FetchXor | AmoOp::Xor => $a.fetch_xor($v, SeqCst),
        }
    };
}

/// Runs `op` on the element at symmetric `dst` on PE `pe`; returns the old value (or, for
/// `Fetch`, the current one).
pub fn amo<T: AmoWord>(rt: &Runtime, op: AmoOp, dst: *mut T, value: T, cond: T, pe: usize) -> Result<T> {
    let width = std::mem::size_of::<T>();
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.ro() {
        // RO: every atomic goes through MPI (MPI atomics are atomic only among themselves).
        rt.heap.offset_of(dst as usize, width, "atomic target")?;
        if dst as usize % width != 0 {
            return Err(Error::invalid(format!("atomic target {dst:p} is not aligned to {width} bytes")));
        }
        let old = ro.amo(op, dst as usize, width, value.to_bits(), cond.to_bits(), pe)?;
        if op != AmoOp::Fetch && rt.heap.mapped(pe) {
            ring(&rt.heap.control(pe).header().data_bell);
        }
        Stats::add(&rt.stats.atomics, 1);
        return Ok(T::from_bits(old));
    }
    let remote = rt.heap.peer_addr(dst as usize, width, pe, "atomic target")?;
    rt.heap.require_host_access("host atomics")?;
    if remote as usize % width != 0 {
        return Err(Error::invalid(format!("atomic target {dst:p} is not aligned to {width} bytes")));
    }
    let (v, c) = (value.to_bits(), cond.to_bits());
    // SAFETY: `remote` is an aligned, mapped word of the right width.
    let old = unsafe {
        if width == 4 {
            let a = AtomicU32::from_ptr(remote.cast());
            apply!(a, op, v as u32, c as u32, 1u32) as u64
        } else {
            let a = AtomicU64::from_ptr(remote.cast());
            apply!(a, op, v, c, 1u64)
        }
    };
    if op != AmoOp::Fetch {
        ring(&rt.heap.control(pe).header().data_bell);
    }
    Stats::add(&rt.stats.atomics, 1);
    Ok(T::from_bits(old))
}
