// The tile API through upstream's templates (rocshmem_TILE.hpp): every one of the 42
// rocshmem_[ctx_]tile_{put,get,allgather,broadcast,sum_reduce,max_reduce,min_reduce}{,_wave,_wg}
// called with a tensor and a tuple type of the test's own (upstream's contract: element_type,
// ndim, data_handle(), stride(d); get(d)), so the calls are the ones an upstream program makes.
//
// Tiles of 1-, 2- and 3-dimensional tensors: whole tensors, interior tiles, tiles clipped by the
// boundary at the tensor's far edges, row-major, column-major and padded strides, source and
// destination with different strides, a tile with no elements and an invalid one
// (boundary < start: ROCSHMEM_ERROR, nothing written). Data is fresh random per launch; every
// element of every destination tensor is checked on the PE that holds it: inside the tile
// against the sender's data, outside against its own untouched fill.
//
//  tile-rma:  put (to the next PE) and get (from the next PE) at thread, wave and work-group
//             scope, with the default context and with a work-group context; thread scope runs
//             many tiles at once (one per thread).
//  tile-coll: allgather, broadcast (every root in turn) and sum/max/min reductions (every root)
//             at thread, wave and work-group scope, plain and ctx forms, on the world team and on
//             a strided team; reductions for int, unsigned, long long, float and double.
#include "dtest.hpp"

#if DT_GPU
#include <rocshmem/rocshmem_device.hpp>
#endif

#include <algorithm>

namespace {

constexpr int kMaxNd = 3;

/** An upstream-style tensor: pointer, strides in elements (int, as upstream's examples). */
template <class T, int ND>
struct Tensor {
  using element_type = T;
  static constexpr int ndim = ND;
  T *data;
  int st[ND];
  DT_HD T *data_handle() const { return data; }
  DT_HD int stride(int d) const { return st[d]; }
};

/** An upstream-style coordinate tuple. */
template <int ND>
struct Coord {
  long c[ND];
  DT_HD long get(int d) const { return c[d]; }
};

/** One tile call: both tensors (element offsets into the launch's buffers) and the box. */
struct TCase {
  int nd;
  int expect_rc;           // what the call must return (0, or 1 for the invalid case)
  long start[kMaxNd], bnd[kMaxNd];
  int src_st[kMaxNd], dst_st[kMaxNd];
  long src_dim[kMaxNd];    // the source tensor's shape (start..bnd lies inside it)
  long dst_dim[kMaxNd];
  dt_u64 src_off, dst_off; // where the tensors start (elements)
  dt_u64 src_len, dst_len; // elements each tensor spans (regions are disjoint)
};

// ---- case lists -------------------------------------------------------------------------

/** Elements a tensor of these dims and strides spans (0 if a dim is 0). */
dt_u64 span(int nd, const long *dim, const int *st) {
  dt_u64 last = 0;
  for (int d = 0; d < nd; ++d) {
    if (dim[d] == 0) return 0;
    last += dt_u64(dim[d] - 1) * dt_u64(st[d]);
  }
  return last + 1;
}

/** Row-major strides of dims, each row padded by `pad` elements; column-major if `colmajor`. */
void strides(int nd, const long *dim, int pad, bool colmajor, int *st) {
  long s = 1;
  if (colmajor) {
    for (int d = 0; d < nd; ++d) {
      st[d] = int(s);
      s *= dim[d] + (d == 0 ? pad : 0);
    }
  } else {
    for (int d = nd - 1; d >= 0; --d) {
      st[d] = int(s);
      s *= dim[d] + (d == nd - 1 ? pad : 0);
    }
  }
}

/**
 * The tiles of a launch for dimension count nd: for each tensor shape, the whole tensor, an
 * interior tile and the far corner tile clipped at the boundary, with varied layouts; then an
 * empty tile and an invalid one. `slots` is the number of destination tensors a call fills
 * (the team size for allgather, else 1).
 */
std::vector<TCase> make_cases(int nd, int slots) {
  std::vector<TCase> v;
  static const long shapes1[][1] = {{1}, {37}, {300}};
  static const long shapes2[][2] = {{13, 7}, {5, 33}, {1, 9}};
  static const long shapes3[][3] = {{3, 4, 5}, {2, 7, 3}};
  std::vector<std::vector<long>> shapes;
  if (nd == 1)
    for (auto &s : shapes1) shapes.push_back({s[0]});
  if (nd == 2)
    for (auto &s : shapes2) shapes.push_back({s[0], s[1]});
  if (nd == 3)
    for (auto &s : shapes3) shapes.push_back({s[0], s[1], s[2]});
  dt_u64 soff = 0, doff = 0;
  int layout = 0;
  auto add = [&](const std::vector<long> &dim, const long *start, const long *bnd, int rc) {
    TCase c{};
    c.nd = nd;
    c.expect_rc = rc;
    for (int d = 0; d < nd; ++d) {
      c.start[d] = start[d];
      c.bnd[d] = bnd[d];
      c.src_dim[d] = dim[d];
    }
    // The source holds the whole tensor; the destination is a tensor of the same shape
    // (put/get/reduce/broadcast apply start_coord to it as described in rocshmem_TILE.hpp)
    // with another layout, `slots` times along dimension 0 for allgather.
    const int l = layout++;
    strides(nd, c.src_dim, l % 3, l % 4 == 3 && nd > 1, c.src_st);
    for (int d = 0; d < nd; ++d) c.dst_dim[d] = dim[d] * (d == 0 ? slots : 1);
    strides(nd, c.dst_dim, (l + 1) % 2, l % 4 == 1 && nd > 1, c.dst_st);
    c.src_len = span(nd, c.src_dim, c.src_st);
    c.dst_len = span(nd, c.dst_dim, c.dst_st);
    c.src_off = soff + 3;  // guard elements between tensors
    c.dst_off = doff + 3;
    soff = c.src_off + c.src_len;
    doff = c.dst_off + c.dst_len;
    v.push_back(c);
  };
  for (auto &dim : shapes) {
    long zero[kMaxNd] = {0, 0, 0}, full[kMaxNd], s[kMaxNd], b[kMaxNd], cs[kMaxNd];
    for (int d = 0; d < nd; ++d) {
      full[d] = dim[d];
      s[d] = dim[d] / 3;                       // interior tile
      b[d] = std::min(dim[d], s[d] + 1 + dim[d] / 2);
      cs[d] = dim[d] > 4 ? dim[d] - dim[d] % 4 - (dim[d] % 4 == 0 ? 4 : 0) : 0;  // last 4-wide tile
    }
    add(dim, zero, full, 0);
    add(dim, s, b, 0);
    add(dim, cs, full, 0);  // the corner tile of a 4-wide tiling, clipped at the boundary
  }
  // No elements (put/get/allgather/broadcast succeed and write nothing; reductions of an
  // empty tile are an error, as upstream), and boundary < start (an error everywhere).
  {
    std::vector<long> dim(shapes[0]);
    long s[kMaxNd] = {0, 0, 0}, b[kMaxNd];
    for (int d = 0; d < nd; ++d) b[d] = dim[d];
    b[nd - 1] = 0;
    add(dim, s, b, -1);  // -1: resolved per operation below
    s[0] = 1;
    for (int d = 0; d < nd; ++d) b[d] = dim[d];
    b[0] = 0;
    add(dim, s, b, 1);
  }
  return v;
}

dt_u64 src_total(const std::vector<TCase> &v) { return v.back().src_off + v.back().src_len + 3; }
dt_u64 dst_total(const std::vector<TCase> &v) { return v.back().dst_off + v.back().dst_len + 3; }

/** Calls f(index of x in the tile (row-major), element offset on the src, on the dst) for every
 *  tile element x; `sstart`/`dstart` say whether start_coord applies on each side. */
template <class F>
void for_tile(const TCase &c, bool sstart, bool dstart, dt_u64 dst_slot, F f) {
  long ext[kMaxNd];
  dt_u64 count = 1;
  for (int d = 0; d < c.nd; ++d) {
    ext[d] = c.bnd[d] - c.start[d];
    if (ext[d] <= 0) return;
    count *= dt_u64(ext[d]);
  }
  for (dt_u64 i = 0; i < count; ++i) {
    dt_u64 r = i, so = c.src_off, dof = c.dst_off + dst_slot;
    for (int d = c.nd - 1; d >= 0; --d) {
      const dt_u64 x = r % dt_u64(ext[d]);
      r /= dt_u64(ext[d]);
      so += (x + (sstart ? c.start[d] : 0)) * dt_u64(c.src_st[d]);
      dof += (x + (dstart ? c.start[d] : 0)) * dt_u64(c.dst_st[d]);
    }
    f(i, so, dof);
  }
}

dt_u64 tile_extent0(const TCase &c) { return c.bnd[0] > c.start[0] ? dt_u64(c.bnd[0] - c.start[0]) : 0; }

// ---- kernels ----------------------------------------------------------------------------

enum { SC_THREAD = 0, SC_WAVE = 1, SC_WG = 2 };
const char *scope_names[] = {"", "_wave", "_wg"};
enum { OP_PUT = 0, OP_GET = 1 };

template <class T, int ND>
DT_DEV void views(const TCase &c, T *src, T *dst, Tensor<T, ND> &s, Tensor<T, ND> &d, Coord<ND> &a, Coord<ND> &b) {
  s.data = src + c.src_off;
  d.data = dst + c.dst_off;
  for (int i = 0; i < ND; ++i) {
    s.st[i] = c.src_st[i];
    d.st[i] = c.dst_st[i];
    a.c[i] = c.start[i];
    b.c[i] = c.bnd[i];
  }
}

/** One put or get through the template of scope SC, plain (ctx unused) or ctx form. */
template <int SC, class T, int ND>
DT_DEV int rma_call(int op, bool with_ctx, rocshmem_ctx_t ctx, Tensor<T, ND> d, Tensor<T, ND> s, Coord<ND> a,
                    Coord<ND> b, int pe) {
  if (op == OP_PUT) {
    if constexpr (SC == SC_THREAD)
      return with_ctx ? rocshmem_ctx_tile_put(ctx, d, s, a, b, pe, 0) : rocshmem_tile_put(d, s, a, b, pe, 0);
    else if constexpr (SC == SC_WAVE)
      return with_ctx ? rocshmem_ctx_tile_put_wave(ctx, d, s, a, b, pe, 0) : rocshmem_tile_put_wave(d, s, a, b, pe, 0);
    else
      return with_ctx ? rocshmem_ctx_tile_put_wg(ctx, d, s, a, b, pe, 0) : rocshmem_tile_put_wg(d, s, a, b, pe, 0);
  }
  if constexpr (SC == SC_THREAD)
    return with_ctx ? rocshmem_ctx_tile_get(ctx, d, s, a, b, pe, 0) : rocshmem_tile_get(d, s, a, b, pe, 0);
  else if constexpr (SC == SC_WAVE)
    return with_ctx ? rocshmem_ctx_tile_get_wave(ctx, d, s, a, b, pe, 0) : rocshmem_tile_get_wave(d, s, a, b, pe, 0);
  else
    return with_ctx ? rocshmem_ctx_tile_get_wg(ctx, d, s, a, b, pe, 0) : rocshmem_tile_get_wg(d, s, a, b, pe, 0);
}

/**
 * Every combination (op x scope x plain/ctx) in turn, each into its own destination copy
 * (`dst + combo * dlen`): the case list is split over threads (thread scope), waves or
 * work-groups. put writes the next PE's destination, get reads the next PE's source.
 */
template <class T, int ND>
__global__ void k_rma(const TCase *cases, int ncases, T *src, T *dst, dt_u64 dlen, int peer, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(CM_WG, ROCSHMEM_TEAM_INVALID, &ctx, kerr)) return;
  int combo = 0;
  for (int op = 0; op < 2; ++op)
    for (int sc = 0; sc < 3; ++sc)
      for (int wc = 0; wc < 2; ++wc, ++combo) {
        T *d0 = dst + dt_u64(combo) * dlen;
        unsigned unit, units;
        if (sc == SC_THREAD) {
          unit = dt_gtid();
          units = dt_nthreads();
        } else if (sc == SC_WAVE) {
          unit = dt_bid() * dt_wpb() + dt_wave();
          units = dt_gdim() * dt_wpb();
        } else {
          unit = dt_bid();
          units = dt_gdim();
        }
        for (int i = int(unit); i < ncases; i += int(units)) {
          const TCase &c = cases[i];
          Tensor<T, ND> s, d;
          Coord<ND> a, b;
          views(c, src, d0, s, d, a, b);
          int rc;
          if (sc == SC_THREAD) rc = rma_call<SC_THREAD>(op, wc, ctx, d, s, a, b, peer);
          else if (sc == SC_WAVE) rc = rma_call<SC_WAVE>(op, wc, ctx, d, s, a, b, peer);
          else rc = rma_call<SC_WG>(op, wc, ctx, d, s, a, b, peer);
          const int want = c.expect_rc < 0 ? 0 : c.expect_rc;
          if (rc != want) dt_kfail(kerr, KC_RET, dt_u64(combo) * 1000 + dt_u64(i), dt_u64(want), dt_u64(int64_t(rc)));
        }
        __syncthreads();
      }
  dt_close_ctx(CM_WG, &ctx);
}

template <class T, int ND>
void rma_run(const char *tname) {
  const std::vector<TCase> cases = make_cases(ND, 1);
  const dt_u64 slen = src_total(cases), dlen = dst_total(cases);
  const int combos = 12;
  TCase *dcases = dt::alloc_n<TCase>(cases.size());
  dt::to_dev(dcases, cases.data(), cases.size() * sizeof(TCase));
  T *src = dt::alloc_n<T>(slen);
  T *dst = dt::alloc_n<T>(dlen * combos);
  const uint64_t ssalt = dt::next_salt(), dsalt = dt::next_salt();
  dt::dev_fill(src, slen * sizeof(T), dt::me, ssalt);
  dt::dev_fill(dst, dlen * combos * sizeof(T), dt::me, dsalt);
  dt::barrier();
  const int next = (dt::me + 1) % dt::npes, prev = (dt::me + dt::npes - 1) % dt::npes;
  dt::launch(k_rma<T, ND>, dt::opt.w, dt::opt.z, dcases, int(cases.size()), src, dst, dlen, next, dt::kerr);
  const std::string what = dt::fmt("tile-rma %s %dD", tname, ND);
  dt::check_kernel(what);
  dt::barrier();  // every put has landed

  // What this PE's destinations must hold: its own fill, and the tiles.
  std::vector<T> got(dlen * combos), want(dlen * combos), next_src(slen), prev_src(slen);
  dt::to_host(got.data(), dst, got.size() * sizeof(T));
  dt::fill(want.data(), want.size() * sizeof(T), dt::me, dsalt);
  dt::fill(next_src.data(), slen * sizeof(T), next, ssalt);
  dt::fill(prev_src.data(), slen * sizeof(T), prev, ssalt);
  int combo = 0;
  for (int op = 0; op < 2; ++op)
    for (int sc = 0; sc < 3; ++sc)
      for (int wc = 0; wc < 2; ++wc, ++combo) {
        // put: the previous PE wrote here from its source; get: this PE read the next PE's.
        const std::vector<T> &from = op == OP_PUT ? prev_src : next_src;
        for (const TCase &c : cases) {
          if (c.expect_rc > 0) continue;
          for_tile(c, true, true, dt_u64(combo) * dlen,
                   [&](dt_u64, dt_u64 so, dt_u64 dof) { want[dof] = from[so]; });
        }
        const std::string w = dt::fmt("%s: rocshmem_%stile_%s%s", what.c_str(), wc ? "ctx_" : "", op == OP_PUT ? "put" : "get",
                                      scope_names[sc]);
        if (!dt::compare(&got[dt_u64(combo) * dlen], &want[dt_u64(combo) * dlen], dlen, sizeof(T), w)) break;
      }
  dt::barrier();
  dt::release(dst);
  dt::release(src);
  dt::release(dcases);
}

/** A 12-byte element: the copy path for sizes that are not a power of two. */
struct Elem12 {
  unsigned a, b, c;
};

void t_rma() {
  rma_run<unsigned char, 1>("uchar");
  rma_run<float, 2>("float");
  rma_run<double, 2>("double");
  rma_run<short, 3>("short");
  if (!dt::opt.light) {
    rma_run<Elem12, 2>("12-byte struct");
    rma_run<long long, 1>("longlong");
    rma_run<int, 3>("int");
  }
}

// ---- collectives ------------------------------------------------------------------------

enum { C_ALLGATHER = 0, C_BCAST = 1, C_SUM = 2, C_MAX = 3, C_MIN = 4 };
const char *coll_names[] = {"allgather", "broadcast", "sum_reduce", "max_reduce", "min_reduce"};

template <int SC, class T, int ND>
DT_DEV int coll_call(int kind, bool with_ctx, rocshmem_ctx_t ctx, rocshmem_team_t team, Tensor<T, ND> d,
                     Tensor<T, ND> s, Coord<ND> a, Coord<ND> b, int root) {
#define DT_TILE_COLL(NAME, ...)                                                                   \
  if constexpr (SC == SC_THREAD)                                                                  \
    return with_ctx ? rocshmem_ctx_tile_##NAME(ctx, team, d, s, a, b, ##__VA_ARGS__)              \
                    : rocshmem_tile_##NAME(team, d, s, a, b, ##__VA_ARGS__);                      \
  else if constexpr (SC == SC_WAVE)                                                               \
    return with_ctx ? rocshmem_ctx_tile_##NAME##_wave(ctx, team, d, s, a, b, ##__VA_ARGS__)       \
                    : rocshmem_tile_##NAME##_wave(team, d, s, a, b, ##__VA_ARGS__);               \
  else                                                                                            \
    return with_ctx ? rocshmem_ctx_tile_##NAME##_wg(ctx, team, d, s, a, b, ##__VA_ARGS__)         \
                    : rocshmem_tile_##NAME##_wg(team, d, s, a, b, ##__VA_ARGS__);
  switch (kind) {
    case C_ALLGATHER: DT_TILE_COLL(allgather, 0)
    case C_BCAST: DT_TILE_COLL(broadcast, root, 0)
    case C_SUM: DT_TILE_COLL(sum_reduce, root, 0)
    case C_MAX: DT_TILE_COLL(max_reduce, root, 0)
    default: DT_TILE_COLL(min_reduce, root, 0)
  }
#undef DT_TILE_COLL
}

/**
 * Work-group 0 (scope SC: its thread 0, its first wave or all of it) runs, for each root in
 * turn (allgather: once), every case of the list: one collective at a time, as the team allows.
 * Destinations: per (root round, plain/ctx) a copy of `dlen` elements.
 */
template <int SC, class T, int ND>
__global__ void k_coll(int kind, const TCase *cases, int ncases, T *src, T *dst, dt_u64 dlen, rocshmem_team_t team,
                       int rounds, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(CM_WG, ROCSHMEM_TEAM_INVALID, &ctx, kerr)) return;
  const bool caller = dt_bid() == 0 && (SC == SC_WG || (SC == SC_WAVE && dt_wave() == 0) || dt_tid() == 0);
  if (caller) {
    for (int r = 0; r < rounds; ++r)
      for (int wc = 0; wc < 2; ++wc)
        for (int i = 0; i < ncases; ++i) {
          const TCase &c = cases[i];
          Tensor<T, ND> s, d;
          Coord<ND> a, b;
          views(c, src, dst + dt_u64(r * 2 + wc) * dlen, s, d, a, b);
          const int rc = coll_call<SC>(kind, wc, ctx, team, d, s, a, b, r);
          int want = c.expect_rc;
          if (want < 0) want = kind >= C_SUM ? 1 : 0;  // an empty tile: reductions refuse it
          if (rc != want)
            dt_kfail(kerr, KC_RET, dt_u64(r * 2 + wc) * 1000 + dt_u64(i), dt_u64(want), dt_u64(int64_t(rc)));
        }
  }
  __syncthreads();
  dt_close_ctx(CM_WG, &ctx);
}

/** Source values: small integers for the floating types, so sums are exact in any order. */
template <class T>
T src_value(uint64_t raw) {
  if constexpr (std::is_floating_point<T>::value) return T(int(raw % 201) - 100);
  else return T(raw);
}

template <class T>
T combine(int kind, T a, T b) {
  if (kind == C_MAX) return a > b ? a : b;
  if (kind == C_MIN) return a < b ? a : b;
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return T(U(a) + U(b));  // integer sums wrap
  } else {
    return a + b;
  }
}

template <int SC, class T, int ND>
void coll_run(int kind, const dt::Team &team, const char *tname) {
  const int n = team.n;
  const std::vector<TCase> cases = make_cases(ND, kind == C_ALLGATHER ? n : 1);
  const dt_u64 slen = src_total(cases), dlen = dst_total(cases);
  const int rounds = kind == C_ALLGATHER ? 1 : n;
  const dt_u64 copies = dt_u64(rounds) * 2;
  // Symmetric allocations are collective over the world: every PE allocates, members work.
  TCase *dcases = dt::alloc_n<TCase>(cases.size());
  T *src = dt::alloc_n<T>(slen);
  T *dst = dt::alloc_n<T>(dlen * copies);
  const uint64_t ssalt = dt::next_salt(), dsalt = dt::next_salt();
  auto src_of = [&](int world_pe) {
    std::vector<uint64_t> raw(slen);
    dt::fill(raw.data(), slen * sizeof(uint64_t), world_pe, ssalt);
    std::vector<T> v(slen);
    for (dt_u64 i = 0; i < slen; ++i) v[i] = src_value<T>(raw[i]);
    return v;
  };
  if (team.member()) {
    dt::to_dev(dcases, cases.data(), cases.size() * sizeof(TCase));
    const std::vector<T> mine = src_of(dt::me);
    dt::to_dev(src, mine.data(), slen * sizeof(T));
    dt::dev_fill(dst, dlen * copies * sizeof(T), dt::me, dsalt);
  }
  dt::barrier();
  const std::string what = dt::fmt("tile-coll %s%s %s %dD on %s", coll_names[kind], scope_names[SC], tname, ND, team.name);
  if (team.member()) {
    dt::launch(k_coll<SC, T, ND>, dt::opt.w, dt::opt.z, kind, dcases, int(cases.size()), src, dst, dlen, team.h, rounds,
               dt::kerr);
    dt::check_kernel(what);
    std::vector<std::vector<T>> all;
    for (int j = 0; j < n; ++j) all.push_back(src_of(team.world[j]));
    std::vector<T> got(dlen * copies), want(dlen * copies);
    dt::to_host(got.data(), dst, got.size() * sizeof(T));
    dt::fill(want.data(), want.size() * sizeof(T), dt::me, dsalt);
    for (int r = 0; r < rounds; ++r)
      for (int wc = 0; wc < 2; ++wc) {
        const dt_u64 base = dt_u64(r * 2 + wc) * dlen;
        for (const TCase &c : cases) {
          if (c.expect_rc > 0) continue;
          if (kind == C_ALLGATHER) {
            for (int j = 0; j < n; ++j)
              for_tile(c, true, false, base + dt_u64(j) * tile_extent0(c) * dt_u64(c.dst_st[0]),
                       [&](dt_u64, dt_u64 so, dt_u64 dof) { want[dof] = all[j][so]; });
          } else if (kind == C_BCAST) {
            if (team.my != r)
              for_tile(c, true, false, base, [&](dt_u64, dt_u64 so, dt_u64 dof) { want[dof] = all[r][so]; });
          } else if (team.my == r) {
            for_tile(c, true, true, base, [&](dt_u64, dt_u64 so, dt_u64 dof) {
              T acc = all[0][so];
              for (int j = 1; j < n; ++j) acc = combine<T>(kind, acc, all[j][so]);
              want[dof] = acc;
            });
          }
        }
        const std::string w = dt::fmt("%s: %s form, root %d", what.c_str(), wc ? "ctx" : "plain", r);
        if (!dt::compare(&got[base], &want[base], dlen, sizeof(T), w)) break;
      }
  }
  dt::barrier();
  dt::release(dst);
  dt::release(src);
  dt::release(dcases);
}

template <int SC>
void coll_scope() {
  // A team that is not the world: every other PE (4 or more PEs), PEs 1..n-1 (3 PEs), else
  // the world again.
  const dt::Team &other = dt::npes >= 4 ? dt::evens : dt::npes == 3 ? dt::rest : dt::world;
  coll_run<SC, int, 2>(C_ALLGATHER, dt::world, "int");
  coll_run<SC, double, 1>(C_ALLGATHER, other, "double");
  coll_run<SC, float, 2>(C_BCAST, dt::world, "float");
  coll_run<SC, unsigned char, 3>(C_BCAST, other, "uchar");
  coll_run<SC, int, 2>(C_SUM, dt::world, "int");
  coll_run<SC, double, 3>(C_SUM, other, "double");
  coll_run<SC, float, 1>(C_MAX, dt::world, "float");
  coll_run<SC, unsigned, 2>(C_MIN, other, "unsigned");
  if (!dt::opt.light) {
    coll_run<SC, long long, 2>(C_MAX, other, "longlong");
    coll_run<SC, short, 1>(C_MIN, dt::world, "short");
  }
}

void t_coll() {
  coll_scope<SC_WG>();
  coll_scope<SC_WAVE>();
  coll_scope<SC_THREAD>();
}

}  // namespace

void dt_register_tile(std::vector<DtTest> &v) {
  v.push_back({"tile-rma", t_rma, true, "tile put/get templates (thread, wave, wg; plain and ctx), 1-3D, clipped tiles"});
  v.push_back({"tile-coll", t_coll, false, "tile allgather/broadcast/sum,max,min reduce templates on world and a team"});
}
