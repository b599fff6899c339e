/**
 * @file core.hpp
 * PE and team queries, and the work-group context pool.
 */
#ifndef ROCSHMEM_DEVICE_CORE_HPP
#define ROCSHMEM_DEVICE_CORE_HPP

#include "common.hpp"
#include "rma.hpp"

namespace rocshmem {
namespace dev {

ROCSHMEM_DEV_INLINE int my_pe(rocshmem_ctx_t ctx) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  return c->team ? c->team->my_pe : c->state->my_pe;
}

ROCSHMEM_DEV_INLINE int n_pes(rocshmem_ctx_t ctx) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  return c->team ? c->team->n_pes : c->state->n_pes;
}

ROCSHMEM_DEV_INLINE int team_my_pe(rocshmem_team_t team) {
  const rocshmem_team_device *t = team_entry(team);
  return team_ok(t) ? t->my_pe : -1;
}

ROCSHMEM_DEV_INLINE int team_n_pes(rocshmem_team_t team) {
  const rocshmem_team_device *t = team_entry(team);
  return team_ok(t) ? t->n_pes : -1;
}

/** `src_pe` of `src_team` as a PE of `dest_team`; -1 if it is not a member or a team is bad. */
ROCSHMEM_DEV_INLINE int team_translate_pe(rocshmem_team_t src_team, int src_pe, rocshmem_team_t dest_team) {
  const rocshmem_team_device *s = team_entry(src_team), *d = team_entry(dest_team);
  if (!team_ok(s) || !team_ok(d) || src_pe < 0 || src_pe >= s->n_pes) return -1;
  int w = world_pe(s, src_pe) - d->start;
  if (d->stride == 0) return w == 0 ? 0 : -1;
  if (w < 0 || w % d->stride != 0 || w / d->stride >= d->n_pes) return -1;
  return w / d->stride;
}

/** rocSHMEM 2.x needed these around device use; they are no-ops since 3.1 (deprecated). */
ROCSHMEM_DEV_INLINE void nothing() {}

ROCSHMEM_DEV_INLINE void wg_init_thread(int, int *provided) {
  if (provided) *provided = ROCSHMEM_THREAD_MULTIPLE;
}

ROCSHMEM_DEV_INLINE void query_thread(int *provided) {
  if (provided) *provided = ROCSHMEM_THREAD_MULTIPLE;
}

/**
 * Work-group collective: claims a context of `team` from the pool (ROCSHMEM_MAX_NUM_CONTEXTS).
 * Returns 0, or ROCSHMEM_ERROR with *ctx = ROCSHMEM_CTX_INVALID when the pool is exhausted or
 * the team is bad, as upstream reports it.
 */
ROCSHMEM_DEV_INLINE int wg_team_create_ctx(rocshmem_team_t team, long options, rocshmem_ctx_t *ctx) {
  using namespace platform;
  const rocshmem_device_state *s = state_of(default_ctx());
  const rocshmem_team_device *t = team_entry(team);
  uint64_t claimed = 0;  // 1 + index, 0 for none
  if (thread_id() == 0 && team_ok(t)) {
    for (int i = s->ctx_pool_start; i < s->ctx_pool_start + s->ctx_pool_len; ++i) {
      rocshmem_ctx_device *e = s->ctxs + i;
      if (atomic_cas<Scope::device, Order::acquire>(&e->magic, 0u, uint32_t(ROCSHMEM_CTX_MAGIC)) == 0u) {
        e->options = options;
        e->team = const_cast<rocshmem_team_device *>(t);
        fence_device();
        claimed = uint64_t(i) + 1;
        break;
      }
    }
  }
  claimed = wg_broadcast(claimed, 0);
  if (claimed == 0) {
    if (thread_id() == 0) *ctx = rocshmem_ctx_t{nullptr, nullptr};
    wg_barrier();
    return ROCSHMEM_ERROR;
  }
  if (thread_id() == 0) *ctx = rocshmem_ctx_t{s->ctxs + (claimed - 1), const_cast<rocshmem_team_device *>(t)};
  wg_barrier();
  return ROCSHMEM_SUCCESS;
}

ROCSHMEM_DEV_INLINE int wg_ctx_create(long options, rocshmem_ctx_t *ctx) {
  // The world team's entry (slot 0) as a handle.
  const rocshmem_device_state *s = state_of(default_ctx());
  return wg_team_create_ctx(reinterpret_cast<rocshmem_team_t>(s->teams), options, ctx);
}

/** Work-group collective: completes the context's operations and returns it to the pool. */
ROCSHMEM_DEV_INLINE void wg_ctx_destroy(rocshmem_ctx_t *ctx) {
  using namespace platform;
  platform::wg_barrier();
  if (thread_id() == 0 && ctx && ctx->ctx_opaque) {
    const rocshmem_device_state *s = state_of(default_ctx());
    rocshmem_ctx_device *e = static_cast<rocshmem_ctx_device *>(ctx->ctx_opaque);
    // Only pool entries go back to the pool (never the default or a host context).
    if (e >= s->ctxs + s->ctx_pool_start && e < s->ctxs + s->ctx_pool_start + s->ctx_pool_len) {
      quiet(*ctx);
      atomic_store<Scope::device, Order::release>(&e->magic, 0u);
    }
    *ctx = rocshmem_ctx_t{nullptr, nullptr};
  }
  wg_barrier();
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_CORE_HPP
