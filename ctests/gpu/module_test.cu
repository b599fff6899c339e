// module_test: rocSHMEM from a JIT-loaded GPU module, the way Triton uses it.
//
//   rocshmem-run -n 2 module_test <module.cubin|module.ptx> [-n ints] [-r replays] [-t threads]
//                                 [-m global|thread|relaxed]
//
// The module (module_kernel.cu, linked with librocshmem_device_sm_XX.bc at build time) is
// loaded with the driver API (cuModuleLoadDataEx: a cubin, or PTX that the driver compiles);
// this program links nothing of rocSHMEM but librocshmem.so, so the module's device globals
// (ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, ROCSHMEM_TEAM_SHARED) are set only by
// rocshmem_hipmodule_init. One PE per GPU. Checks, each printing "PE <n>: PASS <check>" or
// "FAIL <check>: PE <n>: <why>" lines on every PE:
//   no-globals  rocshmem_hipmodule_init on a module without the globals (and on NULL) fails,
//               and the stream still works afterwards
//   direct      hipmodule_init on a stream, then module_exchange and module_exchange_wg
//               launched with cuLaunchKernel: every PE puts fresh random data into its peer
//               ((me + 1) % n) and gets it back; the receiving PE checks every value, the
//               rocshmem_int_p flag and rocshmem_ptr
//   graph       {rocshmem_hipmodule_init(module, stream); kernel} captured on a non-default
//               stream (cudaStreamCaptureModeGlobal by default), instantiated, and replayed
//               -r times (100) with fresh data each replay; before each replay the module's
//               globals are zeroed, so a replay passes only if the captured copy ran
// Each PE ends with "ALL PASS module_test: PE <n>" or "FAIL module_test: PE <n>"; its exit
// status is 0 only if every check passed on it (rocshmem-run returns the first non-zero one).
#include <cuda.h>
#include <cuda_runtime.h>

#include <rocshmem/rocshmem.hpp>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

using namespace rocshmem;

namespace {

int me = -1, npes = 0;
long nfail = 0;
uint64_t seed = 0x5eedc0de2026ULL;

void fail(const char *phase, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fail(const char *phase, const char *fmt, ...) {
  if (nfail++ < 20) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s: PE %d: %s (seed 0x%" PRIx64 ")\n", phase, me, buf, seed);
    fflush(stderr);
  }
}

#define CU_OK(call)                                                                            \
  do {                                                                                         \
    CUresult rc_ = (call);                                                                     \
    if (rc_ != CUDA_SUCCESS) {                                                                 \
      const char *s_ = nullptr;                                                                \
      cuGetErrorString(rc_, &s_);                                                              \
      fprintf(stderr, "FAIL setup: PE %d: %s:%d: %s: %s\n", me, __FILE__, __LINE__, #call,     \
              s_ ? s_ : "?");                                                                  \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)
#define RT_OK(call)                                                                            \
  do {                                                                                         \
    cudaError_t rc_ = (call);                                                                  \
    if (rc_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "FAIL setup: PE %d: %s:%d: %s: %s\n", me, __FILE__, __LINE__, #call,     \
              cudaGetErrorString(rc_));                                                        \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)

/** Pseudo-random value i of PE `pe`'s data in round `round` (every PE can recompute any PE's). */
int value(int pe, long round, size_t i) {
  uint64_t x = seed ^ (uint64_t(pe) * 0x9e3779b97f4a7c15ULL) ^ (uint64_t(round) * 0xbf58476d1ce4e5b9ULL) ^
               (uint64_t(i) * 0x94d049bb133111ebULL);
  x ^= x >> 31;
  x *= 0xd6e9f3a1c8b2e5d7ULL;
  x ^= x >> 29;
  return int(uint32_t(x));
}
int stamp_of(int pe, long round) { return int(0x40000000u | (uint32_t(round) << 8) | uint32_t(pe & 0xff)); }

std::vector<char> read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "FAIL setup: PE %d: cannot open the module %s\n", me, path);
    exit(2);
  }
  std::vector<char> b;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  fclose(f);
  b.push_back('\0');  // PTX is text: the driver wants it NUL-terminated
  return b;
}

CUmodule load_module(const void *image, const char *what) {
  static char log[1 << 14];
  log[0] = '\0';
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule m = nullptr;
  CUresult rc = cuModuleLoadDataEx(&m, image, 2, opts, vals);
  if (rc != CUDA_SUCCESS) {
    const char *s = nullptr;
    cuGetErrorString(rc, &s);
    fprintf(stderr, "FAIL setup: PE %d: cuModuleLoadDataEx(%s): %s\n%s\n", me, what, s ? s : "?", log);
    exit(2);
  }
  return m;
}

/** A module without rocSHMEM's globals (as a JIT user without the device library builds one). */
const char kNoGlobalsPtx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry module_noop()\n"
    "{\n"
    "  ret;\n"
    "}\n";

struct Globals {
  CUdeviceptr ctx = 0, world = 0, shared = 0;
};

Globals module_globals(CUmodule m) {
  Globals g;
  const char *names[3] = {"ROCSHMEM_CTX_DEFAULT", "ROCSHMEM_TEAM_WORLD", "ROCSHMEM_TEAM_SHARED"};
  CUdeviceptr *ptrs[3] = {&g.ctx, &g.world, &g.shared};
  const size_t want[3] = {16, 8, 8};
  for (int i = 0; i < 3; ++i) {
    size_t bytes = 0;
    CUresult rc = cuModuleGetGlobal(ptrs[i], &bytes, m, names[i]);
    if (rc != CUDA_SUCCESS) {
      fail("setup", "cuModuleGetGlobal(%s) failed (%d): the module lacks the global", names[i], int(rc));
    } else if (bytes != want[i]) {
      fail("setup", "the module's %s has %zu bytes, expected %zu", names[i], bytes, want[i]);
    }
  }
  return g;
}

struct Buffers {
  size_t n = 0;
  int *src = nullptr;   // local device memory: this PE's data
  int *dst = nullptr;   // symmetric: the data of PE (me - 1)
  int *back = nullptr;  // local: this PE's data, read back from the peer
  int *flag = nullptr;  // symmetric: the stamp of PE (me - 1)
  int *stamp = nullptr; // local: the stamp this PE writes into the peer's flag
  int *info = nullptr;  // local: 8 ints the kernel reports
  int *h_src = nullptr; // pinned host staging of src and stamp (src then stamp)
};

/** The kernel's arguments: pointers to the (fixed) buffer addresses, as cuLaunchKernel wants. */
struct Args {
  const int *src;
  int *dst, *back, *flag;
  size_t n;
  const int *stamp;
  int *info;
  void *p[7];
  explicit Args(const Buffers &b)
      : src(b.src), dst(b.dst), back(b.back), flag(b.flag), n(b.n), stamp(b.stamp), info(b.info) {
    p[0] = &src;
    p[1] = &dst;
    p[2] = &back;
    p[3] = &flag;
    p[4] = &n;
    p[5] = &stamp;
    p[6] = &info;
  }
};

/** Stages round `round`'s input on `s` (data, stamp; zeroed outputs). Does not synchronise. */
void stage_round(const Buffers &b, long round, cudaStream_t s) {
  for (size_t i = 0; i < b.n; ++i) b.h_src[i] = value(me, round, i);
  b.h_src[b.n] = stamp_of(me, round);
  RT_OK(cudaMemcpyAsync(b.src, b.h_src, b.n * sizeof(int), cudaMemcpyHostToDevice, s));
  RT_OK(cudaMemcpyAsync(b.stamp, b.h_src + b.n, sizeof(int), cudaMemcpyHostToDevice, s));
  RT_OK(cudaMemsetAsync(b.dst, 0, b.n * sizeof(int), s));
  RT_OK(cudaMemsetAsync(b.back, 0, b.n * sizeof(int), s));
  RT_OK(cudaMemsetAsync(b.flag, 0, sizeof(int), s));
  RT_OK(cudaMemsetAsync(b.info, 0, 8 * sizeof(int), s));
}

/** Checks round `round` on this PE (after the kernel and a stream synchronisation). */
bool check_round(const Buffers &b, long round, const char *phase) {
  const long before = nfail;
  const int prev = (me + npes - 1) % npes;
  std::vector<int> dst(b.n), back(b.n);
  int flag = 0, info[8];
  RT_OK(cudaMemcpy(dst.data(), b.dst, b.n * sizeof(int), cudaMemcpyDeviceToHost));
  RT_OK(cudaMemcpy(back.data(), b.back, b.n * sizeof(int), cudaMemcpyDeviceToHost));
  RT_OK(cudaMemcpy(&flag, b.flag, sizeof(int), cudaMemcpyDeviceToHost));
  RT_OK(cudaMemcpy(info, b.info, sizeof info, cudaMemcpyDeviceToHost));
  if (info[7] != 0xC0FFEE) fail(phase, "round %ld: the kernel did not run to its end (info[7] = 0x%x)", round, info[7]);
  if (info[0] != me || info[1] != npes)
    fail(phase, "round %ld: rocshmem_my_pe/n_pes in the module = %d/%d, expected %d/%d", round, info[0], info[1], me,
         npes);
  if (info[2] != 1) fail(phase, "round %ld: rocshmem_ptr(dst, peer) returned NULL", round);
  if (info[3] != 1) fail(phase, "round %ld: rocshmem_ptr(dst, my_pe) != dst", round);
  if (info[4] != value(me, round, 0))
    fail(phase, "round %ld: the peer's dst[0] through rocshmem_ptr = %d, expected %d", round, info[4],
         value(me, round, 0));
  if (flag != stamp_of(prev, round))
    fail(phase, "round %ld: flag (rocshmem_int_p from PE %d) = 0x%x, expected 0x%x", round, prev, flag,
         stamp_of(prev, round));
  size_t bad_dst = 0, bad_back = 0;
  for (size_t i = 0; i < b.n; ++i) {
    if (dst[i] != value(prev, round, i) && bad_dst++ < 3)
      fail(phase, "round %ld: dst[%zu] = %d, expected %d (put by PE %d)", round, i, dst[i], value(prev, round, i), prev);
    if (back[i] != value(me, round, i) && bad_back++ < 3)
      fail(phase, "round %ld: back[%zu] = %d, expected %d (got from PE %d)", round, i, back[i], value(me, round, i),
           (me + 1) % npes);
  }
  if (bad_dst > 3 || bad_back > 3)
    fail(phase, "round %ld: %zu wrong in dst, %zu wrong in back, of %zu", round, bad_dst, bad_back, b.n);
  return nfail == before;
}

void usage(const char *argv0) {
  fprintf(stderr, "usage: %s <module.cubin|module.ptx> [-n ints] [-r replays] [-t threads] [-m global|thread|relaxed]\n",
          argv0);
  exit(2);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage(argv[0]);
  const char *module_path = argv[1];
  size_t n = 4096;
  long replays = 100;
  unsigned threads = 256;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  const char *mode_name = "global";
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char *v = argv[++i];
    if (a == "-n") n = strtoull(v, nullptr, 0);
    else if (a == "-r") replays = strtol(v, nullptr, 0);
    else if (a == "-t") threads = unsigned(strtoul(v, nullptr, 0));
    else if (a == "-m") {
      mode_name = v;
      if (!strcmp(v, "global")) mode = cudaStreamCaptureModeGlobal;
      else if (!strcmp(v, "thread")) mode = cudaStreamCaptureModeThreadLocal;
      else if (!strcmp(v, "relaxed")) mode = cudaStreamCaptureModeRelaxed;
      else usage(argv[0]);
    } else {
      usage(argv[0]);
    }
  }
  if (const char *s = getenv("ROCSHMEM_TEST_SEED")) seed = strtoull(s, nullptr, 0);
  if (n == 0 || threads == 0 || threads > 1024) usage(argv[0]);

  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();

  // The library chose this PE's GPU and made its primary context current; this program's CUDA
  // runtime uses the same device.
  CU_OK(cuInit(0));
  CUcontext ctx = nullptr;
  CU_OK(cuCtxGetCurrent(&ctx));
  if (ctx == nullptr) {
    fprintf(stderr, "FAIL setup: PE %d: no CUDA context is current after rocshmem_init\n", me);
    return 2;
  }
  CUdevice dev = 0;
  CU_OK(cuCtxGetDevice(&dev));
  RT_OK(cudaSetDevice(int(dev)));
  if (me == 0) printf("module_test: %d PEs, module %s, %zu ints, %u threads, %ld replays, capture mode %s\n", npes,
                      module_path, n, threads, replays, mode_name);

  cudaStream_t stream = nullptr, gstream = nullptr;
  RT_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  RT_OK(cudaStreamCreateWithFlags(&gstream, cudaStreamNonBlocking));

  std::vector<char> image = read_file(module_path);
  CUmodule module = load_module(image.data(), module_path);
  CUfunction k_thread = nullptr, k_wg = nullptr;
  CU_OK(cuModuleGetFunction(&k_thread, module, "module_exchange"));
  CU_OK(cuModuleGetFunction(&k_wg, module, "module_exchange_wg"));
  const Globals g = module_globals(module);

  Buffers b;
  b.n = n;
  b.dst = (int *)rocshmem_malloc(n * sizeof(int));
  b.flag = (int *)rocshmem_malloc(sizeof(int));
  if (!b.dst || !b.flag) {
    fprintf(stderr, "FAIL setup: PE %d: rocshmem_malloc returned NULL\n", me);
    return 2;
  }
  RT_OK(cudaMalloc((void **)&b.src, n * sizeof(int)));
  RT_OK(cudaMalloc((void **)&b.back, n * sizeof(int)));
  RT_OK(cudaMalloc((void **)&b.stamp, sizeof(int)));
  RT_OK(cudaMalloc((void **)&b.info, 8 * sizeof(int)));
  RT_OK(cudaMallocHost((void **)&b.h_src, (n + 1) * sizeof(int)));
  Args args(b);
  bool all_ok = true;

  // ---- no-globals: a module without ROCSHMEM_CTX_DEFAULT, and NULL, are refused ----
  {
    const long before = nfail;
    CUmodule bare = load_module(kNoGlobalsPtx, "the module without globals");
    int rc = rocshmem_hipmodule_init(bare, stream);
    if (rc == ROCSHMEM_SUCCESS) fail("no-globals", "rocshmem_hipmodule_init on a module without the globals returned 0");
    rc = rocshmem_hipmodule_init(nullptr, stream);
    if (rc == ROCSHMEM_SUCCESS) fail("no-globals", "rocshmem_hipmodule_init(NULL module) returned 0");
    // The stream still works.
    RT_OK(cudaMemsetAsync(b.info, 0, 8 * sizeof(int), stream));
    RT_OK(cudaStreamSynchronize(stream));
    CU_OK(cuModuleUnload(bare));
    const bool ok = nfail == before;
    all_ok &= ok;
    if (ok) printf("PE %d: PASS no-globals (rocshmem_hipmodule_init refuses a module without the globals, and NULL)\n", me);
  }

  // ---- direct: hipmodule_init, then each kernel once per round ----
  {
    const long before = nfail;
    unsigned char zero[16] = {0}, got[16];
    CU_OK(cuMemcpyDtoH(got, g.ctx, 16));
    if (memcmp(got, zero, 16) != 0) fail("direct", "ROCSHMEM_CTX_DEFAULT of a freshly loaded module is not zero");
    if (rocshmem_hipmodule_init(module, stream) != ROCSHMEM_SUCCESS)
      fail("direct", "rocshmem_hipmodule_init(module, stream) failed");
    RT_OK(cudaStreamSynchronize(stream));
    CU_OK(cuMemcpyDtoH(got, g.ctx, 16));
    if (memcmp(got, zero, 8) == 0) fail("direct", "ROCSHMEM_CTX_DEFAULT.ctx_opaque is still zero after rocshmem_hipmodule_init");
    uint64_t world = 0, shared = 0;
    CU_OK(cuMemcpyDtoH(&world, g.world, 8));
    CU_OK(cuMemcpyDtoH(&shared, g.shared, 8));
    if (world == 0 || shared == 0) fail("direct", "ROCSHMEM_TEAM_WORLD/SHARED still zero after rocshmem_hipmodule_init");
    long round = 0;
    for (int rep = 0; rep < 3 && nfail == before; ++rep) {
      for (CUfunction f : {k_thread, k_wg}) {
        const char *kname = f == k_thread ? "module_exchange" : "module_exchange_wg";
        ++round;
        stage_round(b, round, stream);
        RT_OK(cudaStreamSynchronize(stream));
        rocshmem_barrier_all();  // every PE's input is staged and its outputs zeroed
        CU_OK(cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, stream, args.p, nullptr));
        RT_OK(cudaStreamSynchronize(stream));
        if (!check_round(b, round, "direct")) fail("direct", "kernel %s, round %ld", kname, round);
        rocshmem_barrier_all();  // every PE has checked before anyone stages the next round
      }
    }
    const bool ok = nfail == before;
    all_ok &= ok;
    if (ok) printf("PE %d: PASS direct (module_exchange and module_exchange_wg, %ld rounds, %zu ints)\n", me, round, n);
  }

  // ---- graph: {hipmodule_init; kernel} captured, replayed with fresh data ----
  {
    const long before = nfail;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    RT_OK(cudaStreamBeginCapture(gstream, mode));
    const int rc = rocshmem_hipmodule_init(module, gstream);
    const CUresult lrc = cuLaunchKernel(k_thread, 1, 1, 1, threads, 1, 1, 0, gstream, args.p, nullptr);
    const cudaError_t erc = cudaStreamEndCapture(gstream, &graph);
    if (rc != ROCSHMEM_SUCCESS) fail("graph", "rocshmem_hipmodule_init during stream capture returned %d", rc);
    if (lrc != CUDA_SUCCESS) fail("graph", "cuLaunchKernel during stream capture returned %d", int(lrc));
    if (erc != cudaSuccess) fail("graph", "cudaStreamEndCapture: %s", cudaGetErrorString(erc));
    if (nfail == before) RT_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (long r = 1; r <= replays && nfail == before; ++r) {
      const long round = 1000 + r;
      stage_round(b, round, gstream);
      // The captured copy must set the globals again: clear the module's copies first.
      CU_OK(cuMemsetD8Async(g.ctx, 0, 16, gstream));
      CU_OK(cuMemsetD8Async(g.world, 0, 8, gstream));
      CU_OK(cuMemsetD8Async(g.shared, 0, 8, gstream));
      RT_OK(cudaStreamSynchronize(gstream));
      rocshmem_barrier_all();
      RT_OK(cudaGraphLaunch(exec, gstream));
      RT_OK(cudaStreamSynchronize(gstream));
      if (!check_round(b, round, "graph")) fail("graph", "replay %ld of %ld", r, replays);
      rocshmem_barrier_all();
    }
    if (exec) RT_OK(cudaGraphExecDestroy(exec));
    if (graph) RT_OK(cudaGraphDestroy(graph));
    const bool ok = nfail == before;
    all_ok &= ok;
    if (ok)
      printf("PE %d: PASS graph (rocshmem_hipmodule_init + module_exchange captured, capture mode %s, %ld replays)\n",
             me, mode_name, replays);
  }

  RT_OK(cudaFreeHost(b.h_src));
  RT_OK(cudaFree(b.src));
  RT_OK(cudaFree(b.back));
  RT_OK(cudaFree(b.stamp));
  RT_OK(cudaFree(b.info));
  rocshmem_free(b.dst);
  rocshmem_free(b.flag);
  CU_OK(cuModuleUnload(module));
  RT_OK(cudaStreamDestroy(stream));
  RT_OK(cudaStreamDestroy(gstream));
  rocshmem_finalize();

  printf("%s module_test: PE %d\n", all_ok ? "ALL PASS" : "FAIL", me);
  return all_ok ? 0 : 1;
}
