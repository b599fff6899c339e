/* Collectives over the world team, latency and bandwidth per size.
 *
 * <coll>_wg_1024thr     one CTA of 1024 threads on each PE calls the work-group form (NVSHMEM:
 *                       _block), back to back in one kernel per PE
 * <coll>_wave_32thr     one CTA of 32 threads, the wave form (NVSHMEM: _warp); small sizes only
 * for <coll> in
 *   float_sum_reduce    ctx_float_sum_reduce_wg(ctx, team, dest, src, S / 4)
 *   broadcastmem        ctx_broadcastmem_wg(ctx, team, dest, src, S, root 0) (NVSHMEM: the char
 *                       form, see shmem_adapter.cuh)
 *   alltoallmem         ctx_alltoallmem_wg(ctx, team, dest, src, S): S bytes to every PE
 *   fcollectmem         ctx_fcollectmem_wg(ctx, team, dest, src, S): S bytes from every PE
 * Size S: the reduced vector, the broadcast, or the block per PE (alltoall, fcollect).
 * Rows: `us` per collective (device clock on PE 0 around the timed loop, after warm-up
 * iterations that absorb the launch skew between the PEs), and from 64 KiB on a `_bw` row in
 * GB/s = bytes that land in each PE's dest (S, or n_pes x S for alltoall and fcollect) / time.
 * Checked once per configuration on every PE: its whole dest after one collective (random
 * non-zero data; the reduce's floats are small integers, so every sum is exact) and the 256
 * bytes after it (untouched).
 */
#include "bench_gpu.cuh"

using namespace bg;

enum { SCOPE_WAVE = 0, SCOPE_WG = 1 };

static const size_t kSizesWg[] = {8, 1u << 10, 64u << 10, 1u << 20, 16u << 20, 64u << 20};
static const size_t kSizesWave[] = {8, 64u << 10};
static const size_t kGuard = 256;

template <int OP, int SCOPE>
__device__ __forceinline__ void coll_once(char *dst, const char *src, size_t bytes) {
  if (OP == COLL_REDUCE) {
    if (SCOPE == SCOPE_WG) sh_float_sum_reduce_block((float *)dst, (const float *)src, bytes / 4);
    else sh_float_sum_reduce_warp((float *)dst, (const float *)src, bytes / 4);
  } else if (OP == COLL_BCAST) {
    if (SCOPE == SCOPE_WG) sh_broadcastmem_block(dst, src, bytes, 0);
    else sh_broadcastmem_warp(dst, src, bytes, 0);
  } else if (OP == COLL_ALLTOALL) {
    if (SCOPE == SCOPE_WG) sh_alltoallmem_block(dst, src, bytes);
    else sh_alltoallmem_warp(dst, src, bytes);
  } else {
    if (SCOPE == SCOPE_WG) sh_fcollectmem_block(dst, src, bytes);
    else sh_fcollectmem_warp(dst, src, bytes);
  }
}

template <int OP, int SCOPE>
static __global__ void k_coll(char *dst, const char *src, size_t bytes, long warm, long n, unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 0; i < warm + n; ++i) {
    if (i == warm && threadIdx.x == 0) t0 = bg_clock_ns();
    coll_once<OP, SCOPE>(dst, src, bytes);
  }
  if (threadIdx.x == 0) scratch[4] = bg_clock_ns() - t0;
}

/* ---- data and checks, shared with bench_stream.cu (declared in bench_gpu.cuh) ----------- */

/** The reduce's input word i of PE p: a small non-zero integer as a float (sums stay exact). */
__host__ __device__ __forceinline__ float red_val(uint64_t seed, int p, uint64_t i) {
  return (float)(bg_val(seed + (uint64_t)p, i) % 1023u + 1u);
}

static __global__ void k_fill_red(float *p, size_t n, uint64_t seed, int pe) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = red_val(seed, pe, i);
}

/** Expected word i of PE me's dest (words: S / 4), or 0 past its end (the guard). */
__device__ __forceinline__ uint32_t coll_want(int op, uint64_t seed, int me, int npes, size_t words, size_t i) {
  const size_t total = (op == COLL_ALLTOALL || op == COLL_FCOLLECT) ? (size_t)npes * words : words;
  if (i >= total) return 0u;
  if (op == COLL_REDUCE) {
    float s = 0.0f;
    for (int p = 0; p < npes; ++p) s += red_val(seed, p, i);
    union {
      float f;
      uint32_t u;
    } bits = {s};
    return bits.u;
  }
  if (op == COLL_BCAST) return bg_val(seed, i);  // root 0's data
  const size_t blk = i / words, w = i % words;
  if (op == COLL_ALLTOALL) return bg_val(seed + blk, (uint64_t)me * words + w);  // PE blk's block for me
  return bg_val(seed + blk, w);  // fcollect: PE blk's data
}

static __global__ void k_check_coll(const uint32_t *dst, int op, uint64_t seed, int me, int npes, size_t words,
                                    size_t guard_words, unsigned long long *scratch) {
  const size_t total = ((op == COLL_ALLTOALL || op == COLL_FCOLLECT) ? (size_t)npes * words : words) + guard_words;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t want = coll_want(op, seed, me, npes, words, i), got = dst[i];
    if (got != want) bg_kfail(scratch, i, got, want);
  }
}

void coll_prepare(int op, char *dst, char *src, size_t bytes, uint64_t seed) {
  const size_t words = bytes / 4;
  const size_t dst_bytes = (op == COLL_ALLTOALL || op == COLL_FCOLLECT) ? (size_t)npes * bytes : bytes;
  CK(cudaMemsetAsync(dst, 0, dst_bytes + kGuard, st));
  if (op == COLL_REDUCE) {
    launch(false, k_fill_red, (unsigned)std::min<size_t>((words + 255) / 256, 1024), 256, reinterpret_cast<float *>(src),
           words, seed, me);
    CK(cudaStreamSynchronize(st));
  } else if (op == COLL_BCAST) {
    fill(reinterpret_cast<uint32_t *>(src), words, seed + (uint64_t)me);  // only root 0's is used
  } else if (op == COLL_ALLTOALL) {
    fill(reinterpret_cast<uint32_t *>(src), (size_t)npes * words, seed + (uint64_t)me);
  } else {
    fill(reinterpret_cast<uint32_t *>(src), words, seed + (uint64_t)me);
  }
}

bool coll_verify(int op, const char *opname, const char *dst, size_t bytes, uint64_t seed) {
  const size_t words = bytes / 4;
  const size_t total = ((op == COLL_ALLTOALL || op == COLL_FCOLLECT) ? (size_t)npes * words : words) + kGuard / 4;
  reset_scratch();
  launch(false, k_check_coll, (unsigned)std::min<size_t>((total + 255) / 256, 1024), 256,
         reinterpret_cast<const uint32_t *>(dst), op, seed, me, npes, words, kGuard / 4, d_scratch);
  unsigned long long s[8];
  read_scratch(s);
  char detail[200] = "";
  if (s[0])
    snprintf(detail, sizeof detail, "PE_%d:%llu_bad_words,first_at_word_%llu:got_0x%llx,want_0x%llx%s", me, s[0], s[1],
             s[2], s[3],
             s[1] >= total - kGuard / 4 ? "(guard_overwritten)" : "");
  return verdict(opname, bytes, s[0] == 0, detail);
}

/* ---- the benchmark ---------------------------------------------------------------------- */

template <int OP, int SCOPE>
static void one(const char *name, char *a, char *b, size_t max_bytes) {
  const unsigned threads = SCOPE == SCOPE_WG ? 1024 : 32;
  const size_t *sizes = SCOPE == SCOPE_WG ? kSizesWg : kSizesWave;
  const size_t nsizes = SCOPE == SCOPE_WG ? sizeof kSizesWg / sizeof *kSizesWg : sizeof kSizesWave / sizeof *kSizesWave;
  const size_t per_pe = (OP == COLL_ALLTOALL || OP == COLL_FCOLLECT) ? (size_t)npes : 1;
  char op[64], opbw[72];
  snprintf(op, sizeof op, "%s_%s_%uthr", name, SCOPE == SCOPE_WG ? "wg" : "wave", threads);
  snprintf(opbw, sizeof opbw, "%s_bw", op);
  for (size_t k = 0; k < nsizes; ++k) {
    const size_t size = sizes[k];
    if (size * per_pe + kGuard > max_bytes + 4096) continue;  // the buffers' span (bench_main.cu)
    const uint64_t seed = seed_of(op, size);
    char *dst = b, *src = a;
    coll_prepare(OP, dst, src, size, seed);
    sync_barrier();
    unsigned long long s[8];
    launch(true, k_coll<OP, SCOPE>, 1, threads, dst, src, size, 0L, 1L, d_scratch);  // the check launch
    CK(cudaStreamSynchronize(st));
    sync_barrier();
    const bool ok = coll_verify(OP, op, dst, size, seed);
    if (size >= (64u << 10)) verdict(opbw, size, ok, ok ? "" : "see_the_us_row");  // the same check
    sync_barrier();
    // Iterations: about 256 MiB through each PE's dest per launch, 3 to 2000 (x BENCH_SCALE).
    const long n = iters(std::max<long>(3, std::min<long>(2000, (long)((256u << 20) / (size * per_pe)))), 3);
    const long warm = std::max<long>(2, std::min<long>(50, n / 10));
    const int timed = (int)iters(5, 3);
    std::vector<double> us;
    for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
      sync_barrier();
      reset_scratch();
      launch(true, k_coll<OP, SCOPE>, 1, threads, dst, src, size, warm, n, d_scratch);
      read_scratch(s);
      if (t > 0) us.push_back((double)s[4] * 1e-3 / (double)n);
    }
    sync_barrier();
    if (me == 0) {
      const double m = median(us);
      result(op, size, "us", m);
      if (size >= (64u << 10)) result(opbw, size, "GB/s", (double)(size * per_pe) / (m * 1e-6) / 1e9);
    }
  }
}

void bench_collectives(char *a, char *b, size_t max_bytes) {
  one<COLL_REDUCE, SCOPE_WG>("float_sum_reduce", a, b, max_bytes);
  one<COLL_BCAST, SCOPE_WG>("broadcastmem", a, b, max_bytes);
  one<COLL_ALLTOALL, SCOPE_WG>("alltoallmem", a, b, max_bytes);
  one<COLL_FCOLLECT, SCOPE_WG>("fcollectmem", a, b, max_bytes);
  one<COLL_REDUCE, SCOPE_WAVE>("float_sum_reduce", a, b, max_bytes);
  one<COLL_BCAST, SCOPE_WAVE>("broadcastmem", a, b, max_bytes);
  one<COLL_ALLTOALL, SCOPE_WAVE>("alltoallmem", a, b, max_bytes);
  one<COLL_FCOLLECT, SCOPE_WAVE>("fcollectmem", a, b, max_bytes);
}
