// Counter-based random streams keyed by (seed, record, stream): any record's draws are the same
// whatever thread or order processes it, which makes outputs independent of --threads.
// Philox4x32-10 comes from Random123 (Debian librandom123-dev).
#pragma once

#include <Random123/philox.h>

#include <cstdint>

namespace kglm {

class Rng {
 public:
  Rng(uint64_t seed, uint64_t record, uint32_t stream = 0) {
    key_ = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
    counter_ = {{static_cast<uint32_t>(record), static_cast<uint32_t>(record >> 32), stream, 0}};
  }

  uint32_t next_u32() {
    if (used_ == 4) refill();
    return block_.v[used_++];
  }
  uint64_t next_u64() { return (static_cast<uint64_t>(next_u32()) << 32) | next_u32(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), unbiased (Lemire's multiply-and-reject), n > 0.
  uint64_t below(uint64_t n) {
    for (;;) {
      unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
      uint64_t low = static_cast<uint64_t>(m);
      if (low >= n || low >= (-n) % n) return static_cast<uint64_t>(m >> 64);
    }
  }

 private:
  void refill() {
    block_ = philox_(counter_, key_);
    ++counter_.v[3];
    used_ = 0;
  }

  r123::Philox4x32 philox_;
  r123::Philox4x32::key_type key_;
  r123::Philox4x32::ctr_type counter_;
  r123::Philox4x32::ctr_type block_{};
  unsigned used_ = 4;
};

// splitmix64's finaliser: a bijective 64-bit mix, for seeded hashes of ids (sample priorities,
// sampled edges) that must not depend on the order they are met in.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace kglm
