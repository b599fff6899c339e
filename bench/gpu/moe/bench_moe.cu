/* bench_moe.cu: a Mixture-of-Experts dispatch/combine pair in the low-latency shape (the kernels
 * DeepEP's low_latency_dispatch/low_latency_combine and MORI's EP benchmark), written once
 * against the sh_* names of ../shmem_adapter.cuh and compiled twice (this library; NVSHMEM with
 * -DBENCH_NVSHMEM), so both libraries run the same kernels. Any number of PEs.
 *
 * Every PE holds T tokens of H floats and E_L experts (E = E_L x PEs in all); token t of PE s is
 * routed to K distinct experts with weights (the same random table on every PE, from the seed).
 *   dispatch  each CTA takes tokens; per (token, expert) it reserves a slot of the expert's
 *             receive area for this source PE (a local atomic), puts the token there
 *             (putmem_nbi, work-group) and the token's (t, k) beside it (p); each CTA then quiets;
 *             the last CTA sends every PE its per-expert counts with put-with-signal (SET to the
 *             round number) and waits for the counts of every source PE.
 *   expert    (not timed) out = received token x (global expert id + 1), locally.
 *   combine   each CTA takes received tokens and puts the expert's output back to the source
 *             PE, into slot (t, k) of its combine area; quiet; the last CTA signals every PE
 *             (put-with-signal); then a second kernel waits for every PE's signal and reduces:
 *             result[t] = sum_k w[t][k] * combine_in[t][k].
 * Checked (rounds 1-3 and the last): every received token, its (t, k) and expert against the
 * routing table, the counts, and every element of the combined result against the exact value
 * (small integers times multiples of 1/8: exact in float).
 * Timed: cudaEvents on each PE around dispatch, and around combine (both kernels), per round
 * after warm-up; a host barrier between rounds (buffers are reused). Output, one line per PE:
 *   M <pe> <npes> <dispatch us median> <combine us median> <tokens> <hidden bytes> <topk> <experts>
 *     <combine's first kernel (the sends) us median> <its second kernel (wait + sum) us median>
 *   V moe_<dispatch|combine> <npes> ok|FAIL <detail>
 * Environment: MOE_TOKENS (128), MOE_HIDDEN (3584 floats: 14 KiB, the bytes of a 7168-wide
 * bf16 token), MOE_TOPK (8), MOE_EXPERTS_PER_PE (8), MOE_ROUNDS (50), MOE_WARMUP (5),
 * MOE_CTAS (32), MOE_THREADS (512), BENCH_SEED.
 */
#include "../shmem_adapter.cuh"

#include <algorithm>
#include <string>
#include <vector>

static int g_me = -1;
#define CKM(x)                                                                                              \
  do {                                                                                                      \
    cudaError_t e_ = (x);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                \
      fprintf(stderr, "bench_moe (%s) PE %d: %s: %s (%s:%d)\n", SH_LIB, g_me, #x, cudaGetErrorString(e_), \
              __FILE__, __LINE__);                                                                          \
      exit(4);                                                                                              \
    }                                                                                                       \
  } while (0)

struct Params {
  int T, H, K, EL, P, me;
};

__host__ __device__ inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/** Token element h of token t of PE pe: an integer in [-32, 32]. */
__host__ __device__ inline float xval(uint64_t seed, int pe, int t, int h) {
  uint64_t z = mix(seed ^ (0x9e3779b97f4a7c15ULL * (1 + (((uint64_t)pe << 40) | ((uint64_t)t << 20) | (uint64_t)h))));
  return (float)((int)(z % 65) - 32);
}

static __global__ void k_fill(float *x, Params p, uint64_t seed) {
  const size_t n = (size_t)p.T * p.H;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    x[i] = xval(seed, p.me, (int)(i / p.H), (int)(i % p.H));
}

/** Dispatch: tokens out to their experts' PEs; the last CTA sends the counts and waits for all. */
static __global__ void k_dispatch(Params p, const float *x, const int *topk, int *send_cnt, float *recv_x,
                                  int *recv_meta, int *recv_cnt, uint64_t *recv_sig, unsigned *done, uint64_t round) {
  __shared__ int slot_s;
  __shared__ unsigned prev_s;
  const int *mine = topk + (size_t)p.me * p.T * p.K;
  const size_t tok_bytes = (size_t)p.H * sizeof(float);
  for (int t = blockIdx.x; t < p.T; t += gridDim.x) {
    for (int k = 0; k < p.K; ++k) {
      const int e = mine[t * p.K + k], dst = e / p.EL, le = e % p.EL;
      if (threadIdx.x == 0) slot_s = atomicAdd(&send_cnt[e], 1);
      __syncthreads();
      const size_t idx = ((size_t)le * p.P + p.me) * p.T + slot_s;
      sh_putmem_nbi_block(recv_x + idx * p.H, x + (size_t)t * p.H, tok_bytes, dst);
      if (threadIdx.x == 0) sh_int_p(recv_meta + idx, t * p.K + k, dst);
      __syncthreads();  // slot_s is read by every thread before thread 0 writes the next
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sh_quiet();  // this CTA's tokens are delivered
    __threadfence();
    prev_s = atomicAdd(&done[0], 1u);
  }
  __syncthreads();
  if (prev_s != gridDim.x - 1) return;
  // The last CTA: every token of this PE is delivered. Each PE gets this PE's counts for its
  // experts, and the signal.
  __threadfence();
  for (int dst = 0; dst < p.P; ++dst)
    sh_putmem_signal_nbi_block(recv_cnt + (size_t)p.me * p.EL, send_cnt + (size_t)dst * p.EL, p.EL * sizeof(int),
                               recv_sig + p.me, round, dst);
  __syncthreads();
  if (threadIdx.x == 0) {
    sh_quiet();  // the counts have left: send_cnt may be reset
    for (int e = 0; e < p.EL * p.P; ++e) send_cnt[e] = 0;
    done[0] = 0;
    for (int src = 0; src < p.P; ++src) sh_signal_wait_until_ge(recv_sig + src, round);
  }
  __syncthreads();
}

/** The experts (not timed): out = token x (global expert id + 1). */
static __global__ void k_expert(Params p, const float *recv_x, const int *recv_cnt, float *out) {
  const size_t per_pair = (size_t)p.T * p.H, n = (size_t)p.EL * p.P * per_pair;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const size_t pair = i / per_pair, slot = (i % per_pair) / p.H;
    const int le = (int)(pair / p.P), src = (int)(pair % p.P);
    if ((int)slot < recv_cnt[src * p.EL + le]) out[i] = recv_x[i] * (float)(p.me * p.EL + le + 1);
  }
}

/** Combine, first kernel: every received token's output back to its source PE, then signals. */
static __global__ void k_combine_send(Params p, const float *out, const int *recv_meta, const int *recv_cnt,
                                      float *comb_in, uint64_t *comb_sig, uint64_t *comb_word, unsigned *done,
                                      uint64_t round) {
  __shared__ unsigned prev_s;
  const size_t tok_bytes = (size_t)p.H * sizeof(float);
  unsigned item = 0;
  for (int le = 0; le < p.EL; ++le)
    for (int src = 0; src < p.P; ++src) {
      const int cnt = recv_cnt[src * p.EL + le];
      for (int slot = 0; slot < cnt; ++slot, ++item) {
        if (item % gridDim.x != blockIdx.x) continue;
        const size_t idx = ((size_t)le * p.P + src) * p.T + slot;
        const int m = recv_meta[idx];
        sh_putmem_nbi_block(comb_in + (size_t)m * p.H, out + idx * p.H, tok_bytes, src);
      }
    }
  __syncthreads();
  if (threadIdx.x == 0) {
    sh_quiet();
    __threadfence();
    prev_s = atomicAdd(&done[1], 1u);
  }
  __syncthreads();
  if (prev_s != gridDim.x - 1) return;
  __threadfence();
  for (int dst = 0; dst < p.P; ++dst)
    sh_putmem_signal_nbi_block(comb_word + p.me, comb_word + p.P + p.me, sizeof(uint64_t), comb_sig + p.me, round,
                               dst);
  __syncthreads();
  if (threadIdx.x == 0) {
    sh_quiet();
    done[1] = 0;
  }
}

/** Combine, second kernel: waits for every PE's outputs, then the weighted sum per token. */
static __global__ void k_combine_reduce(Params p, const float *comb_in, const float *wts, uint64_t *comb_sig,
                                        float *result, uint64_t round) {
  if (threadIdx.x == 0)
    for (int src = 0; src < p.P; ++src) sh_signal_wait_until_ge(comb_sig + src, round);
  __syncthreads();
  const float *w = wts + (size_t)p.me * p.T * p.K;
  for (int t = blockIdx.x; t < p.T; t += gridDim.x)
    for (int h = threadIdx.x; h < p.H; h += blockDim.x) {
      float acc = 0.f;
      for (int k = 0; k < p.K; ++k) acc += w[t * p.K + k] * comb_in[((size_t)t * p.K + k) * p.H + h];
      result[(size_t)t * p.H + h] = acc;
    }
}

/** Checks every received token against the routing table and the data; counts mismatches. */
static __global__ void k_check_dispatch(Params p, const float *recv_x, const int *recv_meta, const int *recv_cnt,
                                        const int *topk, uint64_t seed, unsigned long long *err) {
  for (int pair = blockIdx.x; pair < p.EL * p.P; pair += gridDim.x) {
    const int le = pair / p.P, src = pair % p.P, cnt = recv_cnt[src * p.EL + le];
    for (int slot = 0; slot < cnt; ++slot) {
      const size_t idx = (size_t)pair * p.T + slot;
      const int m = recv_meta[idx], t = m / p.K, k = m % p.K;
      if (m < 0 || t >= p.T || topk[((size_t)src * p.T + t) * p.K + k] != p.me * p.EL + le) {
        if (threadIdx.x == 0) atomicAdd(err, 1ULL);
        continue;
      }
      for (int h = threadIdx.x; h < p.H; h += blockDim.x)
        if (recv_x[idx * p.H + h] != xval(seed, src, t, h)) atomicAdd(err, 1ULL);
    }
  }
}

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

template <class T>
struct same {
  using type = T;
};
/** Launches kernel k (sync: it waits for other PEs; NVSHMEM asks for its collective launch). */
template <class... A>
static void go(bool sync, void (*k)(A...), unsigned grid, unsigned block, cudaStream_t st, typename same<A>::type... a) {
  void *args[sizeof...(A) + 1] = {(void *)&a...};
  CKM(sync ? sh_launch_sync_kernel((const void *)k, dim3(grid), dim3(block), args, st)
           : cudaLaunchKernel((const void *)k, dim3(grid), dim3(block), args, 0, st));
}

int main() {
  sh_init();
  Params p;
  p.me = g_me = sh_my_pe();
  p.P = sh_n_pes();
  p.T = env_int("MOE_TOKENS", 128);
  p.H = env_int("MOE_HIDDEN", 3584);
  p.K = env_int("MOE_TOPK", 8);
  p.EL = env_int("MOE_EXPERTS_PER_PE", 8);
  const int E = p.EL * p.P, rounds = env_int("MOE_ROUNDS", 50), warm = env_int("MOE_WARMUP", 5);
  const unsigned ctas = (unsigned)env_int("MOE_CTAS", 32), threads = (unsigned)env_int("MOE_THREADS", 512);
  const char *s = getenv("BENCH_SEED");
  const uint64_t seed = s && *s ? strtoull(s, nullptr, 0) : 0x5eed;
  if (p.K > E) {
    fprintf(stderr, "bench_moe: top-k %d > %d experts\n", p.K, E);
    return 2;
  }
  // The routing of every PE (the same on all): K distinct experts per token, weights in eighths.
  std::vector<int> topk((size_t)p.P * p.T * p.K);
  std::vector<float> wts(topk.size());
  for (int pe = 0; pe < p.P; ++pe)
    for (int t = 0; t < p.T; ++t) {
      uint64_t z = mix(seed ^ (0xa0761d6478bd642fULL * (1 + (((uint64_t)pe << 32) | (uint64_t)t))));
      for (int k = 0; k < p.K; ++k) {
        int e;
        bool dup;
        do {
          z = mix(z + 0x9e3779b97f4a7c15ULL);
          e = (int)(z % (uint64_t)E);
          dup = false;
          for (int j = 0; j < k; ++j) dup |= topk[((size_t)pe * p.T + t) * p.K + j] == e;
        } while (dup);
        topk[((size_t)pe * p.T + t) * p.K + k] = e;
        wts[((size_t)pe * p.T + t) * p.K + k] = (float)(1 + (int)((z >> 40) % 8)) / 8.0f;
      }
    }
  std::vector<int> want_cnt((size_t)p.P * p.EL, 0);  // [src][le] tokens this PE receives
  for (int src = 0; src < p.P; ++src)
    for (size_t i = 0; i < (size_t)p.T * p.K; ++i) {
      const int e = topk[(size_t)src * p.T * p.K + i];
      if (e / p.EL == p.me) want_cnt[(size_t)src * p.EL + e % p.EL]++;
    }

  cudaStream_t st;
  CKM(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t tok = (size_t)p.H, pairs = (size_t)p.EL * p.P;
  float *x, *out, *result, *d_wts;
  int *d_topk, *send_cnt;
  unsigned *done;
  unsigned long long *err;
  CKM(cudaMalloc(&x, (size_t)p.T * tok * sizeof(float)));
  CKM(cudaMalloc(&out, pairs * p.T * tok * sizeof(float)));
  CKM(cudaMalloc(&result, (size_t)p.T * tok * sizeof(float)));
  CKM(cudaMalloc(&d_wts, wts.size() * sizeof(float)));
  CKM(cudaMalloc(&d_topk, topk.size() * sizeof(int)));
  CKM(cudaMalloc(&send_cnt, (size_t)E * sizeof(int)));
  CKM(cudaMalloc(&done, 2 * sizeof(unsigned)));
  CKM(cudaMalloc(&err, sizeof(unsigned long long)));
  CKM(cudaMemcpy(d_wts, wts.data(), wts.size() * sizeof(float), cudaMemcpyHostToDevice));
  CKM(cudaMemcpy(d_topk, topk.data(), topk.size() * sizeof(int), cudaMemcpyHostToDevice));
  CKM(cudaMemset(send_cnt, 0, (size_t)E * sizeof(int)));
  CKM(cudaMemset(done, 0, 2 * sizeof(unsigned)));
  const size_t recv_x_bytes = pairs * p.T * tok * sizeof(float), meta_bytes = pairs * p.T * sizeof(int),
               cnt_bytes = pairs * sizeof(int), comb_bytes = (size_t)p.T * p.K * tok * sizeof(float);
  float *recv_x = (float *)sh_malloc(recv_x_bytes);
  int *recv_meta = (int *)sh_malloc(meta_bytes);
  int *recv_cnt = (int *)sh_malloc(cnt_bytes);
  float *comb_in = (float *)sh_malloc(comb_bytes);
  uint64_t *sigs = (uint64_t *)sh_malloc(4 * (size_t)p.P * sizeof(uint64_t));  // recv_sig, comb_sig, comb_word x2
  if (!recv_x || !recv_meta || !recv_cnt || !comb_in || !sigs) {
    fprintf(stderr, "bench_moe (%s) PE %d: symmetric allocation of %.1f MiB failed\n", SH_LIB, p.me,
            (recv_x_bytes + meta_bytes + cnt_bytes + comb_bytes) / 1048576.0);
    return 3;
  }
  uint64_t *recv_sig = sigs, *comb_sig = sigs + p.P, *comb_word = sigs + 2 * p.P;
  CKM(cudaMemset(sigs, 0, 4 * (size_t)p.P * sizeof(uint64_t)));
  CKM(cudaMemset(recv_meta, 0xff, meta_bytes));
  go(false, k_fill, 256u, 256u, st, x, p, seed);
  CKM(cudaStreamSynchronize(st));
  CKM(cudaDeviceSynchronize());
  sh_host_barrier_all();

  cudaEvent_t ev[5];
  for (auto &e : ev) CKM(cudaEventCreate(&e));
  std::vector<double> t_disp, t_comb, t_send, t_red;
  unsigned long long bad_disp = 0, bad_comb = 0, bad_cnt = 0;
  std::string first_bad;
  std::vector<float> h_res((size_t)p.T * tok);
  std::vector<int> h_cnt(pairs);
  const int total = warm + rounds;
  for (int r = 1; r <= total; ++r) {
    const bool check = r <= 3 || r == total;
    CKM(cudaEventRecord(ev[0], st));
    go(true, k_dispatch, ctas, threads, st, p, (const float *)x, (const int *)d_topk, send_cnt, recv_x, recv_meta,
       recv_cnt, recv_sig, done, (uint64_t)r);
    CKM(cudaEventRecord(ev[1], st));
    go(false, k_expert, 264u, 512u, st, p, (const float *)recv_x, (const int *)recv_cnt, out);
    CKM(cudaEventRecord(ev[2], st));
    go(true, k_combine_send, ctas, threads, st, p, (const float *)out, (const int *)recv_meta, (const int *)recv_cnt,
       comb_in, comb_sig, comb_word, done, (uint64_t)r);
    CKM(cudaEventRecord(ev[4], st));
    go(true, k_combine_reduce, ctas, threads, st, p, (const float *)comb_in, (const float *)d_wts, comb_sig, result,
       (uint64_t)r);
    CKM(cudaEventRecord(ev[3], st));
    CKM(cudaStreamSynchronize(st));
    float a = 0, b = 0, c = 0, d = 0;
    CKM(cudaEventElapsedTime(&a, ev[0], ev[1]));
    CKM(cudaEventElapsedTime(&b, ev[2], ev[3]));
    CKM(cudaEventElapsedTime(&c, ev[2], ev[4]));
    CKM(cudaEventElapsedTime(&d, ev[4], ev[3]));
    if (r > warm) {
      t_disp.push_back(a * 1e3);
      t_comb.push_back(b * 1e3);
      t_send.push_back(c * 1e3);
      t_red.push_back(d * 1e3);
    }
    if (check) {
      CKM(cudaMemset(err, 0, sizeof(unsigned long long)));
      go(false, k_check_dispatch, 64u, 256u, st, p, (const float *)recv_x, (const int *)recv_meta,
         (const int *)recv_cnt, (const int *)d_topk, seed, err);
      unsigned long long e = 0;
      CKM(cudaMemcpyAsync(&e, err, sizeof e, cudaMemcpyDeviceToHost, st));
      CKM(cudaMemcpyAsync(h_cnt.data(), recv_cnt, cnt_bytes, cudaMemcpyDeviceToHost, st));
      CKM(cudaMemcpyAsync(h_res.data(), result, h_res.size() * sizeof(float), cudaMemcpyDeviceToHost, st));
      CKM(cudaStreamSynchronize(st));
      bad_disp += e;
      for (size_t i = 0; i < pairs; ++i) bad_cnt += h_cnt[i] != want_cnt[i];
      for (int t = 0; t < p.T; ++t)
        for (int h = 0; h < p.H; ++h) {
          float want = 0.f;
          for (int k = 0; k < p.K; ++k) {
            const size_t i = ((size_t)p.me * p.T + t) * p.K + k;
            want += wts[i] * (xval(seed, p.me, t, h) * (float)(topk[i] + 1));
          }
          const float got = h_res[(size_t)t * tok + h];
          if (got != want) {
            if (bad_comb++ == 0) {
              char d[160];
              snprintf(d, sizeof d, "round_%d_token_%d_elem_%d:got_%g,want_%g", r, t, h, got, want);
              first_bad = d;
            }
          }
        }
    }
    sh_host_barrier_all();  // every PE is done with this round's buffers before the next round
  }
  char detail[200];
  snprintf(detail, sizeof detail, "%llu_bad_tokens_elems,%llu_bad_counts", bad_disp, bad_cnt);
  printf("V moe_dispatch %d %s %s\n", p.P, bad_disp == 0 && bad_cnt == 0 ? "ok" : "FAIL", detail);
  printf("V moe_combine %d %s %llu_bad_elems%s%s\n", p.P, bad_comb == 0 ? "ok" : "FAIL", bad_comb,
         first_bad.empty() ? "" : ",first_", first_bad.c_str());
  printf("M %d %d %.2f %.2f %d %zu %d %d %.2f %.2f\n", p.me, p.P, median(t_disp), median(t_comb), p.T,
         tok * sizeof(float), p.K, E, median(t_send), median(t_red));
  fflush(stdout);
  sh_host_barrier_all();
  sh_free(sigs);
  sh_free(comb_in);
  sh_free(recv_cnt);
  sh_free(recv_meta);
  sh_free(recv_x);
  sh_finalize();
  return bad_disp || bad_cnt || bad_comb ? 1 : 0;
}
