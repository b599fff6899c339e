/* Put and get bandwidth, PE 0 <-> PE 1, one direction.
 *
 * Sizes: at 32 CTAs every size from 8 B to 256 MiB (the bandwidth curve, docs/bench-nvidia-bw.png);
 * at 16 CTAs the sizes of the first table; and the CTA sweep, 1 to 132 CTAs (132: one per SM of
 * an H100/H200) at 1 MiB, 32 MiB and 256 MiB. Sizes above -m are skipped.
 *
 * putmem_nbi_wg_<C>x1024: C CTAs of 1024 threads on PE 0; each CTA puts its contiguous share
 *   (16-byte aligned) of S bytes to PE 1, `reps` times back to back, then __syncthreads and one
 *   quiet by thread 0 (NVSHMEM's perftest shape). GB/s = S * reps / kernel time (cudaEvents).
 * getmem_wg_<C>x1024: the same with blocking block gets from PE 1 into PE 0.
 * Checked once per configuration: the receiver's buffer equals the sender's random data and
 * the 256 bytes after it are untouched.
 */
#include "bench_gpu.cuh"

using namespace bg;

static const size_t kCurve[] = {8,         64,        512,       4u << 10,   32u << 10,  64u << 10,  256u << 10,
                                1u << 20,  4u << 20,  16u << 20, 32u << 20, 64u << 20, 128u << 20, 256u << 20};
static const size_t kFirstTable[] = {8, 64u << 10, 1u << 20, 32u << 20, 128u << 20};
static const size_t kCtaSweep[] = {1u << 20, 32u << 20, 256u << 20};
static const unsigned kCtas[] = {1, 2, 4, 8, 16, 32, 64, 132};

/** The sizes measured at `ctas` CTAs, ascending. */
static std::vector<size_t> sizes_for(unsigned ctas) {
  std::vector<size_t> v(kCtaSweep, kCtaSweep + sizeof kCtaSweep / sizeof *kCtaSweep);
  if (ctas == 32) v.assign(kCurve, kCurve + sizeof kCurve / sizeof *kCurve);
  if (ctas == 16) v.insert(v.end(), kFirstTable, kFirstTable + sizeof kFirstTable / sizeof *kFirstTable);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}
static const size_t kGuard = 256;

static __device__ __forceinline__ void share(size_t bytes, size_t *off, size_t *len) {
  size_t per = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~(size_t)15;
  *off = (size_t)blockIdx.x * per;
  *len = *off < bytes ? (per < bytes - *off ? per : bytes - *off) : 0;
}

static __global__ void k_put_bw(char *dst, const char *src, size_t bytes, int reps, int pe) {
  size_t off, len;
  share(bytes, &off, &len);
  if (len)
    for (int r = 0; r < reps; ++r) sh_putmem_nbi_block(dst + off, src + off, len, pe);
  __syncthreads();
  if (threadIdx.x == 0) sh_quiet();
}

static __global__ void k_get_bw(char *dst, const char *src, size_t bytes, int reps, int pe) {
  size_t off, len;
  share(bytes, &off, &len);
  if (len)
    for (int r = 0; r < reps; ++r) sh_getmem_block(dst + off, src + off, len, pe);
}

/* One direction of traffic: `mover` runs the kernel; `dst_pe` owns the destination. */
static void run(bool is_put, char *a, char *b, size_t max_bytes) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int timed = (int)iters(9, 3);
  for (unsigned ctas : kCtas) {
    for (size_t size : sizes_for(ctas)) {
      if (size > max_bytes) continue;
      char op[64];
      snprintf(op, sizeof op, "%s_%ux1024", is_put ? "putmem_nbi_wg" : "getmem_wg", ctas);
      const uint64_t seed = seed_of(op, size);
      const size_t words = size / 4;
      // put: PE 0's a -> PE 1's b. get: PE 1's a -> PE 0's b. The source PE fills a, the
      // destination PE poisons b (zero: the data is never zero).
      const int src_pe = is_put ? 0 : 1, dst_pe = is_put ? 1 : 0;
      if (me == src_pe) fill(reinterpret_cast<uint32_t *>(a), words, seed);
      if (me == dst_pe) CK(cudaMemsetAsync(b, 0, size + kGuard, st));
      sync_barrier();
      const long reps = std::max<long>(1, std::min<long>(2000, (long)((512u << 20) / size)));
      if (me == 0) {  // the check launch (also the first warm-up)
        launch(false, is_put ? k_put_bw : k_get_bw, ctas, 1024, b, a, size, 1, peer);
        CK(cudaStreamSynchronize(st));
      }
      sync_barrier();
      if (me == dst_pe) {
        std::string detail;
        unsigned long long bad = check(reinterpret_cast<const uint32_t *>(b), words, kGuard / 4, seed, &detail);
        verdict(op, size, bad == 0, detail.c_str());
      }
      sync_barrier();
      if (me == 0) {
        launch(false, is_put ? k_put_bw : k_get_bw, ctas, 1024, b, a, size, (int)reps, peer);  // warm-up
        std::vector<double> gbs;
        for (int t = 0; t < timed; ++t) {
          CK(cudaEventRecord(e0, st));
          launch(false, is_put ? k_put_bw : k_get_bw, ctas, 1024, b, a, size, (int)reps, peer);
          CK(cudaEventRecord(e1, st));
          CK(cudaEventSynchronize(e1));
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          gbs.push_back((double)size * (double)reps / ((double)ms * 1e-3) / 1e9);
        }
        result(op, size, "GB/s", median(gbs));
      }
      sync_barrier();
    }
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

void bench_put_bw(char *a, char *b, size_t max_bytes) { run(true, a, b, max_bytes); }
void bench_get_bw(char *a, char *b, size_t max_bytes) { run(false, a, b, max_bytes); }
