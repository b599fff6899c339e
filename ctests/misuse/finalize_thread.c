/* rocshmem_finalize while another thread of the same process is still in the library: finalize
 * must wait for the call in flight (never unmap under it), and the thread's later calls fail
 * with one line saying they came after rocshmem_finalize; never a crash.
 *
 *   finalize_thread put    a worker thread puts fresh random blocks (8 B .. 64 KiB) to the next
 *                          PE in a tight loop; main checks what the previous PE sent (on the
 *                          receiving PE), then calls rocshmem_finalize while the worker still
 *                          puts. A refused put makes the worker pause 1 ms, so that it does not
 *                          flood stderr while finalize waits for the other PEs.
 *   finalize_thread wait   a worker thread blocks: in rocshmem_long_wait_until on a word nobody
 *                          sets (on PE 0 of 2 or more: in a sync of a team whose other members
 *                          never come); main calls rocshmem_finalize. The blocked call gives up
 *                          with one line naming it, and finalize completes.
 * Everything the library prints while finalize runs is captured and checked line by line. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define SLOTS 6
#define BLOCK (64 << 10)

/* Bytes put into slot i: small puts spend their time in the library's own code (translation,
 * checks), large ones in the copy; both must be safe while finalize runs. */
static size_t slot_bytes(int i) {
  static const size_t sizes[SLOTS] = {8, 4096, BLOCK, 64, 512, BLOCK / 2};
  return sizes[i];
}

static char *buf;        /* SLOTS blocks: block i comes from the previous PE */
static char *blocks;     /* this PE's SLOTS blocks, sent to the next PE */
static atomic_long puts_done, calls_after;
static atomic_int finalizing, finalized;
static int capture_fd = -1; /* where stderr goes while finalize runs */
static long *never;      /* a word nobody sets */
static rocshmem_team_t team_all = ROCSHMEM_TEAM_INVALID;

static void *putter(void *arg) {
  (void)arg;
  int next = (me + 1) % npes;
  for (long i = 0; !atomic_load(&finalized); i++) {
    int k = (int)(i % SLOTS);
    int was_finalizing = atomic_load(&finalizing);
    off_t before = was_finalizing ? lseek(capture_fd, 0, SEEK_CUR) : 0;
    rocshmem_putmem(buf + (size_t)k * BLOCK, blocks + (size_t)k * BLOCK, slot_bytes(k), next);
    atomic_fetch_add(&puts_done, 1);
    if (was_finalizing) {
      atomic_fetch_add(&calls_after, 1);
      /* Refused (it printed a line: stderr shares the capture file's offset): pause, so that
       * the worker does not flood stderr while finalize waits for the other PEs. */
      if (lseek(capture_fd, 0, SEEK_CUR) != before) {
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
      }
    }
  }
  /* A few more once finalize has returned: each must fail with one line. */
  for (int k = 0; k < 3; k++) {
    rocshmem_putmem(buf, blocks, 8, next);
    atomic_fetch_add(&calls_after, 1);
  }
  return NULL;
}

static atomic_int entering; /* the waiter is about to call (then main waits 100 ms more) */
static int late;            /* lines saying the wait began after finalize (a worker that was slow) */

static void *waiter(void *arg) {
  (void)arg;
  atomic_store(&entering, 1);
  if (me == 0 && npes > 1)
    rocshmem_team_sync(team_all); /* the others never join */
  else
    rocshmem_long_wait_until(never, ROCSHMEM_CMP_EQ, 1);
  return NULL;
}

/* Ends the capture `c` and checks every line written meanwhile: one of the library's lines for
 * PE `me`, naming one of `calls` and saying `what` (or `alt`, if not NULL: those are counted in
 * `late`). Counts the lines per call (read line by line: a worker in a tight loop may write tens
 * of thousands). */
static void check_lines(hu_capture c, const char *const *calls, int ncalls, const char *what, const char *alt,
                        int *per_call) {
  fflush(stderr);
  dup2(c.saved, 2);
  close(c.saved);
  char tag[32];
  snprintf(tag, sizeof tag, "rocshmem: PE %d: error: ", me);
  for (int k = 0; k < ncalls; k++) per_call[k] = 0;
  lseek(c.fd, 0, SEEK_SET);
  FILE *f = fdopen(c.fd, "r");
  REQUIRE(f != NULL, "fdopen");
  char *line = NULL;
  size_t cap = 0;
  int bad = 0;
  while (getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = 0;
    int which = -1;
    for (int k = 0; k < ncalls; k++) {
      size_t cl = strlen(calls[k]), tl = strlen(tag);
      if (strncmp(line, tag, tl) == 0 && strncmp(line + tl, calls[k], cl) == 0 && line[tl + cl] == ':') which = k;
    }
    int is_alt = alt && strstr(line, alt);
    late += which >= 0 && is_alt;
    if (which < 0 || !(strstr(line, what) || is_alt)) {
      if (bad++ < 3) CHECK(0, "unexpected line while finalizing: '%s' (want '%s')", line, what);
    } else {
      per_call[which]++;
    }
  }
  free(line);
  fclose(f);
}

static void run_put(uint64_t seed) {
  buf = (char *)rocshmem_malloc(SLOTS * BLOCK);
  REQUIRE(buf != NULL, "rocshmem_malloc");
  memset(buf, 0, SLOTS * BLOCK);
  blocks = (char *)malloc(SLOTS * BLOCK);
  for (int i = 0; i < SLOTS; i++) hu_fill(blocks + (size_t)i * BLOCK, slot_bytes(i), seed, me, (uint64_t)i);
  rocshmem_barrier_all();

  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, putter, NULL) == 0, "pthread_create");
  while (atomic_load(&puts_done) < 2 * SLOTS) sched_yield();
  /* Every block has landed at least once (puts complete on return); the worker keeps
   * rewriting the same bytes. Check on the receiving PE what the previous PE sent. */
  rocshmem_barrier_all();
  int prev = (me + npes - 1) % npes;
  char *want = (char *)malloc(BLOCK);
  for (int i = 0; i < SLOTS; i++) {
    hu_fill(want, slot_bytes(i), seed, prev, (uint64_t)i);
    long d = hu_first_diff(buf + (size_t)i * BLOCK, want, slot_bytes(i));
    CHECK(d < 0, "block %d (%zu bytes) from PE %d differs at byte %ld", i, slot_bytes(i), prev, d);
  }
  free(want);
  rocshmem_barrier_all();

  hu_capture c = hu_capture_begin();
  capture_fd = c.fd;
  atomic_store(&finalizing, 1);
  rocshmem_finalize();
  atomic_store(&finalized, 1);
  pthread_join(t, NULL);
  const char *calls[] = {"rocshmem_putmem"};
  int n[1];
  check_lines(c, calls, 1, "called after rocshmem_finalize", NULL, n);
  /* The 3 puts after finalize returned, at least, failed; no put made before finalize (bar the
   * one that may have read the flag just before main set it) failed. */
  CHECK(n[0] >= 3 && n[0] <= atomic_load(&calls_after) + 1, "%d failed puts reported, %ld made during/after finalize",
        n[0], atomic_load(&calls_after));
  printf("finalize_thread put: PE %d: %ld puts, %d refused after finalize began\n", me, atomic_load(&puts_done), n[0]);
  free(blocks);
}

static void run_wait(void) {
  never = (long *)rocshmem_calloc(1, sizeof(long));
  REQUIRE(never != NULL, "rocshmem_calloc");
  if (npes > 1) {
    /* A team of every PE, so that PE 0's worker can sync on it alone (its slot is not the
     * world's, which finalize uses). */
    REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &team_all) == 0, "split");
  }
  rocshmem_barrier_all();
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, waiter, NULL) == 0, "pthread_create");
  while (!atomic_load(&entering)) sched_yield();
  struct timespec ts = {0, 100 * 1000000L}; /* the worker is blocked by now */
  nanosleep(&ts, NULL);

  hu_capture c = hu_capture_begin();
  rocshmem_finalize();
  pthread_join(t, NULL);
  const char *calls[] = {"rocshmem_long_wait_until", "rocshmem_team_sync"};
  int n[2];
  /* Normally the blocked call gives up; on a machine so loaded that the worker had not entered
   * it 100 ms later, it is refused as called after finalize (also right, and reported). */
  check_lines(c, calls, 2, "gave up waiting: another thread of this process called rocshmem_finalize",
              "called after rocshmem_finalize", n);
  int want_sync = me == 0 && npes > 1;
  CHECK(n[0] == !want_sync, "rocshmem_long_wait_until: %d line(s), want %d", n[0], !want_sync);
  CHECK(n[1] == want_sync, "rocshmem_team_sync: %d line(s), want %d", n[1], want_sync);
  printf("finalize_thread wait: PE %d: %s\n", me,
         late ? "the worker's call came after finalize began (slow machine)" : "finalize ended the blocked call");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "put";
  uint64_t seed = mu_start("finalize_thread");
  if (strcmp(mode, "put") == 0) {
    run_put(seed);
  } else if (strcmp(mode, "wait") == 0) {
    run_wait();
  } else {
    fprintf(stderr, "usage: finalize_thread put|wait\n");
    return 2;
  }
  /* The runtime is gone: a call from main fails too, with one line. */
  int pe = 0;
  MU_CAPTURE(pe = rocshmem_my_pe());
  CHECK(pe == -1, "rocshmem_my_pe after finalize gave %d", pe);
  mu_expect_line(__LINE__, "rocshmem_my_pe", "called after rocshmem_finalize", NULL);
  TEST_DONE("finalize_thread");
  return tu_failures != 0;
}
