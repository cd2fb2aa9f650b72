// Owns: a deflate encoder for photographs: one dynamic-Huffman block of
// literals and runs of zero bytes (distance-1 matches), with codes built
// from a sample of the input. It finds no other repeats, so it is no match
// for an LZ77 encoder on text and flat screens, but on a photograph's
// filtered rows, where LZ77 finds little, it writes a stream about as small
// several times faster (docs/performance.md: "PNG of photographs").
// Thread affinity: none; an encoder object is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cu {

class runs_deflater {
 public:
  // Builds the codes for data from every eighth of its 4 KiB chunks (all of
  // it up to 128 KiB), and answers the bytes the block is expected to take:
  // the caller compares it with what another encoder would do.
  size_t plan(std::span<const uint8_t> data);

  // The most bytes encode() can write for n bytes of input.
  static size_t max_size(size_t n);

  // Writes data as one block with the codes of the last plan() (which any
  // input can be written with), starting at a byte boundary and ending at
  // one: after a full flush (an empty stored block) unless last, when the
  // block is the stream's final one. Answers the bytes written to out,
  // which has room for max_size(data.size()).
  size_t encode(std::span<const uint8_t> data, bool last, uint8_t* out) const;

  // The literal/length alphabet: 256 literals, end of block, 29 lengths.
  static constexpr int kSymbols = 286;
  // The longest code: four fit in 48 bits, so the writer flushes once per
  // four literals.
  static constexpr int kMaxCodeBits = 12;
  // Input plan() expects to take more than this share of its size is
  // photographic: LZ77 finds little in it, and this encoder writes it within
  // 1 to 3% of igzip's size in a third of the time. Below it (text, flat
  // areas) igzip's matches make it 10 to 15% smaller (src/capture/png.cpp
  // picks by this; docs/performance.md has the figures).
  static constexpr double kPhotographicShare = 0.25;

 private:
  // Each symbol's code, bit-reversed as deflate writes it, with its length
  // in bits 16 and up.
  uint32_t sym_[kSymbols] = {};
  // The block header (everything up to the first literal), in bits.
  uint8_t header_[320] = {};
  size_t header_bits_ = 0;
};

}  // namespace cu
