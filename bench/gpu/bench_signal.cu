/* Put-with-signal ping-pong: one CTA of 1024 threads on each PE.
 *
 * putmem_signal_nbi_wg_rtt_1024thr: PE 0 puts S bytes with the signal SET to the round number
 *   (putmem_signal_nbi_wg), thread 0 waits with signal_wait_until(own signal >= round), then
 *   __syncthreads; PE 1 waits and answers the same way. Time per round trip on PE 0 (device
 *   clock over the timed loop, after warm-up rounds).
 * Checked once per size, in a launch of its own: each round's payload is fresh random data,
 *   verified word by word by the receiver before it answers.
 */
#include "bench_gpu.cuh"

using namespace bg;

static const size_t kSizes[] = {8, 64u << 10};

__device__ __forceinline__ uint64_t round_seed(uint64_t seed, uint64_t k, int dir) {
  return seed ^ ((2 * k + (uint64_t)dir) * 0xd6e8feb86659fd93ULL);
}

static __global__ void k_signal_pingpong(char *dst, char *src, size_t bytes, uint64_t *sig, int me, int pe,
                                         uint64_t seed, uint64_t base, long warm, long n, int check,
                                         unsigned long long *scratch) {
  const size_t words = bytes / 4;
  uint32_t *s32 = reinterpret_cast<uint32_t *>(src);
  const volatile uint32_t *d32 = reinterpret_cast<const volatile uint32_t *>(dst);
  unsigned long long t0 = 0;
  for (long i = 1; i <= warm + n; ++i) {
    const uint64_t k = base + (uint64_t)i;
    if (me == 0) {
      if (i == warm + 1 && threadIdx.x == 0) t0 = bg_clock_ns();
      if (check) {
        for (size_t w = threadIdx.x; w < words; w += blockDim.x) s32[w] = bg_val(round_seed(seed, k, 0), w);
        __syncthreads();
      }
      sh_putmem_signal_nbi_block(dst, src, bytes, sig, k, pe);
      if (threadIdx.x == 0) sh_signal_wait_until_ge(sig, k);
      __syncthreads();
      if (check) {
        for (size_t w = threadIdx.x; w < words; w += blockDim.x) {
          uint32_t want = bg_val(round_seed(seed, k, 1), w), got = d32[w];
          if (got != want) bg_kfail(scratch, k * 1000000 + w, got, want);
        }
        __syncthreads();
      }
    } else {
      if (threadIdx.x == 0) sh_signal_wait_until_ge(sig, k);
      __syncthreads();
      if (check) {
        for (size_t w = threadIdx.x; w < words; w += blockDim.x) {
          uint32_t want = bg_val(round_seed(seed, k, 0), w), got = d32[w];
          if (got != want) bg_kfail(scratch, k * 1000000 + w, got, want);
          s32[w] = bg_val(round_seed(seed, k, 1), w);
        }
        __syncthreads();
      }
      sh_putmem_signal_nbi_block(dst, src, bytes, sig, k, pe);
    }
  }
  if (threadIdx.x == 0) {
    if (me != 0) sh_quiet();  // the last answer is complete before the kernel ends
    scratch[4] = bg_clock_ns() - t0;
  }
}

void bench_signal_pingpong(char *a, char *b, void *small, size_t max_bytes) {
  uint64_t *sig = static_cast<uint64_t *>(small);
  CK(cudaMemsetAsync(small, 0, BG_SMALL_BYTES, st));
  sync_barrier();
  const char *op = "putmem_signal_nbi_wg_rtt_1024thr";
  const long warm = 100, n = iters(5000, 200), check_rounds = 200;
  const int timed = (int)iters(7, 3);
  uint64_t base = 0;
  for (size_t size : kSizes) {
    if (size > max_bytes) continue;
    const uint64_t seed = seed_of(op, size);
    // The check launch: fresh data every round, verified by each receiver.
    reset_scratch();
    sync_barrier();
    launch(true, k_signal_pingpong, 1, 1024, b, a, size, sig, me, peer, seed, base, 0L, check_rounds, 1, d_scratch);
    unsigned long long s[8];
    read_scratch(s);
    base += (uint64_t)check_rounds;
    char detail[160] = "";
    if (s[0])
      snprintf(detail, sizeof detail, "%llu_bad_words,first_round_%llu_word_%llu:got_0x%llx,want_0x%llx", s[0],
               s[1] / 1000000, s[1] % 1000000, s[2], s[3]);
    verdict(op, size, s[0] == 0, detail);
    sync_barrier();
    std::vector<double> us;
    for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
      reset_scratch();
      sync_barrier();
      launch(true, k_signal_pingpong, 1, 1024, b, a, size, sig, me, peer, seed, base, warm, n, 0, d_scratch);
      read_scratch(s);
      base += (uint64_t)(warm + n);
      if (t > 0 && me == 0) us.push_back((double)s[4] * 1e-3 / (double)n);
      sync_barrier();
    }
    if (me == 0) result(op, size, "us", median(us));
  }
}
