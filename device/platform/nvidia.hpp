/**
 * @file nvidia.hpp
 * The platform layer on NVIDIA GPUs (nvcc, or clang -x cuda; sm_70 or newer). Included by
 * platform.hpp; see there for the contract.
 *
 * Everything is inline PTX, so the file needs neither CUDA's headers nor libcu++: it
 * compiles with nvcc and with clang -nocudainc alike. A wave is a warp (32 lanes); warps
 * are consecutive linear thread ids, as the contract says.
 */
#ifndef ROCSHMEM_DEVICE_PLATFORM_NVIDIA_HPP
#define ROCSHMEM_DEVICE_PLATFORM_NVIDIA_HPP

#include <stdint.h>

#include <type_traits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "rocshmem device code needs sm_70 or newer (scoped atomics, nanosleep)"
#endif

#if defined(__device__)
#define ROCSHMEM_DEV __device__
#else
#define ROCSHMEM_DEV __attribute__((device))
#endif
#if defined(__forceinline__)
#define ROCSHMEM_DEV_INLINE ROCSHMEM_DEV __forceinline__
#else
#define ROCSHMEM_DEV_INLINE ROCSHMEM_DEV __attribute__((always_inline)) inline
#endif
#if defined(__CUDA_ARCH__)
#define ROCSHMEM_DEVICE_PASS 1
#else
#define ROCSHMEM_DEVICE_PASS 0
#endif

namespace rocshmem {
namespace platform {

constexpr unsigned kPlatform = 2;

namespace detail {
// The same bits as an unsigned PTX operand.
template <class T>
using bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// Special registers. Not volatile: they do not change while a thread runs, so the compiler
// may reuse a read.
#define ROCSHMEM_NV_SREG(name, reg)          \
  ROCSHMEM_DEV_INLINE uint32_t name() {      \
    uint32_t r;                              \
    asm("mov.u32 %0, %%" reg ";" : "=r"(r)); \
    return r;                                \
  }
ROCSHMEM_NV_SREG(tid_x, "tid.x")
ROCSHMEM_NV_SREG(tid_y, "tid.y")
ROCSHMEM_NV_SREG(tid_z, "tid.z")
ROCSHMEM_NV_SREG(ntid_x, "ntid.x")
ROCSHMEM_NV_SREG(ntid_y, "ntid.y")
ROCSHMEM_NV_SREG(ntid_z, "ntid.z")
ROCSHMEM_NV_SREG(ctaid_x, "ctaid.x")
ROCSHMEM_NV_SREG(ctaid_y, "ctaid.y")
ROCSHMEM_NV_SREG(ctaid_z, "ctaid.z")
ROCSHMEM_NV_SREG(nctaid_x, "nctaid.x")
ROCSHMEM_NV_SREG(nctaid_y, "nctaid.y")
ROCSHMEM_NV_SREG(nctaid_z, "nctaid.z")
ROCSHMEM_NV_SREG(laneid, "laneid")
#undef ROCSHMEM_NV_SREG

// PTX wants the order and scope spelled in the instruction: STMT(sem, scope, ...) is
// expanded for the enclosing template's O and S (discarded branches are never emitted).
#define ROCSHMEM_NV_ORDERS(STMT, scope, ...)         \
  if constexpr (O == Order::relaxed) {               \
    STMT(".relaxed", scope, __VA_ARGS__)             \
  } else if constexpr (O == Order::acquire) {        \
    STMT(".acquire", scope, __VA_ARGS__)             \
  } else if constexpr (O == Order::release) {        \
    STMT(".release", scope, __VA_ARGS__)             \
  } else {                                           \
    STMT(".acq_rel", scope, __VA_ARGS__)             \
  }
#define ROCSHMEM_NV_QUALIFIED(STMT, ...)                   \
  if constexpr (S == Scope::wg) {                          \
    ROCSHMEM_NV_ORDERS(STMT, ".cta", __VA_ARGS__)          \
  } else if constexpr (S == Scope::device) {               \
    ROCSHMEM_NV_ORDERS(STMT, ".gpu", __VA_ARGS__)          \
  } else {                                                 \
    ROCSHMEM_NV_ORDERS(STMT, ".sys", __VA_ARGS__)          \
  }
// c: the operand constraint of the value ("r" 32-bit, "l" 64-bit).
#define ROCSHMEM_NV_LD(sem, scope, ty, c, r, p) \
  asm volatile("ld" sem scope ty " %0, [%1];" : "=" c(r) : "l"(p) : "memory");
#define ROCSHMEM_NV_ST(sem, scope, ty, c, p, v) \
  asm volatile("st" sem scope ty " [%0], %1;" ::"l"(p), c(v) : "memory");
#define ROCSHMEM_NV_RMW(sem, scope, op, c, r, p, v) \
  asm volatile("atom" sem scope op " %0, [%1], %2;" : "=" c(r) : "l"(p), c(v) : "memory");
// red: an atomic update that returns nothing, so the thread does not wait for the old value
// (over NVLink that round trip is microseconds).
#define ROCSHMEM_NV_RED(sem, scope, op, c, p, v) \
  asm volatile("red" sem scope ".global" op " [%0], %1;" ::"l"(p), c(v) : "memory");
#define ROCSHMEM_NV_CAS(sem, scope, op, c, r, p, e, d) \
  asm volatile("atom" sem scope op " %0, [%1], %2, %3;" : "=" c(r) : "l"(p), c(e), c(d) : "memory");

// The atomic primitives of the contract (platform.hpp). Loads have relaxed and acquire forms
// only, stores relaxed and release: O is already mapped.
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T load(const T *p) {
  bits<T> r;
  if constexpr (sizeof(T) == 4) {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_LD, ".u32", "r", r, p)
  } else {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_LD, ".u64", "l", r, p)
  }
  return T(r);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void store(T *p, T v) {
  bits<T> x = bits<T>(v);
  if constexpr (sizeof(T) == 4) {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_ST, ".b32", "r", p, x)
  } else {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_ST, ".b64", "l", p, x)
  }
}

template <Scope S, Order O, Rmw OP, class T>
ROCSHMEM_DEV_INLINE T rmw(T *p, T v) {
  bits<T> r, x = bits<T>(v);
  if constexpr (sizeof(T) == 4) {
    if constexpr (OP == Rmw::add) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".add.u32", "r", r, p, x)
    } else if constexpr (OP == Rmw::exch) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".exch.b32", "r", r, p, x)
    } else if constexpr (OP == Rmw::and_) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".and.b32", "r", r, p, x)
    } else if constexpr (OP == Rmw::or_) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".or.b32", "r", r, p, x)
    } else {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".xor.b32", "r", r, p, x)
    }
  } else {
    if constexpr (OP == Rmw::add) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".add.u64", "l", r, p, x)
    } else if constexpr (OP == Rmw::exch) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".exch.b64", "l", r, p, x)
    } else if constexpr (OP == Rmw::and_) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".and.b64", "l", r, p, x)
    } else if constexpr (OP == Rmw::or_) {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".or.b64", "l", r, p, x)
    } else {
      ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RMW, ".xor.b64", "l", r, p, x)
    }
  }
  return T(r);
}

// red has relaxed and release forms only.
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void red_add(T *p, T v) {
  static_assert(O == Order::relaxed || O == Order::release, "atomic_add is relaxed or release");
  bits<T> x = bits<T>(v);
  if constexpr (sizeof(T) == 4) {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RED, ".add.u32", "r", p, x)
  } else {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_RED, ".add.u64", "l", p, x)
  }
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T cas(T *p, T expected, T desired) {
  bits<T> r, e = bits<T>(expected), d = bits<T>(desired);
  if constexpr (sizeof(T) == 4) {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_CAS, ".cas.b32", "r", r, p, e, d)
  } else {
    ROCSHMEM_NV_QUALIFIED(ROCSHMEM_NV_CAS, ".cas.b64", "l", r, p, e, d)
  }
  return T(r);
}

#undef ROCSHMEM_NV_CAS
#undef ROCSHMEM_NV_RED
#undef ROCSHMEM_NV_RMW
#undef ROCSHMEM_NV_ST
#undef ROCSHMEM_NV_LD
#undef ROCSHMEM_NV_QUALIFIED
#undef ROCSHMEM_NV_ORDERS
}  // namespace detail

// ---- ids and sizes ----------------------------------------------------------------------
ROCSHMEM_DEV_INLINE uint32_t wave_size() { return 32; }
ROCSHMEM_DEV_INLINE uint32_t thread_id() {
  return detail::tid_x() + detail::ntid_x() * (detail::tid_y() + detail::ntid_y() * detail::tid_z());
}
ROCSHMEM_DEV_INLINE uint32_t block_size() { return detail::ntid_x() * detail::ntid_y() * detail::ntid_z(); }
ROCSHMEM_DEV_INLINE uint32_t block_id() {
  return detail::ctaid_x() + detail::nctaid_x() * (detail::ctaid_y() + detail::nctaid_y() * detail::ctaid_z());
}
ROCSHMEM_DEV_INLINE uint32_t grid_size() { return detail::nctaid_x() * detail::nctaid_y() * detail::nctaid_z(); }
ROCSHMEM_DEV_INLINE uint32_t lane_id() { return detail::laneid(); }
// %warpid is not stable (a warp may migrate), so the wave is computed from the linear id. The
// constant 32 (not wave_size()) lets the compiler bound wave_lanes() (measured: 16 more SASS
// instructions in rocshmem_putmem_wave with wave_size()).
ROCSHMEM_DEV_INLINE uint32_t wave_id() { return thread_id() / 32; }
ROCSHMEM_DEV_INLINE uint32_t waves_per_block() { return (block_size() + 31) / 32; }
ROCSHMEM_DEV_INLINE uint32_t wave_lanes() {
  uint32_t rest = block_size() - wave_id() * 32;
  return rest < 32 ? rest : 32;
}

// ---- sync -------------------------------------------------------------------------------
namespace detail {
// The lanes that exist in the caller's warp (the last warp of a block may be partial).
ROCSHMEM_DEV_INLINE uint32_t present_mask() {
  uint32_t n = wave_lanes();
  return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}
}  // namespace detail

/** __syncthreads: barrier 0 also orders the group's memory accesses around it. */
ROCSHMEM_DEV_INLINE void wg_barrier() { asm volatile("bar.sync 0;" ::: "memory"); }
/** __syncwarp over the present lanes (bar.warp.sync orders memory among them). */
ROCSHMEM_DEV_INLINE void wave_sync() { asm volatile("bar.warp.sync %0;" ::"r"(detail::present_mask()) : "memory"); }
/** Lane src_lane's v (src_lane modulo 32, as __shfl_sync) to every lane. */
ROCSHMEM_DEV_INLINE uint64_t wave_broadcast(uint64_t v, uint32_t src_lane) {
  wave_sync();
  uint32_t mask = detail::present_mask(), lane = src_lane & 31, lo = uint32_t(v), hi = uint32_t(v >> 32);
  asm volatile("shfl.sync.idx.b32 %0, %0, %1, 0x1f, %2;" : "+r"(lo) : "r"(lane), "r"(mask));
  asm volatile("shfl.sync.idx.b32 %0, %0, %1, 0x1f, %2;" : "+r"(hi) : "r"(lane), "r"(mask));
  return uint64_t{hi} << 32 | lo;
}

// ---- fences (fence.sc: what __threadfence_block / __threadfence / _system compile to) ----
ROCSHMEM_DEV_INLINE void fence_wg() { asm volatile("fence.sc.cta;" ::: "memory"); }
ROCSHMEM_DEV_INLINE void fence_device() { asm volatile("fence.sc.gpu;" ::: "memory"); }
ROCSHMEM_DEV_INLINE void fence_system() { asm volatile("fence.sc.sys;" ::: "memory"); }

/** A 64-bit word that no one writes while kernels run (core tables): ld.global.nc, through the
 *  read-only cache. An asm load, so the compiler cannot merge it with a load of another space. */
ROCSHMEM_DEV_INLINE uint64_t load_readonly(const uint64_t *p) {
  uint64_t v;
  asm("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

// ---- polling ----------------------------------------------------------------------------
/** __nanosleep: 32 ns doubling to ~10 us. */
ROCSHMEM_DEV_INLINE void backoff(uint32_t round) {
  // Most waits end within a few microseconds (a flag from a peer over NVLink): poll without
  // sleeping first, since a sleep of even 32 ns rounds up to the scheduler's granularity and
  // adds whole microseconds to a round trip; only a long wait sleeps, growing to 10 us.
  if (round < 4096) return;
  uint32_t r = round - 4096;
  uint32_t ns = r < 9 ? 32u << r : 10000u;
  asm volatile("nanosleep.u32 %0;" ::"r"(ns));
}

// ---- trap -------------------------------------------------------------------------------
/** Stops the kernel (an error the launch reports) on a state device code cannot go on from. */
[[noreturn]] ROCSHMEM_DEV_INLINE void trap() {
  asm volatile("trap;");
  __builtin_unreachable();
}

// ---- clock ------------------------------------------------------------------------------
/** %globaltimer: nanoseconds (updated every ~1 us on most GPUs). */
ROCSHMEM_DEV_INLINE uint64_t clock_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace platform
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_PLATFORM_NVIDIA_HPP
