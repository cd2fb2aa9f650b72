// Tests for src/capture/deflate_runs.h: what the runs encoder writes is
// deflate that zlib inflates to exactly the input, for any input and any
// codes a plan left, and within its size bound.
#include "capture/deflate_runs.h"

#include <zlib.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using bytes = std::vector<uint8_t>;

bytes random_bytes(size_t n, uint32_t seed) {
  bytes b(n);
  std::mt19937 rng(seed);
  for (uint8_t& v : b) v = uint8_t(rng());
  return b;
}

// Residual-like bytes: mostly small values around 0 (as +/-), as a
// photograph's filtered rows are.
bytes residual_bytes(size_t n, uint32_t seed) {
  bytes b(n);
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0, 6);
  for (uint8_t& v : b) v = uint8_t(int(d(rng)));
  return b;
}

// Runs of zeros of every length from 1 to 600, each after a non-zero byte,
// in a shuffled order: every length code, and remainders of 1 and 2.
bytes zero_runs(uint32_t seed) {
  std::vector<size_t> lengths;
  for (size_t l = 1; l <= 600; ++l) lengths.push_back(l);
  std::mt19937 rng(seed);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  bytes b;
  for (size_t l : lengths) {
    b.push_back(uint8_t(1 + rng() % 255));
    b.insert(b.end(), l, 0);
  }
  return b;
}

// Encodes each part as a block (the last one final) with a plan of its
// own, or of plan_from when given.
bytes encode_blocks(const std::vector<bytes>& parts, const bytes* plan_from = nullptr) {
  bytes out;
  for (size_t i = 0; i < parts.size(); ++i) {
    cu::runs_deflater d;
    d.plan(plan_from != nullptr ? std::span<const uint8_t>(*plan_from)
                                : std::span<const uint8_t>(parts[i]));
    const size_t at = out.size();
    const size_t room = cu::runs_deflater::max_size(parts[i].size());
    out.resize(at + room);
    const size_t n = d.encode(parts[i], i + 1 == parts.size(), out.data() + at);
    REQUIRE(n <= room);
    out.resize(at + n);
    if (i + 1 < parts.size()) {
      // A full flush: the block ends with an empty stored block.
      REQUIRE(n >= 4);
      CHECK(std::memcmp(out.data() + out.size() - 4, "\x00\x00\xff\xff", 4) == 0);
    }
  }
  return out;
}

// Raw inflate; the stream must end exactly at its final block.
bytes inflate_raw(const bytes& in, size_t expect) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, -15) == Z_OK);
  bytes out(expect + 64);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = uInt(in.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  const int rc = inflate(&z, Z_FINISH);
  INFO("zlib: " << (z.msg != nullptr ? z.msg : "") << ", rc " << rc);
  CHECK(rc == Z_STREAM_END);
  CHECK(z.avail_in == 0);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

void check_round_trip(const std::vector<bytes>& parts, const bytes* plan_from = nullptr) {
  bytes whole;
  for (const bytes& p : parts) whole.insert(whole.end(), p.begin(), p.end());
  const bytes back = inflate_raw(encode_blocks(parts, plan_from), whole.size());
  REQUIRE(back.size() == whole.size());
  CHECK(back == whole);
}

}  // namespace

TEST_CASE("random bytes of many sizes inflate to exactly themselves") {
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(7), size_t(8), size_t(9),
                   size_t(15), size_t(16), size_t(17), size_t(100), size_t(4099),
                   size_t(131168), size_t(300001)}) {
    INFO("n = " << n);
    check_round_trip({random_bytes(n, uint32_t(n) + 1)});
  }
}

TEST_CASE("runs of zeros of every length inflate exactly") {
  check_round_trip({zero_runs(1)});
  check_round_trip({bytes(1, 0)});
  check_round_trip({bytes(258 * 40 + 2, 0)});
  check_round_trip({bytes(100000, 0)});
  // A run that ends the input, and one that starts it.
  bytes b = random_bytes(1000, 5);
  b.insert(b.end(), 777, 0);
  b.insert(b.begin(), 333, 0);
  check_round_trip({b});
}

TEST_CASE("blocks joined by full flushes inflate to the parts in order") {
  check_round_trip({random_bytes(50000, 1), zero_runs(2), residual_bytes(70000, 3), bytes(5, 0),
                    random_bytes(1, 4)});
  check_round_trip({bytes(), residual_bytes(1000, 5)});
}

TEST_CASE("codes planned on other bytes still write any input") {
  // Codes from zeros give every literal a long code; from noise, runs get
  // long ones: both must still encode the other, within max_size.
  const bytes zeros(200000, 0);
  const bytes noise = random_bytes(200000, 9);
  check_round_trip({noise}, &zeros);
  check_round_trip({zeros}, &noise);
  check_round_trip({zero_runs(3), residual_bytes(100000, 4)}, &zeros);
}

TEST_CASE("a plan's estimate is near the size written, and noise costs under max_size") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const bytes r = residual_bytes(131168, seed);
    cu::runs_deflater d;
    const size_t estimate = d.plan(r);
    bytes out(cu::runs_deflater::max_size(r.size()));
    const size_t n = d.encode(r, true, out.data());
    INFO("estimate " << estimate << ", written " << n);
    CHECK(double(estimate) > 0.9 * double(n));
    CHECK(double(estimate) < 1.1 * double(n));
    // Residuals of a spread of 6 need about 4.6 bits a byte.
    CHECK(n < r.size() * 5 / 8);
  }
}
