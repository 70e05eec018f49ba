/// @file aligned_allocator.h
/// @brief A std::allocator that aligns every array to 64 bytes (a cache line, one AVX-512
/// vector): a std::vector of it keeps value semantics (copies, moves) and aligned blocks.
#pragma once

#include <cstddef>
#include <new>

namespace omkl::detail::cpu {

template <class T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }

  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const AlignedAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace omkl::detail::cpu
