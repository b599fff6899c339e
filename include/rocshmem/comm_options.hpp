/**
 * @file comm_options.hpp
 * Compile-time options of communication calls (upstream's header of the same name): tag types
 * that say how a call may be carried out, gathered in rocshmem::CommOpt.
 *
 *   initiate         start the transfer now (true), or leave it for a later call to start;
 *   concurrent       the context may be used by several threads at once (so serialise);
 *   flow_control     the library keeps the number of operations in flight within capacity;
 *   completion       which operations are tracked to completion: Every, Last (of a group), None;
 *   relaxed_ordering completion may use relaxed (targeted) ordering.
 *
 * Upstream's GDA backend reads them; "not exposed by the public rocSHMEM APIs" (its 3.8.0
 * changelog). No function of this library takes them: they are here so that code written with
 * them compiles. CommOpt<...> takes the tags in any order, each at most once; a missing one has
 * its default (initiate, concurrent, flow_control: true; completion: Every; relaxed_ordering:
 * false).
 */
#ifndef ROCSHMEM_COMM_OPTIONS_HPP
#define ROCSHMEM_COMM_OPTIONS_HPP

#include <type_traits>

#include "rocshmem_common.hpp"

namespace rocshmem {
namespace CommOption {

/** An option tag: a type that carries its value. */
template <auto V>
using constant_t = std::integral_constant<decltype(V), V>;

/** Completion-tracking granularity. */
enum class CompletionScope {
  Every,  // every operation is tracked to completion
  Last,   // only the last operation of a group
  None,   // no tracking
};

template <bool V>
struct initiate_tag : constant_t<V> {};
template <bool V>
struct concurrent_tag : constant_t<V> {};
template <bool V>
struct flow_control_tag : constant_t<V> {};
template <CompletionScope V>
struct completion_tag : constant_t<V> {};
template <bool V>
struct relaxed_ordering_tag : constant_t<V> {};

namespace detail {
/** Which option a tag type sets (0..4), or -1 for a type that is not an option tag. */
template <class T>
struct kind : std::integral_constant<int, -1> {};
template <bool V>
struct kind<initiate_tag<V>> : std::integral_constant<int, 0> {};
template <bool V>
struct kind<concurrent_tag<V>> : std::integral_constant<int, 1> {};
template <bool V>
struct kind<flow_control_tag<V>> : std::integral_constant<int, 2> {};
template <CompletionScope V>
struct kind<completion_tag<V>> : std::integral_constant<int, 3> {};
template <bool V>
struct kind<relaxed_ordering_tag<V>> : std::integral_constant<int, 4> {};

/** The tag of kind K among Os, or Default. */
template <int K, class Default, class... Os>
struct pick {
  using type = Default;
};
template <int K, class Default, class O, class... Os>
struct pick<K, Default, O, Os...> {
  using type = std::conditional_t<kind<O>::value == K, O, typename pick<K, Default, Os...>::type>;
};

template <int K, class... Os>
constexpr int count() {
  return ((kind<Os>::value == K ? 1 : 0) + ... + 0);
}
}  // namespace detail

/** The options of a call. */
template <class... Options>
struct CommOpt {
  static_assert(((detail::kind<Options>::value >= 0) && ...), "CommOpt: not an option tag");
  static_assert(detail::count<0, Options...>() <= 1 && detail::count<1, Options...>() <= 1 &&
                    detail::count<2, Options...>() <= 1 && detail::count<3, Options...>() <= 1 &&
                    detail::count<4, Options...>() <= 1,
                "CommOpt: an option is given twice");

  static constexpr bool Initiate = detail::pick<0, initiate_tag<true>, Options...>::type::value;
  static constexpr bool Concurrent = detail::pick<1, concurrent_tag<true>, Options...>::type::value;
  static constexpr bool FlowControl = detail::pick<2, flow_control_tag<true>, Options...>::type::value;
  static constexpr CompletionScope Completion =
      detail::pick<3, completion_tag<CompletionScope::Every>, Options...>::type::value;
  static constexpr bool RelaxedOrdering = detail::pick<4, relaxed_ordering_tag<false>, Options...>::type::value;

  ROCSHMEM_HOST_DEVICE constexpr CommOpt() {}
  template <int N = sizeof...(Options), std::enable_if_t<(N > 0), int> = 0>
  ROCSHMEM_HOST_DEVICE constexpr CommOpt(Options...) {}

  /** Whether an operation of a group is tracked to completion (`wf_info.is_pe_group_last`:
   *  it is the group's last). */
  template <class WFInfo>
  ROCSHMEM_HOST_DEVICE static constexpr bool signal_completion(const WFInfo &wf_info) {
    return Completion == CompletionScope::Every || (Completion == CompletionScope::Last && wf_info.is_pe_group_last);
  }
  /** The same for an operation that is a group of its own. */
  ROCSHMEM_HOST_DEVICE static constexpr bool signal_completion_single() {
    return Completion != CompletionScope::None;
  }
};

// The deduction guide is usable in device code too (clang before 22 takes guides as host
// functions unless told; 22 and later take them as both and warn about the attributes).
#if defined(__clang__) && __clang_major__ >= 22
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-attributes"
#endif
template <class... Options>
ROCSHMEM_HOST_DEVICE CommOpt(Options...) -> CommOpt<Options...>;
#if defined(__clang__) && __clang_major__ >= 22
#pragma clang diagnostic pop
#endif

}  // namespace CommOption

using CommOption::CommOpt;
using CommOption::CompletionScope;

/** The tags as values: CommOpt{Initiate<false>, Completion<CompletionScope::Last>}. */
template <auto V>
constexpr inline auto Initiate = CommOption::initiate_tag<V>{};
template <auto V>
constexpr inline auto Concurrent = CommOption::concurrent_tag<V>{};
template <auto V>
constexpr inline auto FlowControl = CommOption::flow_control_tag<V>{};
template <auto V>
constexpr inline auto Completion = CommOption::completion_tag<V>{};
template <auto V>
constexpr inline auto RelaxedOrdering = CommOption::relaxed_ordering_tag<V>{};

}  // namespace rocshmem

#endif  // ROCSHMEM_COMM_OPTIONS_HPP
