//! The symmetric-heap allocator: first fit over free blocks, with coalescing.
//!
//! It is deterministic: every PE runs the same collective sequence of alloc/free calls and so
//! gets the same offsets, which is what makes an address mean the same object on every PE.

use std::collections::BTreeMap;

/// Allocation granularity and default alignment (upstream's rocshmem_malloc aligns to 128 B).
pub const MIN_ALIGN: usize = 128;

#[derive(Debug, Clone)]
pub struct Allocator {
    size: usize,
    /// offset → length of each free block; adjacent free blocks are always merged.
    free: BTreeMap<usize, usize>,
    /// offset → length of each live allocation.
    used: BTreeMap<usize, usize>,
}

fn align_up(x: usize, a: usize) -> Option<usize> {
    x.checked_add(a - 1).map(|v| v & !(a - 1))
}

impl Allocator {
    pub fn new(size: usize) -> Allocator {
        let size = size & !(MIN_ALIGN - 1);
        let mut free = BTreeMap::new();
        if size > 0 {
            free.insert(0, size);
        }
        Allocator { size, free, used: BTreeMap::new() }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Offset of a new block of `len` bytes aligned to `align` (a power of two), or None.
    pub fn alloc(&mut self, len: usize, align: usize) -> Option<usize> {
        self.alloc_shifted(len, align, 0)
    }

    /// Like `alloc`, but `offset + shift` is what must be a multiple of `align`: `shift` is the
    /// heap base's remainder modulo `align`, so that the address is aligned, not just the
    /// offset. `shift` must be a multiple of MIN_ALIGN (heap bases are page aligned).
    pub fn alloc_shifted(&mut self, len: usize, align: usize, shift: usize) -> Option<usize> {
        debug_assert!(align.is_power_of_two());
        let align = align.max(MIN_ALIGN);
        let shift = shift % align;
        debug_assert!(shift % MIN_ALIGN == 0);
        let len = align_up(len.max(1), MIN_ALIGN)?;
        let (block_off, block_len, start) = self.free.iter().find_map(|(&o, &l)| {
            let start = align_up(o.checked_add(shift)?, align)? - shift;
            let end = start.checked_add(len)?;
            (end <= o + l).then_some((o, l, start))
        })?;
        self.free.remove(&block_off);
        if start > block_off {
            self.free.insert(block_off, start - block_off);
        }
        let tail = block_off + block_len - (start + len);
        if tail > 0 {
            self.free.insert(start + len, tail);
        }
        self.used.insert(start, len);
        Some(start)
    }

    /// Frees the block starting at `off` and returns its length; None if `off` is not the
    /// start of a live block.
    pub fn free(&mut self, off: usize) -> Option<usize> {
        let len = self.used.remove(&off)?;
        let mut start = off;
        let mut end = off + len;
        if let Some((&po, &pl)) = self.free.range(..off).next_back() {
            if po + pl == off {
                self.free.remove(&po);
                start = po;
            }
        }
        if let Some(&nl) = self.free.get(&end) {
            self.free.remove(&end);
            end += nl;
        }
        self.free.insert(start, end - start);
        Some(len)
    }

    /// Length of the live block at `off`, if there is one.
    pub fn block_len(&self, off: usize) -> Option<usize> {
        self.used.get(&off).copied()
    }

    pub fn largest_free(&self) -> usize {
        self.free.values().copied().max().unwrap_or(0)
    }

    pub fn used_bytes(&self) -> usize {
        self.used.values().sum()
    }

    pub fn live_blocks(&self) -> usize {
        self.used.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_invariants(a: &Allocator) {
        let mut spans: Vec<(usize, usize)> = a.free.iter().chain(a.used.iter()).map(|(&o, &l)| (o, l)).collect();
        spans.sort();
        let mut at = 0;
        for (o, l) in spans {
            assert_eq!(o, at, "blocks tile the heap without gaps or overlaps");
            at = o + l;
        }
        assert_eq!(at, a.size);
        let frees: Vec<_> = a.free.iter().collect();
        for w in frees.windows(2) {
            assert_ne!(w[0].0 + w[0].1, *w[1].0, "adjacent free blocks are merged");
        }
    }

    #[test]
    fn alloc_free_coalesce() {
        let mut a = Allocator::new(1 << 20);
        let x = a.alloc(100, 8).unwrap();
        let y = a.alloc(5000, 8).unwrap();
        let z = a.alloc(1, 4096).unwrap();
        assert_eq!(x, 0);
        assert_eq!(y, 128);
        assert_eq!(z % 4096, 0);
        check_invariants(&a);
        a.free(y).unwrap();
        check_invariants(&a);
        assert_eq!(a.free(y), None, "double free is refused");
        assert_eq!(a.free(x + 8), None, "interior pointer is refused");
        a.free(x).unwrap();
        a.free(z).unwrap();
        check_invariants(&a);
        assert_eq!(a.largest_free(), 1 << 20);
        assert_eq!(a.live_blocks(), 0);
    }

    #[test]
    fn shifted_alignment_aligns_base_plus_offset() {
        let mut a = Allocator::new(1 << 24);
        let base = 0x7f00_0001_d000usize; // page aligned, not 64 KiB aligned
        a.alloc(100, 8).unwrap();
        for align in [8192usize, 65536, 1 << 20] {
            let o = a.alloc_shifted(1000, align, base % align).unwrap();
            assert_eq!((base + o) % align, 0, "align {align}");
        }
        check_invariants(&a);
    }

    #[test]
    fn exhaustion_and_overflow() {
        let mut a = Allocator::new(4096);
        assert!(a.alloc(4097, 8).is_none());
        assert!(a.alloc(usize::MAX, 8).is_none(), "no overflow panic");
        assert!(a.alloc(4096, 8).is_some());
        assert!(a.alloc(1, 8).is_none());
    }

    /// The property that makes the heap symmetric: the same call sequence gives the same
    /// offsets, whatever it is.
    #[test]
    fn deterministic_under_random_sequences() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let ops: Vec<(bool, usize, usize)> =
            (0..2000).map(|_| (rnd() % 3 != 0, (rnd() % 20000) as usize, 1usize << (rnd() % 13))).collect();
        let run = |ops: &[(bool, usize, usize)]| {
            let mut a = Allocator::new(8 << 20);
            let mut live = Vec::new();
            let mut trace = Vec::new();
            for (i, &(is_alloc, len, align)) in ops.iter().enumerate() {
                if is_alloc || live.is_empty() {
                    let r = a.alloc(len, align);
                    if let Some(o) = r {
                        assert_eq!(o % align.max(MIN_ALIGN), 0);
                        live.push(o);
                    }
                    trace.push(r);
                } else {
                    let o = live.swap_remove(i % live.len());
                    a.free(o).unwrap();
                }
                if i % 97 == 0 {
                    check_invariants(&a);
                }
            }
            trace
        };
        assert_eq!(run(&ops), run(&ops));
    }
}
