/* Helpers of the misuse tests in this folder, on top of ../common/test_util.h and
 * ../host/host_util.h (include after them): the start every program makes, and the check of
 * the one line the library prints for a refused call. Header-only. */
#ifndef ROCSHMEM_MISUSE_UTIL_H
#define ROCSHMEM_MISUSE_UTIL_H

static int me, npes;
/* What the last MU_CAPTURE'd statement printed on stderr. */
static char err[8192];

/* rocshmem_init under a 60 s alarm (nothing here may hang), this PE's number, the PE count, and
 * the run's seed agreed by every PE (printed by PE 0 as `<name>: N PE(s), seed ...`). */
static inline uint64_t mu_start(const char *name) {
  alarm(60);
  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  tu_me();
  return hu_agree_seed(name);
}

/* Runs stmt with stderr captured into err. */
#define MU_CAPTURE(stmt)                    \
  do {                                      \
    hu_capture mu_c_ = hu_capture_begin();  \
    stmt;                                   \
    hu_capture_end(mu_c_, err, sizeof err); \
  } while (0)

/* err is exactly one line, `rocshmem: PE <me>: error: <call>: ...`, containing every one of the
 * texts (a NULL-ended list). */
static inline void mu_expect_line(int line, const char *call, ...) {
  char head[160];
  snprintf(head, sizeof head, "rocshmem: PE %d: error: %s: ", me, call);
  int ok = hu_count_lines(err) == 1 && strncmp(err, head, strlen(head)) == 0;
  va_list ap;
  va_start(ap, call);
  for (const char *t; (t = va_arg(ap, const char *)) != NULL;) {
    if (!strstr(err, t)) {
      CHECK(0, "line %d: the line lacks '%s'", line, t);
      ok = 0;
    }
  }
  va_end(ap);
  CHECK(ok, "line %d: want one line '%s...' with the texts above, got:\n%s", line, head, err);
}

#endif
