// The C-linkage entry points of the device bitcode that PyTorch's Triton layer calls and that
// have no C++ name: rocshmem_<T>_<op>_reduce_wg(int team, T *dest, const T *src, int nreduce)
// for short, int, long, long long, float, double and sum/min/max/prod (team 0 = the world
// team on the default context, any other team ROCSHMEM_ERROR and nothing written), and
// rocshmem_signal_op, rocshmem_alltoallmem_wg(int team, ...), rocshmem_broadcastmem_wg(int
// team, ..., int pe_root). Called from kernels exactly as declared in C, by one work-group per
// PE; every PE regenerates what the others contributed and checks its own destination.
//
// The entry points live in the device bitcode (librocshmem_device_<arch>.bc); on the host
// platform librocshmem.so carries them as rocshmemi_bc_<name> (the host API owns the plain C
// names). GPU builds of this program do not have them (they are not in the device archive on
// NVIDIA: nvcc would give every extern "C" device function a host stub of the host API's
// name), so the test exists on the host platform; on GPUs the Triton script runs them
// (ctests/python/gpu/torch_rocshmem_triton.py).
#include "dtest.hpp"

#if !DT_GPU

#include <cmath>
#include <cstring>

#define BC(name) rocshmemi_bc_##name
#define DECL_REDUCE(T, TN)                                                                 \
  extern "C" int BC(rocshmem_##TN##_sum_reduce_wg)(int, T *, const T *, int);            \
  extern "C" int BC(rocshmem_##TN##_min_reduce_wg)(int, T *, const T *, int);            \
  extern "C" int BC(rocshmem_##TN##_max_reduce_wg)(int, T *, const T *, int);            \
  extern "C" int BC(rocshmem_##TN##_prod_reduce_wg)(int, T *, const T *, int);
DECL_REDUCE(short, short)
DECL_REDUCE(int, int)
DECL_REDUCE(long, long)
DECL_REDUCE(long long, longlong)
DECL_REDUCE(float, float)
DECL_REDUCE(double, double)
extern "C" void BC(rocshmem_signal_op)(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
extern "C" int BC(rocshmem_alltoallmem_wg)(int team, void *dest, const void *source, size_t nbytes);
extern "C" int BC(rocshmem_broadcastmem_wg)(int team, void *dest, const void *source, size_t nbytes, int pe_root);

namespace {

enum { OP_SUM, OP_MIN, OP_MAX, OP_PROD };
const char *op_names[] = {"sum", "min", "max", "prod"};

/** A value of PE `pe` at element i: small integers (exact in every type and in any order of
 *  combination): -50..49 for sums, -500..499 for min/max, 1 or 2 (sign random) for products. */
template <class T>
T value(int op, int pe, uint64_t salt, size_t i) {
  const uint64_t r = dt_at(dt_key(dt::seed, pe, salt), i);
  long long v;
  if (op == OP_SUM) v = (long long)(r % 100) - 50;
  else if (op == OP_PROD) v = ((r & 1) ? 2 : 1) * ((r & 2) ? -1 : 1);
  else v = (long long)(r % 1000) - 500;
  return (T)v;
}

template <class T>
T combine(int op, T a, T b) {
  switch (op) {
    case OP_SUM: return (T)(a + b);
    case OP_MIN: return b < a ? b : a;
    case OP_MAX: return b > a ? b : a;
    default: return (T)(a * b);
  }
}

template <class T>
using ReduceFn = int (*)(int, T *, const T *, int);

/** One work-group calls fn(team, dest, src, n); thread 0 records the return value. */
template <class T>
void reduce_kernel(ReduceFn<T> fn, int team, T *dest, const T *src, int n, int *ret) {
  int r = fn(team, dest, src, n);
  if (dt_tid() == 0) *ret = r;
}

template <class T>
void reduce_type(const char *tname, const ReduceFn<T> fns[4]) {
  const size_t n = 1000 + dt::next_salt() % 300;  // the same on every PE (one salt stream)
  T *src = dt::alloc_n<T>(n + 4);
  T *dst = dt::alloc_n<T>(n + 4);
  int *ret = dt::alloc_n<int>(1);
  std::vector<T> h(n + 4), got(n + 4);
  const T guard = (T)77;
  for (int op = 0; op < 4; ++op) {
    const uint64_t salt = dt::next_salt();
    for (size_t i = 0; i < n; ++i) h[i] = value<T>(op, dt::me, salt, i);
    dt::to_dev(src, h.data(), n * sizeof(T));
    std::vector<T> g(n + 4, guard);
    dt::to_dev(dst, g.data(), (n + 4) * sizeof(T));
    int minus = -1;
    dt::to_dev(ret, &minus, sizeof minus);
    dt::barrier();
    dt::launch(reduce_kernel<T>, 1, dt::opt.z, fns[op], 0, dst, (const T *)src, (int)n, ret);
    dt::barrier();
    int r = -1;
    dt::to_host(&r, ret, sizeof r);
    dt::to_host(got.data(), dst, (n + 4) * sizeof(T));
    const std::string what = dt::fmt("rocshmem_%s_%s_reduce_wg(0, ...) of %zu elements", tname, op_names[op], n);
    dt::checkf(r == 0, "%s returned %d, expected 0", what.c_str(), r);
    std::vector<T> want(n + 4, guard);
    for (size_t i = 0; i < n; ++i) {
      T acc = value<T>(op, 0, salt, i);
      for (int p = 1; p < dt::npes; ++p) acc = combine<T>(op, acc, value<T>(op, p, salt, i));
      want[i] = acc;
    }
    dt::compare(got.data(), want.data(), n + 4, sizeof(T), what);
  }
  // Any team but 0 is refused on every PE, with nothing written.
  std::vector<T> g(n + 4, guard);
  dt::to_dev(dst, g.data(), (n + 4) * sizeof(T));
  int minus = -1;
  dt::to_dev(ret, &minus, sizeof minus);
  dt::barrier();
  dt::launch(reduce_kernel<T>, 1, dt::opt.z, fns[OP_SUM], 1, dst, (const T *)src, (int)n, ret);
  dt::barrier();
  int r = -1;
  dt::to_host(&r, ret, sizeof r);
  dt::to_host(got.data(), dst, (n + 4) * sizeof(T));
  dt::checkf(r == ROCSHMEM_ERROR, "rocshmem_%s_sum_reduce_wg(team 1, ...) returned %d, expected ROCSHMEM_ERROR (%d)",
             tname, r, (int)ROCSHMEM_ERROR);
  dt::compare(got.data(), g.data(), n + 4, sizeof(T), dt::fmt("destination after rocshmem_%s_sum_reduce_wg(team 1)", tname));
  dt::release(ret);
  dt::release(dst);
  dt::release(src);
}

#define FNS(TN)                                                                                        \
  {BC(rocshmem_##TN##_sum_reduce_wg), BC(rocshmem_##TN##_min_reduce_wg), BC(rocshmem_##TN##_max_reduce_wg), \
   BC(rocshmem_##TN##_prod_reduce_wg)}

void t_reduce() {
  {
    const ReduceFn<short> f[4] = FNS(short);
    reduce_type<short>("short", f);
  }
  {
    const ReduceFn<int> f[4] = FNS(int);
    reduce_type<int>("int", f);
  }
  {
    const ReduceFn<long> f[4] = FNS(long);
    reduce_type<long>("long", f);
  }
  {
    const ReduceFn<long long> f[4] = FNS(longlong);
    reduce_type<long long>("longlong", f);
  }
  {
    const ReduceFn<float> f[4] = FNS(float);
    reduce_type<float>("float", f);
  }
  {
    const ReduceFn<double> f[4] = FNS(double);
    reduce_type<double>("double", f);
  }
}

void move_kernel(int which, int team, char *dest, const char *src, size_t nbytes, int root, int *ret) {
  int r = which == 0 ? BC(rocshmem_alltoallmem_wg)(team, dest, src, nbytes)
                     : BC(rocshmem_broadcastmem_wg)(team, dest, src, nbytes, root);
  if (dt_tid() == 0) *ret = r;
}

/** alltoallmem_wg and broadcastmem_wg on the world team (team 0), then refused on team 1. */
void t_move() {
  const int n = dt::npes;
  const size_t nbytes = 1 + dt::next_salt() % 5000;
  char *src = static_cast<char *>(dt::alloc(nbytes * n + 64));
  char *dst = static_cast<char *>(dt::alloc(nbytes * n + 64));
  int *ret = dt::alloc_n<int>(1);
  std::vector<char> h(nbytes * n), want(nbytes * n + 64, 0x5a), got(nbytes * n + 64);
  for (int which = 0; which < 2; ++which) {
    for (int team = 0; team < 2; ++team) {
      const uint64_t salt = dt::next_salt();
      const int root = int((salt >> 20) % uint64_t(n));
      dt::fill(h.data(), nbytes * n, dt::me, salt);
      dt::to_dev(src, h.data(), nbytes * n);
      std::vector<char> g(nbytes * n + 64, 0x5a);
      dt::to_dev(dst, g.data(), g.size());
      int minus = -1;
      dt::to_dev(ret, &minus, sizeof minus);
      dt::barrier();
      dt::launch(move_kernel, 1, dt::opt.z, which, team, dst, (const char *)src, nbytes, root, ret);
      dt::barrier();
      int r = -1;
      dt::to_host(&r, ret, sizeof r);
      dt::to_host(got.data(), dst, got.size());
      const std::string what =
          which == 0 ? dt::fmt("rocshmem_alltoallmem_wg(%d, %zu bytes)", team, nbytes)
                     : dt::fmt("rocshmem_broadcastmem_wg(%d, %zu bytes, root %d)", team, nbytes, root);
      std::vector<char> w(nbytes * n + 64, 0x5a);
      if (team != 0) {
        dt::checkf(r == ROCSHMEM_ERROR, "%s returned %d, expected ROCSHMEM_ERROR", what.c_str(), r);
      } else {
        dt::checkf(r == 0, "%s returned %d, expected 0", what.c_str(), r);
        std::vector<char> other(nbytes * n);
        if (which == 0) {  // block j of my destination: block me of PE j's source
          for (int j = 0; j < n; ++j) {
            dt::fill(other.data(), nbytes * n, j, salt);
            memcpy(&w[size_t(j) * nbytes], &other[size_t(dt::me) * nbytes], nbytes);
          }
        } else {  // the root's first nbytes, on every PE (the root's own destination too)
          dt::fill(other.data(), nbytes * n, root, salt);
          memcpy(w.data(), other.data(), nbytes);
        }
      }
      dt::compare(got.data(), w.data(), w.size(), 1, what);
    }
  }
  dt::release(ret);
  dt::release(dst);
  dt::release(src);
}

void signal_kernel(uint64_t *sig, uint64_t set, uint64_t add, int pe) {
  if (dt_tid() == 0) {
    BC(rocshmem_signal_op)(sig, set, ROCSHMEM_SIGNAL_SET, pe);
    BC(rocshmem_signal_op)(sig, add, ROCSHMEM_SIGNAL_ADD, pe);
    rocshmem_quiet();
  }
}

/** signal_op: every PE sets, then adds to, a word of the next PE; the next PE checks it. */
void t_signal() {
  uint64_t *sig = dt::alloc_n<uint64_t>(1);
  for (int round = 0; round < 3; ++round) {
    const uint64_t salt = dt::next_salt();
    auto set_of = [&](int pe) { return dt_at(dt_key(dt::seed, pe, salt), 0) >> 2; };
    auto add_of = [&](int pe) { return dt_at(dt_key(dt::seed, pe, salt), 1) >> 2; };
    dt::dev_zero(sig, sizeof(uint64_t));
    dt::barrier();
    const int next = (dt::me + 1) % dt::npes, prev = (dt::me + dt::npes - 1) % dt::npes;
    dt::launch(signal_kernel, 1, dt::opt.z, sig, set_of(dt::me), add_of(dt::me), next);
    dt::barrier();
    uint64_t got = 0;
    dt::to_host(&got, sig, sizeof got);
    const uint64_t want = set_of(prev) + add_of(prev);
    dt::checkf(got == want, "rocshmem_signal_op SET then ADD from PE %d: expected 0x%llx got 0x%llx", prev,
               (unsigned long long)want, (unsigned long long)got);
  }
  dt::release(sig);
}

void t_triton() {
  t_reduce();
  t_move();
  t_signal();
}

}  // namespace

void dt_register_triton(std::vector<DtTest> &v) {
  v.push_back({"triton-c", t_triton, true,
               "the C-linkage entry points of PyTorch's Triton layer: 24 reductions (team 0), signal_op, "
               "alltoallmem_wg, broadcastmem_wg (host platform: rocshmemi_bc_*)"});
}

#else

void dt_register_triton(std::vector<DtTest> &) {}

#endif
