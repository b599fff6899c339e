/* Barrier latencies.
 *
 * Device, both PEs in one kernel each, back to back (device clock over the timed loop, after
 * warm-up; time per barrier on PE 0):
 *   barrier_all_1thread      barrier_all from a <<<1, 1>>> kernel
 *   barrier_all_wave_32thr   barrier_all_wave (NVSHMEM: barrier_all_warp) from <<<1, 32>>>
 *   barrier_all_wg_1024thr   barrier_all_wg (NVSHMEM: barrier_all_block) from <<<1, 1024>>>
 *   sync_all_1thread         sync_all from <<<1, 1>>>
 *   sync_all_wave_32thr      sync_all_wave (NVSHMEM: sync_all_warp) from <<<1, 32>>>
 *   sync_all_wg_1024thr      sync_all_wg (NVSHMEM: sync_all_block) from <<<1, 1024>>>
 * Host: host_barrier_all, each call timed on PE 0 (median over calls).
 * Each is checked once, in a launch (or loop) of its own: before round i each PE writes a value
 * of (its PE, i) into word i % 2 of the peer (int_p; before sync_all also quiet), and after the
 * barrier reads the peer's value from its own word i % 2.
 */
#include "bench_gpu.cuh"

using namespace bg;

enum {
  KIND_BARRIER_ALL = 0,
  KIND_BARRIER_ALL_WG = 1,
  KIND_SYNC_ALL = 2,
  KIND_BARRIER_ALL_WAVE = 3,
  KIND_SYNC_ALL_WAVE = 4,
  KIND_SYNC_ALL_WG = 5
};

template <int KIND>
static __global__ void k_barrier(int *slots, int me, int pe, uint64_t seed, long warm, long n, int check,
                                 unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 0; i < warm + n; ++i) {
    if (i == warm && threadIdx.x == 0) t0 = bg_clock_ns();
    if (check && threadIdx.x == 0) {
      sh_int_p(slots + (i & 1), (int)bg_val(seed + (uint64_t)me, (uint64_t)i), pe);
      // sync_all does not complete earlier puts: the check completes its own first.
      if (KIND == KIND_SYNC_ALL || KIND == KIND_SYNC_ALL_WAVE || KIND == KIND_SYNC_ALL_WG) sh_quiet();
    }
    // Group scopes: whichever thread the library picks to lead sees thread 0's put first (check
    // launches only, so the timed loop is the bare barrier).
    if (check && KIND != KIND_BARRIER_ALL && KIND != KIND_SYNC_ALL) __syncthreads();
    if (KIND == KIND_BARRIER_ALL) sh_barrier_all();
    if (KIND == KIND_BARRIER_ALL_WAVE) sh_barrier_all_warp();
    if (KIND == KIND_BARRIER_ALL_WG) sh_barrier_all_block();
    if (KIND == KIND_SYNC_ALL) sh_sync_all();
    if (KIND == KIND_SYNC_ALL_WAVE) sh_sync_all_warp();
    if (KIND == KIND_SYNC_ALL_WG) sh_sync_all_block();
    if (check && threadIdx.x == 0) {
      int got = *(volatile int *)(slots + (i & 1)), want = (int)bg_val(seed + (uint64_t)pe, (uint64_t)i);
      if (got != want) bg_kfail(scratch, (unsigned long long)i, (unsigned)got, (unsigned)want);
    }
  }
  if (threadIdx.x == 0) scratch[4] = bg_clock_ns() - t0;
}

template <int KIND>
static void one(int *slots, const char *op, unsigned threads) {
  CK(cudaMemsetAsync(slots, 0, 64, st));
  sync_barrier();
  const uint64_t seed = seed_of(op, 0);
  const long warm = 100, n = iters(10000, 500), check_rounds = 200;
  const int timed = (int)iters(7, 3);
  unsigned long long s[8];
  reset_scratch();
  sync_barrier();
  launch(true, k_barrier<KIND>, 1, threads, slots, me, peer, seed, 0L, check_rounds, 1, d_scratch);
  read_scratch(s);
  char detail[160] = "";
  if (s[0])
    snprintf(detail, sizeof detail, "%llu_bad,first_round_%llu:got_0x%llx,want_0x%llx", s[0], s[1], s[2], s[3]);
  verdict(op, 0, s[0] == 0, detail);
  sync_barrier();
  std::vector<double> us;
  for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
    sync_barrier();
    launch(true, k_barrier<KIND>, 1, threads, slots, me, peer, seed, warm, n, 0, d_scratch);
    read_scratch(s);
    if (t > 0 && me == 0) us.push_back((double)s[4] * 1e-3 / (double)n);
  }
  sync_barrier();
  if (me == 0) result(op, 0, "us", median(us));
}

void bench_device_barriers(void *small) {
  int *slots = static_cast<int *>(small);
  one<KIND_BARRIER_ALL>(slots, "barrier_all_1thread", 1);
  one<KIND_BARRIER_ALL_WAVE>(slots, "barrier_all_wave_32thr", 32);
  one<KIND_BARRIER_ALL_WG>(slots, "barrier_all_wg_1024thr", 1024);
  one<KIND_SYNC_ALL>(slots, "sync_all_1thread", 1);
  one<KIND_SYNC_ALL_WAVE>(slots, "sync_all_wave_32thr", 32);
  one<KIND_SYNC_ALL_WG>(slots, "sync_all_wg_1024thr", 1024);
}

void bench_host_barrier(void *small) {
  int *slots = static_cast<int *>(small);
  CK(cudaMemsetAsync(small, 0, BG_SMALL_BYTES, st));
  sync_barrier();
  const char *op = "host_barrier_all";
  const uint64_t seed = seed_of(op, 0);
  // The check: host int_p into the peer's word i % 2, barrier, read the own word.
  long bad = 0, first = -1;
  for (long i = 0; i < 64; ++i) {
    sh_host_int_p(slots + (i & 1), (int)bg_val(seed + (uint64_t)me, (uint64_t)i), peer);
    sh_host_barrier_all();
    int got = 0;
    CK(cudaMemcpy(&got, slots + (i & 1), sizeof got, cudaMemcpyDeviceToHost));
    if (got != (int)bg_val(seed + (uint64_t)peer, (uint64_t)i)) {
      if (first < 0) first = i;
      ++bad;
    }
    sh_host_barrier_all();
  }
  char detail[96] = "";
  if (bad) snprintf(detail, sizeof detail, "%ld_of_64_rounds_wrong,first_%ld", bad, first);
  verdict(op, 0, bad == 0, detail);
  const long warm = 200, n = iters(3000, 200);
  std::vector<double> us;
  us.reserve((size_t)n);
  for (long i = 0; i < warm + n; ++i) {
    double t0 = now_s();
    sh_host_barrier_all();
    double t1 = now_s();
    if (i >= warm) us.push_back((t1 - t0) * 1e6);
  }
  sync_barrier();
  if (me == 0) result(op, 0, "us", median(us));
}
