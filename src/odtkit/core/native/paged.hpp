// Page-allocated containers for the searches' large data structures.
//
// A std::vector that doubles holds its old and its new buffer at once while it copies, so a
// structure at 60 % of a memory limit briefly needs 180 % of it, and its capacity jumps past the
// limit in one step; a node-based container (a vector per node, a std::unordered_map) costs a
// malloc per element and takes seconds to free element by element once it holds millions. These
// containers instead grow by fixed pages of kPageBytes that never move:
//   * bytes() is exact (pages allocated) and grows in steps of at most one page (or one run),
//     so a search can check its limit *before* an allocation would cross it;
//   * element addresses are stable (no copy on growth);
//   * teardown frees pages, not elements: the element types must be trivially destructible.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace odtkit {
namespace paged {

constexpr std::size_t kPageBytes = std::size_t{1} << 16;

constexpr int floor_log2(std::size_t x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

// Bytes of a std::vector's buffer (capacity, not size: that is what is allocated).
template <class V>
std::size_t vector_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

// A vector of trivially copyable T in fixed pages: O(1) indexing, push_back never copies.
template <class T>
class Vector {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "paged::Vector holds trivially copyable, trivially destructible elements");
  static_assert(sizeof(T) <= kPageBytes, "element larger than a page");

 public:
  static constexpr int kShift = floor_log2(kPageBytes / sizeof(T));
  static constexpr std::size_t kPerPage = std::size_t{1} << kShift;
  static constexpr std::size_t kMask = kPerPage - 1;
  static constexpr std::size_t kPage = kPerPage * sizeof(T);  // bytes of one page

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](std::size_t i) { return pages_[i >> kShift][i & kMask]; }
  const T& operator[](std::size_t i) const { return pages_[i >> kShift][i & kMask]; }
  T& back() { return (*this)[n_ - 1]; }
  const T& back() const { return (*this)[n_ - 1]; }
  void push_back(const T& x) {
    // the page is owned before the page list may grow (and throw): no leak on bad_alloc
    if ((n_ >> kShift) == pages_.size()) pages_.push_back(std::unique_ptr<T[]>(new T[kPerPage]));
    pages_[n_ >> kShift][n_ & kMask] = x;
    ++n_;
  }
  void pop_back() { --n_; }  // pages are kept for reuse
  // Bytes a push_back could allocate now (a new page when the last one is full).
  std::size_t push_bytes() const { return (n_ >> kShift) == pages_.size() ? kPage : 0; }
  std::size_t bytes() const {
    return pages_.size() * kPage + vector_bytes(pages_);
  }

 private:
  std::vector<std::unique_ptr<T[]>> pages_;
  std::size_t n_ = 0;
};

// Bump allocator of contiguous runs of T (a support's words, a leaf's class weights, ...): a run
// never straddles two pages; a run longer than a page gets a page of its own. Runs are freed
// only all together, with the arena.
template <class T>
class Arena {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "paged::Arena holds trivially copyable, trivially destructible elements");

 public:
  static constexpr std::size_t kPerPage = std::max<std::size_t>(1, kPageBytes / sizeof(T));

  // n uninitialised elements. n = 0 (a run of zero words: no features, or no points) still
  // gets a valid pointer into a page, never pages_.back() of an empty arena.
  T* alloc(std::size_t n) {
    if (used_ + n > cap_ || pages_.empty()) {
      // state changes only once the page is allocated and listed: a bad_alloc leaves the
      // arena as it was
      const std::size_t cap = std::max(kPerPage, n);
      pages_.push_back(std::unique_ptr<T[]>(new T[cap]));
      cap_ = cap;
      bytes_ += cap * sizeof(T);
      used_ = 0;
    }
    T* p = pages_.back().get() + used_;
    used_ += n;
    return p;
  }
  T* copy(const T* src, std::size_t n) {
    T* p = alloc(n);
    std::copy(src, src + n, p);
    return p;
  }
  // Bytes an alloc(n) could allocate now.
  std::size_t alloc_bytes(std::size_t n) const {
    return used_ + n > cap_ || pages_.empty() ? std::max(kPerPage, n) * sizeof(T) : 0;
  }
  std::size_t bytes() const { return bytes_ + vector_bytes(pages_); }

 private:
  std::vector<std::unique_ptr<T[]>> pages_;
  std::size_t used_ = 0, cap_ = 0, bytes_ = 0;
};

// Binary heap over a paged::Vector: like std::priority_queue<T, ..., Less> (top() is the largest
// under Less), without the 2x copies of a growing vector.
template <class T, class Less = std::less<T>>
class Heap {
 public:
  std::size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const T& top() const { return v_[0]; }
  void push(const T& x) {
    v_.push_back(x);
    std::size_t i = v_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!less_(v_[parent], x)) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = x;
  }
  void pop() {
    const T last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return;
    std::size_t i = 0;
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less_(v_[child], v_[child + 1])) ++child;
      if (!less_(last, v_[child])) break;
      v_[i] = v_[child];
      i = child;
    }
    v_[i] = last;
  }
  std::size_t push_bytes() const { return v_.push_bytes(); }
  std::size_t bytes() const { return v_.bytes(); }

 private:
  Vector<T> v_;
  Less less_{};
};

// Runs of ints that are allocated and freed individually (a state's leaf ids): freed runs go to
// a free list per length, kept inside the freed runs themselves, so reuse allocates nothing.
class IntPool {
 public:
  // n uninitialised ints (n >= 1).
  int* alloc(std::size_t n) {
    n = std::max(n, kMinRun);
    if (n < heads_.size() && heads_[n] != nullptr) {
      int* p = heads_[n];
      std::memcpy(&heads_[n], p, sizeof(int*));
      return p;
    }
    return arena_.alloc(n);
  }
  void free(int* p, std::size_t n) {
    n = std::max(n, kMinRun);
    if (n >= heads_.size()) heads_.resize(n + 1, nullptr);
    std::memcpy(p, &heads_[n], sizeof(int*));
    heads_[n] = p;
  }
  std::size_t alloc_bytes(std::size_t n) const {
    return arena_.alloc_bytes(std::max(n, kMinRun));
  }
  std::size_t bytes() const { return arena_.bytes() + vector_bytes(heads_); }

 private:
  static constexpr std::size_t kMinRun = (sizeof(int*) + sizeof(int) - 1) / sizeof(int);
  Arena<int> arena_;
  std::vector<int*> heads_;  // free list per run length
};

}  // namespace paged
}  // namespace odtkit
