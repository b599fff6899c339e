/* Faults: a PE that exits, is killed (SIGKILL) or calls rocshmem_global_exit while the others
 * are initialising or in a barrier. The others must end (non-zero, with a message) within the
 * bootstrap timeout instead of hanging, and no heap name may be left in /dev/shm.
 *
 * Two roles:
 *   faults pe ACTION K [STATUS]     one PE (under rocshmem-run, or started by the supervisor):
 *       barrier-exit    PE K exits with STATUS while the others are in barriers
 *       barrier-kill    PE K kills itself with SIGKILL while the others are in barriers
 *       exit-before-init  PE K exits with STATUS (0 allowed) before rocshmem_init
 *       kill-before-init  PE K kills itself with SIGKILL before rocshmem_init
 *       global-exit     PE K calls rocshmem_global_exit(STATUS) while the others are in barriers
 *       wait            every PE does barriers until something ends it (the supervisor kills one)
 *     A PE that is still alive after 30 s says so and exits 99.
 *   faults supervise SCENARIO N     not a PE: makes a unique id (and hosts the rendezvous), starts
 *     N PEs with unique-id init, provokes the fault, and checks every PE's exit status, how long
 *     they took, what they printed, and /dev/shm. Scenarios: kill-in-barrier, kill-at-start,
 *     kill-during-init (random moments, several rounds), global-exit, name-taken (a PE cannot
 *     create its heap: everyone's init fails and cleans up).
 * The launcher side (rocshmem-run's exit status) is checked by faults.sh with the pe role. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ the PE role */

static int pe_main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: faults pe ACTION K [STATUS]\n");
    return 2;
  }
  const char *action = argv[2];
  int k = atoi(argv[3]), status = argc > 4 ? atoi(argv[4]) : 1;
  /* Our rank before init: from the launcher or the supervisor. */
  const char *r = getenv("ROCSHMEM_RUN_RANK");
  if (!r) r = getenv("FAULTS_RANK");
  int rank = r ? atoi(r) : 0;
  alarm(60);

  if (strcmp(action, "kill-before-init") == 0 && rank == k) {
    fprintf(stderr, "faults: PE %d kills itself before rocshmem_init\n", rank);
    fflush(stderr);
    raise(SIGKILL);
  }
  if (strcmp(action, "exit-before-init") == 0 && rank == k) {
    fprintf(stderr, "faults: PE %d exits with %d before rocshmem_init\n", rank, status);
    return status;
  }
  const char *uid = getenv("FAULTS_UID");
  if (uid) {
    rocshmem_uniqueid_t id;
    for (int i = 0; i < ROCSHMEM_UNIQUE_ID_BYTES; i++) {
      unsigned v = 0;
      sscanf(uid + 2 * i, "%2x", &v);
      id.internal[i] = (uint8_t)v;
    }
    rocshmem_init_attr_t attr;
    rocshmem_set_attr_uniqueid_args(rank, atoi(getenv("FAULTS_NRANKS")), &id, &attr);
    if (rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr) != 0) {
      fprintf(stderr, "faults: PE %d: rocshmem_init_attr failed\n", rank);
      return 3;
    }
  } else {
    rocshmem_init();
  }
  int me = rocshmem_my_pe();
  const char *hex = getenv("ROCSHMEM_RUN_UNIQUEID");
  if (me == 0 && hex && strlen(hex) >= 96) printf("faults: job tag %.16s\n", hex + 80);
  /* Tell the supervisor we are up (one byte on fd 3, if it gave us one). */
  if (getenv("FAULTS_READY_FD")) {
    if (write(atoi(getenv("FAULTS_READY_FD")), "r", 1) != 1) return 4;
  }
  fflush(stdout);
  rocshmem_barrier_all();

  double t0 = now_s();
  int rounds = 0;
  while (now_s() - t0 < 30) {
    if (me == k && rounds == 20) {
      if (strcmp(action, "barrier-exit") == 0) {
        fprintf(stderr, "faults: PE %d exits with %d during the barriers\n", me, status);
        exit(status);
      }
      if (strcmp(action, "barrier-kill") == 0) {
        fprintf(stderr, "faults: PE %d kills itself\n", me);
        fflush(stderr);
        raise(SIGKILL);
      }
      if (strcmp(action, "global-exit") == 0) {
        sleep_ms(100); /* the others are in the next barrier */
        rocshmem_global_exit(status);
        fprintf(stderr, "faults: rocshmem_global_exit returned\n");
        return 98;
      }
    }
    rocshmem_barrier_all();
    rounds++;
    sleep_ms(2);
  }
  fprintf(stderr, "faults: PE %d survived 30 s of barriers (%d rounds)\n", me, rounds);
  return 99;
}

/* ------------------------------------------------------------------ the supervisor role */

static const char *self;
static char tmpdir[64];

typedef struct {
  pid_t pid;
  int status; /* raw waitpid status */
  double ended;
} pe_proc;

static void to_hex(const rocshmem_uniqueid_t *id, char *out) {
  for (int i = 0; i < ROCSHMEM_UNIQUE_ID_BYTES; i++) sprintf(out + 2 * i, "%02x", id->internal[i]);
}

static uint64_t job_tag(const rocshmem_uniqueid_t *id) {
  uint64_t t = 0;
  for (int i = 40; i < 48; i++) t = (t << 8) | id->internal[i];
  return t;
}

static int shm_leftovers(uint64_t tag, const char *except) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "rocshmem-%016" PRIx64 "-", tag);
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && (!except || strcmp(e->d_name, except) != 0)) {
      fprintf(stderr, "left in /dev/shm: %s\n", e->d_name);
      count++;
    }
  closedir(d);
  return count;
}

/* Starts PE `rank` of `n` running `faults pe ACTION K STATUS`; its stderr goes to a file. */
static pid_t start_pe(int rank, int n, const char *hex, const char *action, int k, int status, int ready_fd) {
  char r[16], nr[16], kk[16], st[16], e_uid[300], e_rank[32], e_n[32], e_fd[32], errpath[128];
  snprintf(r, sizeof r, "%d", rank);
  snprintf(nr, sizeof nr, "%d", n);
  snprintf(kk, sizeof kk, "%d", k);
  snprintf(st, sizeof st, "%d", status);
  snprintf(e_uid, sizeof e_uid, "FAULTS_UID=%s", hex);
  snprintf(e_rank, sizeof e_rank, "FAULTS_RANK=%d", rank);
  snprintf(e_n, sizeof e_n, "FAULTS_NRANKS=%d", n);
  snprintf(e_fd, sizeof e_fd, "FAULTS_READY_FD=%d", ready_fd);
  snprintf(errpath, sizeof errpath, "%s/pe%d.err", tmpdir, rank);
  char *envp[512];
  int c = 0;
  for (char **e = environ; *e && c < 500; e++)
    if (strncmp(*e, "ROCSHMEM_RUN_", 13) != 0 && strncmp(*e, "FAULTS_", 7) != 0) envp[c++] = *e;
  envp[c++] = e_uid;
  envp[c++] = e_rank;
  envp[c++] = e_n;
  envp[c++] = e_fd;
  envp[c] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const char *argv[] = {self, "pe", action, kk, st, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0, "posix_spawn: %s", strerror(rc));
  return pid;
}

static void read_err(int rank, char *buf, size_t cap) {
  char path[128];
  snprintf(path, sizeof path, "%s/pe%d.err", tmpdir, rank);
  FILE *f = fopen(path, "r");
  size_t got = f ? fread(buf, 1, cap - 1, f) : 0;
  buf[got] = 0;
  if (f) fclose(f);
}

/* Waits for every PE (at most `limit` seconds from t0, then kills the rest). */
static void reap(pe_proc *pes, int n, double t0, double limit) {
  int left = n;
  while (left > 0) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid > 0) {
      for (int i = 0; i < n; i++)
        if (pes[i].pid == pid) {
          pes[i].status = st;
          pes[i].ended = now_s() - t0;
          left--;
        }
      continue;
    }
    if (now_s() - t0 > limit) {
      for (int i = 0; i < n; i++)
        if (pes[i].ended < 0) {
          CHECK(0, "PE %d still running after %.1f s: killing it", i, limit);
          kill(pes[i].pid, SIGKILL);
        }
      limit += 1000;
    }
    sleep_ms(5);
  }
}

static const char *describe(int st, char *buf) {
  if (WIFSIGNALED(st))
    sprintf(buf, "killed by signal %d", WTERMSIG(st));
  else
    sprintf(buf, "exit %d", WEXITSTATUS(st));
  return buf;
}

/* One supervised run of scenario `sc` with n PEs; returns nothing, records failures. */
static void supervise_once(const char *sc, int n, double timeout, uint64_t *rnd) {
  rocshmem_uniqueid_t id;
  REQUIRE(rocshmem_get_uniqueid(&id) == 0, "rocshmem_get_uniqueid");
  char hex[2 * ROCSHMEM_UNIQUE_ID_BYTES + 1];
  to_hex(&id, hex);
  uint64_t tag = job_tag(&id);
  int victim = n > 1 ? 1 + (int)(tu_next(rnd) % (uint64_t)(n - 1)) : 0;
  const char *action = "wait";
  int status = 1;
  char decoy[64] = "";
  if (strcmp(sc, "global-exit") == 0) {
    action = "global-exit";
    status = 7;
  }
  if (strcmp(sc, "name-taken") == 0) {
    /* PE `victim` will find its heap's name taken (names exist with the /dev/shm backing). */
    setenv("ROCSHMEM_SHM_BACKING", "posix", 1);
    snprintf(decoy, sizeof decoy, "rocshmem-%016" PRIx64 "-%d", tag, victim);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/%s", decoy);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    REQUIRE(fd >= 0, "creating %s: %s", path, strerror(errno));
    close(fd);
  }
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0, "pipe");
  pe_proc pes[64];
  double t0 = now_s();
  for (int r = 0; r < n; r++) {
    pes[r].pid = start_pe(r, n, hex, action, victim, status, pipefd[1]);
    pes[r].ended = -1;
  }
  close(pipefd[1]);
  double fault_at = 0;
  if (strcmp(sc, "kill-in-barrier") == 0) {
    /* everyone is up and in barriers */
    int up = 0;
    char b;
    while (up < n && read(pipefd[0], &b, 1) == 1) up++;
    CHECK(up == n, "only %d of %d PEs came up", up, n);
    sleep_ms(50);
    fault_at = now_s() - t0;
    kill(pes[victim].pid, SIGKILL);
  } else if (strcmp(sc, "kill-at-start") == 0) {
    fault_at = now_s() - t0;
    kill(pes[victim].pid, SIGKILL);
  } else if (strcmp(sc, "kill-during-init") == 0) {
    sleep_ms((int)(tu_next(rnd) % 40));
    fault_at = now_s() - t0;
    kill(pes[victim].pid, SIGKILL);
  }
  reap(pes, n, t0, fault_at + timeout + 10);
  close(pipefd[0]);

  char d[64], err[8192];
  for (int r = 0; r < n; r++) {
    int st = pes[r].status;
    read_err(r, err, sizeof err);
    if (strcmp(sc, "global-exit") == 0) {
      CHECK(WIFEXITED(st) && WEXITSTATUS(st) == status, "global-exit: PE %d: %s, want exit %d\n%s", r, describe(st, d), status, err);
      continue;
    }
    if (strcmp(sc, "name-taken") == 0) {
      CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "name-taken: PE %d: %s, want its init to fail (exit 3)\n%s", r,
            describe(st, d), err);
      CHECK(strstr(err, "rocshmem_init_attr") != NULL, "name-taken: PE %d says:\n%s", r, err);
      continue;
    }
    if (r == victim) {
      CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: the victim PE %d: %s", sc, r, describe(st, d));
      continue;
    }
    /* a survivor: ended non-zero, soon, with a message */
    CHECK(!(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 99)), "%s: PE %d: %s after PE %d was killed\n%s", sc, r,
          describe(st, d), victim, err);
    CHECK(pes[r].ended - fault_at < timeout + 3, "%s: PE %d took %.1f s to end after the kill (timeout %.1f s)", sc, r,
          pes[r].ended - fault_at, timeout);
    CHECK(strstr(err, "rocshmem") != NULL && hu_count_lines(err) >= 1, "%s: PE %d ended without a message", sc, r);
    if (strcmp(sc, "kill-in-barrier") == 0) {
      char who[16];
      snprintf(who, sizeof who, "PE %d", victim);
      CHECK(strstr(err, who) != NULL, "%s: PE %d's message does not name the dead %s:\n%s", sc, r, who, err);
    }
  }
  CHECK(shm_leftovers(tag, decoy[0] ? decoy : NULL) == 0, "%s: heap names left in /dev/shm", sc);
  if (decoy[0]) {
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/%s", decoy);
    unlink(path);
  }
  double last = 0;
  for (int r = 0; r < n; r++)
    if (pes[r].ended > last) last = pes[r].ended;
  printf("faults supervise %s: %d PEs (victim %d) all ended within %.2f s\n", sc, n, victim, last);
  fflush(stdout);
}

static int supervise(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: faults supervise SCENARIO N\n");
    return 2;
  }
  const char *sc = argv[2];
  int n = atoi(argv[3]);
  REQUIRE(n >= 1 && n <= 64, "N must be 1..64");
  alarm(240);
  const char *t = getenv("ROCSHMEM_BOOTSTRAP_TIMEOUT");
  double timeout = t && *t ? atof(t) : 5.0;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rocshmem-faults-XXXXXX");
  REQUIRE(mkdtemp(tmpdir) != NULL, "mkdtemp");
  uint64_t seed = tu_local_seed();
  printf("faults supervise %s: seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", sc, seed, seed);
  uint64_t rnd = tu_stream(seed, 0, 1);
  int rounds = strcmp(sc, "kill-during-init") == 0 ? 6 : 1;
  for (int i = 0; i < rounds; i++) supervise_once(sc, n, timeout, &rnd);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  if (tu_failures) fprintf(stderr, "faults supervise %s: %d check(s) failed\n", sc, tu_failures);
  return tu_failures != 0;
}

int main(int argc, char **argv) {
  self = argv[0];
  if (argc >= 2 && strcmp(argv[1], "pe") == 0) return pe_main(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "supervise") == 0) return supervise(argc, argv);
  fprintf(stderr, "usage: faults pe ACTION K [STATUS] | faults supervise SCENARIO N\n");
  return 2;
}
