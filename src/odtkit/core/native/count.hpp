// Exact non-negative integer counts of unbounded size (the number of trees in a Rashomon set
// reaches 10^40 and beyond at depth 6 with a loose bound, so no fixed width is enough).
//
// Values below 2^128 live in one unsigned __int128 (the fast path: every count on the
// benchmark sets); an operation that would overflow it moves to little-endian base-2^32 limbs.
// Only what the Rashomon set needs: +, -, *, compare, divmod, and hex text to and from Python
// (which turns it into an int exactly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace odtkit {

class Count {
 public:
  using u128 = unsigned __int128;

  Count() = default;
  explicit Count(std::uint64_t value) : small_(value) {}

  bool is_zero() const { return big_.empty() && small_ == 0; }
  // the value when it is below 2^128 (the fast path of the count-only build), and back
  bool fits_u128() const { return big_.empty(); }
  u128 as_u128() const { return small_; }
  static Count from_u128(u128 value) {
    Count c;
    c.small_ = value;
    return c;
  }
  // the value if it fits in 64 bits, else UINT64_MAX (saturated, for progress and stats)
  std::uint64_t saturated() const;
  double to_double() const;

  Count& operator+=(const Count& other);
  // requires *this >= other (throws std::logic_error otherwise: a bug, never user input)
  Count& operator-=(const Count& other);
  friend Count operator*(const Count& a, const Count& b);
  friend Count operator+(Count a, const Count& b) { return a += b; }

  // -1, 0, 1
  static int compare(const Count& a, const Count& b);
  friend bool operator<(const Count& a, const Count& b) { return compare(a, b) < 0; }
  friend bool operator==(const Count& a, const Count& b) { return compare(a, b) == 0; }

  // quotient and remainder of a / b, b > 0 (throws std::invalid_argument on b = 0)
  static void divmod(const Count& a, const Count& b, Count& quotient, Count& remainder);

  // lower-case hexadecimal without prefix ("0" for zero), and back (throws on bad text)
  std::string to_hex() const;
  static Count from_hex(const std::string& text);

 private:
  using Limbs = std::vector<std::uint32_t>;
  Limbs limbs() const;                       // the value as limbs, whichever form holds it
  static Count from_limbs(Limbs limbs);      // normalizes: back to small_ when it fits

  u128 small_ = 0;
  Limbs big_;  // non-empty iff the value is >= 2^128 (then small_ is unused)
};

}  // namespace odtkit
