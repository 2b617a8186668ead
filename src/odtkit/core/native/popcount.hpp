// Popcount kernels with run-time dispatch.
//
// The wheel is built for baseline x86-64 (no -march), where __builtin_popcountll is a call to a
// software routine. Each hot kernel is therefore compiled twice, for the baseline and with
// target("popcnt"), and the Problem decides once, at construction, which one its searches use:
// the POPCNT version when the CPU has it (checked once, in a function-local static), unless the
// caller asks for the portable one (benchmarks, tests). The choice travels with the Problem, so
// there is no global switch. On other architectures (aarch64 counts bits with NEON at
// baseline) both modes run the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ODTKIT_POPCNT_DISPATCH 1
#define ODTKIT_TARGET_POPCNT __attribute__((target("popcnt")))
#else
#define ODTKIT_POPCNT_DISPATCH 0
#define ODTKIT_TARGET_POPCNT
#endif

namespace odtkit {

enum class PopcountMode { portable, hardware };

// True when the kernels can use a hardware popcount instruction on this CPU.
bool cpu_has_hardware_popcount();
// "auto": hardware when the CPU has it, else portable; "portable": always the baseline code.
// Throws std::invalid_argument on another name.
PopcountMode parse_popcount_mode(const std::string& request);
const char* popcount_mode_name(PopcountMode mode);

namespace kernels {

// Both variants of a kernel; call through the dispatching functions below.
#define ODTKIT_KERNEL_PAIR(ret, name, params) \
  ret name##_portable params;                 \
  ODTKIT_TARGET_POPCNT ret name##_hardware params;

// sum_i 2^bits[i] * popcount(s & mask & planes[i]) over n_words words; planes are n_planes
// consecutive word arrays; mask may be null.
ODTKIT_KERNEL_PAIR(std::uint64_t, plane_sum,
                   (const std::uint64_t* s, const std::uint64_t* mask,
                    const std::uint64_t* planes, const int* bits, std::size_t n_planes,
                    std::size_t n_words))
// sum_b 2^b * popcount(a & b & plane_b) with the planes of word k interleaved at
// planes[k * stride + offset + b] (CORELS's mass counter); b may be null.
ODTKIT_KERNEL_PAIR(std::uint64_t, interleaved_plane_sum,
                   (const std::uint64_t* a, const std::uint64_t* b,
                    const std::uint64_t* planes, std::size_t n_words, int stride, int offset,
                    int n_planes))
// popcount(a) and popcount(a ^ b) over n_words words
ODTKIT_KERNEL_PAIR(std::size_t, count, (const std::uint64_t* a, std::size_t n_words))
ODTKIT_KERNEL_PAIR(std::size_t, count_xor,
                   (const std::uint64_t* a, const std::uint64_t* b, std::size_t n_words))
// The depth-two solver's pair counts on compacted supports, one row i at a time:
// out[(j - i) * n_planes + p] = popcount(feats_i & feats_j & planes_p) for j = i .. n_feats - 1,
// feats being n_feats and planes n_planes consecutive word arrays of n_words words; scratch
// holds n_planes * n_words words.
ODTKIT_KERNEL_PAIR(void, pair_plane_row,
                   (const std::uint64_t* feats, std::size_t n_feats, std::size_t i,
                    const std::uint64_t* planes, std::size_t n_planes, std::size_t n_words,
                    std::uint64_t* scratch, std::uint32_t* out))
#undef ODTKIT_KERNEL_PAIR

#if ODTKIT_POPCNT_DISPATCH
#define ODTKIT_DISPATCH(mode, name, ...) \
  ((mode) == PopcountMode::hardware ? name##_hardware(__VA_ARGS__) : name##_portable(__VA_ARGS__))
#else
#define ODTKIT_DISPATCH(mode, name, ...) ((void)(mode), name##_portable(__VA_ARGS__))
#endif

inline std::uint64_t plane_sum(PopcountMode mode, const std::uint64_t* s,
                               const std::uint64_t* mask, const std::uint64_t* planes,
                               const int* bits, std::size_t n_planes, std::size_t n_words) {
  return ODTKIT_DISPATCH(mode, plane_sum, s, mask, planes, bits, n_planes, n_words);
}
inline std::uint64_t interleaved_plane_sum(PopcountMode mode, const std::uint64_t* a,
                                           const std::uint64_t* b, const std::uint64_t* planes,
                                           std::size_t n_words, int stride, int offset,
                                           int n_planes) {
  return ODTKIT_DISPATCH(mode, interleaved_plane_sum, a, b, planes, n_words, stride, offset,
                         n_planes);
}
inline std::size_t count(PopcountMode mode, const std::uint64_t* a, std::size_t n_words) {
  return ODTKIT_DISPATCH(mode, count, a, n_words);
}
inline std::size_t count_xor(PopcountMode mode, const std::uint64_t* a, const std::uint64_t* b,
                             std::size_t n_words) {
  return ODTKIT_DISPATCH(mode, count_xor, a, b, n_words);
}
inline void pair_plane_row(PopcountMode mode, const std::uint64_t* feats, std::size_t n_feats,
                           std::size_t i, const std::uint64_t* planes, std::size_t n_planes,
                           std::size_t n_words, std::uint64_t* scratch, std::uint32_t* out) {
  ODTKIT_DISPATCH(mode, pair_plane_row, feats, n_feats, i, planes, n_planes, n_words, scratch,
                  out);
}
#undef ODTKIT_DISPATCH

}  // namespace kernels
}  // namespace odtkit
