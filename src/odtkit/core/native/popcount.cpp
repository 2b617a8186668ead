#include "popcount.hpp"

#include <stdexcept>

namespace odtkit {

bool cpu_has_hardware_popcount() {
#if ODTKIT_POPCNT_DISPATCH
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") != 0;
  }();
  return has;
#else
  return false;
#endif
}

PopcountMode parse_popcount_mode(const std::string& request) {
  if (request == "auto")
    return cpu_has_hardware_popcount() ? PopcountMode::hardware : PopcountMode::portable;
  if (request == "portable") return PopcountMode::portable;
  throw std::invalid_argument("popcount must be 'auto' or 'portable', got '" + request + "'");
}

const char* popcount_mode_name(PopcountMode mode) {
  return mode == PopcountMode::hardware ? "hardware" : "portable";
}

namespace kernels {
namespace {

// The bodies, inlined into both variants below so that __builtin_popcountll is expanded with
// each variant's target (a call to libgcc's routine at baseline, POPCNT in the other).
#define ODTKIT_ALWAYS_INLINE inline __attribute__((always_inline))

ODTKIT_ALWAYS_INLINE std::uint64_t plane_sum_body(const std::uint64_t* s,
                                                  const std::uint64_t* mask,
                                                  const std::uint64_t* planes, const int* bits,
                                                  std::size_t n_planes, std::size_t n_words) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n_planes; ++i) {
    const std::uint64_t* p = planes + i * n_words;
    std::uint64_t c = 0;
    if (mask) {
      for (std::size_t k = 0; k < n_words; ++k)
        c += static_cast<std::uint64_t>(__builtin_popcountll(s[k] & mask[k] & p[k]));
    } else {
      for (std::size_t k = 0; k < n_words; ++k)
        c += static_cast<std::uint64_t>(__builtin_popcountll(s[k] & p[k]));
    }
    total += c << bits[i];
  }
  return total;
}

ODTKIT_ALWAYS_INLINE std::uint64_t interleaved_body(const std::uint64_t* a,
                                                    const std::uint64_t* b,
                                                    const std::uint64_t* planes,
                                                    std::size_t n_words, int stride, int offset,
                                                    int n_planes) {
  std::uint64_t acc = 0;
  for (std::size_t k = 0; k < n_words; ++k) {
    const std::uint64_t c = b ? (a[k] & b[k]) : a[k];
    if (!c) continue;
    const std::uint64_t* p = planes + k * static_cast<std::size_t>(stride) + offset;
    for (int bit = 0; bit < n_planes; ++bit)
      acc += static_cast<std::uint64_t>(__builtin_popcountll(c & p[bit])) << bit;
  }
  return acc;
}

ODTKIT_ALWAYS_INLINE std::size_t count_body(const std::uint64_t* a, std::size_t n_words) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n_words; ++k)
    total += static_cast<std::size_t>(__builtin_popcountll(a[k]));
  return total;
}

ODTKIT_ALWAYS_INLINE std::size_t count_xor_body(const std::uint64_t* a, const std::uint64_t* b,
                                                std::size_t n_words) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n_words; ++k)
    total += static_cast<std::size_t>(__builtin_popcountll(a[k] ^ b[k]));
  return total;
}

// Two planes over a fixed number of words W: the sweep unrolled whole (no loop per pair).
template <std::size_t W>
ODTKIT_ALWAYS_INLINE void two_plane_row(const std::uint64_t* feats, std::size_t n_feats,
                                        std::size_t i, const std::uint64_t* a,
                                        const std::uint64_t* b, std::uint32_t* out) {
  for (std::size_t j = i; j < n_feats; ++j) {
    const std::uint64_t* fj = feats + j * W;
    std::uint64_t ca = 0, cb = 0;
    for (std::size_t k = 0; k < W; ++k) {
      ca += static_cast<std::uint64_t>(__builtin_popcountll(a[k] & fj[k]));
      cb += static_cast<std::uint64_t>(__builtin_popcountll(b[k] & fj[k]));
    }
    out[(j - i) * 2] = static_cast<std::uint32_t>(ca);
    out[(j - i) * 2 + 1] = static_cast<std::uint32_t>(cb);
  }
}

ODTKIT_ALWAYS_INLINE void pair_plane_row_body(const std::uint64_t* feats, std::size_t n_feats,
                                              std::size_t i, const std::uint64_t* planes,
                                              std::size_t n_planes, std::size_t n_words,
                                              std::uint64_t* scratch, std::uint32_t* out) {
  // feats_i & plane_p once per row, then one AND + popcount per (j, p, word)
  const std::uint64_t* fi = feats + i * n_words;
  for (std::size_t p = 0; p < n_planes; ++p)
    for (std::size_t k = 0; k < n_words; ++k) scratch[p * n_words + k] = fi[k] & planes[p * n_words + k];
  if (n_planes == 2 && n_words <= 8) {
    // small supports (a few hundred points: most depth-two sub-problems) have too few words
    // for a loop per pair to pay for itself
    const std::uint64_t* a = scratch;
    const std::uint64_t* b = scratch + n_words;
    switch (n_words) {
      case 1: return two_plane_row<1>(feats, n_feats, i, a, b, out);
      case 2: return two_plane_row<2>(feats, n_feats, i, a, b, out);
      case 3: return two_plane_row<3>(feats, n_feats, i, a, b, out);
      case 4: return two_plane_row<4>(feats, n_feats, i, a, b, out);
      case 5: return two_plane_row<5>(feats, n_feats, i, a, b, out);
      case 6: return two_plane_row<6>(feats, n_feats, i, a, b, out);
      case 7: return two_plane_row<7>(feats, n_feats, i, a, b, out);
      case 8: return two_plane_row<8>(feats, n_feats, i, a, b, out);
      default: break;
    }
  }
  for (std::size_t j = i; j < n_feats; ++j) {
    const std::uint64_t* fj = feats + j * n_words;
    std::uint32_t* o = out + (j - i) * n_planes;
    if (n_planes == 2) {
      // the common case (two classes, unit weights): both planes in one sweep of f_j
      const std::uint64_t* a = scratch;
      const std::uint64_t* b = scratch + n_words;
      std::uint64_t ca = 0, cb = 0;
      for (std::size_t k = 0; k < n_words; ++k) {
        ca += static_cast<std::uint64_t>(__builtin_popcountll(a[k] & fj[k]));
        cb += static_cast<std::uint64_t>(__builtin_popcountll(b[k] & fj[k]));
      }
      o[0] = static_cast<std::uint32_t>(ca);
      o[1] = static_cast<std::uint32_t>(cb);
      continue;
    }
    for (std::size_t p = 0; p < n_planes; ++p) {
      const std::uint64_t* a = scratch + p * n_words;
      std::uint64_t c = 0;
      for (std::size_t k = 0; k < n_words; ++k)
        c += static_cast<std::uint64_t>(__builtin_popcountll(a[k] & fj[k]));
      o[p] = static_cast<std::uint32_t>(c);
    }
  }
}

}  // namespace

#define ODTKIT_KERNEL_VARIANTS(ret, name, body, params, args) \
  ret name##_portable params { return body args; }            \
  ODTKIT_TARGET_POPCNT ret name##_hardware params { return body args; }

ODTKIT_KERNEL_VARIANTS(std::uint64_t, plane_sum, plane_sum_body,
                       (const std::uint64_t* s, const std::uint64_t* mask,
                        const std::uint64_t* planes, const int* bits, std::size_t n_planes,
                        std::size_t n_words),
                       (s, mask, planes, bits, n_planes, n_words))
ODTKIT_KERNEL_VARIANTS(std::uint64_t, interleaved_plane_sum, interleaved_body,
                       (const std::uint64_t* a, const std::uint64_t* b,
                        const std::uint64_t* planes, std::size_t n_words, int stride,
                        int offset, int n_planes),
                       (a, b, planes, n_words, stride, offset, n_planes))
ODTKIT_KERNEL_VARIANTS(std::size_t, count, count_body,
                       (const std::uint64_t* a, std::size_t n_words), (a, n_words))
ODTKIT_KERNEL_VARIANTS(std::size_t, count_xor, count_xor_body,
                       (const std::uint64_t* a, const std::uint64_t* b, std::size_t n_words),
                       (a, b, n_words))

ODTKIT_KERNEL_VARIANTS(void, pair_plane_row, pair_plane_row_body,
                       (const std::uint64_t* feats, std::size_t n_feats, std::size_t i,
                        const std::uint64_t* planes, std::size_t n_planes, std::size_t n_words,
                        std::uint64_t* scratch, std::uint32_t* out),
                       (feats, n_feats, i, planes, n_planes, n_words, scratch, out))

}  // namespace kernels
}  // namespace odtkit
