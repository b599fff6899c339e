/* Bad input never crashes or hangs: every misuse returns the documented failure value and
 * prints exactly one line on stderr naming the PE ("PE ?" before init) and the call (before
 * init: the first such call of the process, see before_init.c); valid
 * no-ops (zero elements) print nothing and change nothing. Covered: calls before init, a
 * second init, invalid PEs, NULL and non-symmetric addresses (also a range running past the
 * heap end), calloc size overflow, a malloc larger than the heap, freeing pointers that are
 * not ours (foreign, interior, twice), bad comparison codes for wait/test, nelems 0, PEs
 * outside a team / active set, bad and destroyed team and context handles, calls after
 * finalize, and init after finalize (which ends the process with a message: rocshmem_init
 * cannot return an error).
 *
 * Run with ROCSHMEM_HEAP_SIZE=8M (the registration sets it) so that the heap end is known. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <spawn.h>
#include <stdint.h>
#include <sys/wait.h>

extern char **environ;

static char err[8192];
static char pe_tag[32] = "PE ?";

static void expect_lines(const char *call, int lines, int line) {
  int got = hu_count_lines(err);
  if (got != lines || (lines > 0 && (!strstr(err, call) || !strstr(err, pe_tag)))) {
    CHECK(0, "line %d: %s: want %d line(s) naming '%s' and '%s', got %d:\n%s", line, call, lines, pe_tag, call, got, err);
  }
}

/* Runs stmt with stderr captured; then exactly one line naming the call and the PE. */
#define REPORTS(call, stmt)                       \
  do {                                            \
    hu_capture c_ = hu_capture_begin();           \
    stmt;                                         \
    hu_capture_end(c_, err, sizeof err);          \
    expect_lines(call, 1, __LINE__);              \
  } while (0)

/* Runs stmt with stderr captured; then nothing was printed. */
#define SILENT(stmt)                              \
  do {                                            \
    hu_capture c_ = hu_capture_begin();           \
    stmt;                                         \
    hu_capture_end(c_, err, sizeof err);          \
    expect_lines("", 0, __LINE__);                \
  } while (0)

/* Child mode: init, finalize, init again. */
static int init_after_finalize(void) {
  rocshmem_init();
  rocshmem_finalize();
  rocshmem_init(); /* must end the process with a message, status 1 */
  printf("rocshmem_init after rocshmem_finalize returned\n");
  return 0;
}

/* Starts this program in child mode as a lone process (no launcher variables) and checks that
 * it ends with status 1 and a line naming rocshmem_init and finalize. */
static void check_init_after_finalize(const char *self) {
  char *envp[512];
  int k = 0;
  for (char **e = environ; *e && k < 510; e++)
    if (strncmp(*e, "ROCSHMEM_RUN_", 13) != 0 && strncmp(*e, "OMPI_", 5) != 0 && strncmp(*e, "PMIX_", 5) != 0 &&
        strncmp(*e, "ROCSHMEM_BACKEND=", 17) != 0) /* a lone process cannot use RO (no MPI) */
      envp[k++] = *e;
  envp[k] = NULL;
  int fds[2];
  REQUIRE(pipe(fds) == 0, "pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  const char *argv[] = {self, "--init-after-finalize", NULL};
  pid_t pid;
  REQUIRE(posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, envp) == 0, "posix_spawn");
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < sizeof err && (r = read(fds[0], err + got, sizeof err - 1 - got)) > 0) got += (size_t)r;
  err[got] = 0;
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "init after finalize: child status 0x%x (want exit 1)", st);
  CHECK(hu_count_lines(err) == 1 && strstr(err, "rocshmem_init") && strstr(err, "finalize"), "init after finalize said:\n%s", err);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--init-after-finalize") == 0) return init_after_finalize();
  int dummy = 0, provided = -1;
  rocshmem_ctx_t ctx;

  /* ---- before init: the first call says so (once per process), the rest fail silently ---- */
  /* Under rocshmem-run the line names the PE it started (ROCSHMEM_RUN_RANK) even before init. */
  if (getenv("ROCSHMEM_RUN_RANK")) snprintf(pe_tag, sizeof pe_tag, "PE %d", atoi(getenv("ROCSHMEM_RUN_RANK")));
  REPORTS("rocshmem_my_pe", CHECK(rocshmem_my_pe() == -1, "my_pe before init"));
  CHECK(strstr(err, "call rocshmem_init first") != NULL, "the line before init does not say what to do: %s", err);
  SILENT(CHECK(rocshmem_n_pes() == -1, "n_pes before init"));
  SILENT(CHECK(rocshmem_malloc(64) == NULL, "malloc before init"));
  SILENT(CHECK(rocshmem_calloc(1, 64) == NULL, "calloc before init"));
  SILENT(rocshmem_free(&dummy));
  SILENT(rocshmem_barrier_all());
  SILENT(rocshmem_putmem(&dummy, &dummy, 4, 0));
  SILENT(rocshmem_int_p(&dummy, 1, 0));
  SILENT(CHECK(rocshmem_ptr(&dummy, 0) == NULL, "ptr before init"));
  SILENT(CHECK(rocshmem_ctx_create(0, &ctx) != 0, "ctx_create before init"));
  SILENT(CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) == -1, "team_n_pes before init"));
  SILENT(rocshmem_finalize());
  /* ...and what needs no runtime works before init, silently. */
  SILENT(rocshmem_query_thread(&provided));
  CHECK(provided == ROCSHMEM_THREAD_MULTIPLE, "query_thread before init = %d", provided);
  int major = 0, minor = 0, patch = -1;
  SILENT(rocshmem_info_get_version(&major, &minor); rocshmem_vendor_get_version_info(&major, &minor, &patch));
  CHECK(patch >= 0, "vendor version before init");

  /* ---- init; a second init is reported and changes nothing ---- */
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  snprintf(pe_tag, sizeof pe_tag, "PE %d", me);
  uint64_t seed = hu_agree_seed("bad_input");
  REPORTS("rocshmem_init", rocshmem_init());
  REPORTS("rocshmem_init_thread", CHECK(rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided, NULL) != 0, "second init_thread"));
  rocshmem_init_attr_t attr;
  memset(&attr, 0, sizeof attr);
  attr.nranks = 1;
  REPORTS("rocshmem_init_attr", CHECK(rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr) != 0, "second init_attr"));
  CHECK(rocshmem_my_pe() == me && rocshmem_n_pes() == n, "a second init changed my_pe/n_pes");

  const size_t heap = hu_parse_size(getenv("ROCSHMEM_HEAP_SIZE"));
  int *sym = (int *)rocshmem_malloc(4096);
  REQUIRE(sym != NULL, "rocshmem_malloc");
  int *pattern = (int *)malloc(4096);
  hu_fill(pattern, 4096, seed, me, 1);
  memcpy(sym, pattern, 4096);
  int src[16] = {0}, local = 0;
  int next = (me + 1) % n;
  rocshmem_barrier_all();

  /* ---- invalid PEs ---- */
  REPORTS("rocshmem_putmem", rocshmem_putmem(sym, src, 8, n));
  REPORTS("rocshmem_putmem", rocshmem_putmem(sym, src, 8, -1));
  REPORTS("rocshmem_getmem", rocshmem_getmem(src, sym, 8, n + 3));
  REPORTS("rocshmem_int_p", rocshmem_int_p(sym, 7, n));
  REPORTS("rocshmem_int_g", CHECK(rocshmem_int_g(sym, -5) == 0, "int_g from PE -5"));
  REPORTS("rocshmem_int_atomic_fetch_add", CHECK(rocshmem_int_atomic_fetch_add(sym, 1, n) == 0, "fetch_add on PE n"));
  REPORTS("rocshmem_ptr", CHECK(rocshmem_ptr(sym, n) == NULL, "ptr to PE n"));
  REPORTS("rocshmem_ctx_putmem", rocshmem_ctx_putmem(ROCSHMEM_CTX_DEFAULT, sym, src, 8, INT32_MAX));

  /* ---- NULL and non-symmetric addresses ---- */
  REPORTS("rocshmem_putmem", rocshmem_putmem(NULL, src, 8, me));
  REPORTS("rocshmem_putmem", rocshmem_putmem(sym, NULL, 8, next));
  REPORTS("rocshmem_getmem", rocshmem_getmem(NULL, sym, 8, next));
  REPORTS("rocshmem_getmem", rocshmem_getmem(src, NULL, 8, next));
  REPORTS("rocshmem_putmem", rocshmem_putmem(&local, src, 4, next));
  REPORTS("rocshmem_getmem", rocshmem_getmem(src, &local, 4, next));
  REPORTS("rocshmem_int_p", rocshmem_int_p(pattern, 1, next)); /* libc heap memory */
  REPORTS("rocshmem_ctx_create", CHECK(rocshmem_ctx_create(0, NULL) != 0, "ctx_create(NULL)"));
  REPORTS("rocshmem_info_get_version", rocshmem_info_get_version(NULL, NULL));
  SILENT(CHECK(rocshmem_ptr(&local, me) == NULL, "rocshmem_ptr of a stack address"));
  if (heap >= (1u << 20)) {
    /* sym is the first block (offset 0, 4096 bytes); this one runs to the heap's end. */
    char *tail = (char *)rocshmem_malloc(heap - 4096);
    CHECK(tail != NULL, "rocshmem_malloc(heap - 4096)");
    if (tail) {
      REPORTS("rocshmem_putmem", rocshmem_putmem(tail + heap - 4096 - 8, src, 16, next));
      REPORTS("rocshmem_getmem", rocshmem_getmem(src, tail + heap - 4096 - 4, 8, next));
      SILENT(rocshmem_putmem(tail + heap - 4096 - 16, src, 16, me)); /* the last 16 bytes are fine */
    }
    rocshmem_free(tail);
  }

  /* ---- sizes ---- */
  REPORTS("rocshmem_calloc", CHECK(rocshmem_calloc(SIZE_MAX / 2 + 1, 2) == NULL, "calloc overflow"));
  REPORTS("rocshmem_calloc", CHECK(rocshmem_calloc(SIZE_MAX, SIZE_MAX) == NULL, "calloc overflow"));
  REPORTS("rocshmem_malloc", CHECK(rocshmem_malloc(SIZE_MAX) == NULL, "malloc(SIZE_MAX)"));
  CHECK(strstr(err, "ROCSHMEM_HEAP_SIZE") != NULL, "malloc(SIZE_MAX) message does not name ROCSHMEM_HEAP_SIZE:\n%s", err);
  REPORTS("rocshmem_align", CHECK(rocshmem_align(0, 64) == NULL, "align(0)"));
  REPORTS("rocshmem_align", CHECK(rocshmem_align(4, 64) == NULL, "align(4)"));
  SILENT(CHECK(rocshmem_calloc(0, 16) == NULL, "calloc(0, 16)"));
  REPORTS("rocshmem_putmem", rocshmem_putmem(sym, src, SIZE_MAX, next)); /* runs past the heap */
  REPORTS("rocshmem_int_put", rocshmem_int_put(sym, src, SIZE_MAX / 2, next)); /* bytes overflow */

  /* ---- 3.x registrations of buffers in a flat address space of all PEs: not supported, so
   * ROCSHMEM_ERROR and one line saying so (valid arguments), or naming the bad argument ---- */
  {
    static char flat[4096];
    const ptrdiff_t stride = (ptrdiff_t)sizeof flat;
    REPORTS("rocshmem_buffer_register_vmm",
            CHECK(rocshmem_buffer_register_vmm(flat, sizeof flat, me, n, stride) == ROCSHMEM_ERROR, "register_vmm"));
    CHECK(strstr(err, "not supported") != NULL, "register_vmm does not say it is not supported:\n%s", err);
    REPORTS("rocshmem_sym_buffer_register",
            CHECK(rocshmem_sym_buffer_register(flat, sizeof flat, me, n, stride) == ROCSHMEM_ERROR, "sym_buffer_register"));
    CHECK(strstr(err, "not supported") != NULL, "sym_buffer_register does not say it is not supported:\n%s", err);
    REPORTS("rocshmem_sym_buffer_register",
            CHECK(rocshmem_sym_buffer_register(flat, sizeof flat, me + 1, n, stride) != 0, "sym_buffer_register(my_pe + 1)"));
    CHECK(strstr(err, "my_pe=") != NULL, "sym_buffer_register with a wrong my_pe does not name it:\n%s", err);
    REPORTS("rocshmem_buffer_register_vmm",
            CHECK(rocshmem_buffer_register_vmm(NULL, 64, me, n, 64) != 0, "register_vmm(NULL)"));
    REPORTS("rocshmem_sym_buffer_unregister", CHECK(rocshmem_sym_buffer_unregister(flat) != 0, "sym_buffer_unregister"));
  }

  /* ---- free of pointers that are not ours (collective: every PE does the same) ---- */
  REPORTS("rocshmem_free", rocshmem_free(pattern));
  REPORTS("rocshmem_free", rocshmem_free(&local));
  REPORTS("rocshmem_free", rocshmem_free((char *)sym + 8));
  void *twice = rocshmem_malloc(64);
  CHECK(twice != NULL, "rocshmem_malloc(64)");
  rocshmem_free(twice);
  REPORTS("rocshmem_free", rocshmem_free(twice));

  /* ---- comparisons ---- */
  REPORTS("rocshmem_int_wait_until", rocshmem_int_wait_until(sym, 42, 0));
  REPORTS("rocshmem_int_wait_until", rocshmem_int_wait_until(sym, -1, 0));
  REPORTS("rocshmem_int_wait_until", rocshmem_int_wait_until(&local, ROCSHMEM_CMP_EQ, 0));
  REPORTS("rocshmem_int_wait_until", rocshmem_int_wait_until(NULL, ROCSHMEM_CMP_EQ, 0));
  REPORTS("rocshmem_int_test", CHECK(rocshmem_int_test(sym, 6, 0) == 0, "test with cmp 6"));
  REPORTS("rocshmem_int_wait_until_all", rocshmem_int_wait_until_all(sym, 4, NULL, 77, 0));
  /* NULL arrays where elements are needed */
  REPORTS("rocshmem_int_wait_until_all", rocshmem_int_wait_until_all(NULL, 4, NULL, ROCSHMEM_CMP_EQ, 0));
  REPORTS("rocshmem_int_wait_until_any",
          CHECK(rocshmem_int_wait_until_any(NULL, 4, NULL, ROCSHMEM_CMP_EQ, 0) == SIZE_MAX, "any of NULL"));
  REPORTS("rocshmem_int_wait_until_some",
          CHECK(rocshmem_int_wait_until_some(sym, 4, NULL, NULL, ROCSHMEM_CMP_EQ, 0) == 0, "some without indices"));
  REPORTS("rocshmem_int_wait_until_all_vector", rocshmem_int_wait_until_all_vector(sym, 4, NULL, ROCSHMEM_CMP_EQ, NULL));

  /* ---- zero elements: no-ops, silent, nothing changes ---- */
  rocshmem_barrier_all();
  SILENT(rocshmem_putmem(sym, src, 0, next));
  SILENT(rocshmem_getmem(src, sym, 0, next));
  SILENT(rocshmem_putmem_nbi(sym, src, 0, next); rocshmem_quiet());
  SILENT(rocshmem_int_put(sym, src, 0, next));
  SILENT(rocshmem_int_get(src, sym, 0, next));
  SILENT(rocshmem_int_wait_until_all(sym, 0, NULL, ROCSHMEM_CMP_EQ, 12345));
  SILENT(CHECK(rocshmem_int_wait_until_any(sym, 0, NULL, ROCSHMEM_CMP_EQ, 12345) == SIZE_MAX, "wait_until_any of 0"));
  SILENT(rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, sym + 16, sym, 0, 0));
  SILENT(CHECK(rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, sym + 16, sym, 0) == 0, "reduce of 0"));
  rocshmem_barrier_all();
  CHECK(memcmp(sym, pattern, 4096) == 0, "the symmetric buffer changed (byte %ld)", hu_first_diff(sym, pattern, 4096));

  /* ---- PEs outside a team, active sets, bad handles ---- */
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens) == 0, "split evens");
  int *bsrc = sym + 64, *bdst = sym + 128;
  if (me % 2 == 0) {
    int ne = rocshmem_team_n_pes(evens);
    SILENT(CHECK(rocshmem_team_translate_pe(evens, ne, ROCSHMEM_TEAM_WORLD) == -1, "translate of PE n_pes"));
    REPORTS("rocshmem_ctx_int_broadcast", rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, evens, bdst, bsrc, 4, ne));
    REPORTS("rocshmem_ctx_int_broadcast", rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, evens, bdst, bsrc, 4, -1));
    REPORTS("rocshmem_ctx_int_broadcast", rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, evens, bdst, bsrc, -4, 0));
    rocshmem_barrier(evens);
  } else {
    CHECK(evens == ROCSHMEM_TEAM_INVALID, "odd PE got a handle for the evens");
    REPORTS("rocshmem_barrier", rocshmem_barrier(evens));
    REPORTS("rocshmem_team_sync", rocshmem_team_sync(evens));
    REPORTS("rocshmem_ctx_int_sum_reduce",
            CHECK(rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, evens, bdst, bsrc, 4) != 0, "reduce on INVALID"));
    long psync[ROCSHMEM_BCAST_SYNC_SIZE];
    REPORTS("rocshmem_ctx_int_broadcast_active_set",
            rocshmem_ctx_int_broadcast_active_set(ROCSHMEM_CTX_DEFAULT, bdst, bsrc, 4, 0, 0, 1, (n + 1) / 2, psync));
  }
  rocshmem_barrier_all();
  /* An active set that does not fit the job: reported on every PE, no collective starts. */
  {
    long psync[ROCSHMEM_BCAST_SYNC_SIZE];
    REPORTS("rocshmem_ctx_int_broadcast_active_set",
            rocshmem_ctx_int_broadcast_active_set(ROCSHMEM_CTX_DEFAULT, bdst, bsrc, 4, 0, 0, 0, n + 1, psync));
  }
  rocshmem_team_t garbage = (rocshmem_team_t)(void *)&local;
  REPORTS("rocshmem_team_n_pes", CHECK(rocshmem_team_n_pes(garbage) == -1, "team_n_pes(garbage)"));
  REPORTS("rocshmem_team_my_pe", CHECK(rocshmem_team_my_pe(garbage) == -1, "team_my_pe(garbage)"));
  REPORTS("rocshmem_barrier", rocshmem_barrier(garbage));
  rocshmem_team_destroy(evens); /* odd PEs: INVALID, ignored */
  if (me % 2 == 0) {
    REPORTS("rocshmem_team_n_pes", CHECK(rocshmem_team_n_pes(evens) == -1, "team_n_pes of a destroyed team"));
    REPORTS("rocshmem_barrier", rocshmem_barrier(evens));
    REPORTS("rocshmem_team_destroy", rocshmem_team_destroy(evens));
  }
  rocshmem_barrier_all();
  rocshmem_ctx_t bad_ctx = {(void *)&local, NULL};
  REPORTS("rocshmem_ctx_putmem", rocshmem_ctx_putmem(bad_ctx, sym, src, 4, next));
  REPORTS("rocshmem_ctx_quiet", rocshmem_ctx_quiet(bad_ctx));
  REPORTS("rocshmem_ctx_destroy", rocshmem_ctx_destroy(ROCSHMEM_CTX_DEFAULT));
  REQUIRE(rocshmem_ctx_create(0, &ctx) == 0, "ctx_create");
  rocshmem_ctx_destroy(ctx);
  REPORTS("rocshmem_ctx_getmem", rocshmem_ctx_getmem(ctx, src, sym, 4, next));
  REPORTS("rocshmem_ctx_destroy", rocshmem_ctx_destroy(ctx));

  /* Everything still works after all that. */
  rocshmem_barrier_all();
  hu_fill(src, sizeof src, seed, me, 2);
  rocshmem_putmem(sym + 512, src, sizeof src, next);
  rocshmem_barrier_all();
  int want[16];
  hu_fill(want, sizeof want, seed, (me + n - 1) % n, 2);
  CHECK(memcmp(sym + 512, want, sizeof want) == 0, "put after the bad calls");
  rocshmem_free(sym);
  free(pattern);

  /* ---- after finalize ---- */
  rocshmem_finalize();
  REPORTS("rocshmem_my_pe", CHECK(rocshmem_my_pe() == -1, "my_pe after finalize"));
  CHECK(strstr(err, "finalize") != NULL, "the message does not say finalize:\n%s", err);
  REPORTS("rocshmem_malloc", CHECK(rocshmem_malloc(8) == NULL, "malloc after finalize"));
  REPORTS("rocshmem_barrier_all", rocshmem_barrier_all());
  REPORTS("rocshmem_finalize", rocshmem_finalize());
  memset(&attr, 0, sizeof attr);
  attr.nranks = 1;
  REPORTS("rocshmem_init_attr", CHECK(rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr) != 0, "init_attr after finalize"));
  CHECK(strstr(err, "finalize") != NULL, "init_attr after finalize: the message does not say finalize:\n%s", err);
  if (me == 0) check_init_after_finalize(argv[0]);

  if (tu_failures) fprintf(stderr, "%s: bad_input: %d check(s) failed\n", pe_tag, tu_failures);
  else if (me == 0) printf("bad_input: all misuse reported, nothing crashed or hung\n");
  return tu_failures != 0;
}
