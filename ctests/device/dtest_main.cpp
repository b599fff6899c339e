// rocshmem_device_tests: functional tests of the device API (kernels calling rocSHMEM),
// modelled on upstream rocSHMEM's functional testers.
//
//   rocshmem-run -n 4 rocshmem_device_tests -t <test>[,<test>...] [-w wgs] [-z threads] [-s bytes]
//   rocshmem_device_tests -l              # the tests
//
// -t all runs every test, -t all-quick a fast subset. Each test prints "PASS <test>" (PE 0,
// when every PE passed) or "FAIL <test>: PE x ..." lines; the exit status is non-zero if any
// check failed. The seed (time and pid of PE 0, or ROCSHMEM_TEST_SEED) is printed with every
// failure: ROCSHMEM_TEST_SEED=0x... replays a run.
#include "dtest.hpp"
#include "test_util.h"

#include <time.h>
#include <unistd.h>

#if !DT_GPU
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#endif

namespace dt {

Opts opt;
int me = -1, npes = 0;
uint64_t seed = 0;
std::string test;
long nfail = 0;
dt_u64 *kerr = nullptr;
Team world, rest, evens, odds;

static uint64_t salt_counter = 0;
static const int kMaxPrinted = 12;

std::string fmt(const char *f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

static void vfail(const char *f, va_list ap) {
  if (nfail++ >= kMaxPrinted) return;
  char buf[1024];
  vsnprintf(buf, sizeof buf, f, ap);
  fprintf(stderr, "FAIL %s: PE %d: %s (seed 0x%" PRIx64 ")\n", test.c_str(), me, buf, seed);
  fflush(stderr);
}

void failf(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  vfail(f, ap);
  va_end(ap);
}

bool checkf(bool ok, const char *f, ...) {
  if (ok) return true;
  va_list ap;
  va_start(ap, f);
  vfail(f, ap);
  va_end(ap);
  return false;
}

uint64_t next_salt() { return ++salt_counter * 0x9e3779b97f4a7c15ULL; }

#if DT_GPU
void hip_check(hipError_t e, const char *what) {
  if (e != hipSuccess) {
    fprintf(stderr, "FAIL %s: PE %d: %s: %s\n", test.c_str(), me, what, hipGetErrorString(e));
    exit(2);
  }
}
#endif

void *alloc(size_t bytes) {
  void *p = rocshmem_malloc(bytes);
  if (!p) {
    fprintf(stderr, "FAIL %s: PE %d: rocshmem_malloc(%zu) returned NULL\n", test.c_str(), me, bytes);
    exit(2);
  }
  return p;
}

void release(void *p) { rocshmem_free(p); }

#if !DT_GPU
// The GPU's asynchronous copies, on the host platform. With ROCSHMEM_TEST_ASYNC_COPIES=<us>,
// to_dev and dev_zero do not write at once: a copy thread applies them in order, each after a
// random delay of up to <us> microseconds, as a GPU's copy engine or memset kernel lands them
// after hipMemcpy (pageable source) / hipMemset have returned. Launches, to_host and
// device_sync wait for the queue, as the GPU's stream order does; other PEs are ordered only
// by dt::barrier. A harness or test that lets a peer's kernel touch memory before this PE's
// fill has landed then fails on the host platform too (ctest device_async_copies_*).
class AsyncCopies {
 public:
  explicit AsyncCopies(unsigned max_us) : max_us_(max_us), rng_(std::random_device{}()) {
    worker_ = std::thread([this] { run(); });
  }
  ~AsyncCopies() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  void copy(void *dst, const void *src, size_t n) {
    const unsigned char *b = static_cast<const unsigned char *>(src);
    push(Op{static_cast<unsigned char *>(dst), std::vector<unsigned char>(b, b + n), 0, n});
  }
  void fill(void *dst, unsigned char byte, size_t n) {
    push(Op{static_cast<unsigned char *>(dst), {}, byte, n});
  }
  void drain() {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [this] { return q_.empty() && !busy_; });
  }

 private:
  struct Op {
    unsigned char *dst;
    std::vector<unsigned char> data;  // empty: fill with `byte`
    unsigned char byte;
    size_t n;
  };
  void push(Op op) {
    {
      std::lock_guard<std::mutex> g(m_);
      q_.push_back(std::move(op));
    }
    cv_.notify_all();
  }
  void run() {
    std::unique_lock<std::mutex> g(m_);
    for (;;) {
      cv_.wait(g, [this] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;
      Op op = std::move(q_.front());
      q_.pop_front();
      busy_ = true;
      const unsigned us = max_us_ ? unsigned(rng_() % (max_us_ + 1)) : 0;
      g.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      if (op.data.empty()) memset(op.dst, op.byte, op.n);
      else memcpy(op.dst, op.data.data(), op.n);
      g.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }
  unsigned max_us_;
  std::mt19937 rng_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Op> q_;
  bool busy_ = false, stop_ = false;
  std::thread worker_;
};

static AsyncCopies *async_copies() {
  static AsyncCopies *q = [] {
    const char *e = getenv("ROCSHMEM_TEST_ASYNC_COPIES");
    return e && *e ? new AsyncCopies(unsigned(strtoul(e, nullptr, 0))) : nullptr;
  }();
  return q;
}
#endif

void device_sync() {
#if DT_GPU
  hip_check(hipDeviceSynchronize(), "hipDeviceSynchronize");
#else
  if (AsyncCopies *q = async_copies()) q->drain();
#endif
}

void to_host(void *dst, const void *src, size_t bytes) {
#if DT_GPU
  hip_check(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy D2H");
#else
  device_sync();  // a device-to-host copy waits for the stream's earlier work
  memcpy(dst, src, bytes);
#endif
}

void to_dev(void *dst, const void *src, size_t bytes) {
#if DT_GPU
  hip_check(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy H2D");
#else
  if (AsyncCopies *q = async_copies()) q->copy(dst, src, bytes);
  else memcpy(dst, src, bytes);
#endif
}

void dev_zero(void *dev, size_t bytes) {
#if DT_GPU
  hip_check(hipMemset(dev, 0, bytes), "hipMemset");
#else
  if (AsyncCopies *q = async_copies()) q->fill(dev, 0, bytes);
  else memset(dev, 0, bytes);
#endif
}

void fill(void *host, size_t bytes, int pe, uint64_t salt) {
  const uint64_t key = dt_key(seed, pe, salt);
  unsigned char *b = static_cast<unsigned char *>(host);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t v = dt_at(key, i / 8);
    memcpy(b + i, &v, 8);
  }
  if (i < bytes) {
    uint64_t v = dt_at(key, i / 8);
    memcpy(b + i, &v, bytes - i);
  }
}

void dev_fill(void *dev, size_t bytes, int pe, uint64_t salt) {
  std::vector<unsigned char> h(bytes);
  fill(h.data(), bytes, pe, salt);
  to_dev(dev, h.data(), bytes);
}

// ROCSHMEM_TEST_BARRIER_NO_SYNC=1 leaves out the device_sync: the harness as it was before
// 2026-12 (evidence runs and ctest device_async_copies_unsynced_np2 show what that breaks).
void barrier() {
  static const bool no_sync = [] {
    const char *e = getenv("ROCSHMEM_TEST_BARRIER_NO_SYNC");
    return e && *e && strcmp(e, "0") != 0;
  }();
  if (!no_sync) device_sync();
  rocshmem_barrier_all();
}

unsigned wave_size() {
#if DT_GPU
  int dev = 0;
  hipDeviceProp_t prop;
  hip_check(hipGetDevice(&dev), "hipGetDevice");
  hip_check(hipGetDeviceProperties(&prop, dev), "hipGetDeviceProperties");
  return (unsigned)prop.warpSize;
#else
  return rocshmem::platform::host::default_wave_size();
#endif
}

static const char *code_name(dt_u64 c) {
  switch (c) {
    case KC_CTX_CREATE: return "context creation failed (at = work-group, got = return value)";
    case KC_DATA: return "data checked in the kernel";
    case KC_RET: return "non-zero return value (at = call)";
    case KC_WAIT_VALUE: return "value after a wait";
    case KC_TEST: return "test result (at = phase)";
    case KC_ANY_INDEX: return "wait_until_any index (at = phase)";
    case KC_SOME: return "wait_until_some result (at = phase)";
    case KC_SIGNAL: return "signal value (at = unit)";
    case KC_PTR: return "rocshmem_ptr result (1 = non-NULL; at = pe)";
    case KC_TEAM: return "team/context query (at = which)";
    case KC_COUNT: return "counter after barrier/sync (at = round)";
    default: return "unknown kernel check";
  }
}

void check_kernel(const std::string &what) {
  dt_u64 k[DT_KERR_WORDS];
  to_host(k, kerr, sizeof k);
  if (k[0] == 0) return;
  failf("%s: kernel check: %s: expected %lld (0x%llx) got %lld (0x%llx) at %lld; %llu failure(s) in the kernel",
        what.c_str(), code_name(k[1]), (long long)k[3], k[3], (long long)k[4], k[4], (long long)k[2], k[0]);
  dev_zero(kerr, sizeof k);
}

std::string hex(const void *p, size_t esz) {
  std::string s = "0x";
  const unsigned char *b = static_cast<const unsigned char *>(p);
  for (size_t i = esz; i-- > 0;) s += fmt("%02x", b[i]);
  return s;
}

bool compare(const void *got, const void *expected, size_t n, size_t esz, const std::string &what) {
  const unsigned char *g = static_cast<const unsigned char *>(got), *e = static_cast<const unsigned char *>(expected);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (memcmp(g + i * esz, e + i * esz, esz) != 0) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return true;
  failf("%s: expected %s got %s at %zu (%zu of %zu elements differ)", what.c_str(), hex(e + first * esz, esz).c_str(),
        hex(g + first * esz, esz).c_str(), first, bad, n);
  return false;
}

// The 16-bit float conversions of the host tests (ctests/common/test_util.h), so both
// suites compute expected values the same way.
float half_to_float(uint16_t h) { return tu_half_to_float(h); }
uint16_t float_to_half(float f) { return tu_float_to_half(f); }
float bf16_to_float(uint16_t b) { return tu_bf16_to_float(b); }
uint16_t float_to_bf16(float f) { return tu_float_to_bf16(f); }

std::vector<size_t> sizes_upto(size_t cap) {
  static const size_t all[] = {1, 7, 64, 1000, 8192, 65536, 70000, 262144};
  std::vector<size_t> v;
  for (size_t s : all)
    if (s <= cap && s <= opt.max_bytes) v.push_back(s);
  if (v.empty()) v.push_back(1);
  return v;
}

// PE 0's seed on every PE (through a put from the host, as any program would).
static uint64_t agree_seed() {
  uint64_t *slot = static_cast<uint64_t *>(alloc(sizeof(uint64_t)));
  if (me == 0) {
    uint64_t s;
    const char *env = getenv("ROCSHMEM_TEST_SEED");
    if (env && *env) s = strtoull(env, nullptr, 0);
    else s = ((uint64_t)time(nullptr) << 20) ^ (uint64_t)getpid() ^ ((uint64_t)clock() << 40);
    for (int p = 0; p < npes; ++p) rocshmem_putmem(slot, &s, sizeof s, p);
  }
  barrier();
  uint64_t s = 0;
  to_host(&s, slot, sizeof s);
  barrier();
  release(slot);
  return s;
}

static Team make_team(const char *name, int start, int stride, int size) {
  Team t;
  t.name = name;
  rocshmem_team_t h = ROCSHMEM_TEAM_INVALID;
  if (size <= 0) return t;
  int ret = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, start, stride, size, nullptr, 0, &h);
  if (ret != 0) {
    fprintf(stderr, "FAIL setup: PE %d: rocshmem_team_split_strided(%s) returned %d\n", me, name, ret);
    exit(2);
  }
  t.h = h;
  t.n = size;
  for (int i = 0; i < size; ++i) t.world.push_back(start + i * stride);
  t.my = h == ROCSHMEM_TEAM_INVALID ? -1 : rocshmem_team_my_pe(h);
  int expect_my = -1;
  for (int i = 0; i < size; ++i)
    if (t.world[i] == me) expect_my = i;
  if (t.my != expect_my) {
    fprintf(stderr, "FAIL setup: PE %d: team %s: my_pe %d, expected %d\n", me, name, t.my, expect_my);
    exit(2);
  }
  if (t.member()) {
    for (int i = 0; i < size; ++i) {
      int w = rocshmem_team_translate_pe(h, i, ROCSHMEM_TEAM_WORLD);
      if (w != t.world[i]) {
        fprintf(stderr, "FAIL setup: PE %d: team %s: translate_pe(%d) = %d, expected %d\n", me, name, i, w, t.world[i]);
        exit(2);
      }
    }
  }
  return t;
}

}  // namespace dt

using namespace dt;

static void usage(const char *prog, const std::vector<DtTest> &tests) {
  printf("usage: %s -t <test>[,<test>...] [-w workgroups] [-z threads] [-s max-bytes] [-L]\n", prog);
  printf("  -L: fewer element types in the RMA and collective tests (for many PEs on few cores)\n");
  printf("  -t all | all-quick | one of:\n");
  for (const DtTest &t : tests) printf("     %-20s %s%s\n", t.name, t.what, t.quick ? " (quick)" : "");
}

int main(int argc, char **argv) {
  std::vector<DtTest> tests;
  dt_register_rma(tests);
  dt_register_amo(tests);
  dt_register_sync(tests);
  dt_register_coll(tests);
  dt_register_tile(tests);
  dt_register_triton(tests);

  std::string which;
  int c;
  while ((c = getopt(argc, argv, "t:w:z:s:Llh")) != -1) {
    switch (c) {
      case 't': which = optarg; break;
      case 'w': opt.w = (unsigned)strtoul(optarg, nullptr, 0); break;
      case 'z': opt.z = (unsigned)strtoul(optarg, nullptr, 0); break;
      case 's': opt.max_bytes = (size_t)strtoull(optarg, nullptr, 0); break;
      case 'L': opt.light = true; break;
      case 'l': usage(argv[0], tests); return 0;
      default: usage(argv[0], tests); return 2;
    }
  }
  if (which.empty() || opt.w == 0 || opt.w > DT_MAX_WG || opt.z == 0 || opt.z > 1024 || opt.max_bytes == 0) {
    usage(argv[0], tests);
    return 2;
  }
  std::vector<const DtTest *> run;
  size_t pos = 0;
  while (pos <= which.size()) {
    size_t comma = which.find(',', pos);
    std::string name = which.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? which.size() + 1 : comma + 1;
    if (name.empty()) continue;
    bool found = false;
    for (const DtTest &t : tests) {
      if (name == t.name || name == "all" || (name == "all-quick" && t.quick)) {
        run.push_back(&t);
        found = true;
      }
    }
    if (!found) {
      fprintf(stderr, "unknown test '%s'\n", name.c_str());
      usage(argv[0], tests);
      return 2;
    }
  }

  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  test = "setup";
  kerr = static_cast<dt_u64 *>(alloc(DT_KERR_WORDS * sizeof(dt_u64)));
  dev_zero(kerr, DT_KERR_WORDS * sizeof(dt_u64));
  // Each PE's failure count, gathered on PE 0 with host puts (host atomics are not available
  // on every platform: the NVIDIA heap is GPU memory).
  int *fails = static_cast<int *>(alloc(sizeof(int) * size_t(npes)));
  seed = agree_seed();
  if (me == 0) {
    printf("rocshmem_device_tests: %d PE(s), -w %u -z %u -s %zu%s, wave size %u, seed 0x%" PRIx64
           " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n",
           npes, opt.w, opt.z, opt.max_bytes, opt.light ? " -L" : "", wave_size(), seed, seed);
    fflush(stdout);
  }
  // The teams the tests use: world; PEs 1..n-1 (any n >= 2, not a power of two for n = 4, 8);
  // evens and odds (stride 2) when n >= 4.
  world.name = "world";
  world.h = ROCSHMEM_TEAM_WORLD;
  world.my = me;
  world.n = npes;
  for (int i = 0; i < npes; ++i) world.world.push_back(i);
  rest = make_team("rest", 1, 1, npes - 1);
  if (npes >= 4) {
    evens = make_team("evens", 0, 2, (npes + 1) / 2);
    odds = make_team("odds", 1, 2, npes / 2);
  }

  int total_failed_tests = 0;
  for (const DtTest *t : run) {
    test = t->name;
    nfail = 0;
    dev_zero(fails, sizeof(int) * size_t(npes));
    barrier();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t->fn();
    barrier();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int mine = nfail > 0x7fffffff ? 0x7fffffff : (int)nfail;
    rocshmem_int_p(fails + me, mine, 0);
    barrier();
    std::vector<int> each(size_t(npes), 0);
    to_host(each.data(), fails, sizeof(int) * size_t(npes));
    long long sum = 0;
    for (int v : each) sum += v;
    int all = sum > 0x7fffffff ? 0x7fffffff : (int)sum;
    barrier();
    if (me == 0) {
      double secs = double(t1.tv_sec - t0.tv_sec) + double(t1.tv_nsec - t0.tv_nsec) * 1e-9;
      if (all == 0) printf("PASS %s (%.2f s)\n", t->name, secs);
      else printf("FAIL %s: %d failure(s) (seed 0x%" PRIx64 ", replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", t->name,
                  all, seed, seed);
      fflush(stdout);
    }
    if (me == 0 ? all != 0 : nfail != 0) total_failed_tests++;
  }
  test = "teardown";
  if (evens.h != ROCSHMEM_TEAM_INVALID) rocshmem_team_destroy(evens.h);
  if (odds.h != ROCSHMEM_TEAM_INVALID) rocshmem_team_destroy(odds.h);
  if (rest.h != ROCSHMEM_TEAM_INVALID) rocshmem_team_destroy(rest.h);
  release(fails);
  release(kerr);
  rocshmem_finalize();
  return total_failed_tests ? 1 : 0;
}
