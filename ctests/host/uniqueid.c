/* Unique-id initialisation of processes that no launcher started.
 *
 *   uniqueid N          rank 0: rocshmem_get_uniqueid, start N-1 copies of this program with
 *                       posix_spawn (rank, nranks and the id in hex on their command line),
 *                       then every process calls rocshmem_set_attr_uniqueid_args +
 *                       rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID), exchanges random data
 *                       around the ring and checks what it received.
 *   uniqueid --errors   failures that must come back as a non-zero return with one line naming
 *                       the call, within the bootstrap timeout, never a hang: a garbage id, a
 *                       zero id, a wrong secret, a stale id (its maker exited), mismatched
 *                       nranks, a rank outside 0..nranks-1, a bad flags value, different
 *                       ROCSHMEM_HEAP_SIZE on two PEs (and then no heap name left in /dev/shm);
 *                       after all that a good init in the same process still works.
 * Internal: --rank R --nranks N --uid HEX [--expect-fail WORD] starts one PE; --print-uid makes
 * an id, prints it in hex and exits (a stale id for --errors). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>

extern char **environ;

static const char *self_path;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void to_hex(const rocshmem_uniqueid_t *id, char *out) {
  for (int i = 0; i < ROCSHMEM_UNIQUE_ID_BYTES; i++) sprintf(out + 2 * i, "%02x", id->internal[i]);
}

static int from_hex(const char *s, rocshmem_uniqueid_t *id) {
  if (strlen(s) != 2 * ROCSHMEM_UNIQUE_ID_BYTES) return -1;
  for (int i = 0; i < ROCSHMEM_UNIQUE_ID_BYTES; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
    id->internal[i] = (uint8_t)v;
  }
  return 0;
}

/* The job tag inside an id (bytes 40..47, big-endian) names its heaps in /dev/shm. */
static uint64_t job_tag(const rocshmem_uniqueid_t *id) {
  uint64_t t = 0;
  for (int i = 40; i < 48; i++) t = (t << 8) | id->internal[i];
  return t;
}

/* Number of /dev/shm entries of job `tag`. */
static int shm_leftovers(uint64_t tag) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "rocshmem-%016" PRIx64 "-", tag);
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
      fprintf(stderr, "left in /dev/shm: %s\n", e->d_name);
      count++;
    }
  closedir(d);
  return count;
}

/* Starts this program as PE `rank` of `nranks` with `hex`; extra environment entries in env. */
static pid_t spawn_pe(int rank, int nranks, const char *hex, const char *expect, const char *env_extra) {
  char r[16], nr[16];
  snprintf(r, sizeof r, "%d", rank);
  snprintf(nr, sizeof nr, "%d", nranks);
  const char *argv[12] = {self_path, "--rank", r, "--nranks", nr, "--uid", hex, NULL};
  if (expect) {
    argv[7] = "--expect-fail";
    argv[8] = expect;
    argv[9] = NULL;
  }
  char **envp = environ;
  char *extra[256];
  if (env_extra) {
    int k = 0;
    for (char **e = environ; *e && k < 250; e++)
      if (strncmp(*e, "ROCSHMEM_HEAP_SIZE=", 19) != 0) extra[k++] = *e;
    extra[k++] = (char *)env_extra;
    extra[k] = NULL;
    envp = extra;
  }
  pid_t pid;
  int rc = posix_spawn(&pid, self_path, NULL, NULL, (char *const *)argv, envp);
  REQUIRE(rc == 0, "posix_spawn(%s): %s", self_path, strerror(rc));
  return pid;
}

static int wait_pe(pid_t pid, const char *what) {
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return -1;
  if (WIFSIGNALED(st)) {
    fprintf(stderr, "%s: killed by signal %d\n", what, WTERMSIG(st));
    return 128 + WTERMSIG(st);
  }
  if (WEXITSTATUS(st) != 0) fprintf(stderr, "%s: exit status %d\n", what, WEXITSTATUS(st));
  return WEXITSTATUS(st);
}

/* What every PE does once initialised: identity checks and a ring of random data. */
static void exchange(int rank, int nranks) {
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  CHECK(me == rank && n == nranks, "my_pe/n_pes = %d/%d, want %d/%d", me, n, rank, nranks);
  uint64_t seed = hu_agree_seed("uniqueid");
  int *pids = (int *)rocshmem_calloc((size_t)n, sizeof(int));
  REQUIRE(pids != NULL, "rocshmem_calloc");
  for (int p = 0; p < n; p++) rocshmem_int_p(&pids[me], (int)getpid(), p);
  rocshmem_barrier_all();
  for (int p = 0; p < n; p++)
    for (int q = p + 1; q < n; q++) CHECK(pids[p] != pids[q], "PEs %d and %d are the same process %d", p, q, pids[p]);
  const size_t sizes[] = {1, 100, 4096, 65537, (size_t)1 << 20};
  size_t max = (size_t)1 << 20;
  unsigned char *buf = (unsigned char *)rocshmem_malloc(max), *src = (unsigned char *)malloc(max),
                *want = (unsigned char *)malloc(max);
  REQUIRE(buf && src && want, "buffers");
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int i = 0; i < 5; i++) {
    hu_fill(src, sizes[i], seed, me, (uint64_t)i);
    rocshmem_putmem(buf, src, sizes[i], next);
    rocshmem_barrier_all();
    hu_fill(want, sizes[i], seed, prev, (uint64_t)i);
    long d = hu_first_diff(buf, want, sizes[i]);
    CHECK(d < 0, "%zu bytes from PE %d differ at byte %ld", sizes[i], prev, d);
    /* and read the next PE's copy back */
    rocshmem_getmem(src, buf, sizes[i], next);
    hu_fill(want, sizes[i], seed, me, (uint64_t)i);
    d = hu_first_diff(src, want, sizes[i]);
    CHECK(d < 0, "getmem of %zu bytes from PE %d differs at byte %ld", sizes[i], next, d);
    rocshmem_barrier_all();
  }
  rocshmem_free(buf);
  rocshmem_free(pids);
  free(src);
  free(want);
}

/* One PE started by rank 0. With `expect`, init must fail and its message contain `expect`. */
static int child(int rank, int nranks, const char *hex, const char *expect) {
  alarm(60); /* never outlive a broken parent */
  const char *delay = getenv("ROCSHMEM_TEST_DELAY_MS");
  if (delay) usleep((useconds_t)atoi(delay) * 1000);
  rocshmem_uniqueid_t id;
  REQUIRE(from_hex(hex, &id) == 0, "bad hex id on the command line");
  rocshmem_init_attr_t attr;
  REQUIRE(rocshmem_set_attr_uniqueid_args(rank, nranks, &id, &attr) == 0, "set_attr_uniqueid_args");
  if (expect) {
    char err[4096];
    double t0 = now_s();
    hu_capture c = hu_capture_begin();
    int rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
    hu_capture_end(c, err, sizeof err);
    double dt = now_s() - t0;
    if (rc != 0 && strstr(err, expect) && strstr(err, "rocshmem_init_attr") && hu_count_lines(err) == 1 && dt < 10) return 0;
    fprintf(stderr, "child %d: init_attr = %d after %.1f s, want non-zero with one line containing '%s'; stderr:\n%s", rank,
            rc, dt, expect, err);
    if (rc == 0) rocshmem_finalize();
    return 1;
  }
  int rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
  REQUIRE(rc == 0, "rank %d: rocshmem_init_attr = %d", rank, rc);
  exchange(rank, nranks);
  rocshmem_finalize();
  if (tu_failures) fprintf(stderr, "PE %d: uniqueid: %d check(s) failed\n", rank, tu_failures);
  return tu_failures != 0;
}

static int job(int nranks) {
  alarm(90);
  rocshmem_uniqueid_t id;
  int rc = rocshmem_get_uniqueid(&id);
  REQUIRE(rc == 0, "rocshmem_get_uniqueid = %d", rc);
  char hex[2 * ROCSHMEM_UNIQUE_ID_BYTES + 1];
  to_hex(&id, hex);
  pid_t kids[4096];
  for (int r = 1; r < nranks; r++) kids[r] = spawn_pe(r, nranks, hex, NULL, NULL);
  rocshmem_init_attr_t attr;
  REQUIRE(rocshmem_set_attr_uniqueid_args(0, nranks, &id, &attr) == 0, "set_attr_uniqueid_args");
  CHECK(attr.rank == 0 && attr.nranks == nranks && attr.mpi_comm == NULL, "attr filled: %d/%d/%p", attr.rank, attr.nranks,
        attr.mpi_comm);
  CHECK(memcmp(&attr.uid, &id, sizeof id) == 0, "attr.uid is not the id");
  rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
  REQUIRE(rc == 0, "rank 0: rocshmem_init_attr = %d", rc);
  exchange(0, nranks);
  rocshmem_finalize();
  int bad = 0;
  for (int r = 1; r < nranks; r++) {
    char what[32];
    snprintf(what, sizeof what, "PE %d", r);
    int st = wait_pe(kids[r], what);
    if (st != 0) {
      fprintf(stderr, "PE %d exited with status %d\n", r, st);
      bad++;
    }
  }
  CHECK(shm_leftovers(job_tag(&id)) == 0, "heap names left in /dev/shm");
  if (tu_failures == 0 && bad == 0) printf("uniqueid: %d processes initialised by unique id, data checked\n", nranks);
  return tu_failures != 0 || bad != 0;
}

/* init_attr with `id` as `rank` of `nranks` must fail within `limit` seconds with one line
 * naming the call and containing `word`. */
static void expect_init_fails(rocshmem_uniqueid_t *id, int rank, int nranks, const char *word, double limit, const char *what) {
  rocshmem_init_attr_t attr;
  REQUIRE(rocshmem_set_attr_uniqueid_args(rank, nranks, id, &attr) == 0, "set_attr_uniqueid_args");
  char err[4096];
  double t0 = now_s();
  hu_capture c = hu_capture_begin();
  int rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
  hu_capture_end(c, err, sizeof err);
  double dt = now_s() - t0;
  REQUIRE(rc != 0, "%s: rocshmem_init_attr succeeded", what);
  CHECK(dt < limit, "%s: failing took %.1f s (limit %.1f)", what, dt, limit);
  CHECK(strstr(err, "rocshmem_init_attr") && hu_count_lines(err) == 1, "%s: want one line naming the call:\n%s", what, err);
  CHECK(strstr(err, word) != NULL, "%s: the message does not say '%s':\n%s", what, word, err);
  printf("uniqueid --errors: %s: refused after %.2f s\n", what, dt);
}

/* An id made by another process that has exited since. */
static void stale_id(rocshmem_uniqueid_t *id) {
  int fds[2];
  REQUIRE(pipe(fds) == 0, "pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  const char *argv[] = {self_path, "--print-uid", NULL};
  pid_t pid;
  REQUIRE(posix_spawn(&pid, self_path, &fa, NULL, (char *const *)argv, environ) == 0, "posix_spawn");
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char hex[2 * ROCSHMEM_UNIQUE_ID_BYTES + 2] = {0};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof hex - 1 && (r = read(fds[0], hex + got, sizeof hex - 1 - got)) > 0) got += (size_t)r;
  close(fds[0]);
  REQUIRE(wait_pe(pid, "--print-uid") == 0, "the id maker failed");
  hex[2 * ROCSHMEM_UNIQUE_ID_BYTES] = 0;
  REQUIRE(from_hex(hex, id) == 0, "bad id from the maker: '%s'", hex);
}

static int errors(void) {
  alarm(120);
  const char *t = getenv("ROCSHMEM_BOOTSTRAP_TIMEOUT");
  double timeout = t && *t ? atof(t) : 5.0;
  double limit = timeout + 4.0;
  rocshmem_uniqueid_t id;
  char hex[2 * ROCSHMEM_UNIQUE_ID_BYTES + 1];
  uint64_t seed = tu_local_seed();
  printf("uniqueid --errors: seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", seed, seed);
  uint64_t st = tu_stream(seed, 0, 99);
  char err[4096];

  /* Before init, queries say so (-1), they do not crash. */
  hu_capture c = hu_capture_begin();
  int pe = rocshmem_my_pe();
  hu_capture_end(c, err, sizeof err);
  CHECK(pe == -1 && strstr(err, "rocshmem_my_pe"), "my_pe before init = %d:\n%s", pe, err);

  /* Garbage and all-zero ids: refused at once. */
  hu_fill(&id, sizeof id, tu_next(&st), 0, 1);
  expect_init_fails(&id, 1, 2, "unique id", 2.0, "garbage id");
  memset(&id, 0, sizeof id);
  expect_init_fails(&id, 0, 1, "unique id", 2.0, "zero id");

  /* Bad arguments of the attribute calls. */
  REQUIRE(rocshmem_get_uniqueid(&id) == 0, "rocshmem_get_uniqueid");
  rocshmem_init_attr_t attr;
  c = hu_capture_begin();
  int rc1 = rocshmem_set_attr_uniqueid_args(2, 2, &id, &attr);
  int rc2 = rocshmem_set_attr_uniqueid_args(-1, 2, &id, &attr);
  int rc3 = rocshmem_set_attr_uniqueid_args(0, 0, &id, &attr);
  int rc4 = rocshmem_set_attr_uniqueid_args(0, 1, NULL, &attr);
  int rc5 = rocshmem_get_uniqueid(NULL);
  int rc6 = rocshmem_init_attr(7, &attr);
  int rc7 = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, NULL);
  REQUIRE(rocshmem_set_attr_uniqueid_args(0, 2, &id, &attr) == 0, "set_attr");
  attr.rank = 2; /* a rank outside the job, written by hand */
  int rc8 = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
  hu_capture_end(c, err, sizeof err);
  CHECK(rc1 && rc2 && rc3 && rc4 && rc5 && rc6 && rc7 && rc8, "bad arguments accepted: %d %d %d %d %d %d %d %d", rc1, rc2, rc3,
        rc4, rc5, rc6, rc7, rc8);
  CHECK(hu_count_lines(err) == 8, "want one line per bad call, got:\n%s", err);
  CHECK(strstr(err, "rocshmem_set_attr_uniqueid_args") && strstr(err, "rocshmem_get_uniqueid") && strstr(err, "rocshmem_init_attr"),
        "messages do not name the calls:\n%s", err);

  /* A wrong secret (the id's hub is in this process): refused at once. */
  rocshmem_uniqueid_t forged = id;
  forged.internal[30] ^= 0x40;
  expect_init_fails(&forged, 0, 1, "wrong secret", 2.0, "wrong secret");

  /* A stale id: its maker has exited, nobody listens. */
  stale_id(&id);
  expect_init_fails(&id, 0, 2, "rendezvous", limit, "stale id");

  /* Mismatched nranks: we join first as 0 of 2; the other says 1 of 3 and is refused; we time
   * out waiting for PE 1. */
  REQUIRE(rocshmem_get_uniqueid(&id) == 0, "rocshmem_get_uniqueid");
  to_hex(&id, hex);
  setenv("ROCSHMEM_TEST_DELAY_MS", "300", 1);
  pid_t kid = spawn_pe(1, 3, hex, "says the job has", NULL);
  unsetenv("ROCSHMEM_TEST_DELAY_MS");
  expect_init_fails(&id, 0, 2, "timed out", limit, "PE 1 never joins");
  CHECK(wait_pe(kid, "mismatched PE") == 0, "the PE with the wrong nranks was not refused as expected");

  /* Different ROCSHMEM_HEAP_SIZE: both PEs fail, say why, and leave no heap name behind. */
  REQUIRE(rocshmem_get_uniqueid(&id) == 0, "rocshmem_get_uniqueid");
  to_hex(&id, hex);
  setenv("ROCSHMEM_HEAP_SIZE", "32M", 1);
  kid = spawn_pe(1, 2, hex, "ROCSHMEM_HEAP_SIZE", "ROCSHMEM_HEAP_SIZE=48M");
  expect_init_fails(&id, 0, 2, "ROCSHMEM_HEAP_SIZE", limit, "heap sizes differ");
  CHECK(wait_pe(kid, "other heap size") == 0, "the PE with the other heap size did not fail as expected");
  CHECK(shm_leftovers(job_tag(&id)) == 0, "a failed init left its heap name in /dev/shm");

  /* After all that, a good init in this process works. */
  REQUIRE(rocshmem_get_uniqueid(&id) == 0, "rocshmem_get_uniqueid");
  REQUIRE(rocshmem_set_attr_uniqueid_args(0, 1, &id, &attr) == 0, "set_attr");
  int rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr);
  REQUIRE(rc == 0, "init after failed inits = %d", rc);
  exchange(0, 1);
  rocshmem_finalize();
  TEST_DONE("uniqueid --errors");
  return tu_failures != 0;
}

int main(int argc, char **argv) {
  self_path = argv[0];
  if (argc >= 7 && strcmp(argv[1], "--rank") == 0) {
    const char *expect = argc >= 9 && strcmp(argv[7], "--expect-fail") == 0 ? argv[8] : NULL;
    return child(atoi(argv[2]), atoi(argv[4]), argv[6], expect);
  }
  if (argc == 2 && strcmp(argv[1], "--errors") == 0) return errors();
  if (argc == 2 && strcmp(argv[1], "--print-uid") == 0) {
    rocshmem_uniqueid_t id;
    char hex[2 * ROCSHMEM_UNIQUE_ID_BYTES + 1];
    if (rocshmem_get_uniqueid(&id) != 0) return 1;
    to_hex(&id, hex);
    printf("%s\n", hex);
    return 0;
  }
  int n = argc >= 2 ? atoi(argv[1]) : 2;
  REQUIRE(n >= 1 && n <= 256, "usage: uniqueid N | --errors");
  return job(n);
}
