//! Heap calls agree across PEs: `rocshmem_malloc`, `_align`, `_calloc` and `_free` are
//! collective, and the deterministic allocator gives every PE the same offsets only if every PE
//! makes the same calls in the same order. A call made by only some PEs, or with different
//! sizes, would silently shift every later object on some PEs.
//!
//! Each heap call (and finalize) writes a record (its number on this PE, what it is, its
//! arguments, its result) into this PE's control header, then takes part in the world barrier
//! the call needs anyway, then reads every PE's record of the same number. Records are two deep
//! (by the parity of the number): a PE can write the record of its next call while a slower
//! one still reads this one, but not the one after (that needs everyone past the next barrier).
//! So the check costs no extra synchronisation, only reading one record per PE.
//!
//! - Every PE in the same allocation call, differing only in size (`rocshmem_malloc(me + 1)`,
//!   OpenSHMEM's asymmetric allocation; `rocshmem_align` with the same alignment, `rocshmem_calloc`
//!   of other counts or sizes): served. Every PE learns the largest size from the records, undoes
//!   its own allocation and reserves the largest instead, so the block has the same offset
//!   everywhere (the allocator is deterministic and the heaps were in step), then the PEs pass
//!   one more world barrier (the block is a target once the call returns; calloc zeroes first).
//! - Every PE in the same call, other arguments (another kind of allocation, another alignment,
//!   another block to free) or results: every PE reports it (naming its own call and the first
//!   PE whose call differs) and undoes the call (nothing allocated, nothing freed); the heaps
//!   stay in step and the program may go on.
//! - Some PE in another call (it skipped a heap call, or made an extra one, or is in finalize):
//!   the PEs' barriers are out of step from now on, so nothing later can be trusted; the PEs
//!   that see it report it and stop the job (`rocshmem_global_exit(1)`).
//!
//! Under the RO backend, when the world has PEs this one does not map, the records are
//! exchanged with an MPI all-gather instead (after completing this PE's operations, as the
//! barrier did); a PE that skipped a heap call is then not detected (MPI collectives of
//! different kinds do not match).

use crate::error::{Error, Result};
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::team::WORLD_SLOT;
use crate::transport::route::{Transports, Via};
use crate::transport::{Group, Transport};
use std::sync::atomic::Ordering;

/// Words of a record: number, kind, two arguments, result.
const WORDS: usize = 5;

/// A result or argument that is no heap offset (failed call, NULL, foreign pointer).
const NONE: u64 = u64::MAX;
const FOREIGN: u64 = u64::MAX - 1;

/// What a heap call is, with the arguments every PE must agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapCall {
    Malloc {
        size: usize,
    },
    Align {
        alignment: usize,
        size: usize,
    },
    Calloc {
        count: usize,
        size: usize,
    },
    /// Heap offset of the pointer ([`NONE`]: NULL, [`FOREIGN`]: not in the heap).
    Free {
        offset: u64,
    },
    Finalize,
}

impl HeapCall {
    fn encode(self) -> (u64, u64, u64) {
        match self {
            HeapCall::Malloc { size } => (1, size as u64, 0),
            HeapCall::Align { alignment, size } => (2, alignment as u64, size as u64),
            HeapCall::Calloc { count, size } => (3, count as u64, size as u64),
            HeapCall::Free { offset } => (4, offset, 0),
            HeapCall::Finalize => (5, 0, 0),
        }
    }

    fn decode(kind: u64, a: u64, b: u64) -> Option<HeapCall> {
        Some(match kind {
            1 => HeapCall::Malloc { size: a as usize },
            2 => HeapCall::Align { alignment: a as usize, size: b as usize },
            3 => HeapCall::Calloc { count: a as usize, size: b as usize },
            4 => HeapCall::Free { offset: a },
            5 => HeapCall::Finalize,
            _ => return None,
        })
    }

    /// The call as a user wrote it.
    pub fn describe(self) -> String {
        match self {
            HeapCall::Malloc { size } => format!("rocshmem_malloc(size={size})"),
            HeapCall::Align { alignment, size } => format!("rocshmem_align(alignment={alignment}, size={size})"),
            HeapCall::Calloc { count, size } => format!("rocshmem_calloc(count={count}, size={size})"),
            HeapCall::Free { offset: NONE } => "rocshmem_free(NULL)".into(),
            HeapCall::Free { offset: FOREIGN } => "rocshmem_free(a pointer outside the symmetric heap)".into(),
            HeapCall::Free { offset } => format!("rocshmem_free(heap offset {offset:#x})"),
            HeapCall::Finalize => "rocshmem_finalize".into(),
        }
    }

    fn is_alloc(self) -> bool {
        !matches!(self, HeapCall::Free { .. } | HeapCall::Finalize)
    }

    /// Bytes an allocation asks for, and the call with its size left out (what PEs must agree
    /// on when their sizes may differ). None for free, finalize, an invalid alignment and a
    /// calloc whose count × size overflows (those calls fail on every PE alike).
    fn bytes(self) -> Option<(usize, HeapCall)> {
        match self {
            HeapCall::Malloc { size } => Some((size, HeapCall::Malloc { size: 0 })),
            HeapCall::Align { alignment, size } if alignment.is_power_of_two() && alignment % 8 == 0 => {
                Some((size, HeapCall::Align { alignment, size: 0 }))
            }
            HeapCall::Calloc { count, size } => {
                count.checked_mul(size).map(|b| (b, HeapCall::Calloc { count: 0, size: 0 }))
            }
            _ => None,
        }
    }
}

/// Every PE's allocation call is the same but for its size, and the sizes differ: the largest
/// (bytes). None otherwise.
fn sizes_only(all: &[Record]) -> Option<usize> {
    let first = all.first()?.call?.bytes()?.1;
    let mut sizes = Vec::with_capacity(all.len());
    for r in all {
        let (bytes, shape) = r.call?.bytes()?;
        if shape != first {
            return None;
        }
        sizes.push(bytes);
    }
    let largest = *sizes.iter().max()?;
    (sizes.iter().any(|&b| b != largest)).then_some(largest)
}

/// One PE's record of one heap call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    /// The call's number on that PE (from 1; 0: no record yet).
    seq: u64,
    call: Option<HeapCall>,
    /// Allocations: the heap offset returned; free: whether the pointer was a live block.
    result: u64,
}

impl Record {
    fn words(&self) -> [u64; WORDS] {
        let (k, a, b) = self.call.map_or((0, 0, 0), HeapCall::encode);
        [self.seq, k, a, b, self.result]
    }

    fn from_words(w: [u64; WORDS]) -> Record {
        Record { seq: w[0], call: HeapCall::decode(w[1], w[2], w[3]), result: w[4] }
    }

    fn describe(&self) -> String {
        let call = self.call.map_or_else(|| "no call".to_string(), HeapCall::describe);
        match self.call {
            Some(c) if c.is_alloc() && self.result != NONE => format!("{call} = heap offset {:#x}", self.result),
            Some(c) if c.is_alloc() => format!("{call} = NULL"),
            _ => call,
        }
    }
}

/// The heap offset of a `free` argument, as [`HeapCall::Free`] records it.
pub fn free_offset(heap: &SymmetricHeap, addr: usize) -> u64 {
    if addr == 0 {
        return NONE;
    }
    heap.offset_of(addr, 1, "").map_or(FOREIGN, |o| o as u64)
}

/// Collective over the world: records `call` with its local `result` (allocations: the heap
/// offset, or None if it failed here; free: whether the pointer is a live block here, as
/// `Some(0)`/None; finalize: None), synchronises, and checks every PE's record. `Ok(None)`
/// when every PE made the same call; `Ok(Some(largest))` when the PEs' allocations differ
/// only in size: the caller undoes its own, reserves `largest` bytes instead (the same offset
/// on every PE) and ends with a world barrier (`net.barrier`). `Err` when the PEs' calls
/// differ otherwise (the caller undoes its part); when they are out of step, reports it for
/// `call_name` and stops the job.
pub fn agree(heap: &SymmetricHeap, net: &Transports, call: HeapCall, result: Option<usize>) -> Result<Option<usize>> {
    let seq = heap.calls.fetch_add(1, Ordering::Relaxed) + 1;
    let mine = Record { seq, call: Some(call), result: result.map_or(NONE, |r| r as u64) };
    let all = exchange(heap, net, &mine)?;
    check(heap.my_pe, &mine, &all)
}

/// Every PE's record of the heap call numbered as `mine` (collective over the world).
fn exchange(heap: &SymmetricHeap, net: &Transports, mine: &Record) -> Result<Vec<Record>> {
    let world = PeSet::world(heap.n_pes);
    let via = net.set(world);
    if !matches!(via, Via::Ipc(_)) {
        // Some PE is not mapped (RO): complete this PE's operations (a free must not race a
        // write still in flight), then exchange the records through the transport: the
        // all-gather is the synchronisation.
        net.quiet();
        let g = Group { set: world, slot: WORLD_SLOT, my_idx: heap.my_pe, team: std::ptr::null_mut() };
        let rows = via.allgather_words(heap, &g, &mine.words())?;
        return Ok(rows.iter().map(|r| Record::from_words(r[..].try_into().unwrap())).collect());
    }
    let at = (mine.seq % 2) as usize;
    let own = heap.control(heap.my_pe);
    for (w, v) in mine.words().into_iter().enumerate() {
        own.header().heap_calls[at].0[w].store(v, Ordering::Relaxed);
    }
    // Orders the stores above before every peer's reads below.
    net.barrier(heap, world, WORLD_SLOT)?;
    Ok((0..heap.n_pes)
        .map(|p| {
            let c = heap.control(p);
            let r = &c.header().heap_calls[at];
            Record::from_words(std::array::from_fn(|w| r.0[w].load(Ordering::Relaxed)))
        })
        .collect())
}

/// What the records of one heap call say.
#[derive(Debug)]
enum Verdict {
    Agree,
    /// Every PE is in this allocation call, with different sizes (and so, maybe, results): every
    /// PE reserves the largest (bytes).
    Sizes(usize),
    /// Every PE is in this call, with different arguments or results: the call fails everywhere.
    Differ(String),
    /// Some PE is in another call: the PEs' synchronisation is out of step.
    OutOfStep(String),
}

fn verdict(me: usize, mine: &Record, all: &[Record]) -> Verdict {
    let Some((p, theirs)) = all.iter().enumerate().find(|(_, r)| *r != mine) else {
        return Verdict::Agree;
    };
    let seq = mine.seq;
    let call = mine.call.expect("own record");
    let fin = |c: Option<HeapCall>| c == Some(HeapCall::Finalize);
    let out = |r: &Record| r.seq != seq || r.call.is_none() || fin(r.call) != fin(mine.call);
    if let Some((q, stray)) = all.iter().enumerate().find(|(_, r)| out(r)) {
        let mine_text = if fin(mine.call) {
            format!("this PE (PE {me}) is in rocshmem_finalize after {} heap calls", seq - 1)
        } else {
            format!("this PE (PE {me}) is in its heap call #{seq}, {}", mine.describe())
        };
        let theirs_text = match stray.call {
            Some(HeapCall::Finalize) => format!("PE {q} is in rocshmem_finalize after {} heap calls", stray.seq - 1),
            _ if stray.seq == seq => format!("PE {q} is in its heap call #{seq}, {}", stray.describe()),
            _ if stray.seq > seq => format!("PE {q} is already in its heap call #{}, {}", stray.seq, stray.describe()),
            None => format!("PE {q} is not in a heap call (this PE sees no heap call of it)"),
            Some(_) => format!(
                "PE {q} is not in a heap call (the latest of its heap calls this PE sees is #{}, {})",
                stray.seq,
                stray.describe()
            ),
        };
        return Verdict::OutOfStep(format!(
            "the PEs' heap calls are out of step: {mine_text}, but {theirs_text}; every PE must make the same \
             rocshmem_malloc/align/calloc/free calls in the same order before rocshmem_finalize; stopping the job"
        ));
    }
    if let Some(largest) = sizes_only(all) {
        return Verdict::Sizes(largest);
    }
    let what = if theirs.call == mine.call {
        format!(
            "this PE's (PE {me}) {} and PE {p}'s {} (heap call #{seq}): the heaps were already out of step",
            mine.describe(),
            theirs.describe()
        )
    } else {
        format!(
            "this PE (PE {me}) called {} and PE {p} {} (heap call #{seq} of both)",
            call.describe(),
            theirs.call.map_or_else(|| "no call".into(), HeapCall::describe)
        )
    };
    let undone = if call.is_alloc() { "nothing was allocated on any PE" } else { "nothing was freed on any PE" };
    Verdict::Differ(format!(
        "the PEs' heap calls differ: {what}; every PE must make the same rocshmem_malloc/align/calloc/free calls \
         with the same arguments; {undone}"
    ))
}

/// Acts on the verdict: `Err` when the calls differ; out of step: reports it and stops the job.
fn check(me: usize, mine: &Record, all: &[Record]) -> Result<Option<usize>> {
    match verdict(me, mine, all) {
        Verdict::Agree => Ok(None),
        Verdict::Sizes(largest) => Ok(Some(largest)),
        Verdict::Differ(s) => Err(Error::Mismatch(s)),
        Verdict::OutOfStep(s) => {
            let name = match mine.call {
                Some(HeapCall::Malloc { .. }) => "rocshmem_malloc",
                Some(HeapCall::Align { .. }) => "rocshmem_align",
                Some(HeapCall::Calloc { .. }) => "rocshmem_calloc",
                Some(HeapCall::Free { .. }) => "rocshmem_free",
                _ => "rocshmem_finalize",
            };
            // The API's one-line report of the call, then the job ends (see `stop`).
            crate::log::write(crate::log::Level::Error, name, format_args!("{s}"));
            crate::stop::global_exit(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, call: HeapCall, result: u64) -> Record {
        Record { seq, call: Some(call), result }
    }

    #[test]
    fn records_round_trip() {
        for c in [
            HeapCall::Malloc { size: 100 },
            HeapCall::Align { alignment: 4096, size: 7 },
            HeapCall::Calloc { count: 3, size: 5 },
            HeapCall::Free { offset: 0x80 },
            HeapCall::Free { offset: NONE },
            HeapCall::Finalize,
        ] {
            let r = rec(9, c, 0x100);
            assert_eq!(Record::from_words(r.words()), r);
        }
        assert_eq!(Record::from_words([0; WORDS]).call, None);
    }

    #[test]
    fn same_calls_agree_and_different_ones_name_both_pes() {
        let a = rec(3, HeapCall::Malloc { size: 64 }, 0x80);
        assert!(check(0, &a, &[a, a, a]).is_ok());
        let text = |v: Verdict| match v {
            Verdict::Differ(s) => s,
            other => panic!("{other:?}"),
        };
        // Another kind of allocation of the same bytes, another alignment: refused.
        let b = rec(3, HeapCall::Calloc { count: 1, size: 64 }, 0x80);
        let e = text(verdict(0, &a, &[a, a, b]));
        assert!(
            e.contains("PE 0) called rocshmem_malloc(size=64)") && e.contains("PE 2 rocshmem_calloc(count=1, size=64)"),
            "{e}"
        );
        assert!(e.contains("nothing was allocated"), "{e}");
        let e = text(verdict(2, &b, &[a, a, b]));
        assert!(e.contains("PE 2) called rocshmem_calloc(count=1, size=64) and PE 0 rocshmem_malloc(size=64)"), "{e}");
        let al = |alignment, size| rec(3, HeapCall::Align { alignment, size }, 0x80);
        let e = text(verdict(0, &al(256, 64), &[al(256, 64), al(4096, 96)]));
        assert!(e.contains("PE 1 rocshmem_align(alignment=4096, size=96)"), "{e}");
        let f = rec(3, HeapCall::Free { offset: 0x80 }, 0);
        let g = rec(3, HeapCall::Free { offset: 0x100 }, 0);
        let e = text(verdict(1, &f, &[f, f, g]));
        assert!(e.contains("heap offset 0x80") && e.contains("PE 2 rocshmem_free(heap offset 0x100)"), "{e}");
        assert!(e.contains("nothing was freed"), "{e}");
        // Same call, different results: the heaps had drifted before.
        let c = rec(3, HeapCall::Malloc { size: 64 }, 0x100);
        let e = text(verdict(0, &a, &[a, c]));
        assert!(e.contains("already out of step"), "{e}");
    }

    #[test]
    fn allocations_differing_only_in_size_reserve_the_largest() {
        let m = |size, result| rec(4, HeapCall::Malloc { size }, result);
        // OpenSHMEM's asym_alloc: PE p asks (p + 1) ints; results differ or fail with the size.
        let all = [m(4, 0x80), m(8, 0x80), m(12, NONE)];
        for (me, r) in all.iter().enumerate() {
            assert!(matches!(verdict(me, r, &all), Verdict::Sizes(12)), "PE {me}");
        }
        let al = |size| rec(4, HeapCall::Align { alignment: 4096, size }, 0x1000);
        assert!(matches!(verdict(0, &al(100), &[al(100), al(0), al(300)]), Verdict::Sizes(300)));
        let c = |count, size| rec(4, HeapCall::Calloc { count, size }, 0x80);
        assert!(matches!(verdict(1, &c(2, 8), &[c(3, 3), c(2, 8)]), Verdict::Sizes(16)));
        // Same sizes, different results: the heaps drifted; an invalid alignment or an
        // overflowing calloc is no size to serve.
        assert!(matches!(verdict(0, &m(8, 0x80), &[m(8, 0x80), m(8, 0x100)]), Verdict::Differ(_)));
        let bad = |size| rec(4, HeapCall::Align { alignment: 12, size }, NONE);
        assert!(matches!(verdict(0, &bad(8), &[bad(8), bad(16)]), Verdict::Differ(_)));
        let over = rec(4, HeapCall::Calloc { count: usize::MAX, size: 2 }, NONE);
        assert!(matches!(verdict(0, &c(1, 8), &[c(1, 8), over]), Verdict::Differ(_)));
    }

    #[test]
    fn a_pe_in_another_call_is_out_of_step() {
        let out = |v: Verdict| match v {
            Verdict::OutOfStep(s) => s,
            other => panic!("{other:?}"),
        };
        // PE 1 skipped heap call #3: its latest record of this parity is #1.
        let a = rec(3, HeapCall::Malloc { size: 64 }, 0x80);
        let old = rec(1, HeapCall::Malloc { size: 8 }, 0);
        let e = out(verdict(0, &a, &[a, old, a]));
        assert!(e.contains("PE 0) is in its heap call #3, rocshmem_malloc(size=64)"), "{e}");
        assert!(e.contains("PE 1 is not in a heap call") && e.contains("#1, rocshmem_malloc(size=8)"), "{e}");
        assert!(e.contains("stopping the job"), "{e}");
        // ... and reaches finalize while the others allocate.
        let fin = rec(3, HeapCall::Finalize, NONE);
        let e = out(verdict(1, &fin, &[a, fin]));
        assert!(e.contains("PE 1) is in rocshmem_finalize after 2 heap calls, but PE 0 is in its heap call #3"), "{e}");
        let e = out(verdict(0, &a, &[a, fin]));
        assert!(e.contains("PE 1 is in rocshmem_finalize after 2 heap calls"), "{e}");
        // A PE that made no heap call at all.
        let e = out(verdict(0, &a, &[a, Record::from_words([0; WORDS])]));
        assert!(e.contains("PE 1 is not in a heap call"), "{e}");
        // Every PE in finalize: fine.
        assert!(matches!(verdict(0, &fin, &[fin, fin]), Verdict::Agree));
    }
}
