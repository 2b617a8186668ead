#include "count.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace odtkit {

namespace {

using Limbs = std::vector<std::uint32_t>;

void trim(Limbs& x) {
  while (!x.empty() && x.back() == 0) x.pop_back();
}

int compare_limbs(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

Limbs add_limbs(const Limbs& a, const Limbs& b) {
  Limbs out(std::max(a.size(), b.size()) + 1, 0);
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t sum = carry;
    if (i < a.size()) sum += a[i];
    if (i < b.size()) sum += b[i];
    out[i] = static_cast<std::uint32_t>(sum);
    carry = sum >> 32;
  }
  trim(out);
  return out;
}

// a - b with a >= b
Limbs sub_limbs(const Limbs& a, const Limbs& b) {
  Limbs out(a.size(), 0);
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::int64_t diff = static_cast<std::int64_t>(a[i]) - borrow -
                        (i < b.size() ? static_cast<std::int64_t>(b[i]) : 0);
    borrow = diff < 0 ? 1 : 0;
    out[i] = static_cast<std::uint32_t>(diff + (borrow << 32));
  }
  trim(out);
  return out;
}

Limbs mul_limbs(const Limbs& a, const Limbs& b) {
  if (a.empty() || b.empty()) return {};
  Limbs out(a.size() + b.size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::uint64_t carry = 0;
    for (std::size_t j = 0; j < b.size(); ++j) {
      const std::uint64_t cur =
          static_cast<std::uint64_t>(a[i]) * b[j] + out[i + j] + carry;
      out[i + j] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
    std::size_t k = i + b.size();
    while (carry) {
      const std::uint64_t cur = static_cast<std::uint64_t>(out[k]) + carry;
      out[k++] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
  }
  trim(out);
  return out;
}

std::size_t bit_length(const Limbs& x) {
  if (x.empty()) return 0;
  std::uint32_t top = x.back();
  std::size_t bits = 0;
  while (top) {
    ++bits;
    top >>= 1;
  }
  return (x.size() - 1) * 32 + bits;
}

}  // namespace

Count::Limbs Count::limbs() const {
  if (!big_.empty()) return big_;
  Limbs out;
  u128 v = small_;
  while (v) {
    out.push_back(static_cast<std::uint32_t>(v));
    v >>= 32;
  }
  return out;
}

Count Count::from_limbs(Limbs x) {
  trim(x);
  Count out;
  if (x.size() <= 4) {
    for (std::size_t i = x.size(); i-- > 0;) out.small_ = (out.small_ << 32) | x[i];
  } else {
    out.big_ = std::move(x);
  }
  return out;
}

std::uint64_t Count::saturated() const {
  if (!big_.empty() || small_ > std::numeric_limits<std::uint64_t>::max())
    return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(small_);
}

double Count::to_double() const {
  if (big_.empty()) return static_cast<double>(small_);
  double out = 0.0;
  for (std::size_t i = big_.size(); i-- > 0;) out = out * 4294967296.0 + big_[i];
  return out;
}

Count& Count::operator+=(const Count& other) {
  if (big_.empty() && other.big_.empty()) {
    u128 sum;
    if (!__builtin_add_overflow(small_, other.small_, &sum)) {
      small_ = sum;
      return *this;
    }
  }
  *this = from_limbs(add_limbs(limbs(), other.limbs()));
  return *this;
}

Count& Count::operator-=(const Count& other) {
  if (compare(*this, other) < 0) throw std::logic_error("Count: negative difference");
  if (big_.empty()) {
    small_ -= other.small_;  // other is small too, since it is not larger
    return *this;
  }
  *this = from_limbs(sub_limbs(limbs(), other.limbs()));
  return *this;
}

Count operator*(const Count& a, const Count& b) {
  if (a.big_.empty() && b.big_.empty()) {
    Count::u128 product;
    if (!__builtin_mul_overflow(a.small_, b.small_, &product)) {
      Count out;
      out.small_ = product;
      return out;
    }
  }
  return Count::from_limbs(mul_limbs(a.limbs(), b.limbs()));
}

int Count::compare(const Count& a, const Count& b) {
  if (a.big_.empty() && b.big_.empty())
    return a.small_ < b.small_ ? -1 : (a.small_ > b.small_ ? 1 : 0);
  return compare_limbs(a.limbs(), b.limbs());
}

void Count::divmod(const Count& a, const Count& b, Count& quotient, Count& remainder) {
  if (b.is_zero()) throw std::invalid_argument("Count: division by zero");
  if (a.big_.empty() && b.big_.empty()) {
    quotient = Count();
    remainder = Count();
    quotient.small_ = a.small_ / b.small_;
    remainder.small_ = a.small_ % b.small_;
    return;
  }
  // Shift-and-subtract, one bit at a time: only the rare counts beyond 2^128 come here.
  const Limbs num = a.limbs(), den = b.limbs();
  Limbs q(num.size(), 0), r;
  for (std::size_t bit = bit_length(num); bit-- > 0;) {
    // r = 2 r + bit
    std::uint32_t carry = (num[bit / 32] >> (bit % 32)) & 1u;
    for (auto& limb : r) {
      const std::uint32_t next = limb >> 31;
      limb = (limb << 1) | carry;
      carry = next;
    }
    if (carry) r.push_back(carry);
    if (compare_limbs(r, den) >= 0) {
      r = sub_limbs(r, den);
      q[bit / 32] |= 1u << (bit % 32);
    }
  }
  quotient = from_limbs(std::move(q));
  remainder = from_limbs(std::move(r));
}

std::string Count::to_hex() const {
  static const char* digits = "0123456789abcdef";
  const Limbs x = limbs();
  if (x.empty()) return "0";
  std::string out;
  for (std::size_t i = x.size(); i-- > 0;)
    for (int shift = 28; shift >= 0; shift -= 4) out.push_back(digits[(x[i] >> shift) & 0xF]);
  const auto first = out.find_first_not_of('0');
  return out.substr(first);
}

Count Count::from_hex(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("Count: empty hexadecimal text");
  Limbs x((text.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[text.size() - 1 - i];
    std::uint32_t digit;
    if (ch >= '0' && ch <= '9')
      digit = static_cast<std::uint32_t>(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
      digit = static_cast<std::uint32_t>(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
      digit = static_cast<std::uint32_t>(ch - 'A' + 10);
    else
      throw std::invalid_argument("Count: not a hexadecimal digit");
    x[i / 8] |= digit << (4 * (i % 8));
  }
  return from_limbs(std::move(x));
}

}  // namespace odtkit
