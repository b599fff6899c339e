//! Host atomics: checks, counts, and the transport of atomics (`transport`): CPU atomics on the
//! peer's mapped word on IPC (atomic with every other PE's atomics on it: the heaps are shared
//! memory); on RO every atomic is an MPI atomic (flushed), mapped peer or not. When the heap
//! is GPU memory, IPC runs each atomic as the stream amo kernel on the library's stream
//! (`transport::gpu_heap`), atomic with the device API's atomics on the same word.

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::transport::Transport;

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

/// Runs `op` on the element at symmetric `dst` on PE `pe`; returns the old value (or, for
/// `Fetch`, the current one).
pub fn amo<T: AmoWord>(rt: &Runtime, op: AmoOp, dst: *mut T, value: T, cond: T, pe: usize) -> Result<T> {
    let width = std::mem::size_of::<T>();
    let off = rt.heap.offset_of(dst as usize, width, "atomic target")?;
    if dst as usize % width != 0 {
        return Err(Error::invalid(format!("atomic target {dst:p} is not aligned to {width} bytes")));
    }
    let old = rt.net.amo().amo(&rt.heap, op, off, width, value.to_bits(), cond.to_bits(), pe)?;
    Stats::add(&rt.stats.atomics, 1);
    Ok(T::from_bits(old))
}
