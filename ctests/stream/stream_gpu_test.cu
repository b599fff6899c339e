// NVIDIA: every stream-ordered call (rocshmem_*_on_stream) on a CUDA stream, first directly,
// then captured once in a CUDA graph and replayed (>= 10 times) with fresh random data each
// time; every PE checks what it received. The collectives run at small sizes (one work-group)
// and at 1 MiB, where the library spreads them over many work-groups (device/stream/grid.hpp),
// one after the other on the same team; an in-place reduction stays on one work-group. Written with HIP's names (our HIP-on-CUDA headers),
// so it reads like the upstream tests. Run with 2 PEs (one GPU each): rocshmem-run -n 2.
#include <rocshmem/rocshmem.hpp>

#include <vector>

#include "test_util.h"
#include "host_util.h"

using namespace rocshmem;

#define HIP_OK(call) REQUIRE((call) == hipSuccess, "%s failed", #call)

namespace {

constexpr size_t kSmall = 3000;        // kernel path of putmem/getmem
constexpr size_t kLarge = 1 << 20;     // copy-engine path (above the library's threshold)
constexpr size_t kColl = 4096;         // bytes per PE of alltoallmem, bytes of broadcastmem
constexpr int kRed = 1000;             // elements per reduction
constexpr size_t kBig = 1 << 20;       // bytes per PE of the large alltoallmem and broadcastmem
constexpr int kBigRed = 1 << 18;       // elements of the large reductions (1 MiB of float / int)
constexpr uint64_t kSigValue = 0x5151; // putmem_signal's SET value

int me, npes, right_pe, left_pe;
uint64_t seed;

struct Bufs {
  char *put_small, *put_large, *get_src, *sig_data, *a2a_src, *a2a_dst, *bc_src, *bc_dst;
  uint64_t *sig, *sig_add, *sig_set;
  int *ri_src, *ri_dst;
  long *rl_src, *rl_dst;
  double *rd_src, *rd_dst;
  unsigned long *ru_src, *ru_dst;
  char *a2a_big_src, *a2a_big_dst, *bc_big_src, *bc_big_dst;  // many work-groups
  float *rf_src, *rf_dst;                                     // many work-groups
  int *ri_inplace;                                            // in place: one work-group
  char *src_small, *src_large, *src_sig;  // local (non-symmetric) device sources
  char *get_dst;                          // local device destination of getmem
};

void *sym(size_t n) {
  void *p = rocshmem_malloc(n);
  REQUIRE(p != nullptr, "rocshmem_malloc(%zu)", n);
  return p;
}

void *dev(size_t n) {
  void *p = nullptr;
  HIP_OK(hipMalloc(&p, n));
  return p;
}

template <class T>
void upload(T *d, const std::vector<T> &h) {
  HIP_OK(hipMemcpy(d, h.data(), h.size() * sizeof(T), hipMemcpyHostToDevice));
}

template <class T>
std::vector<T> download(const T *d, size_t n) {
  std::vector<T> h(n);
  HIP_OK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return h;
}

std::vector<char> bytes(size_t n, int pe, uint64_t salt) {
  std::vector<char> v(n);
  hu_fill(v.data(), n, seed, pe, salt);
  return v;
}

template <class T>
std::vector<T> values(int n, int pe, uint64_t salt) {
  uint64_t s = tu_stream(seed, pe, salt);
  std::vector<T> v(n);
  for (auto &x : v) x = T(int64_t(tu_next(&s) % 2001) - 1000);  // exact in every type
  return v;
}

// Fresh inputs of round `r` (outside any capture), and the signal words reset.
void fill(const Bufs &b, int r) {
  uint64_t salt = 0x100000 * uint64_t(r + 1);
  upload(b.src_small, bytes(kSmall, me, salt + 1));
  upload(b.src_large, bytes(kLarge, me, salt + 2));
  upload(b.get_src, bytes(kSmall, me, salt + 3));
  upload(b.src_sig, bytes(kSmall, me, salt + 4));
  std::vector<char> a2a(kColl * npes);
  for (int j = 0; j < npes; j++) hu_fill(a2a.data() + j * kColl, kColl, seed, me, salt + 5 + 0x1000 * uint64_t(j));
  upload(b.a2a_src, a2a);
  upload(b.bc_src, bytes(kColl, me, salt + 6));
  upload(b.ri_src, values<int>(kRed, me, salt + 7));
  upload(b.rl_src, values<long>(kRed, me, salt + 8));
  upload(b.rd_src, values<double>(kRed, me, salt + 9));
  upload(b.ru_src, values<unsigned long>(kRed, me, salt + 10));
  std::vector<char> a2a_big(kBig * npes);
  for (int j = 0; j < npes; j++) hu_fill(a2a_big.data() + j * kBig, kBig, seed, me, salt + 11 + 0x1000 * uint64_t(j));
  upload(b.a2a_big_src, a2a_big);
  upload(b.bc_big_src, bytes(kBig, me, salt + 12));
  upload(b.rf_src, values<float>(kBigRed, me, salt + 13));
  upload(b.ri_inplace, values<int>(kBigRed, me, salt + 14));
  HIP_OK(hipMemset(b.a2a_big_dst, 0, kBig * npes));
  HIP_OK(hipMemset(b.bc_big_dst, 0, kBig));
  HIP_OK(hipMemset(b.rf_dst, 0, kBigRed * sizeof(float)));
  HIP_OK(hipMemset(b.sig, 0, 8));
  HIP_OK(hipMemset(b.sig_add, 0, 8));
  HIP_OK(hipMemset(b.sig_set, 0, 8));
  HIP_OK(hipDeviceSynchronize());
  rocshmem_barrier_all();  // every PE's inputs and signals are ready before anyone's round
}

// One round of every call, enqueued on `s` (captured or not). Returns nothing: results are
// checked by check() after the stream is synchronised.
void enqueue(const Bufs &b, hipStream_t s) {
  rocshmem_putmem_on_stream(b.put_small, b.src_small, kSmall, right_pe, s);
  rocshmem_putmem_on_stream(b.put_large, b.src_large, kLarge, right_pe, s);
  rocshmem_getmem_on_stream(b.get_dst, b.get_src, kSmall, right_pe, s);
  rocshmem_putmem_signal_on_stream(b.sig_data, b.src_sig, kSmall, b.sig, kSigValue, ROCSHMEM_SIGNAL_SET, right_pe, s);
  rocshmem_signal_wait_until_on_stream(b.sig, ROCSHMEM_CMP_EQ, kSigValue, s);
  rocshmem_signal_add_on_stream(b.sig_add, 3, right_pe, s);
  rocshmem_signal_add_on_stream(b.sig_add, 4, right_pe, s);
  rocshmem_signal_set_on_stream(b.sig_set, 1000 + uint64_t(me), right_pe, s);
  rocshmem_quiet_on_stream(s);
  rocshmem_barrier_all_on_stream(s);
  rocshmem_alltoallmem_on_stream(ROCSHMEM_TEAM_WORLD, b.a2a_dst, b.a2a_src, kColl, s);
  rocshmem_sync_all_on_stream(s);
  rocshmem_broadcastmem_on_stream(ROCSHMEM_TEAM_WORLD, b.bc_dst, b.bc_src, kColl, npes - 1, s);
  rocshmem_team_sync_on_stream(ROCSHMEM_TEAM_WORLD, s);
  CHECK(rocshmem_ctx_int_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.ri_dst, b.ri_src, kRed, s) == 0,
        "int sum enqueue");
  CHECK(rocshmem_ctx_long_min_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.rl_dst, b.rl_src, kRed, s) == 0,
        "long min enqueue");
  CHECK(rocshmem_ctx_double_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.rd_dst, b.rd_src, kRed, s) == 0,
        "double sum enqueue");
  CHECK(rocshmem_ctx_ulong_xor_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.ru_dst, b.ru_src, kRed, s) == 0,
        "ulong xor enqueue");
  // 1 MiB: many work-groups each, back to back on the same team (the grid slot is reused).
  rocshmem_alltoallmem_on_stream(ROCSHMEM_TEAM_WORLD, b.a2a_big_dst, b.a2a_big_src, kBig, s);
  rocshmem_broadcastmem_on_stream(ROCSHMEM_TEAM_WORLD, b.bc_big_dst, b.bc_big_src, kBig, 0, s);
  CHECK(rocshmem_ctx_float_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.rf_dst, b.rf_src, kBigRed,
                                                s) == 0,
        "float sum 1 MiB enqueue");
  CHECK(rocshmem_ctx_int_max_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, b.ri_inplace, b.ri_inplace,
                                              kBigRed, s) == 0,
        "int max in place enqueue");
  rocshmem_barrier_on_stream(ROCSHMEM_TEAM_WORLD, s);  // everything delivered everywhere
}

template <class T, class F>
void check_reduce(const char *what, const T *d, uint64_t salt, F op, const char *mode, int r, int n = kRed) {
  std::vector<T> want = values<T>(n, 0, salt);
  for (int p = 1; p < npes; p++) {
    std::vector<T> v = values<T>(n, p, salt);
    for (int i = 0; i < n; i++) want[i] = op(want[i], v[i]);
  }
  std::vector<T> got = download(d, n);
  for (int i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      CHECK(0, "%s %s round %d: element %d is %g, want %g", mode, what, r, i, double(got[i]), double(want[i]));
      return;
    }
  }
}

void check(const Bufs &b, const char *mode, int r) {
  uint64_t salt = 0x100000 * uint64_t(r + 1);
  auto same = [&](const char *what, const char *d, const std::vector<char> &want) {
    std::vector<char> got = download(d, want.size());
    long diff = hu_first_diff(got.data(), want.data(), want.size());
    CHECK(diff < 0, "%s %s round %d (%zu B): first difference at byte %ld", mode, what, r, want.size(), diff);
  };
  same("putmem (kernel)", b.put_small, bytes(kSmall, left_pe, salt + 1));
  same("putmem (copy engine)", b.put_large, bytes(kLarge, left_pe, salt + 2));
  same("getmem", b.get_dst, bytes(kSmall, right_pe, salt + 3));
  same("putmem_signal", b.sig_data, bytes(kSmall, left_pe, salt + 4));
  std::vector<uint64_t> sig = download(b.sig, 1), add = download(b.sig_add, 1), set = download(b.sig_set, 1);
  CHECK(sig[0] == kSigValue, "%s round %d: signal %llu", mode, r, (unsigned long long)sig[0]);
  CHECK(add[0] == 7, "%s round %d: signal_add gave %llu, want 7", mode, r, (unsigned long long)add[0]);
  CHECK(set[0] == 1000 + uint64_t(left_pe), "%s round %d: signal_set gave %llu", mode, r, (unsigned long long)set[0]);
  std::vector<char> a2a_got = download(b.a2a_dst, kColl * npes);
  for (int j = 0; j < npes; j++) {
    std::vector<char> want(kColl);
    hu_fill(want.data(), kColl, seed, j, salt + 5 + 0x1000 * uint64_t(me));
    long d = hu_first_diff(a2a_got.data() + j * kColl, want.data(), kColl);
    CHECK(d < 0, "%s alltoallmem round %d: block from PE %d differs at byte %ld", mode, r, j, d);
  }
  same("broadcastmem", b.bc_dst, bytes(kColl, npes - 1, salt + 6));
  check_reduce<int>("int sum", b.ri_dst, salt + 7, [](int x, int y) { return x + y; }, mode, r);
  check_reduce<long>("long min", b.rl_dst, salt + 8, [](long x, long y) { return y < x ? y : x; }, mode, r);
  check_reduce<double>("double sum", b.rd_dst, salt + 9, [](double x, double y) { return x + y; }, mode, r);
  check_reduce<unsigned long>("ulong xor", b.ru_dst, salt + 10, [](unsigned long x, unsigned long y) { return x ^ y; },
                              mode, r);
  std::vector<char> a2a_big_got = download(b.a2a_big_dst, kBig * npes);
  for (int j = 0; j < npes; j++) {
    std::vector<char> want(kBig);
    hu_fill(want.data(), kBig, seed, j, salt + 11 + 0x1000 * uint64_t(me));
    long d = hu_first_diff(a2a_big_got.data() + j * kBig, want.data(), kBig);
    CHECK(d < 0, "%s alltoallmem 1 MiB round %d: block from PE %d differs at byte %ld", mode, r, j, d);
  }
  same("broadcastmem 1 MiB", b.bc_big_dst, bytes(kBig, 0, salt + 12));
  check_reduce<float>("float sum 1 MiB", b.rf_dst, salt + 13, [](float x, float y) { return x + y; }, mode, r, kBigRed);
  check_reduce<int>("int max in place 1 MiB", b.ri_inplace, salt + 14, [](int x, int y) { return y > x ? y : x; }, mode, r,
                    kBigRed);
}

}  // namespace

int main() {
  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  right_pe = (me + 1) % npes;
  left_pe = (me + npes - 1) % npes;
  seed = hu_agree_seed("stream_gpu_test");
  Bufs b{};
  b.put_small = (char *)sym(kSmall);
  b.put_large = (char *)sym(kLarge);
  b.get_src = (char *)sym(kSmall);
  b.sig_data = (char *)sym(kSmall);
  b.a2a_src = (char *)sym(kColl * npes);
  b.a2a_dst = (char *)sym(kColl * npes);
  b.bc_src = (char *)sym(kColl);
  b.bc_dst = (char *)sym(kColl);
  b.sig = (uint64_t *)sym(8);
  b.sig_add = (uint64_t *)sym(8);
  b.sig_set = (uint64_t *)sym(8);
  b.ri_src = (int *)sym(kRed * sizeof(int));
  b.ri_dst = (int *)sym(kRed * sizeof(int));
  b.rl_src = (long *)sym(kRed * sizeof(long));
  b.rl_dst = (long *)sym(kRed * sizeof(long));
  b.rd_src = (double *)sym(kRed * sizeof(double));
  b.rd_dst = (double *)sym(kRed * sizeof(double));
  b.ru_src = (unsigned long *)sym(kRed * sizeof(unsigned long));
  b.ru_dst = (unsigned long *)sym(kRed * sizeof(unsigned long));
  b.a2a_big_src = (char *)sym(kBig * npes);
  b.a2a_big_dst = (char *)sym(kBig * npes);
  b.bc_big_src = (char *)sym(kBig);
  b.bc_big_dst = (char *)sym(kBig);
  b.rf_src = (float *)sym(kBigRed * sizeof(float));
  b.rf_dst = (float *)sym(kBigRed * sizeof(float));
  b.ri_inplace = (int *)sym(kBigRed * sizeof(int));
  b.src_small = (char *)dev(kSmall);
  b.src_large = (char *)dev(kLarge);
  b.src_sig = (char *)dev(kSmall);
  b.get_dst = (char *)dev(kSmall);

  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

  // Directly, on a created stream and on the default (NULL: per-thread) stream.
  for (int r = 0; r < 3; r++) {
    hipStream_t on = r == 1 ? nullptr : s;
    fill(b, r);
    enqueue(b, on);
    HIP_OK(hipStreamSynchronize(on));
    check(b, "direct", r);
    rocshmem_barrier_all();
  }

  // Captured once, replayed with fresh data each time.
  hipGraph_t graph;
  hipGraphExec_t exec;
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  enqueue(b, s);
  HIP_OK(hipStreamEndCapture(s, &graph));
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  const int replays = 12;
  for (int r = 0; r < replays; r++) {
    fill(b, 100 + r);
    HIP_OK(hipGraphLaunch(exec, s));
    HIP_OK(hipStreamSynchronize(s));
    check(b, "graph", 100 + r);
    rocshmem_barrier_all();
  }
  if (me == 0) printf("stream_gpu_test: %d direct rounds and %d graph replays checked\n", 3, replays);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));
  HIP_OK(hipStreamDestroy(s));
  rocshmem_finalize();
  TEST_DONE("stream_gpu_test");
  return tu_failures != 0;
}
