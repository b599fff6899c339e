//! What the transports (IPC, RO) have in common: the atomic operations they carry.

/// An atomic operation on a 4- or 8-byte word (the order of the device library's `AmoOp` and of
/// the RO queue protocol's `ROCSHMEM_RO_AMO_*` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmoOp {
    Fetch,
    Set,
    Swap,
    CompareSwap,
    FetchInc,
    Inc,
    FetchAdd,
    Add,
    FetchAnd,
    And,
    FetchOr,
    Or,
    FetchXor,
    Xor,
}
