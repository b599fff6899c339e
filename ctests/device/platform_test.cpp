// The host platform layer (device/platform/host.hpp + host_launcher.cpp) and
// <rocshmem/host_kernel.hpp>, checked by their outcomes: no rocshmem_init, one process.
//
//   g++ -std=c++17 -O2 -pthread -Iinclude ctests/device/platform_test.cpp
//       device/platform/host_launcher.cpp -o platform_test && ./platform_test
//
// For wave sizes 32 and 64 and several grid/block shapes (partial waves, 3-D): ids unique
// and complete; wg_barrier / wave_sync really separate phases; wave_broadcast, wg_broadcast;
// atomics under contention from every thread; every block runs at once (a grid-wide flag
// barrier); in_kernel; backoff and clock_ns. Then host_kernel.hpp, and in child processes
// the errors (one line + abort) and the deadlocks a GPU would have.
#include "../../device/platform/platform.hpp"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <rocshmem/host_kernel.hpp>

namespace pf = rocshmem::platform;
using pf::Order;
using pf::Scope;
using rocshmem::platform::host::Dim3;

namespace {

int g_failures = 0;  // written under the atomic below by kernel threads

// Thread-safe: kernel threads report here; the first few messages are printed.
void fail(const char *fmt, ...) {
  int n = __atomic_fetch_add(&g_failures, 1, __ATOMIC_RELAXED);
  if (n >= 20) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL: %s\n", buf);
}

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) fail("%s:%d: %s: %s", __FILE__, __LINE__, #cond, std::string(__VA_ARGS__).c_str()); \
  } while (0)

std::string fmt(const char *f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

uint64_t lane_value(uint32_t block, uint32_t thread) { return (uint64_t{block} << 40) ^ (uint64_t{thread} * 0x9e3779b97f4a7c15ULL); }

struct Shape {
  Dim3 grid, block;
};

// Everything one launch shares; plain arrays indexed by global thread / block.
struct Ctx {
  Shape s;
  unsigned ws;
  uint32_t nblocks, bsize, n, rounds;
  std::vector<uint32_t> seen;          // per global thread: times its id was seen
  std::vector<uint64_t> wg_val;        // per global thread: the barrier test's slots
  std::vector<uint32_t> wg_arrived;    // per block x round: arrivals before the barrier
  std::vector<uint64_t> wave_val;      // per global thread: the wave_sync test's slots
  std::vector<uint32_t> ticket_seen;   // fetch_add return values, each 0..n-1 once
  std::vector<uint32_t> xchg_seen;     // exchange return values + the final one, 0..n once
  uint32_t ctr32 = 0;
  uint64_t sum64 = 0;
  int64_t signed64 = 0;
  uint64_t red64 = 0;    // atomic_add (no result), release
  uint32_t red32 = 0;    // atomic_add (no result), relaxed
  uint64_t cas64 = 0;
  int32_t cas32 = 0;
  uint64_t xchg64 = 0;
  uint64_t or64 = 0, and64 = ~uint64_t{0}, xor64 = 0;
  uint32_t or32 = 0;
  uint32_t grid_arrived = 0;           // the grid-wide flag barrier
  uint64_t handoff_data = 0;
  uint32_t handoff_flag = 0;
};


void kernel_body(Ctx &c) {
  namespace hl = rocshmem::platform::host;
  const uint32_t tid = pf::thread_id(), bid = pf::block_id(), ws = c.ws;
  const uint32_t g = bid * c.bsize + tid;

  // ---- ids --------------------------------------------------------------------------------
  CHECK(hl::in_kernel() && rocshmem_platform_host_in_kernel() == 1, "in_kernel false inside a kernel");
  CHECK(tid < c.bsize && bid < c.nblocks, fmt("thread %u block %u out of range", tid, bid));
  if (tid >= c.bsize || bid >= c.nblocks) return;
  __atomic_fetch_add(&c.seen[g], 1u, __ATOMIC_RELAXED);
  CHECK(pf::block_size() == c.bsize && pf::grid_size() == c.nblocks && pf::wave_size() == ws,
        fmt("sizes %u %u %u", pf::block_size(), pf::grid_size(), pf::wave_size()));
  const uint32_t wave = tid / ws, lane = tid % ws, wpb = (c.bsize + ws - 1) / ws;
  const uint32_t lanes = wave + 1 < wpb ? ws : c.bsize - wave * ws;
  CHECK(pf::lane_id() == lane && pf::wave_id() == wave && pf::waves_per_block() == wpb && pf::wave_lanes() == lanes,
        fmt("thread %u: lane %u wave %u waves %u lanes %u", tid, pf::lane_id(), pf::wave_id(), pf::waves_per_block(),
            pf::wave_lanes()));
  const hl::KernelThread &kt = hl::kernel_thread();
  const Dim3 b = c.s.block, gr = c.s.grid;
  CHECK(kt.thread_idx.x < b.x && kt.thread_idx.y < b.y && kt.thread_idx.z < b.z &&
            kt.thread_idx.x + b.x * (kt.thread_idx.y + b.y * kt.thread_idx.z) == tid,
        fmt("thread %u: threadIdx %u,%u,%u", tid, kt.thread_idx.x, kt.thread_idx.y, kt.thread_idx.z));
  CHECK(kt.block_idx.x < gr.x && kt.block_idx.y < gr.y && kt.block_idx.z < gr.z &&
            kt.block_idx.x + gr.x * (kt.block_idx.y + gr.y * kt.block_idx.z) == bid,
        fmt("block %u: blockIdx %u,%u,%u", bid, kt.block_idx.x, kt.block_idx.y, kt.block_idx.z));

  // ---- every block runs at once: a grid-wide barrier on a polled flag ---------------------
  if (tid == 0) {
    pf::atomic_fetch_add<Scope::device, Order::acq_rel>(&c.grid_arrived, 1);
    uint64_t t0 = pf::clock_ns();
    for (uint32_t r = 0; pf::poll_load(&c.grid_arrived) != c.nblocks; r++) {
      pf::backoff(r);
      if (pf::clock_ns() - t0 > 20ull * 1000 * 1000 * 1000) {
        fail("block %u: other blocks never arrived (blocks not concurrent?)", bid);
        break;
      }
    }
  }
  pf::wg_barrier();

  // ---- wg_barrier separates phases: plain writes before, reads of others' after ------------
  uint64_t *val = &c.wg_val[uint64_t{bid} * c.bsize];
  for (uint32_t r = 0; r < c.rounds; r++) {
    val[tid] = uint64_t{r} << 32 | tid;
    __atomic_fetch_add(&c.wg_arrived[uint64_t{bid} * c.rounds + r], 1u, __ATOMIC_RELAXED);
    pf::wg_barrier();
    uint32_t arrived = __atomic_load_n(&c.wg_arrived[uint64_t{bid} * c.rounds + r], __ATOMIC_RELAXED);
    CHECK(arrived == c.bsize, fmt("block %u round %u: left the barrier with %u of %u arrived", bid, r, arrived, c.bsize));
    uint32_t peer = (tid + r + 1) % c.bsize;
    CHECK(val[peer] == (uint64_t{r} << 32 | peer), fmt("block %u round %u: thread %u read %#llx from %u", bid, r, tid,
                                                       (unsigned long long)val[peer], peer));
    pf::wg_barrier();  // nobody overwrites before everyone read
  }

  // ---- wave_sync separates phases within a wave --------------------------------------------
  uint64_t *wv = &c.wave_val[uint64_t{bid} * c.bsize + wave * ws];
  for (uint32_t r = 0; r < c.rounds; r++) {
    wv[lane] = uint64_t{r} * 1000 + lane;
    pf::wave_sync();
    uint32_t peer = (lane + r + 1) % lanes;
    CHECK(wv[peer] == uint64_t{r} * 1000 + peer, fmt("block %u wave %u round %u: lane %u read %llu from lane %u", bid,
                                                     wave, r, lane, (unsigned long long)wv[peer], peer));
    pf::wave_sync();
  }

  // ---- wave_broadcast ----------------------------------------------------------------------
  const uint64_t mine = lane_value(bid, tid);
  for (uint32_t r = 0; r < c.rounds; r++) {
    uint32_t src = (r * 7 + 3) % lanes;
    uint64_t got = pf::wave_broadcast(mine + r, src);
    CHECK(got == lane_value(bid, wave * ws + src) + r, fmt("block %u wave %u lane %u: broadcast from %u gave %#llx", bid,
                                                           wave, lane, src, (unsigned long long)got));
  }
  // src is taken modulo the wave size, as GPU shuffles do; an absent lane gives 0.
  CHECK(pf::wave_broadcast(mine, ws + lanes - 1) == lane_value(bid, wave * ws + lanes - 1), "broadcast src modulo");
  if (lanes < ws) CHECK(pf::wave_broadcast(mine, lanes) == 0, "broadcast from an absent lane");

  // ---- wg_broadcast -------------------------------------------------------------------------
  for (uint32_t r = 0; r < c.rounds; r++) {
    uint32_t src = (r * 13 + 5) % c.bsize;
    uint64_t got = pf::wg_broadcast(mine + r, src);
    CHECK(got == lane_value(bid, src) + r,
          fmt("block %u thread %u: wg_broadcast from %u gave %#llx", bid, tid, src, (unsigned long long)got));
  }
  CHECK(pf::wg_broadcast(mine, c.bsize) == 0, "wg_broadcast from a thread outside the work-group");

  // ---- atomics under contention from every thread -----------------------------------------
  uint32_t ticket = pf::atomic_fetch_add<Scope::device, Order::relaxed>(&c.ctr32, 1u);
  if (ticket < c.n) __atomic_fetch_add(&c.ticket_seen[ticket], 1u, __ATOMIC_RELAXED);
  pf::atomic_fetch_add<Scope::system, Order::release>(&c.sum64, uint64_t{g} + 1);
  pf::atomic_fetch_add<Scope::wg, Order::acquire>(&c.signed64, -int64_t(g) - 1);
  pf::atomic_add<Scope::system, Order::release>(&c.red64, uint64_t{g} + 1);
  pf::atomic_add<Scope::device, Order::relaxed>(&c.red32, 3u);
  for (int k = 0; k < 3; k++) {  // CAS loops: 3 increments per thread
    uint64_t old = pf::atomic_load<Scope::device, Order::relaxed>(&c.cas64), seen;
    while ((seen = pf::atomic_cas<Scope::device, Order::acq_rel>(&c.cas64, old, old + 1)) != old) old = seen;
    int32_t o32 = pf::atomic_load<Scope::system, Order::acquire>(&c.cas32), s32;
    while ((s32 = pf::atomic_cas<Scope::wg, Order::relaxed>(&c.cas32, o32, o32 - 2)) != o32) o32 = s32;
  }
  uint64_t prev = pf::atomic_exchange<Scope::system, Order::acq_rel>(&c.xchg64, uint64_t{g} + 1);
  if (prev <= c.n) __atomic_fetch_add(&c.xchg_seen[prev], 1u, __ATOMIC_RELAXED);
  pf::atomic_fetch_or<Scope::device, Order::release>(&c.or64, uint64_t{1} << (g % 64));
  pf::atomic_fetch_and<Scope::device, Order::acquire>(&c.and64, ~(uint64_t{1} << (g % 64)));
  pf::atomic_fetch_xor<Scope::system, Order::relaxed>(&c.xor64, lane_value(bid, tid));
  pf::atomic_fetch_or<Scope::wg, Order::acq_rel>(&c.or32, 1u << (g % 32));

  // ---- release/acquire handoff between the first and the last block -------------------------
  if (bid == 0 && tid == 0) {
    c.handoff_data = 0x5eed5eedULL;
    pf::fence_system();
    pf::atomic_store<Scope::system, Order::release>(&c.handoff_flag, 1u);
  }
  if (bid == c.nblocks - 1 && tid == c.bsize - 1) {
    for (uint32_t r = 0; pf::atomic_load<Scope::system, Order::acquire>(&c.handoff_flag) == 0; r++) pf::backoff(r);
    pf::fence_device();
    CHECK(c.handoff_data == 0x5eed5eedULL, "handoff data not visible after the flag");
  }
  pf::fence_wg();
  pf::wg_barrier();
}

void run_shape(const Shape &s, unsigned ws) {
  Ctx c;
  c.s = s;
  c.ws = ws;
  c.nblocks = s.grid.x * s.grid.y * s.grid.z;
  c.bsize = s.block.x * s.block.y * s.block.z;
  c.n = c.nblocks * c.bsize;
  // Barrier rounds cost a context switch per thread on 2 cores: fewer for big launches.
  c.rounds = c.n <= 256 ? 64 : c.n <= 1024 ? 16 : 6;
  c.seen.assign(c.n, 0);
  c.wg_val.assign(c.n, ~uint64_t{0});
  c.wg_arrived.assign(uint64_t{c.nblocks} * c.rounds, 0);
  c.wave_val.assign(c.n, ~uint64_t{0});
  c.ticket_seen.assign(c.n, 0);
  c.xchg_seen.assign(c.n + 1, 0);

  const int before = g_failures;
  uint64_t t0 = pf::clock_ns();
  rocshmem::platform::host::launch(s.grid, s.block, ws, [&c]() { kernel_body(c); });
  uint64_t dt = pf::clock_ns() - t0;

  const std::string what = fmt("grid %ux%ux%u block %ux%ux%u wave %u", s.grid.x, s.grid.y, s.grid.z, s.block.x,
                               s.block.y, s.block.z, ws);
  for (uint32_t i = 0; i < c.n; i++) {
    CHECK(c.seen[i] == 1, fmt("%s: global thread %u seen %u times", what.c_str(), i, c.seen[i]));
    CHECK(c.ticket_seen[i] == 1, fmt("%s: fetch_add returned %u %u times", what.c_str(), i, c.ticket_seen[i]));
  }
  // exchange: the returned values and the final one are 0..n, each once.
  if (c.xchg64 <= c.n) c.xchg_seen[c.xchg64]++;
  for (uint32_t i = 0; i <= c.n; i++)
    CHECK(c.xchg_seen[i] == 1, fmt("%s: exchange chain: %u seen %u times", what.c_str(), i, c.xchg_seen[i]));
  const uint64_t n = c.n;
  CHECK(c.ctr32 == c.n, fmt("%s: ctr32 %u", what.c_str(), c.ctr32));
  CHECK(c.sum64 == n * (n + 1) / 2, fmt("%s: sum64 %llu", what.c_str(), (unsigned long long)c.sum64));
  CHECK(c.signed64 == -int64_t(n * (n + 1) / 2), fmt("%s: signed64 %lld", what.c_str(), (long long)c.signed64));
  CHECK(c.red64 == n * (n + 1) / 2, fmt("%s: red64 %llu", what.c_str(), (unsigned long long)c.red64));
  CHECK(c.red32 == uint32_t(3 * n), fmt("%s: red32 %u", what.c_str(), c.red32));
  CHECK(c.cas64 == 3 * n, fmt("%s: cas64 %llu", what.c_str(), (unsigned long long)c.cas64));
  CHECK(c.cas32 == -6 * int32_t(c.n), fmt("%s: cas32 %d", what.c_str(), c.cas32));
  uint64_t bits = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  uint32_t bits32 = n >= 32 ? ~0u : (1u << n) - 1;
  uint64_t x = 0;
  for (uint32_t b = 0; b < c.nblocks; b++)
    for (uint32_t t = 0; t < c.bsize; t++) x ^= lane_value(b, t);
  CHECK(c.or64 == bits && c.and64 == ~bits && c.or32 == bits32 && c.xor64 == x,
        fmt("%s: or %#llx and %#llx or32 %#x xor %#llx", what.c_str(), (unsigned long long)c.or64,
            (unsigned long long)c.and64, c.or32, (unsigned long long)c.xor64));
  printf("  %-40s %5u threads %3u rounds %7.1f ms%s\n", what.c_str(), c.n, c.rounds, dt / 1e6,
         g_failures != before ? "  FAILED" : "");
}

// ---- <rocshmem/host_kernel.hpp>: HIP-style source ---------------------------------------
__device__ __forceinline__ unsigned global_id() { return threadIdx.x + blockIdx.x * blockDim.x; }

__global__ void hip_style(unsigned *out, unsigned *ws_out, int salt) {
  // Linear 3-D ids, like a GPU: x fastest.
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned per = blockDim.x * blockDim.y * blockDim.z;
  out[blk * per + t] = 0;
  __syncthreads();
  out[blk * per + (t + 1) % per] += unsigned(salt) + 1;  // each slot written by one neighbour
  __syncthreads();
  if (out[blk * per + t] != unsigned(salt) + 1) fail("hip_style: block %u thread %u read %u", blk, t, out[blk * per + t]);
  if (t == 0 && blk == 0) *ws_out = unsigned(warpSize);
}

__global__ void hip_sum(int *dst, int v) { __atomic_fetch_add(dst, v + int(global_id()) - int(global_id()), __ATOMIC_RELAXED); }

void test_host_kernel() {
  std::vector<unsigned> out(2 * 3 * 4 * 5 * 3, 7);
  unsigned ws = 0;
  unsetenv("ROCSHMEM_HOST_WAVE_SIZE");
  rocshmem_host_launch(hip_style, dim3(2, 3), dim3(4, 5, 3), out.data(), &ws, 41);
  CHECK(ws == 64, fmt("warpSize %u, want the default 64", ws));
  setenv("ROCSHMEM_HOST_WAVE_SIZE", "32", 1);
  rocshmem_host_launch(hip_style, 6, 60, out.data(), &ws, 9);
  CHECK(ws == 32, fmt("warpSize %u with ROCSHMEM_HOST_WAVE_SIZE=32", ws));
  unsetenv("ROCSHMEM_HOST_WAVE_SIZE");
  int sum = 0;
  rocshmem_host_launch(hip_sum, 3, 33, &sum, 2);
  CHECK(sum == 3 * 33 * 2, fmt("hip_sum %d", sum));
  CHECK(!rocshmem::platform::host::in_kernel() && rocshmem_platform_host_in_kernel() == 0, "in_kernel outside");
  printf("  host_kernel.hpp: threadIdx/blockIdx/blockDim/gridDim/__syncthreads/warpSize ok\n");
}

// ---- backoff and the clock ----------------------------------------------------------------
void test_backoff_clock() {
  uint64_t last = pf::clock_ns(), t0 = last;
  for (uint32_t r = 0; r < 24; r++) {
    pf::backoff(r);
    uint64_t now = pf::clock_ns();
    CHECK(now >= last, "clock_ns went backwards");
    last = now;
  }
  // rounds 12..23 sleep 1+2+...+64 us + 5 x 100 us = 627 us at least.
  uint64_t dt = last - t0;
  CHECK(dt >= 600000 && dt < 2000000000ull, fmt("24 backoff rounds took %llu ns", (unsigned long long)dt));
  printf("  backoff: 24 rounds in %.2f ms; clock_ns monotonic\n", dt / 1e6);
}

// ---- errors and deadlocks, in child processes ---------------------------------------------
struct Child {
  bool exited, signaled;
  int code;
  std::string err;
};

// Runs fn in a child with stderr captured; kills it after timeout_ms (hang = still running).
template <class F>
Child in_child(F fn, int timeout_ms, bool *hung) {
  int fds[2];
  if (pipe(fds) != 0) abort();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    fn();
    _exit(0);
  }
  close(fds[1]);
  int status = 0;
  *hung = false;
  for (int waited = 0;; waited += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (waited >= timeout_ms) {
      *hung = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  Child c{WIFEXITED(status), WIFSIGNALED(status), WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), ""};
  char buf[1024];
  ssize_t k;
  while ((k = read(fds[0], buf, sizeof buf)) > 0) c.err.append(buf, size_t(k));
  close(fds[0]);
  return c;
}

template <class F>
void expect_abort(const char *name, F fn, const char *needle) {
  bool hung;
  Child c = in_child(fn, 5000, &hung);
  bool one_line = !c.err.empty() && c.err.find('\n') == c.err.size() - 1;
  CHECK(!hung && c.signaled && c.code == SIGABRT && one_line && c.err.find(needle) != std::string::npos,
        fmt("%s: hung %d signaled %d code %d, stderr: %s", name, hung, c.signaled, c.code, c.err.c_str()));
  if (!c.err.empty()) printf("  %-28s -> %s", name, c.err.c_str());
}

template <class F>
void expect_hang(const char *name, F fn) {
  bool hung;
  Child c = in_child(fn, 200, &hung);
  CHECK(hung, fmt("%s: did not deadlock (exited %d code %d): %s", name, c.exited, c.code, c.err.c_str()));
  printf("  %-28s -> deadlocks, as on a GPU\n", name);
}

void noop(void *) {}

void test_errors() {
  namespace hl = rocshmem::platform::host;
  expect_abort("wave size 48", [] { hl::launch({}, {64}, 48, noop, nullptr); }, "wave size 48");
  expect_abort("block 0", [] { hl::launch({}, {0}, 64, noop, nullptr); }, "work-group 0x1x1");
  expect_abort("block 1025", [] { hl::launch({}, {1025}, 64, noop, nullptr); }, "1024");
  expect_abort("block 32x32x2", [] { hl::launch({}, {32, 32, 2}, 32, noop, nullptr); }, "1024");
  expect_abort("grid 0", [] { hl::launch({4, 0}, {32}, 32, noop, nullptr); }, "empty grid");
  expect_abort("env wave size 16", [] {
    setenv("ROCSHMEM_HOST_WAVE_SIZE", "16", 1);
    hl::launch({}, {32}, 0, noop, nullptr);
  }, "ROCSHMEM_HOST_WAVE_SIZE=16");
  expect_abort("nested launch", [] { hl::launch({2}, {2}, 32, [] { hl::launch({}, {}, 32, noop, nullptr); }); },
               "inside a kernel");
  expect_abort("thread_id outside", [] { (void)pf::thread_id(); }, "thread_id called outside a kernel");
  expect_abort("threadIdx outside", [] { (void)threadIdx.x; }, "threadIdx called outside");
  expect_hang("thread skips wg_barrier", [] {
    hl::launch({2}, {100}, 64, [] {
      if (pf::thread_id() != 57) pf::wg_barrier();
    });
  });
  expect_hang("lane skips wave_sync", [] {
    hl::launch({1}, {100}, 32, [] {
      if (pf::thread_id() != 97) pf::wave_sync();  // the partial last wave
    });
  });
  expect_hang("thread skips wg_broadcast", [] {
    hl::launch({3}, {40}, 32, [] {
      if (pf::block_id() != 1 || pf::thread_id() != 0) (void)pf::wg_broadcast(1, 0);
    });
  });
  expect_hang("lane skips wave_broadcast", [] {
    hl::launch({1}, {64}, 64, [] {
      if (pf::lane_id() != 0) (void)pf::wave_broadcast(1, 0);
    });
  });
}

}  // namespace

int main() {
  static_assert(pf::kPlatform == 0 && ROCSHMEM_DEVICE_PASS == 1, "host platform");
  CHECK(!rocshmem::platform::host::in_kernel() && rocshmem_platform_host_in_kernel() == 0, "in_kernel outside");
  const uint64_t t0 = pf::clock_ns();
  const Shape shapes[] = {
      {{1}, {1}},       {{2}, {64}},         {{3}, {100}},          {{4}, {256}},
      {{2}, {1024}},    {{2, 3}, {4, 4, 4}}, {{1, 1, 2}, {5, 3, 7}}, {{5, 2, 2}, {33}},
  };
  for (unsigned ws : {32u, 64u}) {
    printf("wave size %u\n", ws);
    for (const Shape &s : shapes) run_shape(s, ws);
  }
  printf("host_kernel.hpp\n");
  test_host_kernel();
  test_backoff_clock();
  printf("errors and deadlocks (child processes)\n");
  test_errors();
  printf("platform_test: %s, %.2f s\n", g_failures ? "FAILED" : "ok", (pf::clock_ns() - t0) / 1e9);
  if (g_failures) fprintf(stderr, "platform_test: %d failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
