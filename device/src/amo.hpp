/**
 * @file amo.hpp
 * Atomic memory operations on a peer's heap: system-scope atomics through the peer mapping.
 *
 * Every AMO type is 4 or 8 bytes; it is operated on as the unsigned word of its size (two's
 * complement makes add the same for signed types; float and double only fetch, set and swap,
 * which move bits). AMOs are relaxed: ordering with other operations is what fence and
 * quiet are for, as in OpenSHMEM.
 */
#ifndef ROCSHMEM_DEVICE_AMO_HPP
#define ROCSHMEM_DEVICE_AMO_HPP

#include "common.hpp"
#include "route.hpp"

namespace rocshmem {
namespace dev {

enum class AmoOp { fetch, set, swap, compare_swap, fetch_inc, inc, fetch_add, add, fetch_and, and_, fetch_or, or_, fetch_xor, xor_ };
// The RO backend sends these values to the proxy (ROCSHMEM_RO_AMO_*, src/device_abi.rs).
static_assert(int(AmoOp::fetch) == ROCSHMEM_RO_AMO_FETCH && int(AmoOp::compare_swap) == ROCSHMEM_RO_AMO_COMPARE_SWAP &&
                  int(AmoOp::add) == ROCSHMEM_RO_AMO_ADD && int(AmoOp::xor_) == ROCSHMEM_RO_AMO_XOR,
              "AmoOp follows the RO codes");

template <class T>
struct Word {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMO types are 4 or 8 bytes");
  using type = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
};

template <class T>
ROCSHMEM_DEV_INLINE typename Word<T>::type to_word(T v) {
  typename Word<T>::type w;
  __builtin_memcpy(&w, &v, sizeof(T));
  return w;
}

template <class T>
ROCSHMEM_DEV_INLINE T from_word(typename Word<T>::type w) {
  T v;
  __builtin_memcpy(&v, &w, sizeof(T));
  return v;
}

/** A zero of any type (`T()` does not parse for `unsigned int` and friends in generated code). */
template <class T>
ROCSHMEM_DEV_INLINE T zero() {
  return T();
}

/** One AMO; `value` and `cond` are ignored by the ops that take none. Returns the old value. */
template <class T, AmoOp OP>
ROCSHMEM_DEV_INLINE T amo(rocshmem_ctx_t ctx, T *dest, T value, T cond, int pe) {
  using W = typename Word<T>::type;
  using namespace platform;
  // Non-fetching ops need not wait for the old value on a remote transport.
  constexpr bool fetching = !(OP == AmoOp::set || OP == AmoOp::inc || OP == AmoOp::add || OP == AmoOp::and_ ||
                              OP == AmoOp::or_ || OP == AmoOp::xor_);
  uint64_t v64 = 0, c64 = 0;
  __builtin_memcpy(&v64, &value, sizeof(T));
  __builtin_memcpy(&c64, &cond, sizeof(T));
  const uint64_t r = route::amo(ctx, uint8_t(OP), dest, v64, c64, sizeof(T), pe, fetching, [=]() -> uint64_t {
    W *w = reinterpret_cast<W *>(ctx_peer_ptr(ctx, dest, pe));
    const W v = to_word(value);
    constexpr Scope S = Scope::system;
    constexpr Order O = Order::relaxed;
    W old = 0;
    if constexpr (OP == AmoOp::fetch) old = atomic_load<S, O>(w);
    else if constexpr (OP == AmoOp::set) atomic_store<S, O>(w, v);
    else if constexpr (OP == AmoOp::swap) old = atomic_exchange<S, O>(w, v);
    else if constexpr (OP == AmoOp::compare_swap) old = atomic_cas<S, O>(w, to_word(cond), v);
    else if constexpr (OP == AmoOp::inc) atomic_add<S, O>(w, W(1));  // non-fetching: no wait for the old value
    else if constexpr (OP == AmoOp::add) atomic_add<S, O>(w, v);
    else if constexpr (OP == AmoOp::fetch_inc) old = atomic_fetch_add<S, O>(w, W(1));
    else if constexpr (OP == AmoOp::fetch_add) old = atomic_fetch_add<S, O>(w, v);
    else if constexpr (OP == AmoOp::fetch_and || OP == AmoOp::and_) old = atomic_fetch_and<S, O>(w, v);
    else if constexpr (OP == AmoOp::fetch_or || OP == AmoOp::or_) old = atomic_fetch_or<S, O>(w, v);
    else old = atomic_fetch_xor<S, O>(w, v);
    return old;
  });
  return from_word<T>(W(r));
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_AMO_HPP
