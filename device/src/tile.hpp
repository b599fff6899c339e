/**
 * @file tile.hpp
 * Tile operations: put/get of an n-dimensional strided tile, and the tile collectives
 * (allgather, broadcast, sum/max/min reduction to a root), in their type-erased form.
 *
 * Argument conventions (those of upstream rocSHMEM's type-erased tile entry points):
 *  - `dst_strides`, `src_strides`, `start_coord`, `boundary`: arrays of `ndim` entries;
 *    strides count ELEMENTS (of `element_size` bytes), not bytes.
 *  - The tile is the box start_coord[d] <= x[d] < boundary[d]: its extent along d is
 *    boundary[d] - start_coord[d] (boundary is the exclusive end coordinate, not a size).
 *  - start_coord positions the tile inside the tensor on the symmetric side only:
 *      put        element c goes to dst[(start + c) . dst_strides] on `pe`
 *                 from src[c . src_strides] (src is the tile itself);
 *      get        element c comes from src[(start + c) . src_strides] on `pe`
 *                 into dst[c . dst_strides];
 *      allgather  member j's tile, read as get reads it, lands in dst[c . dst_strides]
 *                 + j * extent[0] * dst_strides[0] (tiles stacked along dimension 0);
 *      broadcast  non-root members get the root's tile as get does; the root's dst is
 *                 left alone (upstream does not write it either);
 *      reduce     start applies to BOTH sides: the root's dst[(start + c) . dst_strides]
 *                 = op over members m of src_m[(start + c) . src_strides]; only the root's
 *                 dst is written (`root` is a team-relative index).
 *  - `flags`: ignored by put/get/allgather/broadcast; reductions take the element type
 *    from it (see tile_elem below).
 *  - Group forms: the calling group's threads split the tile's elements (a linear index
 *    over the tile, unravelled row-major into coordinates); a tile dense on both sides is
 *    copied as one block. Every member of the group must pass the same arguments.
 *
 * Upstream accepts ndim 1 or 2 only (its GDA backend returns an error otherwise); here any
 * 1 <= ndim <= kTileMaxDims works. Bad arguments (null arrays, ndim out of range, a zero
 * element size, boundary < start_coord, sizes that overflow, a PE or root out of range, a
 * symmetric side outside the heap, an unknown reduction type) return ROCSHMEM_ERROR before
 * anything is touched. Collectives check what every member sees alike before their first
 * barrier, so a bad call fails on every member and none waits for the others.
 *
 * Collectives: entry barrier (sources ready), one pass of the group, exit barrier (nobody
 * reuses a source another member still reads). Upstream has only the exit synchronisation.
 */
#ifndef ROCSHMEM_DEVICE_TILE_HPP
#define ROCSHMEM_DEVICE_TILE_HPP

#include "common.hpp"
#include "coll.hpp"
#include "numeric.hpp"
#include "rma.hpp"
#include "sync.hpp"

namespace rocshmem {
namespace dev {

/** Most dimensions a tile may have here (upstream: 2). */
constexpr int kTileMaxDims = 8;

/**
 * Element types of a type-erased tile reduction, carried in `flags`:
 *   type = (flags & ROCSHMEM_TILE_ELEMENT_TYPE_MASK) >> ROCSHMEM_TILE_ELEMENT_TYPE_SHIFT,
 * one of the ROCSHMEM_TILE_ELEMENT_* codes (rocshmem_constants.hpp, from codegen/table.rs).
 * Upstream's reductions do exactly this, set by its typed templates from the tensor's
 * element_type (so do ours, rocshmem_TILE_impl.hpp); element_size is not used to pick the
 * type, and an unknown type is an error. The names are upstream's; the values and the mask
 * are this library's (upstream's were not found).
 */
ROCSHMEM_DEV_INLINE uint64_t tile_elem(uint64_t flags) {
  return (flags & ROCSHMEM_TILE_ELEMENT_TYPE_MASK) >> ROCSHMEM_TILE_ELEMENT_TYPE_SHIFT;
}

// ---- geometry ---------------------------------------------------------------------------

constexpr size_t kTileSizeMax = ~size_t(0);

ROCSHMEM_DEV_INLINE bool tile_mul(size_t a, size_t b, size_t *out) {
  if (a != 0 && b > kTileSizeMax / a) return false;
  *out = a * b;
  return true;
}

ROCSHMEM_DEV_INLINE bool tile_add(size_t a, size_t b, size_t *out) {
  if (b > kTileSizeMax - a) return false;
  *out = a + b;
  return true;
}

/** The tile's shape: extents and element count. */
struct TileGeom {
  int nd;
  size_t es;     // element size, bytes
  size_t count;  // elements
  size_t ext[kTileMaxDims];
};

/** One side (source or destination) of a copy: where its element 0 is, and its strides. */
struct TileSide {
  char *base;           // address of tile element (0, ..., 0)
  size_t first;         // bytes from the tensor pointer to `base`
  size_t span;          // bytes from `base` to the end of the last element (0: empty tile)
  bool dense;           // elements packed row-major, so the tile is one block of count*es
  size_t stride[kTileMaxDims];
};

ROCSHMEM_DEV_INLINE bool tile_geom(int ndim, const size_t *start, const size_t *boundary, size_t element_size,
                                   TileGeom *g) {
  if (ndim < 1 || ndim > kTileMaxDims || start == nullptr || boundary == nullptr || element_size == 0) return false;
  g->nd = ndim;
  g->es = element_size;
  size_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    if (boundary[d] < start[d]) return false;
    g->ext[d] = boundary[d] - start[d];
    if (!tile_mul(count, g->ext[d], &count)) return false;
  }
  size_t bytes;
  if (!tile_mul(count, element_size, &bytes)) return false;
  g->count = count;
  return true;
}

/**
 * Describes the side at `ptr` with `strides`; `start` (or null) offsets the tile within the
 * tensor. False if a stride array is missing or an address computation would overflow.
 */
ROCSHMEM_DEV_INLINE bool tile_side(const TileGeom &g, const void *ptr, const size_t *strides, const size_t *start,
                                   TileSide *s) {
  if (strides == nullptr) return false;
  size_t first = 0, last = 0, expect = 1;
  bool dense = true;
  for (int d = g.nd - 1; d >= 0; --d) {
    const size_t st = strides[d];
    s->stride[d] = st;
    size_t t;
    if (start != nullptr) {
      if (!tile_mul(start[d], st, &t) || !tile_add(first, t, &first)) return false;
    }
    if (g.ext[d] > 0) {
      if (!tile_mul(g.ext[d] - 1, st, &t) || !tile_add(last, t, &last)) return false;
    }
    if (g.ext[d] > 1) {
      if (st != expect) dense = false;
      if (!tile_mul(expect, g.ext[d], &expect)) dense = false;
    }
  }
  if (!tile_mul(first, g.es, &first)) return false;
  size_t span = 0;
  if (g.count > 0 && (!tile_add(last, 1, &span) || !tile_mul(span, g.es, &span))) return false;
  size_t end;
  if (!tile_add(first, span, &end) || reinterpret_cast<uintptr_t>(ptr) > kTileSizeMax - end) return false;
  s->base = static_cast<char *>(const_cast<void *>(ptr)) + first;
  s->first = first;
  s->span = span;
  s->dense = dense;
  return true;
}

/** Is the side's memory (tensor pointer `ptr`) inside the symmetric heap? */
ROCSHMEM_DEV_INLINE bool tile_in_heap(const rocshmem_device_state *st, const TileSide &s) {
  return s.span == 0 || in_heap(st, s.base, s.span);
}

/** Element offsets (in elements) of tile element `i` on two sides (any ndim). */
ROCSHMEM_DEV_INLINE void tile_offsets(const TileGeom &g, const TileSide &a, const TileSide &b, size_t i,
                                      size_t *oa, size_t *ob) {
  size_t x = 0, y = 0;
  for (int d = g.nd - 1; d > 0; --d) {
    const size_t e = g.ext[d], c = i % e;
    i /= e;
    x += c * a.stride[d];
    y += c * b.stride[d];
  }
  *oa = x + i * a.stride[0];
  *ob = y + i * b.stride[0];
}

/**
 * Calls f(i, offset on a, offset on b) (offsets in elements) for the group's share of the
 * tile's elements: this thread takes i = rank, rank + size, ... The 1-D and 2-D cases keep
 * their strides in registers.
 */
template <Grp G, class F>
ROCSHMEM_DEV_INLINE void tile_for_each(const TileGeom &g, const TileSide &a, const TileSide &b, F f) {
  const size_t n = grp_size<G>(), r = grp_rank<G>();
  if (g.nd == 1) {
    const size_t a0 = a.stride[0], b0 = b.stride[0];
    for (size_t i = r; i < g.count; i += n) f(i, i * a0, i * b0);
  } else if (g.nd == 2) {
    const size_t e1 = g.ext[1], a0 = a.stride[0], a1 = a.stride[1], b0 = b.stride[0], b1 = b.stride[1];
    for (size_t i = r; i < g.count; i += n) {
      const size_t q = i / e1, c = i - q * e1;
      f(i, q * a0 + c * a1, q * b0 + c * b1);
    }
  } else {
    for (size_t i = r; i < g.count; i += n) {
      size_t oa, ob;
      tile_offsets(g, a, b, i, &oa, &ob);
      f(i, oa, ob);
    }
  }
}

/** Copies one element of `es` bytes with the widest access both addresses allow. */
ROCSHMEM_DEV_INLINE void tile_copy_elem(char *d, const char *s, size_t es) {
  const uintptr_t mis = reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s);
  if (es == 4 && (mis & 3) == 0) {
    *reinterpret_cast<uint32_t *>(d) = *reinterpret_cast<const uint32_t *>(s);
  } else if (es == 8 && (mis & 7) == 0) {
    *reinterpret_cast<uint64_t *>(d) = *reinterpret_cast<const uint64_t *>(s);
  } else if (es == 2 && (mis & 1) == 0) {
    *reinterpret_cast<uint16_t *>(d) = *reinterpret_cast<const uint16_t *>(s);
  } else if (es == 1) {
    *d = *s;
  } else if (((mis | es) & 15) == 0) {
    struct alignas(16) V16 {
      uint64_t a, b;
    };
    for (size_t k = 0; k < es; k += 16)
      *reinterpret_cast<V16 *>(d + k) = *reinterpret_cast<const V16 *>(s + k);
  } else if (((mis | es) & 7) == 0) {
    for (size_t k = 0; k < es; k += 8)
      *reinterpret_cast<uint64_t *>(d + k) = *reinterpret_cast<const uint64_t *>(s + k);
  } else if (((mis | es) & 3) == 0) {
    for (size_t k = 0; k < es; k += 4)
      *reinterpret_cast<uint32_t *>(d + k) = *reinterpret_cast<const uint32_t *>(s + k);
  } else {
    for (size_t k = 0; k < es; ++k) d[k] = s[k];
  }
}

/**
 * Copies the tile from side `s` to side `d` (bases already translated to the right PE),
 * the group's threads splitting the elements. No synchronisation.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE void tile_copy(const TileGeom &g, const TileSide &d, const TileSide &s) {
  if (g.count == 0) return;
  if (d.dense && s.dense) {
    grp_copy<G>(d.base, s.base, g.count * g.es);
    return;
  }
  char *const db = d.base;
  const char *const sb = s.base;
  const size_t es = g.es;
  tile_for_each<G>(g, d, s, [=](size_t, size_t od, size_t os) { tile_copy_elem(db + od * es, sb + os * es, es); });
}

/** `side` with its base moved to the same object in world PE `pe`'s heap. */
ROCSHMEM_DEV_INLINE TileSide tile_on_pe(const rocshmem_device_state *st, TileSide side, int pe) {
  side.base = peer_ptr(st, side.base, pe);
  return side;
}

/** World PE of context-relative `pe`, or -1 if it is out of range or unreachable. */
ROCSHMEM_DEV_INLINE int tile_target(const rocshmem_ctx_device *c, int pe) {
  const rocshmem_device_state *st = c->state;
  const int n = c->team ? c->team->n_pes : st->n_pes;
  if (pe < 0 || pe >= n) return -1;
  const int w = ctx_world_pe(c, pe);
  if (w < 0 || w >= st->n_pes || st->heap_bases[w] == 0) return -1;
  return w;
}

/** Are all members of the team reachable from here? */
ROCSHMEM_DEV_INLINE bool tile_team_reachable(const rocshmem_device_state *st, const rocshmem_team_device *t) {
  for (int i = 0; i < t->n_pes; ++i) {
    const int w = world_pe(t, i);
    if (w < 0 || w >= st->n_pes || st->heap_bases[w] == 0) return false;
  }
  return true;
}

// ---- put / get -------------------------------------------------------------------------

/** put or get: `remote_dst` says which side is the symmetric one on `pe`. */
template <Grp G>
ROCSHMEM_DEV_INLINE int tile_rma(rocshmem_ctx_t ctx, void *dst, const void *src, const size_t *dst_strides,
                                 const size_t *src_strides, const size_t *start_coord, const size_t *boundary,
                                 int ndim, size_t element_size, int pe, bool remote_dst) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  if (c == nullptr || c->state == nullptr) return ROCSHMEM_ERROR;
  const rocshmem_device_state *st = c->state;
  TileGeom g;
  if (!tile_geom(ndim, start_coord, boundary, element_size, &g)) return ROCSHMEM_ERROR;
  TileSide d, s;
  if (!tile_side(g, dst, dst_strides, remote_dst ? start_coord : nullptr, &d)) return ROCSHMEM_ERROR;
  if (!tile_side(g, src, src_strides, remote_dst ? nullptr : start_coord, &s)) return ROCSHMEM_ERROR;
  const int w = tile_target(c, pe);
  if (w < 0) return ROCSHMEM_ERROR;
  if (g.count == 0) return ROCSHMEM_SUCCESS;
  if (dst == nullptr || src == nullptr) return ROCSHMEM_ERROR;
  if (!tile_in_heap(st, remote_dst ? d : s)) return ROCSHMEM_ERROR;
  if (remote_dst) d = tile_on_pe(st, d, w);
  else s = tile_on_pe(st, s, w);
  tile_copy<G>(g, d, s);
  // Blocking: the tile is delivered (visible at system scope) when this returns, as upstream
  // quiets after the copy; every thread completes its own stores, then the group meets.
  quiet(ctx);
  grp_sync<G>();
  return ROCSHMEM_SUCCESS;
}

/** Writes the tile `src` (start_coord not applied) into `dst` at start_coord, on `pe`. */
template <Grp G>
ROCSHMEM_DEV_INLINE int tile_put(rocshmem_ctx_t ctx, void *dst, const void *src, const size_t *dst_strides,
                                 const size_t *src_strides, const size_t *start_coord, const size_t *boundary,
                                 int ndim, size_t element_size, int pe, uint64_t flags) {
  (void)flags;
  return tile_rma<G>(ctx, dst, src, dst_strides, src_strides, start_coord, boundary, ndim, element_size, pe, true);
}

/** Reads the tile at start_coord of `src` on `pe` into `dst` (start_coord not applied). */
template <Grp G>
ROCSHMEM_DEV_INLINE int tile_get(rocshmem_ctx_t ctx, void *dst, const void *src, const size_t *dst_strides,
                                 const size_t *src_strides, const size_t *start_coord, const size_t *boundary,
                                 int ndim, size_t element_size, int pe, uint64_t flags) {
  (void)flags;
  return tile_rma<G>(ctx, dst, src, dst_strides, src_strides, start_coord, boundary, ndim, element_size, pe, false);
}

// ---- collectives -----------------------------------------------------------------------

/**
 * Every member's tile at start_coord of `src` lands in this PE's `dst`, member j's at
 * dst + j * extent[0] * dst_strides[0] elements (start_coord not applied to dst).
 * `dst` must not overlap `src`.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE int tile_allgather(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dst, const void *src,
                                       const size_t *dst_strides, const size_t *src_strides,
                                       const size_t *start_coord, const size_t *boundary, int ndim,
                                       size_t element_size, uint64_t flags) {
  (void)flags;
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t) return ROCSHMEM_ERROR;
  TileGeom g;
  if (!tile_geom(ndim, start_coord, boundary, element_size, &g)) return ROCSHMEM_ERROR;
  TileSide d, s;
  if (!tile_side(g, dst, dst_strides, nullptr, &d) || !tile_side(g, src, src_strides, start_coord, &s))
    return ROCSHMEM_ERROR;
  const int n = cc.t->n_pes, me = cc.t->my_pe;
  // Member j's slot: j * extent[0] * dst_strides[0] elements further; the last must not overflow.
  size_t slot = 0, last_slot = 0, end = 0;
  if (!tile_mul(g.ext[0], d.stride[0], &slot) || !tile_mul(slot, g.es, &slot) ||
      !tile_mul(slot, size_t(n - 1), &last_slot) || !tile_add(last_slot, d.first + d.span, &end) ||
      reinterpret_cast<uintptr_t>(dst) > kTileSizeMax - end)
    return ROCSHMEM_ERROR;
  if (g.count > 0) {
    if (dst == nullptr || src == nullptr || !tile_in_heap(cc.s, s) || !tile_team_reachable(cc.s, cc.t))
      return ROCSHMEM_ERROR;
  }
  team_sync<G>(cc.s, cc.t, true);
  for (int k = 0; k < n && g.count > 0; ++k) {
    // Start with the next member, so that members do not all read the same peer at once.
    const int j = (me + k) % n;
    TileSide dj = d;
    dj.base += size_t(j) * slot;
    tile_copy<G>(g, dj, tile_on_pe(cc.s, s, world_pe(cc.t, j)));
  }
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

/**
 * Every member but the root reads the root's tile at start_coord of `src` into its `dst`
 * (start_coord not applied to dst). As upstream, the root's `dst` is not written.
 * `pe_root` is team-relative.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE int tile_broadcast(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dst, const void *src,
                                       const size_t *dst_strides, const size_t *src_strides,
                                       const size_t *start_coord, const size_t *boundary, int ndim,
                                       size_t element_size, int pe_root, uint64_t flags) {
  (void)flags;
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t || pe_root < 0 || pe_root >= cc.t->n_pes) return ROCSHMEM_ERROR;
  TileGeom g;
  if (!tile_geom(ndim, start_coord, boundary, element_size, &g)) return ROCSHMEM_ERROR;
  TileSide d, s;
  if (!tile_side(g, dst, dst_strides, nullptr, &d) || !tile_side(g, src, src_strides, start_coord, &s))
    return ROCSHMEM_ERROR;
  const int root = world_pe(cc.t, pe_root);
  if (g.count > 0) {
    if (dst == nullptr || src == nullptr || !tile_in_heap(cc.s, s) || root < 0 || root >= cc.s->n_pes ||
        cc.s->heap_bases[root] == 0)
      return ROCSHMEM_ERROR;
  }
  team_sync<G>(cc.s, cc.t, true);
  if (cc.t->my_pe != pe_root) tile_copy<G>(g, d, tile_on_pe(cc.s, s, root));
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

/**
 * The root's dst[(start + c) . dst_strides] = op over members m (in team order) of
 * src_m[(start + c) . src_strides], computed by the root reading every member's source.
 * `d` and `s` are the root's sides (start_coord applied to both); checked by the caller.
 */
template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE int tile_reduce_typed(const CollCtx &cc, const TileGeom &g, const TileSide &d,
                                          const TileSide &s, int root) {
  using N = Num<T>;
  if (g.es != sizeof(T) || g.count == 0) return ROCSHMEM_ERROR;
  if ((reinterpret_cast<uintptr_t>(d.base) | reinterpret_cast<uintptr_t>(s.base)) % alignof(T) != 0)
    return ROCSHMEM_ERROR;
  const int n = cc.t->n_pes;
  const bool is_root = cc.t->my_pe == root;
  // On the root, dst overlapping its own src in any way other than element for element
  // (same address, same strides) goes through the slot's scratch, which must hold the tile.
  bool via_scratch = false;
  int rc = ROCSHMEM_SUCCESS;
  if (is_root) {
    const uintptr_t d0 = reinterpret_cast<uintptr_t>(d.base), s0 = reinterpret_cast<uintptr_t>(s.base);
    const bool overlap = d0 < s0 + s.span && s0 < d0 + d.span;
    bool same = d0 == s0;
    for (int k = 0; k < g.nd && same; ++k) same = g.ext[k] <= 1 || d.stride[k] == s.stride[k];
    if (overlap && !same) {
      via_scratch = true;
      if (g.count > cc.s->dev_scratch_bytes / sizeof(T)) rc = ROCSHMEM_ERROR;
    }
  }
  team_sync<G>(cc.s, cc.t, true);
  if (is_root && rc == ROCSHMEM_SUCCESS) {
    T *const scratch = reinterpret_cast<T *>(sync_slot(cc.s, cc.t->slot, cc.s->my_pe).scratch);
    T *const out = reinterpret_cast<T *>(d.base);
    const T *const in = reinterpret_cast<const T *>(s.base);
    const CollCtx c = cc;
    tile_for_each<G>(g, d, s, [=](size_t i, size_t od, size_t os) {
      const T *elem = in + os;
      typename N::calc acc = N::to(*peer_ptr(c.s, elem, world_pe(c.t, 0)));
      for (int m = 1; m < n; ++m) acc = combine<OP>(acc, N::to(*peer_ptr(c.s, elem, world_pe(c.t, m))));
      if (via_scratch) scratch[i] = N::from(acc);
      else out[od] = N::from(acc);
    });
    if (via_scratch) {
      grp_sync<G>();  // every element is read before any is overwritten
      tile_for_each<G>(g, d, s, [=](size_t i, size_t od, size_t) { out[od] = scratch[i]; });
    }
  }
  // Nobody reuses a source before the root has read it (and the scratch is free again).
  team_sync<G>(cc.s, cc.t, true);
  return rc;
}

/**
 * Tile reduction to `root` (team-relative) with OP in {sum, max, min}.
 *
 * The element type comes from `flags` (tile_elem, as upstream): element_size alone cannot
 * tell int from float. An unknown type is an error, as upstream; a type whose size is not
 * element_size is an error here too. Integer sums wrap; 16-bit floats are not in upstream's
 * set of types and are not accepted. Only the root's `dst` is written (upstream's public
 * header says "stored on all PEs", but its implementation and tests write and check the
 * root only). A tile with no elements is an error, as upstream.
 */
template <Grp G, Op OP>
ROCSHMEM_DEV_INLINE int tile_reduce(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dst, const void *src,
                                    const size_t *dst_strides, const size_t *src_strides, const size_t *start_coord,
                                    const size_t *boundary, int ndim, size_t element_size, int root,
                                    uint64_t flags) {
  static_assert(OP == Op::sum || OP == Op::max || OP == Op::min, "tile reductions are sum, max and min");
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t || root < 0 || root >= cc.t->n_pes) return ROCSHMEM_ERROR;
  TileGeom g;
  if (!tile_geom(ndim, start_coord, boundary, element_size, &g) || g.count == 0) return ROCSHMEM_ERROR;
  TileSide d, s;
  if (!tile_side(g, dst, dst_strides, start_coord, &d) || !tile_side(g, src, src_strides, start_coord, &s))
    return ROCSHMEM_ERROR;
  if (dst == nullptr || src == nullptr || !tile_in_heap(cc.s, s) || !tile_team_reachable(cc.s, cc.t))
    return ROCSHMEM_ERROR;
  switch (tile_elem(flags)) {
    case ROCSHMEM_TILE_ELEMENT_INT8: return tile_reduce_typed<signed char, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_UINT8: return tile_reduce_typed<unsigned char, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_INT16: return tile_reduce_typed<short, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_UINT16: return tile_reduce_typed<unsigned short, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_INT32: return tile_reduce_typed<int, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_UINT32: return tile_reduce_typed<unsigned int, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_INT64: return tile_reduce_typed<long long, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_UINT64: return tile_reduce_typed<unsigned long long, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_FLOAT: return tile_reduce_typed<float, OP, G>(cc, g, d, s, root);
    case ROCSHMEM_TILE_ELEMENT_DOUBLE: return tile_reduce_typed<double, OP, G>(cc, g, d, s, root);
    default: return ROCSHMEM_ERROR;
  }
}

/**
 * Waits for the tile collectives this PE started on `team`. Tile collectives complete before
 * they return here, so what remains is to complete their stores (a quiet). (Upstream's
 * backends all return ROCSHMEM_ERROR here: it is a stub there.)
 */
ROCSHMEM_DEV_INLINE int tile_collective_wait(rocshmem_ctx_t ctx, rocshmem_team_t team, uint64_t) {
  if (team && !team_ok(team_entry(team))) return ROCSHMEM_ERROR;
  quiet(ctx);
  return ROCSHMEM_SUCCESS;
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_TILE_HPP
