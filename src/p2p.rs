//! Point-to-point synchronisation: wait until / test on symmetric variables of this PE.
//!
//! Every wait polls the variables with back-off (spin, yield, then sleeps on this PE's data
//! doorbell of up to 1 ms: `sync::wait_until`) under the hang watchdog. On a heap of GPU memory
//! each poll copies the variables through the GPU runtime (`SymmetricHeap::read`).

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::scalar::Scalar;
use std::cmp::Ordering;

/// Upstream's `rocshmem_cmps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    pub fn from_code(code: i32) -> Result<Cmp> {
        Ok(match code {
            0 => Cmp::Eq,
            1 => Cmp::Ne,
            2 => Cmp::Gt,
            3 => Cmp::Ge,
            4 => Cmp::Lt,
            5 => Cmp::Le,
            _ => {
                return Err(Error::invalid(format!(
                    "cmp={code} is not a ROCSHMEM_CMP_* value (EQ=0, NE=1, GT=2, GE=3, LT=4, LE=5)"
                )));
            }
        })
    }

    pub fn holds<T: Scalar>(self, a: T, b: T) -> bool {
        let o = T::compare(a, b);
        match self {
            Cmp::Eq => o == Some(Ordering::Equal),
            Cmp::Ne => o != Some(Ordering::Equal),
            Cmp::Gt => o == Some(Ordering::Greater),
            Cmp::Ge => matches!(o, Some(Ordering::Greater | Ordering::Equal)),
            Cmp::Lt => o == Some(Ordering::Less),
            Cmp::Le => matches!(o, Some(Ordering::Less | Ordering::Equal)),
        }
    }
}

/// The symmetric variables `ivars[0..n]` of this PE, checked.
fn check_ivars<T>(rt: &Runtime, ivars: *const T, n: usize) -> Result<()> {
    if ivars.is_null() {
        return Err(Error::NullPointer("ivars"));
    }
    let bytes = crate::rma::byte_len(n.max(1), std::mem::size_of::<T>())?;
    rt.heap.offset_of(ivars as usize, bytes, "ivars").map(|_| ())
}

/// What to compare element `i` with: one value for all, or one each.
pub enum Against<'a, T> {
    One(T),
    Each(&'a [T]),
}

impl<T: Copy> Against<'_, T> {
    fn at(&self, i: usize) -> T {
        match self {
            Against::One(v) => *v,
            Against::Each(v) => v[i],
        }
    }
}

fn satisfied<T: Scalar>(rt: &Runtime, ivars: *const T, i: usize, cmp: Cmp, against: &Against<'_, T>) -> Result<bool> {
    // SAFETY: i < n and ivars[0..n] was checked to be inside this PE's heap.
    Ok(cmp.holds(rt.heap.read(unsafe { ivars.add(i) })?, against.at(i)))
}

/// Waits until `ready()` gives `Ok(true)` (sleeping on `bell`), and returns its first error;
/// gives up when `rocshmem_finalize` has begun on another thread of this process (it waits for
/// the calls in flight: see `inflight`).
fn block_until(bell: &crate::heap::Doorbell, mut ready: impl FnMut() -> Result<bool>) -> Result<()> {
    let mut stopped = false;
    let mut failed = None;
    crate::sync::wait_until(bell, || {
        let done = ready().unwrap_or_else(|e| {
            failed = Some(e);
            true
        });
        done || {
            stopped = crate::inflight::draining();
            stopped
        }
    });
    match failed {
        Some(e) => Err(e),
        None if stopped => Err(Error::FinalizedWhileWaiting),
        None => Ok(()),
    }
}

fn included(status: Option<&[i32]>, i: usize) -> bool {
    status.is_none_or(|s| s[i] == 0)
}

pub fn wait_until<T: Scalar>(rt: &Runtime, ivar: *const T, cmp: i32, value: T) -> Result<()> {
    let cmp = Cmp::from_code(cmp)?;
    check_ivars(rt, ivar, 1)?;
    Stats::add(&rt.stats.waits, 1);
    let me = rt.heap.control(rt.my_pe());
    block_until(&me.header().data_bell, || satisfied(rt, ivar, 0, cmp, &Against::One(value)))?;
    Ok(())
}

pub fn test<T: Scalar>(rt: &Runtime, ivar: *const T, cmp: i32, value: T) -> Result<bool> {
    let cmp = Cmp::from_code(cmp)?;
    check_ivars(rt, ivar, 1)?;
    satisfied(rt, ivar, 0, cmp, &Against::One(value))
}

/// Waits until every included element satisfies the comparison.
pub fn wait_until_all<T: Scalar>(
    rt: &Runtime,
    ivars: *const T,
    n: usize,
    status: Option<&[i32]>,
    cmp: i32,
    against: Against<'_, T>,
) -> Result<()> {
    let cmp = Cmp::from_code(cmp)?;
    if n == 0 {
        return Ok(());
    }
    check_ivars(rt, ivars, n)?;
    Stats::add(&rt.stats.waits, 1);
    let me = rt.heap.control(rt.my_pe());
    // Elements already seen satisfied stay so (the caller owns the variables' life cycle).
    let mut next = 0;
    block_until(&me.header().data_bell, || {
        while next < n && (!included(status, next) || satisfied(rt, ivars, next, cmp, &against)?) {
            next += 1;
        }
        Ok(next == n)
    })?;
    Ok(())
}

/// Waits until some included element satisfies the comparison; returns its index, or
/// `usize::MAX` when there is nothing to wait for (n = 0 or all excluded).
pub fn wait_until_any<T: Scalar>(
    rt: &Runtime,
    ivars: *const T,
    n: usize,
    status: Option<&[i32]>,
    cmp: i32,
    against: Against<'_, T>,
) -> Result<usize> {
    let cmp = Cmp::from_code(cmp)?;
    if n == 0 || (0..n).all(|i| !included(status, i)) {
        return Ok(usize::MAX);
    }
    check_ivars(rt, ivars, n)?;
    Stats::add(&rt.stats.waits, 1);
    let me = rt.heap.control(rt.my_pe());
    let mut found = usize::MAX;
    block_until(&me.header().data_bell, || {
        found = usize::MAX;
        for i in 0..n {
            if included(status, i) && satisfied(rt, ivars, i, cmp, &against)? {
                found = i;
                break;
            }
        }
        Ok(found != usize::MAX)
    })?;
    Ok(found)
}

/// Waits until at least one included element satisfies the comparison; writes the indices of
/// all that do into `indices` and returns how many (0 when there is nothing to wait for).
pub fn wait_until_some<T: Scalar>(
    rt: &Runtime,
    ivars: *const T,
    n: usize,
    indices: &mut [usize],
    status: Option<&[i32]>,
    cmp: i32,
    against: Against<'_, T>,
) -> Result<usize> {
    let cmp = Cmp::from_code(cmp)?;
    if n == 0 || (0..n).all(|i| !included(status, i)) {
        return Ok(0);
    }
    check_ivars(rt, ivars, n)?;
    Stats::add(&rt.stats.waits, 1);
    let me = rt.heap.control(rt.my_pe());
    let mut count = 0;
    block_until(&me.header().data_bell, || {
        count = 0;
        for i in 0..n {
            if included(status, i) && satisfied(rt, ivars, i, cmp, &against)? {
                indices[count] = i;
                count += 1;
            }
        }
        Ok(count > 0)
    })?;
    Ok(count)
}
