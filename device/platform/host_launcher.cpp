// The host platform's kernel launcher: every GPU thread of a launch is a CPU thread, all
// started at once, so that barriers and flags polled across blocks behave as on a GPU.
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
#include <sys/syscall.h>
#include <unistd.h>

namespace rocshmem {
namespace platform {
namespace host {

namespace {

// Threads of the calling launch; read through current() only (see host.hpp for why).
thread_local KernelThread *tl_self = nullptr;

// Every thread runs at once; beyond this the machine (threads-max, memory) is the limit and
// a failure half-way would leave started threads waiting in barriers, so refuse up front.
constexpr uint64_t kMaxThreads = 65536;
constexpr size_t kStackBytes = 256 * 1024;
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

// A reusable, generation-counted barrier for a fixed number of threads. Threads that do not
// arrive hold everyone else forever, exactly like a GPU barrier some thread skips.
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
  uint32_t gen = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
  if (b->size == 1) return gen;
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

struct Worker {
  KernelThread self;  // first: tl_self points here
  void (*kernel)(void *);
  void *arg;
  pthread_t tid;
};

void *worker_main(void *p) {
  Worker *w = static_cast<Worker *>(p);
  tl_self = &w->self;
  w->kernel(w->arg);
  tl_self = nullptr;
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
  Barrier bar;
  // wg_broadcast's value. Two slots, alternating by generation: a thread may still read
  // round g's value while the source of round g+1 writes; round g+2 cannot start before
  // everyone has left round g.
  uint64_t slot[2];
};

struct alignas(64) Wave {
  Barrier bar;
  uint64_t slot[2];  // wave_broadcast's value, as Group::slot
};

KernelThread *current() { return tl_self; }

void outside_kernel(const char *what) {
  die("%s called outside a kernel: on the host platform device code runs on the threads of "
      "rocshmem::platform::host::launch (or rocshmem_host_launch)",
      what);
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "park(): the low half of a word is its first 4 bytes");

// The bound of one park, per thread: 1 ms, doubling to 64 ms while parks on the same word
// time out, back to 1 ms once woken. Bounded, so a proxy that stopped without waking is
// noticed; growing, because hundreds of parked threads waking every 1 ms kept 2 cores busy
// switching (measured: two 4-PE RO jobs side by side, 12 s alone, 236 s together).
static thread_local const uint64_t *tl_park_word = nullptr;
static thread_local uint32_t tl_park_ms = 1;

void park(const uint64_t *word, uint64_t seen) {
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

void unpark(const uint64_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0); }

void group_barrier() { barrier_wait(&kernel_thread("wg_barrier").group->bar); }

void wave_barrier() { barrier_wait(&kernel_thread("wave_sync").wave->bar); }

uint64_t wave_exchange(uint64_t v, uint32_t src_lane) {
  const KernelThread &t = kernel_thread("wave_broadcast");
  Wave *w = t.wave;
  src_lane %= t.wave_size;
  // The generation read here is the one barrier_wait will pass (see there).
  uint32_t gen = __atomic_load_n(&w->bar.generation, __ATOMIC_ACQUIRE);
  if (t.lane_id == src_lane) w->slot[gen & 1] = v;
  barrier_wait(&w->bar);
  return src_lane < t.wave_lanes ? w->slot[gen & 1] : 0;
}

uint64_t group_exchange(uint64_t v, uint32_t src_thread) {
  const KernelThread &t = kernel_thread("wg_broadcast");
  Group *g = t.group;
  uint32_t gen = __atomic_load_n(&g->bar.generation, __ATOMIC_ACQUIRE);
  if (t.thread_id == src_thread) g->slot[gen & 1] = v;
  barrier_wait(&g->bar);
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
  if (tl_self != nullptr)
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
  // Spinning only helps while every thread has a core; otherwise it steals the core the
  // last arrival needs.
  const uint32_t spin = total <= online_cpus() ? 4000 : 0;

  Group *groups = static_cast<Group *>(zalloc(sizeof(Group) * nb));
  Wave *waves = static_cast<Wave *>(zalloc(sizeof(Wave) * uint64_t{nb} * wpb));
  Worker *workers = static_cast<Worker *>(zalloc(sizeof(Worker) * total));

  for (uint32_t b = 0; b < nb; b++) {
    groups[b].bar.size = bs;
    groups[b].bar.spin = spin;
    for (uint32_t w = 0; w < wpb; w++) {
      Barrier &bar = waves[uint64_t{b} * wpb + w].bar;
      bar.size = (w + 1 < wpb) ? wave_size : bs - w * wave_size;
      bar.spin = spin;
    }
    for (uint32_t t = 0; t < bs; t++) {
      Worker &wk = workers[uint64_t{b} * bs + t];
      KernelThread &k = wk.self;
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
      k.wave_lanes = k.wave->bar.size;
      wk.kernel = kernel;
      wk.arg = arg;
    }
  }

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  size_t stack = kStackBytes;
#ifdef PTHREAD_STACK_MIN
  if (stack < static_cast<size_t>(PTHREAD_STACK_MIN)) stack = PTHREAD_STACK_MIN;
#endif
  pthread_attr_setstacksize(&attr, stack);
  for (uint64_t i = 0; i < total; i++) {
    int rc = pthread_create(&workers[i].tid, &attr, worker_main, &workers[i]);
    // Threads already running may wait for this one in a barrier: no way back but abort.
    if (rc != 0)
      die("host launch: cannot start thread %llu of %llu (%s): use fewer or smaller work-groups",
          (unsigned long long)i + 1, (unsigned long long)total, strerror(rc));
  }
  pthread_attr_destroy(&attr);
  for (uint64_t i = 0; i < total; i++) pthread_join(workers[i].tid, nullptr);

  free(workers);
  free(waves);
  free(groups);
}

}  // namespace host
}  // namespace platform
}  // namespace rocshmem

extern "C" int rocshmem_platform_host_in_kernel(void) { return rocshmem::platform::host::current() != nullptr; }
