/* The situations a deployment meets first, as a user's program meets them (run by
 * hardening.sh under rocshmem-run):
 *   hardening ring [bytes]   every PE fills `bytes` of heap (default 96 MiB: more than a 64 MiB
 *                            /dev/shm) with random data, puts 1 MiB of it to the next PE, and
 *                            reads the end of the previous PE's buffer back; all checked.
 *   hardening flood          PE 0, before rocshmem_init, attacks the job's rendezvous: frames
 *                            announcing 1 GiB followed by junk, idle and half-sent connections,
 *                            300 connections at once; checks rocshmem-run's peak memory and
 *                            thread count, then joins the job (while the attack connections are
 *                            still open), runs `ring`, and checks the hub closed every attack
 *                            connection.
 *   hardening hang [s]       PE s (default 1) stops itself (SIGSTOP) after init; PE s-1 waits
 *                            in rocshmem_int_wait_until for a flag PE s would set, the others
 *                            in rocshmem_barrier_all: ROCSHMEM_HANG_TIMEOUT must end the job.
 *   hardening hang-hub       PE 0 stops rocshmem-run (the rendezvous), PE 1 stops itself:
 *                            PE 0 must stop itself after its timeout, with its own report.
 *   hardening slow <ms>      PE 0 computes for <ms> before the barrier (shorter than the hang
 *                            timeout): the job must complete.
 *   hardening initfail [V=x] the last PE's init fails (V=x, default ROCSHMEM_MAX_NUM_CONTEXTS=-1,
 *                            set in its own environment): every PE must say which PE failed and
 *                            why.
 *   hardening preinit        every PE asks for its number before rocshmem_init (refused with
 *                            a line that must carry the PE number rocshmem-run gave it), then
 *                            runs `ring`.
 *   hardening late           PE 0 exits with status 3 before init, PE 1 computes for 60 s before
 *                            its init, the others init: rocshmem-run must stop PE 1 at once.
 *   hardening deadlock [ms]  PE 0 waits in rocshmem_int_wait_until for a flag, the others in
 *                            rocshmem_barrier_all: a deadlock; with <ms>, the last PE computes
 *                            for <ms>, then sets the flag and joins the barrier (a long wait
 *                            that ends). Prints "deadlock: waiting" on each PE once it waits. */
#include <rocshmem/rocshmem.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "test_util.h"

static void fill(unsigned char *b, size_t n, uint64_t seed, int pe, uint64_t salt) {
  uint64_t st = tu_stream(seed, pe, salt);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = tu_next(&st);
    memcpy(b + i, &v, 8);
  }
  for (; i < n; i++) b[i] = (unsigned char)tu_next(&st);
}

/* PE 0's seed on every PE (through the heap), printed for replay. */
static uint64_t agree_seed(const char *what) {
  uint64_t *slot = (uint64_t *)rocshmem_malloc(8);
  REQUIRE(slot != NULL, "rocshmem_malloc(8)");
  if (rocshmem_my_pe() == 0) {
    uint64_t s = tu_local_seed();
    for (int p = 0; p < rocshmem_n_pes(); p++) rocshmem_putmem(slot, &s, 8, p);
    printf("%s: %d PEs, seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", what, rocshmem_n_pes(), s, s);
    fflush(stdout);
  }
  rocshmem_barrier_all();
  uint64_t seed = *slot;
  rocshmem_barrier_all();
  rocshmem_free(slot);
  return seed;
}

static int ring(size_t bytes) {
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  uint64_t seed = agree_seed("ring");
  const size_t chunk = (size_t)1 << 20;
  if (bytes < 4 * chunk) bytes = 4 * chunk;
  unsigned char *heap = (unsigned char *)rocshmem_malloc(bytes);
  REQUIRE(heap != NULL, "rocshmem_malloc(%zu)", bytes);
  unsigned char *want = (unsigned char *)malloc(bytes);
  REQUIRE(want != NULL, "malloc");
  /* Touch every page of this PE's share of the heap (past a 64 MiB /dev/shm). */
  fill(heap, bytes, seed, me, 1);
  rocshmem_barrier_all();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  /* The first MiB of mine goes into the next PE's last MiB. */
  rocshmem_putmem(heap + bytes - chunk, heap, chunk, next);
  rocshmem_barrier_all();
  fill(want, bytes, seed, prev, 1);
  CHECK(memcmp(heap + bytes - chunk, want, chunk) == 0, "the MiB PE %d put differs", prev);
  /* A get of the previous PE's middle, which it wrote itself. */
  size_t mid = bytes / 2 - chunk / 2;
  unsigned char *got = (unsigned char *)malloc(chunk);
  rocshmem_getmem(got, heap + mid, chunk, prev);
  CHECK(memcmp(got, want + mid, chunk) == 0, "%zu bytes read from PE %d's heap at %zu differ", chunk, prev, mid);
  rocshmem_barrier_all();
  free(got);
  free(want);
  rocshmem_free(heap);
  return 0;
}

/* --- flood --- */

static long proc_status(pid_t pid, const char *key) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, k) == 0 && line[k] == ':') v = strtol(line + k + 1, NULL, 10);
  fclose(f);
  return v;
}

static int hub_connect(const struct sockaddr_in *a) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(s >= 0, "socket: %s", strerror(errno));
  REQUIRE(connect(s, (const struct sockaddr *)a, sizeof *a) == 0, "connect to the hub: %s", strerror(errno));
  return s;
}

static int flood_then_ring(void) {
  const char *hex = getenv("ROCSHMEM_RUN_UNIQUEID");
  const char *rank = getenv("ROCSHMEM_RUN_RANK");
  REQUIRE(hex && strlen(hex) >= 48 && rank, "flood runs under rocshmem-run");
  if (atoi(rank) == 0) {
    unsigned char id[24];
    for (int i = 0; i < 24; i++) sscanf(hex + 2 * i, "%2hhx", &id[i]);
    REQUIRE(id[5] == 4, "the hub listens on IPv4 (family %d)", id[5]);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    memcpy(&a.sin_port, id + 6, 2);
    memcpy(&a.sin_addr, id + 8, 4);
    pid_t hub = getppid(); /* rocshmem-run hosts the hub */
    long threads0 = proc_status(hub, "Threads");
    enum { FLOODS = 8, MANY = 300 };
    static int socks[FLOODS + MANY + 1];
    int ns = 0;
    /* 5 bytes announcing a 1 GiB Hello, then 32 MiB of junk each. */
    static unsigned char junk[1 << 16];
    memset(junk, 0x5a, sizeof junk);
    const unsigned char header[5] = {0x40, 0, 0, 0, 1};
    size_t junk_sent = 0;
    for (int i = 0; i < FLOODS; i++) {
      int s = hub_connect(&a);
      socks[ns++] = s;
      struct timeval tv = {2, 0};
      setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (send(s, header, 5, MSG_NOSIGNAL) != 5) continue;
      for (size_t sent = 0; sent < ((size_t)32 << 20);) {
        ssize_t w = send(s, junk, sizeof junk, MSG_NOSIGNAL);
        if (w <= 0) break; /* the hub closed it, or stopped reading */
        sent += (size_t)w;
        junk_sent += (size_t)w;
      }
    }
    /* A half-sent header, then many idle connections. */
    int half = hub_connect(&a);
    send(half, header, 3, MSG_NOSIGNAL);
    socks[ns++] = half;
    for (int i = 0; i < MANY; i++) socks[ns++] = hub_connect(&a);
    usleep(300 * 1000);
    long hwm = proc_status(hub, "VmHWM"), threads = proc_status(hub, "Threads");
    printf("flood: %zu junk bytes accepted by the hub; rocshmem-run peak RSS %ld kB, threads %ld -> %ld\n", junk_sent,
           hwm, threads0, threads);
    fflush(stdout);
    CHECK(hwm > 0 && hwm < 64 * 1024, "rocshmem-run's peak RSS is %ld kB after frames announcing 1 GiB", hwm);
    CHECK(threads > 0 && threads <= threads0 + 256 + 8,
          "rocshmem-run runs %ld threads with %d unauthenticated connections open (limit 256)", threads, MANY + 1);
    /* Beyond the limit the oldest are closed: the first idle connections are. */
    int evicted = 0;
    for (int i = FLOODS + 1; i < FLOODS + 1 + 20; i++) {
      char b;
      struct timeval tv = {0, 100 * 1000};
      setsockopt(socks[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      errno = 0;
      ssize_t r = recv(socks[i], &b, 1, 0);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) evicted++;
    }
    CHECK(evicted > 0, "none of the oldest idle connections was closed with %d open", MANY + 1);
    /* Join the job while the attack connections are still open. */
    rocshmem_init();
    ring((size_t)4 << 20);
    /* Every attack connection was closed by the hub (at once, or when its Hello deadline
     * passed). */
    int open = 0;
    for (int i = 0; i < ns; i++) {
      struct timeval tv = {6, 0};
      setsockopt(socks[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char b[16];
      ssize_t r = recv(socks[i], b, sizeof b, 0);
      if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) open++;
      close(socks[i]);
    }
    CHECK(open == 0, "%d of %d attack connections were left open by the hub", open, ns);
  } else {
    rocshmem_init();
    ring((size_t)4 << 20);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ring";
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(mode, "flood") == 0) {
    flood_then_ring();
  } else if (strcmp(mode, "initfail") == 0) {
    const char *rank = getenv("ROCSHMEM_RUN_RANK"), *nranks = getenv("ROCSHMEM_RUN_NRANKS");
    char setting[256] = "ROCSHMEM_MAX_NUM_CONTEXTS=-1";
    if (argc > 2) snprintf(setting, sizeof setting, "%s", argv[2]);
    char *eq = strchr(setting, '=');
    REQUIRE(eq != NULL, "initfail takes VAR=value");
    *eq = 0;
    if (rank && nranks && atoi(rank) == atoi(nranks) - 1) setenv(setting, eq + 1, 1);
    rocshmem_init(); /* exits with status 1 on every PE */
    fprintf(stderr, "FAIL: rocshmem_init returned on PE %d\n", rocshmem_my_pe());
    return 1;
  } else if (strcmp(mode, "late") == 0) {
    int pe = atoi(getenv("ROCSHMEM_RUN_RANK") ? getenv("ROCSHMEM_RUN_RANK") : "0");
    if (pe == 0) {
      usleep(200 * 1000);
      return 3;
    }
    if (pe == 1) sleep(60); /* busy in the program: rocshmem-run must stop it */
    rocshmem_init();        /* the others: the job ends while they wait for PE 0 */
    fprintf(stderr, "FAIL: PE %d's rocshmem_init returned after PE 0 exited\n", pe);
    return 1;
  } else {
    if (strcmp(mode, "preinit") == 0) {
      int pe = rocshmem_my_pe(); /* refused: -1 and one line naming this PE */
      if (pe != -1) fprintf(stderr, "FAIL: rocshmem_my_pe() before init returned %d\n", pe);
    }
    rocshmem_init();
    int me = rocshmem_my_pe();
    if (strcmp(mode, "ring") == 0) {
      ring(argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (size_t)96 << 20);
    } else if (strcmp(mode, "preinit") == 0) {
      ring((size_t)2 << 20);
    } else if (strcmp(mode, "deadlock") == 0) {
      int *flag = (int *)rocshmem_calloc(1, sizeof(int));
      int last = rocshmem_n_pes() - 1;
      REQUIRE(last >= 1 && flag, "deadlock needs 2 PEs");
      rocshmem_barrier_all();
      printf("deadlock: waiting\n");
      fflush(stdout);
      if (me == 0) {
        rocshmem_int_wait_until(flag, ROCSHMEM_CMP_EQ, 1);
      } else if (me == last && argc > 2) {
        usleep((useconds_t)atoi(argv[2]) * 1000);
        rocshmem_int_p(flag, 1, 0);
        rocshmem_quiet();
      }
      rocshmem_barrier_all();
      CHECK(me != 0 || *flag == 1, "PE 0 left its wait with flag %d", *flag);
      rocshmem_free(flag);
    } else if (strcmp(mode, "hang") == 0) {
      int *flag = (int *)rocshmem_calloc(1, sizeof(int));
      REQUIRE(rocshmem_n_pes() >= 3 && flag, "hang needs 3 PEs");
      rocshmem_barrier_all();
      /* argv[2]: the PE that stops (default 1); the one after it waits for its flag. */
      int stopped = argc > 2 ? atoi(argv[2]) : 1, waiter = (stopped + rocshmem_n_pes() - 1) % rocshmem_n_pes();
      if (me == stopped) {
        raise(SIGSTOP); /* never continued: the job must be ended by the watchdog */
        rocshmem_int_p(flag, 1, waiter);
      } else if (me == waiter) {
        rocshmem_int_wait_until(flag, ROCSHMEM_CMP_EQ, 1);
      }
      rocshmem_barrier_all();
      fprintf(stderr, "FAIL: PE %d got past a barrier with a stopped PE\n", me);
      return 1;
    } else if (strcmp(mode, "hang-hub") == 0) {
      /* The process hosting the rendezvous (rocshmem-run) and PE 1 are stopped: PE 0's report
       * reaches no one, so PE 0 must stop itself with its own report. */
      if (me == 0) kill(getppid(), SIGSTOP);
      if (me == 1) raise(SIGSTOP);
      rocshmem_barrier_all();
      fprintf(stderr, "FAIL: PE %d got past a barrier with a stopped PE\n", me);
      return 1;
    } else if (strcmp(mode, "slow") == 0) {
      if (me == 0) usleep((useconds_t)(argc > 2 ? atoi(argv[2]) : 1000) * 1000);
      rocshmem_barrier_all();
      ring((size_t)2 << 20);
    }
  }
  int failures = tu_failures;
  rocshmem_finalize();
  if (failures == 0) printf("hardening %s: passed\n", mode);
  return failures ? 1 : 0;
}
