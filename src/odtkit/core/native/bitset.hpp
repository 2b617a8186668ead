// Fixed-length bitset over samples (or equivalence classes) stored as 64-bit words.
// The tail bits past `size()` are always zero, so popcount over whole words is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace odtkit {

class Bitset {
 public:
  Bitset() = default;
  explicit Bitset(std::size_t n_bits, bool value = false)
      : n_bits_(n_bits), words_(word_count(n_bits), value ? ~std::uint64_t{0} : 0) {
    clear_tail();
  }

  static std::size_t word_count(std::size_t n_bits) { return (n_bits + 63) / 64; }

  std::size_t size() const { return n_bits_; }
  std::size_t n_words() const { return words_.size(); }
  const std::uint64_t* data() const { return words_.data(); }
  std::uint64_t* data() { return words_.data(); }
  const std::vector<std::uint64_t>& words() const { return words_; }

  bool get(std::size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
  void set(std::size_t i, bool value = true) {
    const std::uint64_t mask = std::uint64_t{1} << (i & 63);
    if (value) {
      words_[i >> 6] |= mask;
    } else {
      words_[i >> 6] &= ~mask;
    }
  }

  std::size_t count() const {
    std::size_t total = 0;
    for (std::uint64_t w : words_) total += static_cast<std::size_t>(__builtin_popcountll(w));
    return total;
  }
  bool any() const {
    for (std::uint64_t w : words_)
      if (w) return true;
    return false;
  }

  Bitset operator&(const Bitset& other) const {
    check_same_size(other);
    Bitset out(n_bits_);
    for (std::size_t k = 0; k < words_.size(); ++k) out.words_[k] = words_[k] & other.words_[k];
    return out;
  }
  Bitset operator|(const Bitset& other) const {
    check_same_size(other);
    Bitset out(n_bits_);
    for (std::size_t k = 0; k < words_.size(); ++k) out.words_[k] = words_[k] | other.words_[k];
    return out;
  }
  Bitset operator^(const Bitset& other) const {
    check_same_size(other);
    Bitset out(n_bits_);
    for (std::size_t k = 0; k < words_.size(); ++k) out.words_[k] = words_[k] ^ other.words_[k];
    return out;
  }
  // this AND NOT other
  Bitset and_not(const Bitset& other) const {
    check_same_size(other);
    Bitset out(n_bits_);
    for (std::size_t k = 0; k < words_.size(); ++k) out.words_[k] = words_[k] & ~other.words_[k];
    return out;
  }
  Bitset operator~() const {
    Bitset out(n_bits_);
    for (std::size_t k = 0; k < words_.size(); ++k) out.words_[k] = ~words_[k];
    out.clear_tail();
    return out;
  }
  // popcount(this AND other) without materialising the intersection: the hot kernel of every search.
  std::size_t count_and(const Bitset& other) const {
    check_same_size(other);
    std::size_t total = 0;
    for (std::size_t k = 0; k < words_.size(); ++k)
      total += static_cast<std::size_t>(__builtin_popcountll(words_[k] & other.words_[k]));
    return total;
  }
  bool operator==(const Bitset& other) const {
    return n_bits_ == other.n_bits_ && words_ == other.words_;
  }
  bool operator!=(const Bitset& other) const { return !(*this == other); }

 private:
  void clear_tail() {
    const std::size_t rem = n_bits_ & 63;
    if (rem && !words_.empty()) words_.back() &= (std::uint64_t{1} << rem) - 1;
  }
  void check_same_size(const Bitset& other) const {
    if (other.n_bits_ != n_bits_) throw std::invalid_argument("bitsets differ in length");
  }

  std::size_t n_bits_ = 0;
  std::vector<std::uint64_t> words_;
};

// Word-level kernels over raw uint64 arrays of equal length `n_words` (zero tails assumed).
// The searches keep supports in reusable scratch buffers, so these work on pointers rather than
// Bitset objects to avoid an allocation per intersection.
namespace words {
inline std::size_t count(const std::uint64_t* a, std::size_t n_words) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n_words; ++k) total += static_cast<std::size_t>(__builtin_popcountll(a[k]));
  return total;
}
inline std::size_t count_and(const std::uint64_t* a, const std::uint64_t* b, std::size_t n_words) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n_words; ++k)
    total += static_cast<std::size_t>(__builtin_popcountll(a[k] & b[k]));
  return total;
}
// popcount(a & b & c): class/plane counts of one side of a split without materialising it.
inline std::size_t count_and3(const std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c,
                              std::size_t n_words) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n_words; ++k)
    total += static_cast<std::size_t>(__builtin_popcountll(a[k] & b[k] & c[k]));
  return total;
}
inline void and_into(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b,
                     std::size_t n_words) {
  for (std::size_t k = 0; k < n_words; ++k) out[k] = a[k] & b[k];
}
inline void and_not_into(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b,
                         std::size_t n_words) {
  for (std::size_t k = 0; k < n_words; ++k) out[k] = a[k] & ~b[k];
}
inline bool any(const std::uint64_t* a, std::size_t n_words) {
  for (std::size_t k = 0; k < n_words; ++k)
    if (a[k]) return true;
  return false;
}
// 64-bit hash of a word array (splitmix-style finaliser per word, order dependent).
inline std::uint64_t hash(const std::uint64_t* a, std::size_t n_words, std::uint64_t seed = 0) {
  std::uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
  for (std::size_t k = 0; k < n_words; ++k) {
    std::uint64_t x = a[k] + 0x9e3779b97f4a7c15ULL * (k + 1);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    h = (h ^ (x ^ (x >> 31))) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}
}  // namespace words

}  // namespace odtkit
