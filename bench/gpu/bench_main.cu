/* gpu_bench: the GPU benchmarks of bench/gpu, built once per library (see shmem_adapter.cuh).
 *
 *   rocshmem-run -n 2 gpu_bench_rocshmem -b put,get,p,pingpong,signal,amo,barrier,coll,stream,hostbarrier
 *   BENCH_RANK=r BENCH_NRANKS=2 BENCH_UID_FILE=f gpu_bench_nvshmem -b ...     (one per rank)
 *
 * -b: the benchmarks (comma-separated; "all" for every one, "init" for none: init and finalize
 * times only). -m: the largest transfer in bytes (default 256 MiB; the symmetric heap holds two
 * buffers of that size). Exactly 2 PEs, one per GPU.
 * BENCH_SCALE multiplies the iteration counts. The output format is in bench_gpu.cuh.
 */
#include "bench_gpu.cuh"

#include <string.h>
#include <time.h>

namespace bg {

int me = -1, npes = 0, peer = -1;
cudaStream_t st = nullptr;
double scale = 1.0;
unsigned long long *d_scratch = nullptr;

void check_cuda(cudaError_t e, const char *what, const char *file, int line) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "bench (%s) PE %d: %s:%d: %s: %s\n", SH_LIB, me, file, line, what, cudaGetErrorString(e));
  fflush(stderr);
  exit(3);
}

double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void sync_barrier() {
  CK(cudaStreamSynchronize(st));
  sh_host_barrier_all();
}

void result(const char *op, size_t size, const char *unit, double value) {
  printf("R %s %zu %s %.6g\n", op, size, unit, value);
  fflush(stdout);
}

bool verdict(const char *op, size_t size, bool ok, const char *detail) {
  printf("V %s %zu %s %s\n", op, size, ok ? "ok" : "FAIL", detail && *detail ? detail : "-");
  fflush(stdout);
  if (!ok) {
    fprintf(stderr, "bench (%s) PE %d: CHECK FAILED: %s %zu: %s\n", SH_LIB, me, op, size, detail ? detail : "");
    fflush(stderr);
  }
  return ok;
}

void reset_scratch() {
  CK(cudaMemsetAsync(d_scratch, 0, 8 * sizeof(unsigned long long), st));
  CK(cudaStreamSynchronize(st));
}

void read_scratch(unsigned long long out[8]) {
  CK(cudaStreamSynchronize(st));
  CK(cudaMemcpy(out, d_scratch, 8 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
}

static __global__ void k_fill(uint32_t *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = bg_val(seed, i);
}

static __global__ void k_check(const uint32_t *p, size_t n, size_t guard, uint64_t seed, unsigned long long *scratch) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n + guard; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t want = i < n ? bg_val(seed, i) : 0u;
    uint32_t got = p[i];
    if (got != want) bg_kfail(scratch, i, got, want);
  }
}

void fill(uint32_t *p, size_t nwords, uint64_t seed) {
  if (nwords == 0) return;
  unsigned grid = (unsigned)std::min<size_t>((nwords + 255) / 256, 1024);
  launch(false, k_fill, grid, 256, p, nwords, seed);
  CK(cudaStreamSynchronize(st));
}

unsigned long long check(const uint32_t *p, size_t nwords, size_t guard, uint64_t seed, std::string *detail) {
  reset_scratch();
  unsigned grid = (unsigned)std::min<size_t>((nwords + guard + 255) / 256, 1024);
  launch(false, k_check, grid, 256, p, nwords, guard, seed, d_scratch);
  unsigned long long s[8];
  read_scratch(s);
  if (s[0] && detail) {
    char buf[256];
    snprintf(buf, sizeof buf, "%llu_bad_words,first_at_word_%llu:got_0x%llx,want_0x%llx%s", s[0], s[1], s[2], s[3],
             s[1] >= nwords ? "(guard_overwritten)" : "");
    *detail = buf;
  }
  return s[0];
}

uint64_t seed_of(const char *op, size_t size, uint64_t extra) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the name, then the numbers
  for (const char *c = op; *c; ++c) h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
  h = (h ^ size) * 0x100000001b3ULL;
  h = (h ^ extra) * 0x100000001b3ULL;
  const char *s = getenv("BENCH_SEED");  // the same on every PE (the environment is shared)
  if (s && *s) h ^= strtoull(s, nullptr, 0);
  return h;
}

}  // namespace bg

using namespace bg;

static bool wants(const std::string &list, const char *name) {
  if (list == "all") return true;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item == name) return true;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return false;
}

int main(int argc, char **argv) {
  std::string which = "all";
  size_t max_bytes = 256u << 20;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-b") && i + 1 < argc) which = argv[++i];
    else if (!strcmp(argv[i], "-m") && i + 1 < argc) max_bytes = (size_t)strtoull(argv[++i], nullptr, 0);
    else {
      fprintf(stderr,
              "usage: %s [-b all|init|put,get,p,pingpong,signal,amo,barrier,coll,stream,hostbarrier] [-m max-bytes]\n",
              argv[0]);
      return 2;
    }
  }
  static const char *const known[] = {"all", "init", "put", "get", "p", "pingpong", "signal", "amo", "barrier",
                                      "coll", "stream", "hostbarrier"};
  {
    size_t pos = 0;
    while (pos <= which.size()) {
      size_t comma = which.find(',', pos);
      std::string item = which.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      bool ok = false;
      for (const char *k : known) ok |= item == k;
      if (!ok) {
        fprintf(stderr, "%s: unknown benchmark '%s'\n", argv[0], item.c_str());
        return 2;
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  if (const char *s = getenv("BENCH_SCALE")) {
    double f = atof(s);
    if (f > 0) scale = f;
  }
  max_bytes &= ~(size_t)4095;
  if (max_bytes < 4096) max_bytes = 4096;

  // BENCH_CUDA_FLOOR=1 (a diagnostic launch of scripts/bench-nvidia.sh, not in the table): CUDA's
  // own start-up first (the first runtime call, then a context on device 0), timed and printed to
  // stderr, so that init's row can be read against the floor of the same machine and job.
  if (const char *f = getenv("BENCH_CUDA_FLOOR"); f && *f == '1') {
    const double c0 = now_s();
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    const double c1 = now_s();
    CK(cudaFree(0));
    const double c2 = now_s();
    fprintf(stderr, "bench (%s): CUDA floor: cudaGetDeviceCount %.1f ms, then the context (cudaFree(0)) %.1f ms\n",
            SH_LIB, (c1 - c0) * 1e3, (c2 - c1) * 1e3);
  }
  const double t0 = now_s();
  sh_init();
  const double t1 = now_s();
  me = sh_my_pe();
  npes = sh_n_pes();
  if (npes != 2) {
    fprintf(stderr, "bench (%s): needs exactly 2 PEs, got %d\n", SH_LIB, npes);
    return 2;
  }
  peer = 1 - me;
  {
    int dev = -1;
    char bus[64] = "?";
    CK(cudaGetDevice(&dev));
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) strcpy(bus, "?");
    printf("D %d %d %s\n", me, dev, bus);
    fflush(stdout);
  }
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaMalloc(&d_scratch, 8 * sizeof(unsigned long long)));

  const bool big = wants(which, "put") || wants(which, "get") || wants(which, "signal") || wants(which, "coll") ||
                   wants(which, "stream");
  // Each buffer: the largest transfer, then guard words (checked untouched), then padding so
  // that the second buffer starts as aligned as the first.
  const size_t span = max_bytes + 4096;
  // BENCH_PAD=<bytes>: a symmetric allocation of that size first, so that the buffers sit
  // elsewhere in the heap (does a row depend on where its buffers are?). Addresses on stderr.
  void *pad = nullptr;
  if (const char *s = getenv("BENCH_PAD"); s && *s) {
    const size_t pad_bytes = (size_t)strtoull(s, nullptr, 0);
    if (pad_bytes && !(pad = sh_malloc(pad_bytes))) {
      fprintf(stderr, "bench (%s) PE %d: BENCH_PAD: symmetric allocation of %zu bytes failed\n", SH_LIB, me, pad_bytes);
      return 3;
    }
  }
  char *a = nullptr, *b = nullptr;
  if (big) {
    a = static_cast<char *>(sh_malloc(span));
    b = static_cast<char *>(sh_malloc(span));
    if (!a || !b) {
      fprintf(stderr, "bench (%s) PE %d: symmetric allocation of 2 x %zu bytes failed\n", SH_LIB, me, span);
      return 3;
    }
  }
  void *small = sh_malloc(BG_SMALL_BYTES);
  if (!small) {
    fprintf(stderr, "bench (%s) PE %d: symmetric allocation of %d bytes failed\n", SH_LIB, me, BG_SMALL_BYTES);
    return 3;
  }
  if (pad || getenv("BENCH_PAD"))
    fprintf(stderr, "bench (%s) PE %d: buffers a=%p b=%p small=%p (BENCH_PAD=%s)\n", SH_LIB, me, (void *)a, (void *)b,
            small, getenv("BENCH_PAD"));
  sync_barrier();

  if (wants(which, "put")) bench_put_bw(a, b, max_bytes);
  if (wants(which, "get")) bench_get_bw(a, b, max_bytes);
  if (wants(which, "p")) bench_p_quiet(small);
  if (wants(which, "pingpong")) bench_p_pingpong(small);
  if (wants(which, "signal")) bench_signal_pingpong(a, b, small, max_bytes);
  if (wants(which, "amo")) bench_atomics(small);
  if (wants(which, "barrier")) bench_device_barriers(small);
  if (wants(which, "coll")) bench_collectives(a, b, max_bytes);
  if (wants(which, "stream")) bench_on_stream(a, b, small, max_bytes);
  if (wants(which, "hostbarrier")) bench_host_barrier(small);

  sync_barrier();
  sh_free(small);
  if (big) {
    sh_free(b);
    sh_free(a);
  }
  if (pad) sh_free(pad);
  CK(cudaFree(d_scratch));
  CK(cudaStreamDestroy(st));
  const int my = me;
  const double t2 = now_s();
  sh_finalize();
  const double t3 = now_s();
  printf("I %d %.3f %.3f\n", my, (t1 - t0) * 1e3, (t3 - t2) * 1e3);
  fflush(stdout);
  return 0;
}
