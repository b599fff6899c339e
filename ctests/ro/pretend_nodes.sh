#!/bin/sh
# Pretends the PEs of an mpirun (or rocshmem-run) job run on several nodes: PE r gets node id
# node$((r / PES_PER_NODE)) (ROCSHMEM_BOOTSTRAP_HOSTID), so the RO backend maps only the PEs
# of its "node" and reaches the others through MPI. Usage: pretend_nodes.sh <program> [args...]
# (PES_PER_NODE defaults to 2: np 4 = 2 nodes x 2 PEs, np 3 = 2 + 1).
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${ROCSHMEM_RUN_RANK:-0}}}
PES_PER_NODE=${PES_PER_NODE:-2}
ROCSHMEM_BOOTSTRAP_HOSTID=node$((rank / PES_PER_NODE))
# PES_PER_NODE also tells the test programs which placement to expect (ctests/host/host_util.h).
export ROCSHMEM_BOOTSTRAP_HOSTID PES_PER_NODE
exec "$@"
