//! Where a queue pair's pieces live in its memory block, as upstream lays out the mlx5 "umem"
//! (one registration holding the send queue, the completion queue and both doorbell records):
//!
//! ```text
//! [send queue: sq_depth x 64 B][CQ: cq_depth x 64 B][SQ dbrec, 128-B line][CQ dbrec, 128-B line]
//! ```
//! rounded up to 4 KiB pages (mlx5 counts umem pages in 4 KiB units). The NIC model uses the same
//! block, plus one scratch line (the sink of non-fetching atomics) and a separate 4 KiB "UAR"
//! page whose BlueFlame register at 0x800 is the doorbell.

use super::abi::{ROCSHMEM_GDA_MAX_SQ_DEPTH, ROCSHMEM_GDA_MIN_SQ_DEPTH};
use crate::error::{Error, Result};

/// mlx5 adapter page (umem granularity) and the cache line the doorbell records are aligned to
/// (the AMD L2 line, as upstream).
pub const PAGE: usize = 4096;
pub const LINE: usize = 128;
/// Offset of the BlueFlame (doorbell) register in an mlx5 UAR page.
pub const UAR_BF_OFFSET: usize = 0x800;

/// Offsets (bytes) in a queue pair's memory block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpLayout {
    pub sq_depth: u32,
    pub cq_depth: u32,
    pub sq_off: usize,
    pub cq_off: usize,
    pub sq_dbrec_off: usize,
    pub cq_dbrec_off: usize,
    /// One line for non-fetching atomics' returned values (the NIC model's block only).
    pub scratch_off: usize,
    /// Bytes of the block, a whole number of pages.
    pub bytes: usize,
}

/// Checks a send-queue depth (`ROCSHMEM_GDA_SQ_SIZE`): a power of two within the limits.
pub fn check_sq_depth(depth: u64) -> Result<u32> {
    if depth.is_power_of_two() && (ROCSHMEM_GDA_MIN_SQ_DEPTH as u64..=ROCSHMEM_GDA_MAX_SQ_DEPTH as u64).contains(&depth)
    {
        return Ok(depth as u32);
    }
    Err(Error::invalid(format!(
        "ROCSHMEM_GDA_SQ_SIZE={depth}: the send queue depth must be a power of two from {} to {}",
        ROCSHMEM_GDA_MIN_SQ_DEPTH, ROCSHMEM_GDA_MAX_SQ_DEPTH
    )))
}

impl QpLayout {
    /// The layout for `sq_depth` WQEBBs and `cq_depth` CQEs (0: the send queue's depth).
    pub fn new(sq_depth: u32, cq_depth: u32) -> Result<QpLayout> {
        let sq_depth = check_sq_depth(sq_depth as u64)?;
        let cq_depth = if cq_depth == 0 { sq_depth } else { cq_depth };
        if !cq_depth.is_power_of_two() || cq_depth < sq_depth {
            return Err(Error::invalid(format!(
                "completion queue depth {cq_depth}: must be a power of two of at least the send queue depth {sq_depth}"
            )));
        }
        let sq_bytes = sq_depth as usize * 64;
        let cq_off = sq_bytes.next_multiple_of(LINE);
        let sq_dbrec_off = (cq_off + cq_depth as usize * 64).next_multiple_of(LINE);
        let cq_dbrec_off = sq_dbrec_off + LINE;
        let scratch_off = cq_dbrec_off + LINE;
        let bytes = (scratch_off + LINE).next_multiple_of(PAGE);
        Ok(QpLayout { sq_depth, cq_depth, sq_off: 0, cq_off, sq_dbrec_off, cq_dbrec_off, scratch_off, bytes })
    }

    /// The part a NIC registers as umem (everything but the model's scratch line).
    pub fn umem_bytes(&self) -> usize {
        (self.cq_dbrec_off + LINE).next_multiple_of(PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_do_not_overlap_and_are_aligned() {
        for sq in [128u32, 256, 1024, 4096, 32768] {
            for cq in [0u32, sq, sq * 2] {
                let l = QpLayout::new(sq, cq).unwrap();
                let cqd = if cq == 0 { sq } else { cq } as usize;
                assert!(l.sq_off + sq as usize * 64 <= l.cq_off);
                assert!(l.cq_off + cqd * 64 <= l.sq_dbrec_off);
                assert!(l.sq_dbrec_off + 4 <= l.cq_dbrec_off && l.cq_dbrec_off + 4 <= l.scratch_off);
                assert!(l.scratch_off + 8 <= l.bytes && l.umem_bytes() <= l.bytes);
                assert_eq!(l.bytes % PAGE, 0);
                assert_eq!((l.cq_off % 64, l.sq_dbrec_off % LINE, l.cq_dbrec_off % LINE), (0, 0, 0));
            }
        }
    }

    #[test]
    fn bad_depths_are_refused_with_the_variable() {
        for d in [0u64, 64, 100, 1000, 65536] {
            let e = check_sq_depth(d).unwrap_err().to_string();
            assert!(e.contains("ROCSHMEM_GDA_SQ_SIZE") && e.contains("power of two"), "{e}");
        }
        assert!(QpLayout::new(256, 128).is_err());
        assert!(QpLayout::new(256, 384).is_err());
    }
}
