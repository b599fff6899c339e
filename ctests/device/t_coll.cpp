// Team collectives from kernels (upstream's team_* testers), at work-group and wave scope:
// alltoall, alltoallv (wg), broadcast, fcollect, the *mem forms and the 2.x wg names; reduce
// with every operation (7 for integers, 4 for floating types incl. half and bfloat16),
// in place and not, and reduce_scatter. On the world team (default context) and on a strided
// team of 2..n-1 or every other PE (a context from rocshmem_wg_ctx_create).
//
// Every call of a launch has its own source and destination regions (plus guard elements);
// the kernel (work-group 0: all its threads, or its first wave) makes the calls in order, and
// each member then recomputes, from the seed, what every other member contributed and checks
// its destination. Reductions use small exact values (powers of two for products), so the
// result does not depend on the order of combination; integer sums and products wrap.
#include "dtest.hpp"

#include <algorithm>

namespace {

enum { SC_WAVE = 1, SC_WG = 2 };
enum { OP_SUM = 0, OP_MAX = 1, OP_MIN = 2, OP_PROD = 3, OP_AND = 4, OP_OR = 5, OP_XOR = 6 };
const char *op_names[] = {"sum", "max", "min", "prod", "and", "or", "xor"};

enum Kind {
  K_ALLTOALL,
  K_ALLTOALLV,
  K_BCAST,
  K_FCOLLECT,
  K_ALLTOALLMEM,
  K_BCASTMEM,
  K_FCOLLECTMEM,
  K_OLD_ALLTOALL,  // rocshmem_ctx_<T>_wg_alltoall (2.x name)
  K_OLD_BCAST,
  K_OLD_FCOLLECT,
  K_REDUCE,
  K_RSCATTER,
  K_OLD_REDUCE  // rocshmem_ctx_<T>_<op>_wg_reduce
};
const char *kind_names[] = {"alltoall",    "alltoallv",    "broadcast",    "fcollect",    "alltoallmem",
                            "broadcastmem", "fcollectmem", "wg_alltoall", "wg_broadcast", "wg_fcollect",
                            "reduce",       "reduce_scatter", "wg_reduce"};

struct CCall {
  int kind, op, n, root, inplace;
  dt_u64 s, d, av;  // element offsets of the source (in src, or dst when in place) and dest; av
  dt_u64 slen, dlen;  // region lengths (elements, without guards)
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define DT_COLL_COMMON(NM)                                                                                     \
  template <int SC>                                                                                            \
  static DT_DEV int alltoall(bool plain, rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {  \
    if constexpr (SC == SC_WG) {                                                                               \
      if (plain) rocshmem_##NM##_alltoall_wg(team, d, s, n);                                                   \
      else rocshmem_ctx_##NM##_alltoall_wg(ctx, team, d, s, n);                                                \
      return 0;                                                                                                \
    } else {                                                                                                   \
      return rocshmem_ctx_##NM##_alltoall_wave(ctx, team, d, s, n);                                            \
    }                                                                                                          \
  }                                                                                                            \
  template <int SC>                                                                                            \
  static DT_DEV int bcast(rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n, int root) {       \
    if constexpr (SC == SC_WG) {                                                                               \
      rocshmem_ctx_##NM##_broadcast_wg(ctx, team, d, s, n, root);                                              \
      return 0;                                                                                                \
    } else {                                                                                                   \
      return rocshmem_ctx_##NM##_broadcast_wave(ctx, team, d, s, n, root);                                     \
    }                                                                                                          \
  }                                                                                                            \
  template <int SC>                                                                                            \
  static DT_DEV int fcollect(rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {              \
    if constexpr (SC == SC_WG) {                                                                               \
      rocshmem_ctx_##NM##_fcollect_wg(ctx, team, d, s, n);                                                     \
      return 0;                                                                                                \
    } else {                                                                                                   \
      return rocshmem_ctx_##NM##_fcollect_wave(ctx, team, d, s, n);                                            \
    }                                                                                                          \
  }                                                                                                            \
  static DT_DEV void alltoallv(rocshmem_team_t team, T *d, const size_t *dn, const size_t *dd, T *s, const size_t *sn, \
                               const size_t *sd) {                                                             \
    rocshmem_##NM##_alltoallv_wg(team, d, dn, dd, s, sn, sd);                                                  \
  }

// The rocSHMEM 2.x work-group names (declared for some types only).
#define DT_OLD_MOVE(NM)                                                                                        \
  [[maybe_unused]] static constexpr bool has_old_move = true;                                                                 \
  static DT_DEV void old_alltoall(rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {         \
    rocshmem_ctx_##NM##_wg_alltoall(ctx, team, d, s, n);                                                       \
  }                                                                                                            \
  static DT_DEV void old_bcast(rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n, int root) {  \
    rocshmem_ctx_##NM##_wg_broadcast(ctx, team, d, s, n, root);                                                \
  }                                                                                                            \
  static DT_DEV void old_fcollect(rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {         \
    rocshmem_ctx_##NM##_wg_fcollect(ctx, team, d, s, n);                                                       \
  }
#define DT_NO_OLD_MOVE(NM)                                                                                     \
  [[maybe_unused]] static constexpr bool has_old_move = false;                                                                 \
  static DT_DEV void old_alltoall(rocshmem_ctx_t, rocshmem_team_t, T *, const T *, int) {}                     \
  static DT_DEV void old_bcast(rocshmem_ctx_t, rocshmem_team_t, T *, const T *, int, int) {}                   \
  static DT_DEV void old_fcollect(rocshmem_ctx_t, rocshmem_team_t, T *, const T *, int) {}
#define DT_OLD_RED_CASE(NM, OPN, OPC) \
  case OPC: return rocshmem_ctx_##NM##_##OPN##_wg_reduce(ctx, team, d, s, n);
#define DT_OLD_RED_INT(NM)                                                                                     \
  [[maybe_unused]] static constexpr bool has_old_reduce = true;                                                               \
  static DT_DEV int old_reduce(int op, rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {    \
    switch (op) {                                                                                              \
      DT_OLD_RED_CASE(NM, sum, OP_SUM)                                                                         \
      DT_OLD_RED_CASE(NM, max, OP_MAX)                                                                         \
      DT_OLD_RED_CASE(NM, min, OP_MIN)                                                                         \
      DT_OLD_RED_CASE(NM, prod, OP_PROD)                                                                       \
      DT_OLD_RED_CASE(NM, and, OP_AND)                                                                         \
      DT_OLD_RED_CASE(NM, or, OP_OR)                                                                           \
      DT_OLD_RED_CASE(NM, xor, OP_XOR)                                                                         \
      default: return -99;                                                                                     \
    }                                                                                                          \
  }
#define DT_OLD_RED_FLT(NM)                                                                                     \
  [[maybe_unused]] static constexpr bool has_old_reduce = true;                                                               \
  static DT_DEV int old_reduce(int op, rocshmem_ctx_t ctx, rocshmem_team_t team, T *d, const T *s, int n) {    \
    switch (op) {                                                                                              \
      DT_OLD_RED_CASE(NM, sum, OP_SUM)                                                                         \
      DT_OLD_RED_CASE(NM, max, OP_MAX)                                                                         \
      DT_OLD_RED_CASE(NM, min, OP_MIN)                                                                         \
      DT_OLD_RED_CASE(NM, prod, OP_PROD)                                                                       \
      default: return -99;                                                                                     \
    }                                                                                                          \
  }
#define DT_NO_OLD_RED(NM)                                                                                      \
  [[maybe_unused]] static constexpr bool has_old_reduce = false;                                                               \
  static DT_DEV int old_reduce(int, rocshmem_ctx_t, rocshmem_team_t, T *, const T *, int) { return -98; }

#define DT_RED(NM, OPN, OPC)                                                                                   \
  case OPC:                                                                                                    \
    if constexpr (SC == SC_WG) {                                                                               \
      return scatter ? rocshmem_ctx_##NM##_##OPN##_reduce_scatter_wg(ctx, team, d, s, n)                       \
                     : rocshmem_ctx_##NM##_##OPN##_reduce_wg(ctx, team, d, s, n);                              \
    } else {                                                                                                   \
      return scatter ? rocshmem_ctx_##NM##_##OPN##_reduce_scatter_wave(ctx, team, d, s, n)                     \
                     : rocshmem_ctx_##NM##_##OPN##_reduce_wave(ctx, team, d, s, n);                            \
    }

#define DT_COLL_INT(S, TY, NM, OLDM, OLDR)                                                                             \
  struct S {                                                                                                   \
    using T = TY;                                                                                              \
    static const char *name() { return #NM; }                                                                 \
    static constexpr int nops = 7;                                                                             \
    DT_COLL_COMMON(NM)                                                                                         \
    OLDM(NM)                                                                                                   \
    OLDR(NM)                                                                                                   \
    template <int SC>                                                                                          \
    static DT_DEV int reduce(int op, bool scatter, rocshmem_ctx_t ctx, rocshmem_team_t team, T *d,             \
                             const T *s, int n) {                                                              \
      switch (op) {                                                                                            \
        DT_RED(NM, sum, OP_SUM)                                                                                \
        DT_RED(NM, max, OP_MAX)                                                                                \
        DT_RED(NM, min, OP_MIN)                                                                                \
        DT_RED(NM, prod, OP_PROD)                                                                              \
        DT_RED(NM, and, OP_AND)                                                                                \
        DT_RED(NM, or, OP_OR)                                                                                  \
        DT_RED(NM, xor, OP_XOR)                                                                                \
        default: return -99;                                                                                   \
      }                                                                                                        \
    }                                                                                                          \
  };

#define DT_COLL_FLT(S, TY, NM, OLDM, OLDR)                                                                             \
  struct S {                                                                                                   \
    using T = TY;                                                                                              \
    static const char *name() { return #NM; }                                                                 \
    static constexpr int nops = 4;                                                                             \
    DT_COLL_COMMON(NM)                                                                                         \
    OLDM(NM)                                                                                                   \
    OLDR(NM)                                                                                                   \
    template <int SC>                                                                                          \
    static DT_DEV int reduce(int op, bool scatter, rocshmem_ctx_t ctx, rocshmem_team_t team, T *d,             \
                             const T *s, int n) {                                                              \
      switch (op) {                                                                                            \
        DT_RED(NM, sum, OP_SUM)                                                                                \
        DT_RED(NM, max, OP_MAX)                                                                                \
        DT_RED(NM, min, OP_MIN)                                                                                \
        DT_RED(NM, prod, OP_PROD)                                                                              \
        default: return -99;                                                                                   \
      }                                                                                                        \
    }                                                                                                          \
  };

DT_COLL_INT(CShort, short, short, DT_OLD_MOVE, DT_OLD_RED_INT)
DT_COLL_INT(CInt, int, int, DT_OLD_MOVE, DT_OLD_RED_INT)
DT_COLL_INT(CLongLong, long long, longlong, DT_OLD_MOVE, DT_OLD_RED_INT)
DT_COLL_INT(CUint, unsigned int, uint, DT_OLD_MOVE, DT_NO_OLD_RED)
DT_COLL_INT(CInt8, int8_t, int8, DT_NO_OLD_MOVE, DT_NO_OLD_RED)
DT_COLL_INT(CUint64, uint64_t, uint64, DT_NO_OLD_MOVE, DT_NO_OLD_RED)
DT_COLL_FLT(CFloat, float, float, DT_OLD_MOVE, DT_OLD_RED_FLT)
DT_COLL_FLT(CDouble, double, double, DT_OLD_MOVE, DT_OLD_RED_FLT)
DT_COLL_FLT(CHalf, __half, half, DT_NO_OLD_MOVE, DT_NO_OLD_RED)
DT_COLL_FLT(CBf16, __hip_bfloat16, bfloat16, DT_NO_OLD_MOVE, DT_NO_OLD_RED)
// Which types have the 2.x names (this also references every flag: nvcc warns otherwise).
static_assert(CShort::has_old_move && CInt::has_old_move && CLongLong::has_old_move && CUint::has_old_move &&
                  !CInt8::has_old_move && !CUint64::has_old_move && CFloat::has_old_move && CDouble::has_old_move &&
                  !CHalf::has_old_move && !CBf16::has_old_move,
              "2.x work-group collective names");

template <int SC>
DT_DEV int alltoallmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *d, const void *s, int n) {
  if constexpr (SC == SC_WG) {
    rocshmem_ctx_alltoallmem_wg(ctx, team, d, s, n);
    return 0;
  } else {
    return rocshmem_ctx_alltoallmem_wave(ctx, team, d, s, n);
  }
}
template <int SC>
DT_DEV int broadcastmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *d, const void *s, int n, int root) {
  if constexpr (SC == SC_WG) {
    rocshmem_ctx_broadcastmem_wg(ctx, team, d, s, n, root);
    return 0;
  } else {
    return rocshmem_ctx_broadcastmem_wave(ctx, team, d, s, n, root);
  }
}
template <int SC>
DT_DEV int fcollectmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *d, const void *s, int n) {
  if constexpr (SC == SC_WG) {
    rocshmem_ctx_fcollectmem_wg(ctx, team, d, s, n);
    return 0;
  } else {
    return rocshmem_ctx_fcollectmem_wave(ctx, team, d, s, n);
  }
}

template <class A, int SC>
__global__ void k_coll(int cm, rocshmem_team_t team, typename A::T *dst, typename A::T *src, const CCall *calls,
                       int ncalls, size_t *av, dt_u64 *kerr) {
  using T = typename A::T;
  if (dt_bid() != 0) return;
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm == CM_WG ? CM_WG : CM_DEFAULT, nullptr, &ctx, kerr)) return;
  const bool actor = SC == SC_WG || dt_wave() == 0;
  const bool lead = dt_tid() == 0;
  if (actor) {
    for (int i = 0; i < ncalls; ++i) {
      const CCall c = calls[i];
      T *d = dst + c.d;
      T *s = c.inplace ? dst + c.s : src + c.s;
      const int bytes = c.n * int(sizeof(T));
      int ret = 0;
      switch (c.kind) {
        case K_ALLTOALL: ret = A::template alltoall<SC>(cm == CM_PLAIN, ctx, team, d, s, c.n); break;
        case K_ALLTOALLV: {
          const size_t tn = size_t(c.n);  // team size, for this kind
          size_t *a = av + c.av;
          A::alltoallv(team, d, a + 2 * tn, a + 3 * tn, s, a, a + tn);
          break;
        }
        case K_BCAST: ret = A::template bcast<SC>(ctx, team, d, s, c.n, c.root); break;
        case K_FCOLLECT: ret = A::template fcollect<SC>(ctx, team, d, s, c.n); break;
        case K_ALLTOALLMEM: ret = alltoallmem<SC>(ctx, team, d, s, bytes); break;
        case K_BCASTMEM: ret = broadcastmem<SC>(ctx, team, d, s, bytes, c.root); break;
        case K_FCOLLECTMEM: ret = fcollectmem<SC>(ctx, team, d, s, bytes); break;
        case K_OLD_ALLTOALL: A::old_alltoall(ctx, team, d, s, c.n); break;
        case K_OLD_BCAST: A::old_bcast(ctx, team, d, s, c.n, c.root); break;
        case K_OLD_FCOLLECT: A::old_fcollect(ctx, team, d, s, c.n); break;
        case K_REDUCE: ret = A::template reduce<SC>(c.op, false, ctx, team, d, s, c.n); break;
        case K_RSCATTER: ret = A::template reduce<SC>(c.op, true, ctx, team, d, s, c.n); break;
        case K_OLD_REDUCE: ret = A::old_reduce(c.op, ctx, team, d, s, c.n); break;
      }
      if (ret != 0 && lead) dt_kfail(kerr, KC_RET, dt_u64(i), 0, (dt_u64)(int64_t)ret);
    }
  }
  dt_close_ctx(cm == CM_WG ? CM_WG : CM_DEFAULT, &ctx);
}

#pragma GCC diagnostic pop

// ---- host-side arithmetic on each type ------------------------------------------------------
template <class T>
struct HNum {
  static constexpr bool is_int = true;
  static constexpr bool is_signed = std::is_signed<T>::value;
  static T from_d(double v) { return T((long long)v); }
  static double to_d(T v) { return double(v); }
};
template <>
struct HNum<float> {
  static constexpr bool is_int = false, is_signed = true;
  static float from_d(double v) { return float(v); }
  static double to_d(float v) { return v; }
};
template <>
struct HNum<double> {
  static constexpr bool is_int = false, is_signed = true;
  static double from_d(double v) { return v; }
  static double to_d(double v) { return v; }
};
template <>
struct HNum<__half> {
  static constexpr bool is_int = false, is_signed = true;
  static __half from_d(double v) {
    uint16_t b = dt::float_to_half(float(v));
    __half h;
    memcpy(static_cast<void *>(&h), &b, 2);
    return h;
  }
  static double to_d(__half v) {
    uint16_t b;
    memcpy(&b, &v, 2);
    return dt::half_to_float(b);
  }
};
template <>
struct HNum<__hip_bfloat16> {
  static constexpr bool is_int = false, is_signed = true;
  static __hip_bfloat16 from_d(double v) {
    uint16_t b = dt::float_to_bf16(float(v));
    __hip_bfloat16 h;
    memcpy(static_cast<void *>(&h), &b, 2);
    return h;
  }
  static double to_d(__hip_bfloat16 v) {
    uint16_t b;
    memcpy(&b, &v, 2);
    return dt::bf16_to_float(b);
  }
};

template <class T>
uint64_t bits_of(T v) {
  uint64_t u = 0;
  memcpy(&u, &v, sizeof(T));
  if constexpr (HNum<T>::is_int && HNum<T>::is_signed && sizeof(T) < 8) {
    if ((u >> (8 * sizeof(T) - 1)) & 1) u |= ~uint64_t(0) << (8 * sizeof(T));  // sign-extend
  }
  return u;
}
template <class T>
T from_bits(uint64_t u) {
  T v;
  memcpy(static_cast<void *>(&v), &u, sizeof(T));  // little-endian: the low bytes
  return v;
}

// A source element of a reduction with `op`, from a random word.
template <class T>
T red_value(int op, uint64_t r) {
  using H = HNum<T>;
  if (H::is_int) {
    const bool s = H::is_signed;
    switch (op) {
      case OP_SUM: return s ? H::from_d(double(int(r % 21) - 10)) : H::from_d(double(r % 21));
      case OP_PROD: {
        if (sizeof(T) == 1) return s ? H::from_d(r % 2 ? 1 : -1) : H::from_d(1 + double(r % 2));  // 2^7 fits
        static const int v[] = {-1, 1, 2, 1};
        return s ? H::from_d(v[r % 4]) : H::from_d(1 + double(r % 2));
      }
      case OP_MIN:
      case OP_MAX:
        if (sizeof(T) == 1) return s ? H::from_d(double(int(r % 201) - 100)) : H::from_d(double(r % 201));
        return s ? H::from_d(double(int(r % 2001) - 1000)) : H::from_d(double(r % 2001));
      default: return from_bits<T>(r);  // bitwise: any bits
    }
  }
  switch (op) {
    case OP_SUM: return H::from_d(double(int(r % 33) - 16));
    case OP_PROD: {
      static const double v[] = {0.5, -0.5, 1, -1, 2, -2};
      return H::from_d(v[r % 6]);
    }
    default: return H::from_d(double(int(r % 401) - 200));
  }
}

template <class T>
T combine(int op, T a, T b) {
  using H = HNum<T>;
  if (H::is_int) {
    const uint64_t x = bits_of(a), y = bits_of(b);
    switch (op) {
      case OP_SUM: return from_bits<T>(x + y);
      case OP_PROD: return from_bits<T>(x * y);
      case OP_AND: return from_bits<T>(x & y);
      case OP_OR: return from_bits<T>(x | y);
      case OP_XOR: return from_bits<T>(x ^ y);
      case OP_MIN:
        if (H::is_signed) return (long long)x < (long long)y ? a : b;
        return x < y ? a : b;
      default:
        if (H::is_signed) return (long long)x > (long long)y ? a : b;
        return x > y ? a : b;
    }
  }
  const double x = H::to_d(a), y = H::to_d(b);
  switch (op) {
    case OP_SUM: return H::from_d(x + y);
    case OP_PROD: return H::from_d(x * y);
    case OP_MIN: return y < x ? b : a;
    default: return x < y ? b : a;
  }
}

// ---- plans -------------------------------------------------------------------------------
struct Plan {
  std::vector<CCall> calls;
  size_t src_len = 0, dst_len = 0, av_len = 0;
  uint64_t vsalt = 0;  // alltoallv counts
};

constexpr size_t kGuard = 2;

// alltoallv counts: member i sends cnt(i, j) elements to member j (the same on every PE).
size_t v_count(uint64_t salt, int call, int i, int j, int tn, int base) {
  return size_t(dt_at(dt_key(dt::seed, -2, salt + uint64_t(call)), uint64_t(i) * uint64_t(tn) + uint64_t(j)) %
                uint64_t(2 * base + 1));
}
size_t v_sdispl(uint64_t salt, int call, int i, int j, int tn, int base) {
  size_t s = 0;
  for (int k = 0; k < j; ++k) s += v_count(salt, call, i, k, tn, base) + 1;
  return s;
}
size_t v_ddispl(uint64_t salt, int call, int i, int j, int tn, int base) {  // on member j, from i
  size_t s = 0;
  for (int k = 0; k < i; ++k) s += v_count(salt, call, k, j, tn, base) + 1;
  return s;
}

template <class T>
void add_call(Plan &p, int kind, int op, int n, int root, bool inplace, int tn, int base_for_v = 0,
              uint64_t salt = 0) {
  CCall c{};
  c.kind = kind;
  c.op = op;
  c.n = n;
  c.root = root;
  c.inplace = inplace;
  const size_t ne = size_t(n);
  switch (kind) {
    case K_ALLTOALL:
    case K_ALLTOALLMEM:
    case K_OLD_ALLTOALL: c.slen = ne * tn, c.dlen = ne * tn; break;
    case K_BCAST:
    case K_BCASTMEM:
    case K_OLD_BCAST: c.slen = ne, c.dlen = ne; break;
    case K_FCOLLECT:
    case K_FCOLLECTMEM:
    case K_OLD_FCOLLECT: c.slen = ne, c.dlen = ne * tn; break;
    case K_REDUCE:
    case K_OLD_REDUCE: c.slen = ne, c.dlen = ne; break;
    case K_RSCATTER: c.slen = ne * tn, c.dlen = ne; break;
    case K_ALLTOALLV: {
      size_t smax = 0, dmax = 0;
      const int call = int(p.calls.size());
      for (int i = 0; i < tn; ++i) {
        smax = std::max(smax, v_sdispl(salt, call, i, tn, tn, base_for_v));
        dmax = std::max(dmax, v_ddispl(salt, call, tn, i, tn, base_for_v));
      }
      c.slen = smax, c.dlen = dmax;
      c.n = tn;  // the kernel needs the team size for the arrays
      c.root = base_for_v;
      c.av = p.av_len;
      p.av_len += 4 * size_t(tn);
      break;
    }
  }
  if (inplace) {
    c.s = c.d = p.dst_len;
    p.dst_len += std::max(c.slen, c.dlen) + kGuard;
  } else {
    c.s = p.src_len;
    p.src_len += c.slen + kGuard;
    c.d = p.dst_len;
    p.dst_len += c.dlen + kGuard;
  }
  p.calls.push_back(c);
}

bool is_reduction(int kind) { return kind == K_REDUCE || kind == K_RSCATTER || kind == K_OLD_REDUCE; }

// The source region of call `ci` of member `m` (world PE `pe`).
template <class T>
std::vector<T> source_of(const CCall &c, int ci, int pe, uint64_t salt) {
  const size_t len = c.inplace ? std::max(c.slen, c.dlen) : c.slen;
  std::vector<T> v(len);
  const uint64_t key = dt_key(dt::seed, pe, salt * 31 + uint64_t(ci) + 5);
  if (is_reduction(c.kind)) {
    for (size_t i = 0; i < len; ++i) v[i] = red_value<T>(c.op, dt_at(key, i));
  } else {
    dt::fill(v.data(), len * sizeof(T), pe, salt * 31 + uint64_t(ci) + 5);
  }
  return v;
}

template <class A, int SC>
void run_coll(const Plan &plan, int cm, const dt::Team &tm, const char *label) {
  using T = typename A::T;
  const int tn = tm.n, my = tm.my;
  T *src = dt::alloc_n<T>(plan.src_len + 1), *dst = dt::alloc_n<T>(plan.dst_len + 1);
  CCall *calls = dt::alloc_n<CCall>(plan.calls.size() + 1);
  size_t *av = dt::alloc_n<size_t>(plan.av_len + 1);
  const uint64_t salt = dt::next_salt();
  std::vector<T> hs(plan.src_len + 1), hd(plan.dst_len + 1);
  dt::fill(hs.data(), hs.size() * sizeof(T), dt::me, salt + 1);
  dt::fill(hd.data(), hd.size() * sizeof(T), dt::me, salt + 2);
  const std::vector<T> prefill = hd;
  std::vector<size_t> hav(plan.av_len + 1, 0);
  if (tm.member()) {
    for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
      const CCall &c = plan.calls[ci];
      std::vector<T> s = source_of<T>(c, int(ci), dt::me, salt);
      std::copy(s.begin(), s.end(), (c.inplace ? hd.begin() : hs.begin()) + ptrdiff_t(c.s));
      if (c.kind == K_ALLTOALLV) {
        size_t *a = &hav[c.av];
        const int base = c.root;
        for (int j = 0; j < tn; ++j) {
          a[j] = v_count(plan.vsalt, int(ci), my, j, tn, base);                   // source_nelems
          a[tn + j] = v_sdispl(plan.vsalt, int(ci), my, j, tn, base);             // source_displs
          a[2 * tn + j] = v_count(plan.vsalt, int(ci), j, my, tn, base);          // dest_nelems
          a[3 * tn + j] = v_ddispl(plan.vsalt, int(ci), j, my, tn, base);         // dest_displs
        }
      }
    }
  }
  dt::to_dev(src, hs.data(), hs.size() * sizeof(T));
  dt::to_dev(dst, hd.data(), hd.size() * sizeof(T));
  dt::to_dev(calls, plan.calls.data(), plan.calls.size() * sizeof(CCall));
  dt::to_dev(av, hav.data(), hav.size() * sizeof(size_t));
  const std::string what = dt::fmt("%s<%s> %s, team %s (%d members), %s", label, A::name(), SC == SC_WG ? "_wg" : "_wave",
                                   tm.name, tn, cm == CM_WG ? "wg_ctx_create context" : "default context");
  dt::barrier();
  if (tm.member())
    dt::launch(k_coll<A, SC>, dt::opt.w, dt::opt.z, cm, tm.h, dst, src, (const CCall *)calls, int(plan.calls.size()),
               av, dt::kerr);
  dt::barrier();
  dt::check_kernel(what + " (at = call)");
  if (tm.member()) {
    std::vector<T> got(plan.dst_len + 1);
    dt::to_host(got.data(), dst, got.size() * sizeof(T));
    std::vector<std::vector<T>> srcs(tn);
    for (size_t ci = 0; ci < plan.calls.size(); ++ci) {
      const CCall &c = plan.calls[ci];
      for (int m = 0; m < tn; ++m) srcs[m] = source_of<T>(c, int(ci), tm.world[m], salt);
      const size_t dlen = c.inplace ? std::max(c.slen, c.dlen) : c.dlen;
      std::vector<T> want(prefill.begin() + ptrdiff_t(c.d), prefill.begin() + ptrdiff_t(c.d + dlen + kGuard));
      const size_t ne = size_t(c.n);
      switch (c.kind) {
        case K_ALLTOALL:
        case K_ALLTOALLMEM:
        case K_OLD_ALLTOALL:
          for (int m = 0; m < tn; ++m)
            std::copy(srcs[m].begin() + ptrdiff_t(my * ne), srcs[m].begin() + ptrdiff_t((my + 1) * ne),
                      want.begin() + ptrdiff_t(m * ne));
          break;
        case K_BCAST:
        case K_BCASTMEM:
        case K_OLD_BCAST: std::copy(srcs[c.root].begin(), srcs[c.root].end(), want.begin()); break;
        case K_FCOLLECT:
        case K_FCOLLECTMEM:
        case K_OLD_FCOLLECT:
          for (int m = 0; m < tn; ++m) std::copy(srcs[m].begin(), srcs[m].end(), want.begin() + ptrdiff_t(m * ne));
          break;
        case K_ALLTOALLV: {
          const int base = c.root;
          for (int i = 0; i < tn; ++i) {
            const size_t cnt = v_count(plan.vsalt, int(ci), i, my, tn, base), sd = v_sdispl(plan.vsalt, int(ci), i, my, tn, base),
                         dd = v_ddispl(plan.vsalt, int(ci), i, my, tn, base);
            std::copy(srcs[i].begin() + ptrdiff_t(sd), srcs[i].begin() + ptrdiff_t(sd + cnt), want.begin() + ptrdiff_t(dd));
          }
          break;
        }
        case K_REDUCE:
        case K_OLD_REDUCE:
        case K_RSCATTER: {
          const size_t off = c.kind == K_RSCATTER ? size_t(my) * ne : 0;
          for (size_t i = 0; i < ne; ++i) {
            T acc = srcs[0][off + i];
            for (int m = 1; m < tn; ++m) acc = combine<T>(c.op, acc, srcs[m][off + i]);
            want[i] = acc;
          }
          // In place with dest == source: the part of the region past the result is the
          // source's own (untouched) elements.
          if (c.inplace && c.slen > c.dlen)
            std::copy(srcs[my].begin() + ptrdiff_t(c.dlen), srcs[my].end(), want.begin() + ptrdiff_t(c.dlen));
          break;
        }
      }
      const std::string cw = dt::fmt("%s: call %zu: %s%s%s%s, %s %d%s%s", what.c_str(), ci, kind_names[c.kind],
                                     is_reduction(c.kind) ? " " : "", is_reduction(c.kind) ? op_names[c.op] : "",
                                     c.inplace ? " in place" : "",
                                     c.kind == K_ALLTOALLV ? "counts up to 2 x" : "elements",
                                     c.kind == K_ALLTOALLV ? c.root : c.n,
                                     (c.kind == K_BCAST || c.kind == K_BCASTMEM || c.kind == K_OLD_BCAST) ? dt::fmt(", root %d", c.root).c_str() : "",
                                     dt::fmt(" (index >= %zu is the guard)", dlen).c_str());
      if (!dt::compare(&got[c.d], want.data(), dlen + kGuard, sizeof(T), cw)) break;  // one report per launch
    }
  }
  dt::barrier();
  dt::release(av);
  dt::release(calls);
  dt::release(dst);
  dt::release(src);
}

// Element counts for byte sizes up to cap.
template <class T>
std::vector<int> elems_upto(size_t cap) {
  std::vector<int> v;
  for (size_t b : dt::sizes_upto(cap)) {
    int ne = int(b / sizeof(T) ? b / sizeof(T) : 1);
    if (v.empty() || v.back() != ne) v.push_back(ne);
  }
  return v;
}

template <class A, int SC>
void coll_move(int cm, const dt::Team &tm) {
  using T = typename A::T;
  Plan p;
  const int tn = tm.n;
  const uint64_t vsalt = p.vsalt = dt::next_salt();
  int k = 0;
  for (int ne : elems_upto<T>(8192)) {
    add_call<T>(p, K_ALLTOALL, 0, ne, 0, false, tn);
    if (SC == SC_WG) add_call<T>(p, K_ALLTOALLV, 0, ne, 0, false, tn, ne, vsalt);
    add_call<T>(p, K_BCAST, 0, ne, k++ % tn, false, tn);
    add_call<T>(p, K_FCOLLECT, 0, ne, 0, false, tn);
    add_call<T>(p, K_ALLTOALLMEM, 0, ne, 0, false, tn);
    add_call<T>(p, K_BCASTMEM, 0, ne, k++ % tn, false, tn);
    add_call<T>(p, K_FCOLLECTMEM, 0, ne, 0, false, tn);
  }
  for (int ne : elems_upto<T>(70000))
    if (size_t(ne) * sizeof(T) > 8192) add_call<T>(p, K_BCAST, 0, ne, (k++) % tn, false, tn);
  // dest == source (the root keeps its data, the others get it); zero elements (no-ops)
  add_call<T>(p, K_BCAST, 0, elems_upto<T>(1000).back(), (k++) % tn, true, tn);
  add_call<T>(p, K_BCAST, 0, 0, 0, false, tn);
  add_call<T>(p, K_ALLTOALL, 0, 0, 0, false, tn);
  add_call<T>(p, K_FCOLLECT, 0, 0, 0, false, tn);
  if (SC == SC_WG && A::has_old_move) {
    const int ne = elems_upto<T>(64).back();
    add_call<T>(p, K_OLD_ALLTOALL, 0, ne, 0, false, tn);
    add_call<T>(p, K_OLD_BCAST, 0, ne, tn - 1, false, tn);
    add_call<T>(p, K_OLD_FCOLLECT, 0, ne, 0, false, tn);
  }
  run_coll<A, SC>(p, cm, tm, "alltoall/alltoallv/broadcast/fcollect(+mem)");
}

template <class A, int SC>
void coll_reduce(int cm, const dt::Team &tm) {
  using T = typename A::T;
  Plan p;
  const int tn = tm.n;
  for (int op = 0; op < A::nops; ++op) {
    for (int ne : elems_upto<T>(1000)) {
      add_call<T>(p, K_REDUCE, op, ne, 0, false, tn);
      add_call<T>(p, K_REDUCE, op, ne, 0, true, tn);
      add_call<T>(p, K_RSCATTER, op, ne, 0, false, tn);
    }
    if (SC == SC_WG && A::has_old_reduce) add_call<T>(p, K_OLD_REDUCE, op, elems_upto<T>(64).back(), 0, false, tn);
  }
  // past the in-place scratch (64 KiB): sum both ways, max in place; a larger reduce_scatter
  for (int ne : elems_upto<T>(70000)) {
    if (size_t(ne) * sizeof(T) <= 1000) continue;
    add_call<T>(p, K_REDUCE, OP_SUM, ne, 0, false, tn);
    add_call<T>(p, K_REDUCE, OP_SUM, ne, 0, true, tn);
    add_call<T>(p, K_REDUCE, OP_MAX, ne, 0, true, tn);
  }
  add_call<T>(p, K_RSCATTER, OP_SUM, elems_upto<T>(8192).back(), 0, false, tn);
  add_call<T>(p, K_REDUCE, OP_SUM, 0, 0, false, tn);  // zero elements: a no-op
  add_call<T>(p, K_RSCATTER, OP_MAX, 0, 0, false, tn);
  run_coll<A, SC>(p, cm, tm, "reduce/reduce_scatter");
}

template <int SC>
void move_all() {
  if (dt::opt.light) {
    coll_move<CInt, SC>(CM_PLAIN, dt::world);
    coll_move<CHalf, SC>(CM_WG, dt::rest);
    if (dt::npes >= 4) coll_move<CInt8, SC>(CM_WG, dt::evens);
    return;
  }
  coll_move<CInt, SC>(CM_PLAIN, dt::world);
  coll_move<CDouble, SC>(CM_PLAIN, dt::world);
  coll_move<CHalf, SC>(CM_PLAIN, dt::world);
  coll_move<CInt8, SC>(CM_PLAIN, dt::world);
  if (dt::npes >= 2) {
    coll_move<CInt, SC>(CM_WG, dt::rest);
    coll_move<CBf16, SC>(CM_WG, dt::rest);
  }
  if (dt::npes >= 4) coll_move<CLongLong, SC>(CM_WG, dt::evens);
}

template <int SC>
void reduce_all() {
  if (dt::opt.light) {
    coll_reduce<CInt, SC>(CM_PLAIN, dt::world);
    coll_reduce<CHalf, SC>(CM_PLAIN, dt::world);
    coll_reduce<CDouble, SC>(CM_WG, dt::rest);
    if (dt::npes >= 4) coll_reduce<CBf16, SC>(CM_WG, dt::evens);
    return;
  }
  coll_reduce<CShort, SC>(CM_PLAIN, dt::world);
  coll_reduce<CInt, SC>(CM_PLAIN, dt::world);
  coll_reduce<CLongLong, SC>(CM_PLAIN, dt::world);
  coll_reduce<CUint, SC>(CM_PLAIN, dt::world);
  coll_reduce<CInt8, SC>(CM_PLAIN, dt::world);
  coll_reduce<CUint64, SC>(CM_PLAIN, dt::world);
  coll_reduce<CFloat, SC>(CM_PLAIN, dt::world);
  coll_reduce<CDouble, SC>(CM_PLAIN, dt::world);
  coll_reduce<CHalf, SC>(CM_PLAIN, dt::world);
  coll_reduce<CBf16, SC>(CM_PLAIN, dt::world);
  if (dt::npes >= 2) {
    coll_reduce<CInt, SC>(CM_WG, dt::rest);
    coll_reduce<CHalf, SC>(CM_WG, dt::rest);
    coll_reduce<CDouble, SC>(CM_WG, dt::rest);
  }
  if (dt::npes >= 4) {
    coll_reduce<CLongLong, SC>(CM_WG, dt::evens);
    coll_reduce<CBf16, SC>(CM_WG, dt::evens);
  }
}

// ---- concurrent collectives: every work-group (or wave) on its own team -----------------------
constexpr int kMultiRounds = 3;

// Unit u (a work-group or a wave) uses teams[u] (a copy of the world) and its own regions:
// per round, fcollect, sum reduce, in-place sum reduce and a broadcast from member u % n.
struct MultiLayout {
  int ne, big, n;  // elements of fcollect/reduce/broadcast, of the in-place reduce; members
  dt_u64 unit;     // elements per unit
  dt_u64 f_src, f_dst, r_src, r_dst, ip, b_src, b_dst;  // offsets in a unit, per round
  dt_u64 round;    // elements per round
};

template <int SC>
__global__ void k_multi(rocshmem_team_t *teams, int *buf, MultiLayout L, dt_u64 *kerr) {
  const unsigned u = SC == SC_WG ? dt_bid() : dt_bid() * dt_wpb() + dt_wave();
  const unsigned wg_first_unit = SC == SC_WG ? dt_bid() : dt_bid() * dt_wpb();
  DT_SHARED(rocshmem_ctx_t, ctx);
  // A context of the work-group's (first) team, for the wg forms; waves use the default one.
  if (!dt_open_ctx(SC == SC_WG ? CM_TEAM : CM_DEFAULT, teams[wg_first_unit], &ctx, kerr)) return;
  rocshmem_team_t team = teams[u];
  const bool lead = SC == SC_WG ? dt_tid() == 0 : dt_lane() == 0;
  for (int r = 0; r < kMultiRounds; ++r) {
    int *b = buf + u * L.unit + dt_u64(r) * L.round;
    int ret[4] = {0, 0, 0, 0};
    if constexpr (SC == SC_WG) {
      rocshmem_ctx_int_fcollect_wg(ctx, team, b + L.f_dst, b + L.f_src, L.ne);
      ret[1] = rocshmem_ctx_int_sum_reduce_wg(ctx, team, b + L.r_dst, b + L.r_src, L.ne);
      ret[2] = rocshmem_ctx_int_sum_reduce_wg(ctx, team, b + L.ip, b + L.ip, L.big);
      rocshmem_ctx_int_broadcast_wg(ctx, team, b + L.b_dst, b + L.b_src, L.ne, int(u % unsigned(L.n)));
    } else {
      rocshmem_ctx_t c = ROCSHMEM_CTX_DEFAULT;
      ret[0] = rocshmem_ctx_int_fcollect_wave(c, team, b + L.f_dst, b + L.f_src, L.ne);
      ret[1] = rocshmem_ctx_int_sum_reduce_wave(c, team, b + L.r_dst, b + L.r_src, L.ne);
      ret[2] = rocshmem_ctx_int_sum_reduce_wave(c, team, b + L.ip, b + L.ip, L.big);
      ret[3] = rocshmem_ctx_int_broadcast_wave(c, team, b + L.b_dst, b + L.b_src, L.ne, int(u % unsigned(L.n)));
    }
    for (int k = 0; k < 4; ++k)
      if (ret[k] != 0 && lead) dt_kfail(kerr, KC_RET, dt_u64(u) * 100 + dt_u64(r) * 10 + k, 0, (dt_u64)(int64_t)ret[k]);
  }
  dt_close_ctx(SC == SC_WG ? CM_TEAM : CM_DEFAULT, &ctx);
}

// What PE `pe` puts in unit u's buffer before the launch (sources; sum operands are small).
void multi_fill(std::vector<int> &h, const MultiLayout &L, unsigned units, int pe, uint64_t salt) {
  h.assign(size_t(units) * L.unit, 0);
  dt::fill(h.data(), h.size() * sizeof(int), pe, salt);
  for (unsigned u = 0; u < units; ++u)
    for (int r = 0; r < kMultiRounds; ++r) {
      int *b = &h[u * L.unit + dt_u64(r) * L.round];
      const uint64_t key = dt_key(dt::seed, pe, salt + 1 + u * 16 + unsigned(r));
      for (int i = 0; i < L.ne; ++i) b[L.r_src + i] = int(dt_at(key, i) % 201) - 100;
      for (int i = 0; i < L.big; ++i) b[L.ip + i] = int(dt_at(key, 100000 + i) % 201) - 100;
    }
}

template <int SC>
void run_multi() {
  const unsigned ws = dt::wave_size();
  const unsigned units = SC == SC_WG ? dt::opt.w : dt::opt.w * ((dt::opt.z + ws - 1) / ws);
  if (!dt::checkf(units <= 16, "coll-multi-team: %u units need %u teams; use at most 16", units, units)) return;
  const int n = dt::npes;
  MultiLayout L{};
  L.n = n;
  L.ne = int(std::min<size_t>(dt::opt.max_bytes, 1000) / sizeof(int));
  L.big = int(std::min<size_t>(dt::opt.max_bytes, 70000) / sizeof(int));
  dt_u64 at = 0;
  auto take = [&](dt_u64 len) {
    dt_u64 o = at;
    at += len + kGuard;
    return o;
  };
  L.f_src = take(L.ne), L.f_dst = take(dt_u64(L.ne) * n), L.r_src = take(L.ne), L.r_dst = take(L.ne);
  L.ip = take(L.big), L.b_src = take(L.ne), L.b_dst = take(L.ne);
  L.round = at;
  L.unit = at * kMultiRounds;
  std::vector<rocshmem_team_t> teams(units, ROCSHMEM_TEAM_INVALID);
  for (unsigned u = 0; u < units; ++u) {
    int ret = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, n, nullptr, 0, &teams[u]);
    if (!dt::checkf(ret == 0 && teams[u] != ROCSHMEM_TEAM_INVALID, "rocshmem_team_split_strided #%u returned %d", u, ret))
      return;
  }
  rocshmem_team_t *dteams = dt::alloc_n<rocshmem_team_t>(units);
  int *buf = dt::alloc_n<int>(size_t(units) * L.unit);
  dt::to_dev(dteams, teams.data(), units * sizeof(rocshmem_team_t));
  const uint64_t salt = dt::next_salt();
  std::vector<int> mine;
  multi_fill(mine, L, units, dt::me, salt);
  dt::to_dev(buf, mine.data(), mine.size() * sizeof(int));
  const std::string what = dt::fmt("%u %s at once, each on its own team (int fcollect, sum reduce, in-place sum reduce "
                                   "of %d, broadcast)", units, SC == SC_WG ? "work-groups" : "waves", L.big);
  dt::barrier();
  dt::launch(k_multi<SC>, dt::opt.w, dt::opt.z, dteams, buf, L, dt::kerr);
  dt::barrier();
  dt::check_kernel(what + " (at = unit * 100 + round * 10 + call)");
  std::vector<std::vector<int>> all(n);
  for (int p = 0; p < n; ++p) multi_fill(all[p], L, units, p, salt);
  std::vector<int> got(size_t(units) * L.unit), want = mine;
  dt::to_host(got.data(), buf, got.size() * sizeof(int));
  for (unsigned u = 0; u < units; ++u)
    for (int r = 0; r < kMultiRounds; ++r) {
      const dt_u64 base = u * L.unit + dt_u64(r) * L.round;
      for (int p = 0; p < n; ++p)
        for (int i = 0; i < L.ne; ++i) want[base + L.f_dst + dt_u64(p) * L.ne + i] = all[p][base + L.f_src + i];
      for (int i = 0; i < L.ne; ++i) {
        int s = 0;
        for (int p = 0; p < n; ++p) s += all[p][base + L.r_src + i];
        want[base + L.r_dst + i] = s;
      }
      for (int i = 0; i < L.big; ++i) {
        int s = 0;
        for (int p = 0; p < n; ++p) s += all[p][base + L.ip + i];
        want[base + L.ip + i] = s;
      }
      const int root = int(u % unsigned(n));
      for (int i = 0; i < L.ne; ++i) want[base + L.b_dst + i] = all[root][base + L.b_src + i];
    }
  for (unsigned u = 0; u < units; ++u)
    if (!dt::compare(&got[u * L.unit], &want[u * L.unit], L.unit, sizeof(int),
                     dt::fmt("%s: unit %u (per round %llu ints: fcollect src@%llu dst@%llu, reduce src@%llu dst@%llu, "
                             "in place @%llu, broadcast src@%llu dst@%llu)",
                             what.c_str(), u, L.round, L.f_src, L.f_dst, L.r_src, L.r_dst, L.ip, L.b_src, L.b_dst)))
      break;
  dt::barrier();
  dt::release(buf);
  dt::release(dteams);
  for (rocshmem_team_t t : teams) rocshmem_team_destroy(t);
}

void t_multi_team() {
  run_multi<SC_WG>();
  run_multi<SC_WAVE>();
}

// ---- misuse refused on every member alike (docs/reliability.md) ----------------------------
// dest partly overlapping source (reduce, reduce_scatter, broadcast) and any overlap (fcollect,
// alltoall) return ROCSHMEM_ERROR or write nothing; a destroyed team's handle, whose slot the
// next team took, is a dead entry (team_n_pes -1, a reduction fails).
__global__ void k_misuse(rocshmem_team_t world, rocshmem_team_t stale, int *buf, int n, int ns, dt_u64 *kerr) {
  if (dt_bid() != 0) return;
  rocshmem_ctx_t ctx = ROCSHMEM_CTX_DEFAULT;
  int r[4];
  r[0] = rocshmem_ctx_int_sum_reduce_wg(ctx, world, buf + 1, buf, n);
  r[1] = rocshmem_ctx_int_sum_reduce_wg(ctx, world, buf, buf + 1, n);
  r[2] = rocshmem_ctx_int_sum_reduce_scatter_wg(ctx, world, buf + 1, buf, ns);
  r[3] = rocshmem_ctx_int_sum_reduce_wg(ctx, stale, buf + 2 * n, buf + 3 * n, 4);
  rocshmem_ctx_int_broadcast_wg(ctx, world, buf + 1, buf, n, 0);
  rocshmem_ctx_int_fcollect_wg(ctx, world, buf, buf, ns);
  rocshmem_ctx_int_alltoall_wg(ctx, world, buf, buf, ns);
  const int stale_n = rocshmem_team_n_pes(stale);
  if (dt_tid() == 0) {
    for (int k = 0; k < 4; ++k)
      if (r[k] != ROCSHMEM_ERROR) dt_kfail(kerr, KC_RET, dt_u64(k), dt_u64(ROCSHMEM_ERROR), (dt_u64)(int64_t)r[k]);
    if (stale_n != -1) dt_kfail(kerr, KC_RET, 10, dt_u64(-1), (dt_u64)(int64_t)stale_n);
  }
}

void t_misuse() {
  const int n = 4096, ns = n / dt::npes;
  int *buf = dt::alloc_n<int>(4 * size_t(n));
  // The stale handle: a team destroyed, and the next one in its slot.
  rocshmem_team_t stale = ROCSHMEM_TEAM_INVALID, next = ROCSHMEM_TEAM_INVALID;
  dt::checkf(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, dt::npes, nullptr, 0, &stale) == 0, "split");
  rocshmem_team_destroy(stale);
  dt::checkf(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, dt::npes, nullptr, 0, &next) == 0, "split");
  dt::checkf(next != stale, "the next team has the destroyed team's handle");
  std::vector<int> want(4 * size_t(n)), got(4 * size_t(n));
  dt::fill(want.data(), want.size() * sizeof(int), dt::me, dt::next_salt());
  dt::to_dev(buf, want.data(), want.size() * sizeof(int));
  dt::barrier();
  dt::launch(k_misuse, 1, dt::opt.z, dt::world.h, stale, buf, n, ns, dt::kerr);
  dt::check_kernel("refused collectives");
  dt::to_host(got.data(), buf, got.size() * sizeof(int));
  dt::compare(got.data(), want.data(), got.size(), sizeof(int), "the buffer after the refused collectives");
  dt::barrier();
  rocshmem_team_destroy(next);
  dt::release(buf);
}

void t_move_wg() { move_all<SC_WG>(); }
void t_move_wave() { move_all<SC_WAVE>(); }
void t_reduce_wg() { reduce_all<SC_WG>(); }
void t_reduce_wave() { reduce_all<SC_WAVE>(); }

}  // namespace

void dt_register_coll(std::vector<DtTest> &v) {
  v.push_back({"coll-move-wg", t_move_wg, true, "alltoall(v)/broadcast/fcollect(+mem, 2.x names)_wg on world and teams"});
  v.push_back({"coll-move-wave", t_move_wave, false, "alltoall/broadcast/fcollect(+mem)_wave on world and teams"});
  v.push_back({"coll-reduce-wg", t_reduce_wg, true, "reduce (all ops, in place) and reduce_scatter _wg, 10 types"});
  v.push_back({"coll-multi-team", t_multi_team, true, "every work-group / wave runs collectives on its own team at once"});
  v.push_back({"coll-reduce-wave", t_reduce_wave, false, "reduce (all ops, in place) and reduce_scatter _wave, 10 types"});
  v.push_back({"coll-misuse", t_misuse, true, "partly overlapping collectives and a destroyed team's handle refused"});
}
