// Latency probe (no library): where a device-initiated round trip over NVLink spends its time.
// One process, two GPUs with peer access; variants of the store, the poll, the fences and the
// address lookup (direct, a 4-load pointer chain as the library had, __ldg chain, __constant__).
//   nvcc -O3 -arch=sm_90 -std=c++17 -o latency_probe latency_probe.cu && ./latency_probe
// Results and what they changed: docs/benchmarks-nvidia.md ("Where a round trip goes: the latency probe").
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

struct State { int my_pe; int n_pes; uint64_t *bases; };
struct Ctx { void *team; State *state; };
struct Glob { Ctx *ctx; };
__device__ Glob g_glob;            // like ROCSHMEM_CTX_DEFAULT -> ctx -> state -> bases[]
__constant__ uint64_t c_bases[8];  // constant-memory copy
__constant__ int c_my_pe;

__device__ __forceinline__ uint64_t now() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ uint64_t ld_acq(const uint64_t *p) { uint64_t v; asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint64_t ld_rlx(const uint64_t *p) { uint64_t v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint64_t ld_vol(const uint64_t *p) { return *(volatile const uint64_t *)p; }
__device__ __forceinline__ void st_rel(uint64_t *p, uint64_t v) { asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void st_vol(uint64_t *p, uint64_t v) { *(volatile uint64_t *)p = v; }
__device__ __forceinline__ void f_sc() { asm volatile("fence.sc.sys;" ::: "memory"); }
__device__ __forceinline__ void f_ar() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

enum Addr { A_DIRECT, A_CHAIN, A_CONST, A_CHAIN_LDG };
enum Poll { P_ACQ, P_VOL_FSC, P_VOL_FAR, P_RLX_FAR, P_VOL_NOF };
enum Fen { F_SC, F_AR, F_NONE };

template <int A> __device__ __forceinline__ uint64_t *xlate(uint64_t *local, uint64_t *direct_remote, int pe) {
  if (A == A_DIRECT) return direct_remote;
  if (A == A_CHAIN) { State *s = g_glob.ctx->state; return (uint64_t *)((uintptr_t)local - s->bases[s->my_pe] + s->bases[pe]); }
  if (A == A_CHAIN_LDG) { Ctx *c = (Ctx *)__ldg((const unsigned long long *)&g_glob.ctx); State *s = (State *)__ldg((const unsigned long long *)&c->state);
    uint64_t *b = (uint64_t *)__ldg((const unsigned long long *)&s->bases); int me = __ldg(&s->my_pe);
    return (uint64_t *)((uintptr_t)local - __ldg((const unsigned long long *)&b[me]) + __ldg((const unsigned long long *)&b[pe])); }
  return (uint64_t *)((uintptr_t)local - c_bases[c_my_pe] + c_bases[pe]);
}

template <int A, int P, int FB, int FW>
__device__ __forceinline__ void pp_send(uint64_t *data_local, uint64_t *flag_local, uint64_t *data_remote, uint64_t *flag_remote, int peer, uint64_t i) {
  st_vol(xlate<A>(data_local, data_remote, peer), i * 7);
  if (FB == F_SC) f_sc(); else if (FB == F_AR) f_ar();
  st_vol(xlate<A>(flag_local, flag_remote, peer), i);
}
template <int A, int P, int FB, int FW>
__device__ __forceinline__ void pp_wait(uint64_t *data_local, uint64_t *flag_local, uint64_t i, uint64_t *out) {
  if (P == P_ACQ) { while (ld_acq(flag_local) < i) {} }
  else if (P == P_RLX_FAR) { while (ld_rlx(flag_local) < i) {} f_ar(); }
  else { while (ld_vol(flag_local) < i) {} if (P == P_VOL_FSC) f_sc(); else if (P == P_VOL_FAR) f_ar(); }
  if (FW == F_SC) f_sc(); else if (FW == F_AR) f_ar();
  if (ld_vol(data_local) != i * 7) out[1]++;
}
template <int A, int P, int FB, int FW>
__global__ void pingpong(uint64_t *data_local, uint64_t *flag_local, uint64_t *data_remote, uint64_t *flag_remote, int me, int peer, long n, uint64_t *out) {
  uint64_t t0 = 0;
  for (uint64_t i = 1; i <= (uint64_t)n + 100; ++i) {
    if (i == 101) t0 = now();
    if (me == 0) {
      pp_send<A, P, FB, FW>(data_local, flag_local, data_remote, flag_remote, peer, i);
      pp_wait<A, P, FB, FW>(data_local, flag_local, i, out);
    } else {
      pp_wait<A, P, FB, FW>(data_local, flag_local, i, out);
      pp_send<A, P, FB, FW>(data_local, flag_local, data_remote, flag_remote, peer, i);
    }
  }
  out[0] = now() - t0;
}

template <int A, int FQ>
__global__ void p_quiet(uint64_t *data_local, uint64_t *data_remote, int peer, long n, uint64_t *out) {
  uint64_t t0 = 0;
  for (long i = 0; i < n + 100; ++i) {
    if (i == 100) t0 = now();
    st_vol(xlate<A>(data_local + (i & 63), data_remote + (i & 63), peer), i);
    if (FQ == F_SC) f_sc(); else if (FQ == F_AR) f_ar();
  }
  out[0] = now() - t0;
}

struct Dev { uint64_t *buf; uint64_t *out; cudaStream_t s; };
Dev d[2];
uint64_t *bases_dev[2];

template <int A, int P, int FB, int FW>
void run_pp(const char *name) {
  const long n = 20000;
  std::vector<double> r;
  for (int rep = 0; rep < 5; ++rep) {
    for (int g = 0; g < 2; ++g) { CK(cudaSetDevice(g)); CK(cudaMemset(d[g].buf, 0, 4096)); CK(cudaMemset(d[g].out, 0, 64)); CK(cudaDeviceSynchronize()); }
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      int o = 1 - g;
      pingpong<A, P, FB, FW><<<1, 1, 0, d[g].s>>>(d[g].buf, d[g].buf + 8, d[o].buf, d[o].buf + 8, g, o, n, d[g].out);
    }
    uint64_t h[2];
    for (int g = 0; g < 2; ++g) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
    CK(cudaSetDevice(0)); CK(cudaMemcpy(h, d[0].out, 16, cudaMemcpyDeviceToHost));
    uint64_t h1[2]; CK(cudaSetDevice(1)); CK(cudaMemcpy(h1, d[1].out, 16, cudaMemcpyDeviceToHost));
    if (h[1] || h1[1]) printf("  %s: %llu/%llu WRONG\n", name, (unsigned long long)h[1], (unsigned long long)h1[1]);
    r.push_back(h[0] * 1e-3 / n);
  }
  std::sort(r.begin(), r.end());
  printf("pingpong %-40s %.3f us\n", name, r[2]);
}

template <int A, int FQ>
void run_pq(const char *name) {
  const long n = 20000;
  std::vector<double> r;
  for (int rep = 0; rep < 5; ++rep) {
    CK(cudaSetDevice(0));
    p_quiet<A, FQ><<<1, 1, 0, d[0].s>>>(d[0].buf + 64, d[1].buf + 64, 1, n, d[0].out);
    CK(cudaDeviceSynchronize());
    uint64_t h; CK(cudaMemcpy(&h, d[0].out, 8, cudaMemcpyDeviceToHost));
    r.push_back(h * 1e-3 / n);
  }
  std::sort(r.begin(), r.end());
  printf("p+quiet  %-40s %.3f us\n", name, r[2]);
}

int main() {
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaDeviceEnablePeerAccess(1 - g, 0));
    CK(cudaMalloc(&d[g].buf, 1 << 20));
    CK(cudaMalloc(&d[g].out, 64));
    CK(cudaStreamCreateWithFlags(&d[g].s, cudaStreamNonBlocking));
  }
  // The chain (same VA on both GPUs is not needed: bases translate local -> remote).
  uint64_t bases[2] = {(uint64_t)d[0].buf, (uint64_t)d[1].buf};
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    State st{g, 2, nullptr};
    CK(cudaMalloc(&st.bases, 16)); CK(cudaMemcpy(st.bases, bases, 16, cudaMemcpyHostToDevice));
    State *dst; CK(cudaMalloc(&dst, sizeof(State))); CK(cudaMemcpy(dst, &st, sizeof st, cudaMemcpyHostToDevice));
    Ctx c{nullptr, dst}; Ctx *dc; CK(cudaMalloc(&dc, sizeof(Ctx))); CK(cudaMemcpy(dc, &c, sizeof c, cudaMemcpyHostToDevice));
    Glob gl{dc}; CK(cudaMemcpyToSymbol(g_glob, &gl, sizeof gl));
    CK(cudaMemcpyToSymbol(c_bases, bases, 16)); CK(cudaMemcpyToSymbol(c_my_pe, &g, 4));
  }
  run_pq<A_DIRECT, F_SC>("direct, fence.sc");
  run_pq<A_DIRECT, F_AR>("direct, fence.acq_rel");
  run_pq<A_DIRECT, F_NONE>("direct, no fence");
  run_pq<A_CHAIN, F_SC>("chain, fence.sc");
  run_pq<A_CHAIN, F_AR>("chain, fence.acq_rel");
  run_pq<A_CONST, F_SC>("const, fence.sc");
  run_pq<A_CHAIN_LDG, F_SC>("chain ldg, fence.sc");
  run_pp<A_DIRECT, P_ACQ, F_SC, F_NONE>("direct acq-poll fsc-between");
  run_pp<A_DIRECT, P_ACQ, F_SC, F_SC>("direct acq-poll fsc-between fsc-after");
  run_pp<A_DIRECT, P_ACQ, F_AR, F_NONE>("direct acq-poll far-between");
  run_pp<A_DIRECT, P_VOL_FAR, F_AR, F_NONE>("direct vol-poll+far far-between");
  run_pp<A_DIRECT, P_VOL_NOF, F_AR, F_NONE>("direct vol-poll far-between (unsafe)");
  run_pp<A_DIRECT, P_RLX_FAR, F_AR, F_NONE>("direct rlx-poll+far far-between");
  run_pp<A_CHAIN, P_ACQ, F_SC, F_SC>("chain acq-poll fsc fsc-after (ours now)");
  run_pp<A_CHAIN, P_ACQ, F_SC, F_NONE>("chain acq-poll fsc");
  run_pp<A_CHAIN, P_ACQ, F_AR, F_NONE>("chain acq-poll far");
  run_pp<A_CHAIN_LDG, P_ACQ, F_AR, F_NONE>("chain-ldg acq-poll far");
  run_pp<A_CONST, P_ACQ, F_SC, F_SC>("const acq-poll fsc fsc-after");
  run_pp<A_CONST, P_ACQ, F_AR, F_NONE>("const acq-poll far");
  run_pp<A_CONST, P_VOL_FAR, F_AR, F_NONE>("const vol-poll+far far");
  run_pp<A_CHAIN, P_VOL_FAR, F_AR, F_NONE>("chain vol-poll+far far");
  return 0;
}
