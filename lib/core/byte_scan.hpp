// Finding the next byte of a small set in a buffer, 16 or 32 bytes at a time with SSE2/AVX2
// compares (scalar elsewhere). Text cleaners spend most of their time looking for rare markup
// characters; no library offers a multi-byte memchr, so this one is written here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__AVX2__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace kglm {

class ByteSet {
 public:
  static constexpr size_t kMaxChars = 8;
  // Readable bytes that find_padded() may load past the end of its input.
  static constexpr size_t kPadding = 32;

  // chars: up to kMaxChars bytes; with_controls adds every byte below 0x20.
  constexpr explicit ByteSet(std::string_view chars, bool with_controls = false) : controls_(with_controls) {
    for (char c : chars) {
      member_[static_cast<unsigned char>(c)] = true;
      if (count_ < kMaxChars) chars_[count_++] = c;
    }
    if (with_controls)
      for (int c = 0; c < 0x20; ++c) member_[static_cast<size_t>(c)] = true;
  }

  bool contains(char c) const { return member_[static_cast<unsigned char>(c)]; }

  // find() for inputs followed by kPadding readable bytes: whole vectors only, so short strings
  // (words, link targets) skip the scalar tail. The bytes past the end are loaded, never used.
  size_t find_padded(std::string_view s, size_t pos) const {
#if defined(__AVX2__)
    const size_t n = s.size();
    for (; pos < n; pos += 32) {
      uint32_t mask = match_mask(s.data() + pos);
      if (n - pos < 32) mask &= (1u << (n - pos)) - 1;
      if (mask != 0) return pos + static_cast<size_t>(__builtin_ctz(mask));
    }
    return n;
#else
    return find(s, pos);
#endif
  }

  // The position of the first member at or after pos, or s.size().
  size_t find(std::string_view s, size_t pos) const {
    const size_t n = s.size();
#if defined(__AVX2__) || defined(__SSE2__)
    for (; pos + kVector <= n; pos += kVector) {
      uint32_t mask = match_mask(s.data() + pos);
      if (mask != 0) return pos + static_cast<size_t>(__builtin_ctz(mask));
    }
#endif
    while (pos < n && !member_[static_cast<unsigned char>(s[pos])]) ++pos;
    return pos;
  }

 private:
#if defined(__AVX2__)
  static constexpr size_t kVector = 32;
  // Bit i set when p[i] is a member, for the kVector bytes at p.
  uint32_t match_mask(const char* p) const {
    __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i hit = _mm256_setzero_si256();
    for (size_t k = 0; k < count_; ++k)
      hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(block, _mm256_set1_epi8(chars_[k])));
    if (controls_) {
      __m256i limit = _mm256_set1_epi8(0x1F);
      hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(_mm256_max_epu8(block, limit), limit));
    }
    return static_cast<uint32_t>(_mm256_movemask_epi8(hit));
  }
#elif defined(__SSE2__)
  static constexpr size_t kVector = 16;
  uint32_t match_mask(const char* p) const {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i hit = _mm_setzero_si128();
    for (size_t k = 0; k < count_; ++k) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(block, _mm_set1_epi8(chars_[k])));
    if (controls_) {
      __m128i limit = _mm_set1_epi8(0x1F);
      hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_max_epu8(block, limit), limit));
    }
    return static_cast<uint32_t>(_mm_movemask_epi8(hit));
  }
#endif

  std::array<bool, 256> member_{};
  std::array<char, kMaxChars> chars_{};
  size_t count_ = 0;
  bool controls_ = false;
};

#if defined(__AVX2__)
// Bit i set when p[i] == p[i + 1] == c, for the 32 positions at p (reads 33 bytes).
inline uint32_t repeated_mask(const char* p, char c) {
  const __m256i wanted = _mm256_set1_epi8(c);
  __m256i here = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
  return static_cast<uint32_t>(
      _mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(here, wanted), _mm256_cmpeq_epi8(next, wanted))));
}
#endif

// The first position i >= pos with s[i] == s[i + 1] == c, or s.size().
inline size_t find_repeated(std::string_view s, char c, size_t pos = 0) {
  const size_t n = s.size();
#if defined(__AVX2__)
  for (; pos + 33 <= n; pos += 32) {
    uint32_t mask = repeated_mask(s.data() + pos, c);
    if (mask != 0) return pos + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; pos + 1 < n; ++pos)
    if (s[pos] == c && s[pos + 1] == c) return pos;
  return n;
}

// find_repeated() for inputs followed by ByteSet::kPadding readable bytes.
inline size_t find_repeated_padded(std::string_view s, char c) {
#if defined(__AVX2__)
  const size_t n = s.size();
  for (size_t pos = 0; pos + 1 < n; pos += 32) {
    uint32_t mask = repeated_mask(s.data() + pos, c);
    if (n - 1 - pos < 32) mask &= (1u << (n - 1 - pos)) - 1;  // pairs must end inside s
    if (mask != 0) return pos + static_cast<size_t>(__builtin_ctz(mask));
  }
  return n;
#else
  return find_repeated(s, c);
#endif
}

}  // namespace kglm
