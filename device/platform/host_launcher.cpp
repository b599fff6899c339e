// The host platform's kernel launcher. Every wave of a launch is a CPU thread, all started at
// once, so that barriers and flags polled across waves and blocks behave as on a GPU; the lanes
// of a wave are fibers on their wave's thread (ucontext), which hand the thread to the next lane
// where a GPU lane waits: a barrier, a poll's back-off, a park. Lanes of a wave run in lockstep
// on a GPU, so device code never waits for a sibling lane without one of those; and switching
// lanes in user space costs far less than a kernel thread per lane did (two cores spent most of
// their time in the scheduler: every barrier slept and woke each of up to 1,024 threads).
//
// Compiled into librocshmem (.so and .a) with -fno-exceptions -fno-rtti; it uses only libc
// and pthreads (the Rust-linked library has no libstdc++), hence no std::thread / std::mutex
// / new, and only a trivially initialised thread_local (no TLS wrapper, no guard variables).
#include "platform.hpp"  // the host platform (host.hpp), with rocshmem_host_launch.hpp

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

namespace rocshmem {
namespace platform {
namespace host {

namespace {

struct Runner;

// The lane running on this thread (nullptr on the wave thread's scheduler and outside kernels),
// and this thread's wave (nullptr outside the launcher's threads). Read through current() only
// (see host.hpp for why).
thread_local KernelThread *tl_self = nullptr;
thread_local Runner *tl_runner = nullptr;

// Every thread runs at once; beyond this the machine (memory) is the limit and a failure
// half-way would leave started threads waiting in barriers, so refuse up front.
constexpr uint64_t kMaxThreads = 65536;
constexpr size_t kStackBytes = 256 * 1024;  // each lane's
constexpr size_t kRunnerStackBytes = 64 * 1024;  // the wave thread's own (its scheduler)
constexpr unsigned kMaxBlock = 1024;

// One line on stderr, then abort. Written with a single write(2), and only by the first
// thread to fail: every thread of a kernel may hit the same error at once.
[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...) {
  static int dying = 0;
  if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL) != 0) {
    for (;;) pause();  // the first one's abort ends the process
  }
  char line[512];
  int n = snprintf(line, sizeof line, "rocshmem: error: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - size_t(n) - 1, fmt, ap);
  va_end(ap);
  size_t len = size_t(n) + (m < 0 ? 0 : size_t(m));
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t w = write(2, line, len);
  (void)w;
  abort();
}

void futex_wait(uint32_t *word, uint32_t expected) {
  // EAGAIN (value changed) and EINTR both just send the caller back to re-check.
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0); }

// A reusable, generation-counted barrier for a fixed number of threads (the waves of a
// work-group). Threads that do not arrive hold everyone else forever, exactly like a GPU
// barrier some wave skips.
struct Barrier {
  uint32_t size;      // threads that must arrive
  uint32_t spin;      // pause rounds before sleeping (0 when threads outnumber cores)
  uint32_t arrived;   // arrivals in the current generation
  uint32_t sleepers;  // threads in (or about to enter) futex_wait
  alignas(64) uint32_t generation;  // bumped by the last arrival: the futex word
};

// Returns the generation that was passed (the same value on every thread of that round).
uint32_t barrier_wait(Barrier *b) {
  // Read before arriving: the round cannot end without this thread, so this is its round.
  // (A barrier of one thread bumps it too: the lanes of its wave wait for the new generation.)
  uint32_t gen = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
  // acq_rel chains every arrival's earlier writes to the last arrival, which releases them
  // to all through the generation store.
  if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->size) {
    __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->generation, gen + 1, __ATOMIC_SEQ_CST);
    // seq_cst pairs with the sleepers' increment: either we see them or they see gen + 1.
    if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST) != 0) futex_wake_all(&b->generation);
    return gen;
  }
  for (uint32_t i = 0; i < b->spin; i++) {
    if (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) != gen) return gen;
    detail::cpu_relax();
  }
  __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&b->generation, __ATOMIC_SEQ_CST) == gen) futex_wait(&b->generation, gen);
  __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_RELAXED);
  return gen;
}

// Why a lane handed its thread back to the scheduler.
enum class Why : uint8_t { kStart, kPoll, kPark, kBarrier, kDone };

struct Lane {
  KernelThread self;  // first: tl_self points here
  ucontext_t ctx;
  Why why;
  uint32_t round;  // of the wait it yielded from: 0 = a new wait (it did work since its last yield)
  const uint64_t *park_word;  // Why::kPark: the word and the value it saw
  uint64_t park_seen;
};

// A wave's thread: runs its lanes in turn, each until it yields or returns.
struct Runner {
  ucontext_t sched;
  Lane *lanes;
  uint32_t n_lanes;
  Lane *cur;
  void (*kernel)(void *);
  void *arg;
  char *stacks;  // n_lanes x (guard page + kStackBytes)
  size_t stacks_bytes;
  pthread_t tid;
};

void lane_main() {
  Runner *r = tl_runner;
  r->kernel(r->arg);
  r->cur->why = Why::kDone;  // uc_link then resumes the scheduler
}

// On a lane: hand the thread to the scheduler (the next lane) until it comes round again.
void yield_lane(Why why, uint32_t round) {
  Runner *r = tl_runner;
  Lane *l = r->cur;
  l->why = why;
  l->round = round;
  swapcontext(&l->ctx, &r->sched);
}

// The original back-off of one CPU thread polling alone (host.hpp's, before lanes were fibers):
// spin briefly, then yield, then sleep 1 us doubling to 100 us, then 1 ms after about 10 ms.
void thread_backoff(uint32_t round) {
  if (round < 4) {
    for (uint32_t i = 0, n = 16u << round; i < n; i++) detail::cpu_relax();
  } else if (round < 12) {
    sched_yield();
  } else {
    const uint32_t shift = round - 12;
    const long ns = shift < 7 ? 1000L << shift : shift < 107 ? 100000L : 1000000L;
    struct timespec ts = {0, ns};
    nanosleep(&ts, nullptr);
  }
}

// The bound of one park, per thread: 1 ms, doubling to 64 ms while parks on the same word
// time out, back to 1 ms once woken. Bounded, so a proxy that stopped without waking is
// noticed; growing, because hundreds of parked threads waking every 1 ms kept 2 cores busy
// switching (measured: two 4-PE RO jobs side by side, 12 s alone, 236 s together).
thread_local const uint64_t *tl_park_word = nullptr;
thread_local uint32_t tl_park_ms = 1;

void thread_park(const uint64_t *word, uint64_t seen) {
  if (word != tl_park_word) {
    tl_park_word = word;
    tl_park_ms = 1;
  }
  struct timespec limit = {tl_park_ms / 1000, static_cast<long>(tl_park_ms % 1000) * 1000000L};
  const long r = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, static_cast<uint32_t>(seen), &limit, nullptr, 0);
  if (r == -1 && errno == ETIMEDOUT)
    tl_park_ms = tl_park_ms < 64 ? tl_park_ms * 2 : 64;
  else
    tl_park_ms = 1;
}

// A pass over the lanes in which none did any work: every live lane waits. The thread then
// waits as one lane alone would: parked on the first parked lane's word when all that poll
// are parked (the proxy answers commands in the order they came, and lane 0 queued first),
// else with the back-off of the lane that has waited least.
void idle(const Lane *lanes, uint32_t n) {
  uint32_t least = UINT32_MAX;
  const Lane *parked = nullptr;
  for (uint32_t i = 0; i < n; i++) {
    const Lane &l = lanes[i];
    if (l.why == Why::kPoll && l.round < least) least = l.round;
    if (l.why == Why::kPark && parked == nullptr) parked = &l;
  }
  if (least != UINT32_MAX) {
    thread_backoff(least);
  } else if (parked != nullptr) {
    thread_park(parked->park_word, parked->park_seen);
  } else {
    // Every live lane waits in a barrier that cannot complete (lanes that returned never
    // arrive: a deadlock, as on a GPU where a barrier is skipped): do not spin on it.
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, nullptr);
  }
}

void *runner_main(void *p) {
  Runner *r = static_cast<Runner *>(p);
  tl_runner = r;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (uint32_t i = 0; i < r->n_lanes; i++) {
    Lane &l = r->lanes[i];
    char *stack = r->stacks + i * (page + kStackBytes);
    if (getcontext(&l.ctx) != 0) die("host launch: getcontext failed (%s)", strerror(errno));
    l.ctx.uc_stack.ss_sp = stack + page;
    l.ctx.uc_stack.ss_size = kStackBytes;
    l.ctx.uc_link = &r->sched;
    makecontext(&l.ctx, lane_main, 0);
    l.why = Why::kStart;
  }
  uint32_t live = r->n_lanes;
  while (live > 0) {
    bool progress = false;
    for (uint32_t i = 0; i < r->n_lanes; i++) {
      Lane &l = r->lanes[i];
      if (l.why == Why::kDone) continue;
      r->cur = &l;
      tl_self = &l.self;
      swapcontext(&r->sched, &l.ctx);
      tl_self = nullptr;
      if (l.why == Why::kDone) {
        live--;
        progress = true;
      } else if (l.round == 0) {
        progress = true;
      }
    }
    if (!progress && live > 0) idle(r->lanes, r->n_lanes);
  }
  tl_runner = nullptr;
  return nullptr;
}

// Zeroed, cache-line aligned memory (no operator new: see the top of the file).
void *zalloc(size_t bytes) {
  void *p = nullptr;
  if (bytes == 0) bytes = 64;
  if (posix_memalign(&p, 64, bytes) != 0) die("host launch: out of memory (%zu bytes)", bytes);
  memset(p, 0, bytes);
  return p;
}

unsigned online_cpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

uint64_t extent(Dim3 d) { return uint64_t{d.x} * d.y * d.z; }

}  // namespace

struct alignas(64) Group {
  Barrier bar;  // among the work-group's waves (their threads)
  // wg_broadcast's value. Two slots, alternating by generation: a thread may still read
  // round g's value while the source of round g+1 writes; round g+2 cannot start before
  // everyone has left round g.
  uint64_t slot[2];
};

// A wave's state: read and written by its lanes only, all on one thread.
struct alignas(64) Wave {
  uint32_t lanes;          // lanes present
  uint32_t arrived;        // lanes in the current wave barrier
  uint32_t generation;     // of the wave barrier
  uint32_t group_arrived;  // lanes in the current work-group barrier
  uint64_t slot[2];        // wave_broadcast's value, as Group::slot
};

KernelThread *current() { return tl_self; }

void outside_kernel(const char *what) {
  die("%s called outside a kernel: on the host platform device code runs on the threads of "
      "rocshmem::platform::host::launch (or rocshmem_host_launch)",
      what);
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "park(): the low half of a word is its first 4 bytes");

void backoff(uint32_t round) {
  if (tl_self != nullptr)
    yield_lane(Why::kPoll, round);
  else
    thread_backoff(round);
}

void park(const uint64_t *word, uint64_t seen) {
  if (tl_self == nullptr) return thread_park(word, seen);
  Lane *l = tl_runner->cur;
  l->park_word = word;
  l->park_seen = seen;
  // Round 1, not 0: a park follows polls of the same wait (host.hpp's park spins first).
  yield_lane(Why::kPark, 1);
}

void unpark(const uint64_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0); }

namespace {

// The wave barrier: lanes are fibers of one thread, so arriving is a count and waiting is
// handing the thread on. Returns the generation passed.
uint32_t wave_wait(Wave *w) {
  const uint32_t gen = w->generation;
  if (++w->arrived == w->lanes) {
    w->arrived = 0;
    w->generation = gen + 1;
    return gen;
  }
  for (uint32_t round = 0; __atomic_load_n(&w->generation, __ATOMIC_RELAXED) == gen; round++)
    yield_lane(Why::kBarrier, round);
  return gen;
}

// The work-group barrier: the wave's last lane to arrive takes the wave through the barrier of
// the work-group's waves (threads); the others hand the thread on until it has. Returns the
// generation passed.
uint32_t group_wait(Group *g, Wave *w) {
  const uint32_t gen = __atomic_load_n(&g->bar.generation, __ATOMIC_ACQUIRE);
  if (++w->group_arrived == w->lanes) {
    w->group_arrived = 0;
    barrier_wait(&g->bar);
    return gen;
  }
  for (uint32_t round = 0; __atomic_load_n(&g->bar.generation, __ATOMIC_ACQUIRE) == gen; round++)
    yield_lane(Why::kBarrier, round);
  return gen;
}

}  // namespace

void group_barrier() {
  const KernelThread &t = kernel_thread("wg_barrier");
  group_wait(t.group, t.wave);
}

void wave_barrier() { wave_wait(kernel_thread("wave_sync").wave); }

uint64_t wave_exchange(uint64_t v, uint32_t src_lane) {
  const KernelThread &t = kernel_thread("wave_broadcast");
  Wave *w = t.wave;
  src_lane %= t.wave_size;
  // The generation read here is the one wave_wait will pass (see barrier_wait).
  const uint32_t gen = w->generation;
  if (t.lane_id == src_lane) w->slot[gen & 1] = v;
  wave_wait(w);
  return src_lane < t.wave_lanes ? w->slot[gen & 1] : 0;
}

uint64_t group_exchange(uint64_t v, uint32_t src_thread) {
  const KernelThread &t = kernel_thread("wg_broadcast");
  Group *g = t.group;
  const uint32_t gen = __atomic_load_n(&g->bar.generation, __ATOMIC_ACQUIRE);
  if (t.thread_id == src_thread) g->slot[gen & 1] = v;
  group_wait(g, t.wave);
  return src_thread < t.block_size ? g->slot[gen & 1] : 0;
}

unsigned default_wave_size() {
  const char *s = getenv("ROCSHMEM_HOST_WAVE_SIZE");
  if (s == nullptr || *s == '\0') return 64;
  if (strcmp(s, "32") == 0) return 32;
  if (strcmp(s, "64") == 0) return 64;
  die("ROCSHMEM_HOST_WAVE_SIZE=%s: must be 32 or 64", s);
}

void launch(Dim3 grid, Dim3 block, unsigned wave_size, void (*kernel)(void *), void *arg) {
  if (tl_runner != nullptr)
    die("host launch: called from inside a kernel (no nested launches on the host platform: launch from host code)");
  if (kernel == nullptr) die("host launch: kernel is a null function pointer");
  if (wave_size == 0) wave_size = default_wave_size();
  if (wave_size != 32 && wave_size != 64) die("host launch: wave size %u: must be 32 or 64 (or 0 for the default)", wave_size);
  const uint64_t nblocks = extent(grid), bsize = extent(block);
  if (nblocks == 0) die("host launch: empty grid %ux%ux%u: every extent must be at least 1", grid.x, grid.y, grid.z);
  if (bsize == 0 || bsize > kMaxBlock)
    die("host launch: work-group %ux%ux%u: every extent must be at least 1, at most %u threads in all", block.x,
        block.y, block.z, kMaxBlock);
  const uint64_t total = nblocks * bsize;
  if (nblocks > kMaxThreads || total > kMaxThreads)
    die("host launch: %llu work-groups x %llu threads: the host platform runs every thread at once, at most %llu",
        (unsigned long long)nblocks, (unsigned long long)bsize, (unsigned long long)kMaxThreads);

  const uint32_t nb = static_cast<uint32_t>(nblocks), bs = static_cast<uint32_t>(bsize);
  const uint32_t wpb = (bs + wave_size - 1) / wave_size;
  const uint64_t nwaves = uint64_t{nb} * wpb;
  // Spinning only helps while every wave has a core; otherwise it steals the core the last
  // arrival needs.
  const uint32_t spin = nwaves <= online_cpus() ? 4000 : 0;

  Group *groups = static_cast<Group *>(zalloc(sizeof(Group) * nb));
  Wave *waves = static_cast<Wave *>(zalloc(sizeof(Wave) * nwaves));
  Lane *lanes = static_cast<Lane *>(zalloc(sizeof(Lane) * total));
  Runner *runners = static_cast<Runner *>(zalloc(sizeof(Runner) * nwaves));

  for (uint32_t b = 0; b < nb; b++) {
    groups[b].bar.size = wpb;
    groups[b].bar.spin = spin;
    for (uint32_t w = 0; w < wpb; w++) {
      Wave &wv = waves[uint64_t{b} * wpb + w];
      wv.lanes = (w + 1 < wpb) ? wave_size : bs - w * wave_size;
      Runner &r = runners[uint64_t{b} * wpb + w];
      r.lanes = &lanes[uint64_t{b} * bs + uint64_t{w} * wave_size];
      r.n_lanes = wv.lanes;
      r.kernel = kernel;
      r.arg = arg;
    }
    for (uint32_t t = 0; t < bs; t++) {
      KernelThread &k = lanes[uint64_t{b} * bs + t].self;
      k.block_dim = block;
      k.grid_dim = grid;
      k.thread_idx = Dim3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
      k.block_idx = Dim3{b % grid.x, (b / grid.x) % grid.y, static_cast<unsigned>(uint64_t{b} / (uint64_t{grid.x} * grid.y))};
      k.thread_id = t;
      k.block_id = b;
      k.block_size = bs;
      k.grid_size = nb;
      k.wave_size = wave_size;
      k.lane_id = t % wave_size;
      k.wave_id = t / wave_size;
      k.waves_per_block = wpb;
      k.group = &groups[b];
      k.wave = &waves[uint64_t{b} * wpb + k.wave_id];
      k.wave_lanes = k.wave->lanes;
    }
  }

  // Each lane's stack, with a guard page below it (a lane that overflows faults rather than
  // writing into its neighbour's).
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (uint64_t i = 0; i < nwaves; i++) {
    Runner &r = runners[i];
    r.stacks_bytes = r.n_lanes * (page + kStackBytes);
    void *m = mmap(nullptr, r.stacks_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (m == MAP_FAILED)
      die("host launch: cannot map the stacks of wave %llu of %llu (%s): use fewer or smaller work-groups",
          (unsigned long long)i + 1, (unsigned long long)nwaves, strerror(errno));
    r.stacks = static_cast<char *>(m);
    for (uint32_t l = 0; l < r.n_lanes; l++) mprotect(r.stacks + l * (page + kStackBytes), page, PROT_NONE);
  }

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  size_t stack = kRunnerStackBytes;
#ifdef PTHREAD_STACK_MIN
  if (stack < static_cast<size_t>(PTHREAD_STACK_MIN)) stack = PTHREAD_STACK_MIN;
#endif
  pthread_attr_setstacksize(&attr, stack);
  for (uint64_t i = 0; i < nwaves; i++) {
    int rc = pthread_create(&runners[i].tid, &attr, runner_main, &runners[i]);
    // Waves already running may wait for this one in a barrier: no way back but abort.
    if (rc != 0)
      die("host launch: cannot start the thread of wave %llu of %llu (%s): use fewer or smaller work-groups",
          (unsigned long long)i + 1, (unsigned long long)nwaves, strerror(rc));
  }
  pthread_attr_destroy(&attr);
  for (uint64_t i = 0; i < nwaves; i++) pthread_join(runners[i].tid, nullptr);
  for (uint64_t i = 0; i < nwaves; i++) munmap(runners[i].stacks, runners[i].stacks_bytes);

  free(runners);
  free(lanes);
  free(waves);
  free(groups);
}

}  // namespace host
}  // namespace platform
}  // namespace rocshmem

extern "C" int rocshmem_platform_host_in_kernel(void) { return rocshmem::platform::host::current() != nullptr; }
