//! The RO queues: the block of host memory device code writes its commands into (laid out here
//! for `device_abi`'s `rocshmem_ro_*` structures), and the completion side of the queue protocol
//! (docs/ro.md, "Queues (device -> proxy)").

use crate::device_abi::*;
use crate::error::Result;
use crate::gpu::GpuRuntime;
use std::sync::atomic::{AtomicU64, Ordering};

/// The queues device code writes, in one block of host memory the GPU maps at the same address
/// (`GpuRuntime::alloc_host_mapped`): the device block, the queues, their commands (slot i
/// starts with seq i) and their ALLTOALLV argument blocks.
pub(super) struct QueueMem {
    pub(super) mem: crate::gpu::Segment,
}

impl QueueMem {
    pub(super) fn new(gpu: &dyn GpuRuntime, n_queues: usize) -> Result<QueueMem> {
        use std::mem::size_of;
        let slots = ROCSHMEM_RO_QUEUE_SLOTS as usize;
        let queues_off = size_of::<rocshmem_ro_device>().next_multiple_of(64);
        let cmds_off = queues_off + n_queues * size_of::<rocshmem_ro_queue>();
        let args_off = cmds_off + n_queues * slots * size_of::<rocshmem_ro_cmd>();
        let len = args_off + n_queues * slots * size_of::<rocshmem_ro_alltoallv>();
        let mem = gpu.alloc_host_mapped(len)?;
        let base = mem.base;
        // SAFETY: the block is `len` zeroed, page-aligned bytes, laid out as computed above;
        // nothing else uses it yet.
        unsafe {
            let queues = base.add(queues_off).cast::<rocshmem_ro_queue>();
            let cmds = base.add(cmds_off).cast::<rocshmem_ro_cmd>();
            let args = base.add(args_off).cast::<rocshmem_ro_alltoallv>();
            for i in 0..n_queues * slots {
                cmds.add(i).write(rocshmem_ro_cmd { seq: (i % slots) as u64, ..Default::default() });
            }
            for q in 0..n_queues {
                queues.add(q).write(rocshmem_ro_queue {
                    tail: 0,
                    pad0: [0; 7],
                    head: 0,
                    pad1: [0; 7],
                    cmds: cmds.add(q * slots),
                    args: args.add(q * slots),
                    pad2: [0; 6],
                });
            }
            base.cast::<rocshmem_ro_device>().write(rocshmem_ro_device {
                n_queues: n_queues as u32,
                slots: slots as u32,
                queues,
                stopped: 0,
                reserved: 0,
            });
        }
        Ok(QueueMem { mem })
    }

    pub(super) fn dev(&self) -> *mut rocshmem_ro_device {
        self.mem.base.cast()
    }
}

/// Marks ticket `t`'s command finished: done with a result for a waiting producer, else free;
/// then wakes whoever waits on the slot (the futex protocol in `device_abi`).
pub(super) fn complete(queue: &rocshmem_ro_queue, c: &mut rocshmem_ro_cmd, t: u64, slots: u64, result: u64) {
    if c.flags & ROCSHMEM_RO_FLAG_WAIT != 0 {
        c.result = result;
        word(&c.seq).store(t + 2, Ordering::Release);
    } else {
        word(&c.seq).store(t + slots, Ordering::Release);
        // The store before the load (a producer takes its ticket, then reads seq).
        std::sync::atomic::fence(Ordering::SeqCst);
        if word(&queue.tail).load(Ordering::Relaxed) <= t + slots {
            return; // nobody waits for this slot
        }
    }
    // SAFETY: a futex wake on our own word (its low half); no memory is written.
    unsafe {
        libc::syscall(libc::SYS_futex, &c.seq as *const u64, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

/// A queue word as an atomic.
pub(super) fn word(p: *const u64) -> &'static AtomicU64 {
    // SAFETY: 8-byte aligned words of the queue memory, alive while the proxy runs.
    unsafe { AtomicU64::from_ptr(p as *mut u64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_start_free() {
        let q = QueueMem::new(&crate::gpu::host::HostRuntime::new(), 3).unwrap();
        // SAFETY: the block QueueMem laid out.
        let dev = unsafe { &*q.dev() };
        assert_eq!(dev.n_queues, 3);
        assert_eq!(dev.slots, ROCSHMEM_RO_QUEUE_SLOTS);
        let slots = ROCSHMEM_RO_QUEUE_SLOTS as usize;
        for i in 0..3 {
            // SAFETY: queue i of three.
            let queue = unsafe { &*dev.queues.add(i) };
            assert_eq!(queue.tail, 0);
            for s in 0..slots {
                assert_eq!(unsafe { (*queue.cmds.add(s)).seq }, s as u64);
            }
            // Every queue's commands and argument blocks lie inside the block, apart.
            let end = q.mem.base as usize + q.mem.len;
            assert!(queue.cmds as usize + slots * 64 <= end);
            assert!(queue.args as usize + slots * std::mem::size_of::<rocshmem_ro_alltoallv>() <= end);
            if i > 0 {
                let prev = unsafe { &*dev.queues.add(i - 1) };
                assert_eq!(queue.cmds as usize - prev.cmds as usize, slots * 64);
                assert!(queue.cmds as usize > dev.queues as usize);
            }
        }
    }
}
