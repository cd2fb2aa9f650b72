#include "capture/png.h"

#include <spng.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capture/deflate_runs.h"
#include "capture/task_runner.h"
#include "build_config.h"

#if CU_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

namespace cu {
namespace {

struct spng_ctx_deleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};

error spng_failure(const char* what, int rc) {
  std::string msg = "PNG encoding failed at ";
  msg.append(what).append(": ").append(spng_strerror(rc));
  return make_error(errc::io, std::move(msg));
}

result<byte_buffer> encode_spng(int width, int height, const row_filler& fill_row) {
  std::unique_ptr<spng_ctx, spng_ctx_deleter> ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) return make_error(errc::io, "PNG encoder could not be created");
  spng_ctx* c = ctx.get();
  spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1);
  spng_set_option(c, SPNG_IMG_COMPRESSION_LEVEL, 1);
  spng_set_option(c, SPNG_FILTER_CHOICE, SPNG_FILTER_CHOICE_SUB);
  spng_ihdr ihdr{};
  ihdr.width = uint32_t(width);
  ihdr.height = uint32_t(height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  if (int rc = spng_set_ihdr(c, &ihdr)) return spng_failure("header", rc);
  if (int rc = spng_encode_image(c, nullptr, 0, SPNG_FMT_PNG,
                                 SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE)) {
    return spng_failure("start", rc);
  }
  std::vector<uint8_t> row(size_t(width) * 3);
  for (int y = 0; y < height; ++y) {
    fill_row(y, row.data());
    int rc = spng_encode_row(c, row.data(), row.size());
    if (rc != 0 && !(rc == SPNG_EOI && y == height - 1)) return spng_failure("row", rc);
  }
  int rc = 0;
  size_t len = 0;
  void* out = spng_get_png_buffer(c, &len, &rc);
  if (out == nullptr) return spng_failure("finish", rc);
  byte_buffer buf;
  buf.data.reset(static_cast<uint8_t*>(out));
  buf.size = len;
  return buf;
}

#if CU_HAVE_ISAL

// Strips a parallel encode is cut into: one per capture worker of the
// 2-core machines this runs on; more only adds seams.
constexpr int kParallelStrips = 2;

// The SUB filter: out[0] is the filter type byte, then each RGB byte less
// the same channel's byte of the pixel to its left. Reading one buffer and
// writing another keeps the loop free of dependencies, so it vectorizes.
void sub_filter(const uint8_t* rgb, uint8_t* out, size_t rgb_bytes) {
  out[0] = 1;
  uint8_t* p = out + 1;
  const size_t head = std::min<size_t>(3, rgb_bytes);
  for (size_t i = 0; i < head; ++i) p[i] = rgb[i];
  for (size_t i = 3; i < rgb_bytes; ++i) p[i] = uint8_t(rgb[i] - rgb[i - 3]);
}

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

// The first n bytes of scratch as a strip's deflated bytes, in a buffer of
// their size: encoders write into one scratch buffer per thread, whose pages
// stay mapped, and the strip kept takes no more than it needs.
result<bool> keep(png_strip& s, const std::vector<uint8_t>& scratch, size_t n) {
  byte_buffer out;
  out.data.reset(static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, n))));
  if (!out.data) return make_error(errc::io, "out of memory for the PNG");
  if (n > 0) std::memcpy(out.data.get(), scratch.data(), n);
  out.size = n;
  s.deflated = std::make_shared<const byte_buffer>(std::move(out));
  return true;
}

// Rows [s.y0, s.y1) of the image, filtered and deflated as a run of raw
// deflate blocks into s. A strip that is not the last ends in a full flush:
// byte-aligned, not final, with no reference back into it, so the next
// strip's blocks can simply follow. Each strip is a deflate stream of its
// own, so none refers to another either.
result<bool> deflate_strip(int width, const row_filler& fill_row, png_strip& s, bool last) {
  const size_t rgb_bytes = size_t(width) * 3;
  s.raw_bytes = (rgb_bytes + 1) * size_t(s.y1 - s.y0);
  s.adler = 1;

  // The strip's rows are filtered into one block and deflated in one go:
  // both encoders work best on large inputs.
  thread_local std::vector<uint8_t> rgb;
  thread_local std::vector<uint8_t> block;
  rgb.resize(rgb_bytes);
  block.resize(s.raw_bytes);
  for (int y = s.y0; y < s.y1; ++y) {
    fill_row(y, rgb.data());
    sub_filter(rgb.data(), block.data() + size_t(y - s.y0) * (rgb_bytes + 1), rgb_bytes);
  }
  s.adler = isal_adler32(1, block.data(), s.raw_bytes);

  thread_local std::vector<uint8_t> scratch;
  thread_local runs_deflater runs;
  // A photographic strip goes to the runs encoder, any other to igzip.
  if (double(runs.plan(block)) > runs_deflater::kPhotographicShare * double(s.raw_bytes)) {
    scratch.resize(std::max(scratch.size(), runs_deflater::max_size(s.raw_bytes)));
    return keep(s, scratch, runs.encode(block, last, scratch.data()));
  }

  // The stream state and the level-1 hash tables are a few hundred KiB:
  // keep one set per thread instead of allocating (and faulting in) them for
  // every strip. isal_deflate_init resets what matters.
  struct deflate_state {
    isal_zstream stream;
    uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
  };
  thread_local std::unique_ptr<deflate_state> tls(new deflate_state);
  isal_zstream* z = &tls->stream;
  isal_deflate_init(z);
  z->level = 1;
  z->level_buf = tls->level_buf;
  z->level_buf_size = sizeof tls->level_buf;
  z->gzip_flag = IGZIP_DEFLATE;
  // Screens deflate to well under half their raw size; noise that does not
  // makes the buffer grow below.
  scratch.resize(std::max(scratch.size(), s.raw_bytes / 2 + 4096));
  z->next_out = scratch.data();
  z->avail_out = uint32_t(scratch.size());
  z->next_in = block.data();
  z->avail_in = uint32_t(s.raw_bytes);
  z->end_of_stream = last;
  z->flush = last ? NO_FLUSH : FULL_FLUSH;
  do {
    if (z->avail_out == 0) {
      const size_t used = size_t(z->next_out - scratch.data());
      scratch.resize(scratch.size() * 3 / 2);
      z->next_out = scratch.data() + used;
      z->avail_out = uint32_t(scratch.size() - used);
    }
    if (isal_deflate(z) != COMP_OK) return make_error(errc::io, "PNG encoding failed in igzip");
    // Input consumed and room left over means everything, flush included,
    // is out; the last strip also waits for the end of the stream.
  } while (z->avail_in > 0 || z->avail_out == 0 ||
           (z->end_of_stream && z->internal_state.state != ZSTATE_END));
  return keep(s, scratch, z->total_out);
}

// Folds the Adler-32 of a second run of bytes (len2 long) into the first's,
// as zlib's adler32_combine does.
uint32_t adler32_combine(uint32_t a1, uint32_t a2, size_t len2) {
  constexpr uint64_t kBase = 65521;
  const uint64_t rem = len2 % kBase;
  uint64_t sum1 = a1 & 0xffff;
  uint64_t sum2 = (rem * sum1) % kBase;
  sum1 += (a2 & 0xffff) + kBase - 1;
  sum2 += (a1 >> 16) + (a2 >> 16) + kBase - rem;
  if (sum1 >= kBase) sum1 -= kBase;
  if (sum1 >= kBase) sum1 -= kBase;
  if (sum2 >= (kBase << 1)) sum2 -= (kBase << 1);
  if (sum2 >= kBase) sum2 -= kBase;
  return uint32_t(sum1 | (sum2 << 16));
}

// The strips as one PNG: signature, IHDR, one IDAT holding a zlib stream
// (header, the strips' blocks, Adler-32), IEND. The strips' bytes are
// shared, not copied; the checksums run over them where they are.
png_pieces assemble_png(int width, int height, const std::vector<png_strip>& strips) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static constexpr uint8_t kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  size_t idat_len = 2 + 4;  // zlib header and trailer.
  uint32_t adler = 1;
  for (const png_strip& s : strips) {
    idat_len += s.deflated->size;
    adler = &s == &strips.front() ? s.adler : adler32_combine(adler, s.adler, s.raw_bytes);
  }
  png_pieces png;
  png.head.resize(8 + 25 + 8 + 2);
  uint8_t* p = png.head.data();
  memcpy(p, kSignature, 8);
  put_be32(p + 8, 13);
  memcpy(p + 12, "IHDR", 4);
  put_be32(p + 16, uint32_t(width));
  put_be32(p + 20, uint32_t(height));
  p[24] = 8;  // Bit depth.
  p[25] = 2;  // Colour type: truecolour.
  p[26] = p[27] = p[28] = 0;  // Deflate, adaptive filtering, no interlace.
  put_be32(p + 29, crc32_gzip_refl(0, p + 12, 17));
  put_be32(p + 33, uint32_t(idat_len));
  memcpy(p + 37, "IDAT", 4);
  // CMF 0x78: deflate with a 32 KiB window; FLG 0x01: fastest, check bits.
  p[41] = 0x78;
  p[42] = 0x01;
  uint32_t crc = crc32_gzip_refl(0, p + 37, 6);
  for (const png_strip& s : strips) {
    png.body.push_back(s.deflated);
    crc = crc32_gzip_refl(crc, s.deflated->data.get(), s.deflated->size);
  }
  png.tail.resize(4 + 4 + 12);
  uint8_t* q = png.tail.data();
  put_be32(q, adler);
  crc = crc32_gzip_refl(crc, q, 4);
  put_be32(q + 4, crc);
  memcpy(q + 8, kIend, 12);
  return png;
}

// Rows per strip: small enough that a change of a few lines of text
// redoes little, large enough that the flush at each end costs nothing
// measurable.
constexpr int kStripRows = 32;

// Deflates the strips without bytes on up to `parallel` threads (runner may
// be null: here), each taking a contiguous run, and joins them. Nothing
// when the bytes passed give_up_above.
result<std::optional<png_pieces>> encode_isal(int width, int height,
                                               std::vector<png_strip>& strips,
                                               const std::function<row_filler()>& make_filler,
                                               task_runner* runner, int parallel,
                                               size_t give_up_above) {
  std::vector<size_t> todo;
  size_t kept = 0;
  for (size_t i = 0; i < strips.size(); ++i) {
    if (strips[i].deflated) {
      kept += strips[i].deflated->size;
    } else {
      todo.push_back(i);
    }
  }
  std::atomic<size_t> total{kept};
  std::atomic<bool> too_big{kept > give_up_above};
  std::mutex failure_mu;
  std::optional<error> failure;
  auto run = [&](size_t from, size_t to) {
    row_filler fill = make_filler();
    for (size_t k = from; k < to && !too_big.load(std::memory_order_relaxed); ++k) {
      png_strip& s = strips[todo[k]];
      result<bool> st = deflate_strip(width, fill, s, todo[k] == strips.size() - 1);
      if (!st) {
        std::lock_guard<std::mutex> lock(failure_mu);
        failure = st.take_error();
        too_big = true;
        return;
      }
      if (total.fetch_add(s.deflated->size) + s.deflated->size > give_up_above) too_big = true;
    }
  };
  run_in_parts(runner, todo.size(), size_t(parallel), run);
  if (failure) return std::move(*failure);
  if (too_big) return std::optional<png_pieces>();
  return std::optional<png_pieces>(assemble_png(width, height, strips));
}

std::vector<png_strip> strip_layout(int height, int count) {
  std::vector<png_strip> strips(size_t(std::max(1, count)));
  for (size_t i = 0; i < strips.size(); ++i) {
    strips[i].y0 = int(int64_t(height) * int64_t(i) / int64_t(strips.size()));
    strips[i].y1 = int(int64_t(height) * int64_t(i + 1) / int64_t(strips.size()));
  }
  return strips;
}

result<byte_buffer> encode_isal_whole(int width, int height, int count,
                                      const std::function<row_filler()>& make_filler,
                                      task_runner* runner) {
  // Small images (zoom crops) stay in one piece.
  constexpr int kMinStripRows = 64;
  std::vector<png_strip> strips = strip_layout(height, std::min(count, std::max(1, height / kMinStripRows)));
  auto png = encode_isal(width, height, strips, make_filler, runner, kParallelStrips, SIZE_MAX);
  if (!png) return png.take_error();
  return (*png)->join();
}

#endif

}  // namespace

result<byte_buffer> encode_png_rgb(int width, int height, const row_filler& fill_row,
                                   png_engine engine) {
  if (width <= 0 || height <= 0) return make_error(errc::invalid_argument, "empty image");
#if CU_HAVE_ISAL
  if (engine == png_engine::fastest) {
    return encode_isal_whole(width, height, 1, [&] { return fill_row; }, nullptr);
  }
#else
  (void)engine;
#endif
  return encode_spng(width, height, fill_row);
}

result<byte_buffer> encode_png_rgb_parallel(int width, int height,
                                            const std::function<row_filler()>& make_filler,
                                            task_runner& runner) {
  if (width <= 0 || height <= 0) return make_error(errc::invalid_argument, "empty image");
#if CU_HAVE_ISAL
  return encode_isal_whole(width, height, kParallelStrips, make_filler, &runner);
#else
  (void)runner;
  return encode_spng(width, height, make_filler());
#endif
}

std::vector<png_strip> png_strip_layout(int height) {
#if CU_HAVE_ISAL
  if (height <= 0) return {};
  return strip_layout(height, (height + kStripRows - 1) / kStripRows);
#else
  (void)height;
  return {};
#endif
}

result<std::optional<png_pieces>> encode_png_strips(
    int width, int height, std::vector<png_strip>& strips,
    const std::function<row_filler()>& make_filler, task_runner& runner, size_t give_up_above) {
  if (width <= 0 || height <= 0) return make_error(errc::invalid_argument, "empty image");
#if CU_HAVE_ISAL
  if (!strips.empty()) {
    return encode_isal(width, height, strips, make_filler, &runner, kParallelStrips,
                       give_up_above);
  }
#else
  (void)strips;  // libspng encodes the image in one piece.
#endif
  auto png = encode_png_rgb_parallel(width, height, make_filler, runner);
  if (!png) return png.take_error();
  if (png->size > give_up_above) return std::optional<png_pieces>();
  png_pieces whole;
  whole.body.push_back(std::make_shared<const byte_buffer>(std::move(*png)));
  return std::optional<png_pieces>(std::move(whole));
}

size_t png_pieces::size() const {
  size_t n = head.size() + tail.size();
  for (const auto& b : body) n += b->size;
  return n;
}

std::vector<std::span<const uint8_t>> png_pieces::spans() const {
  std::vector<std::span<const uint8_t>> out;
  out.emplace_back(head.data(), head.size());
  for (const auto& b : body) out.emplace_back(b->data.get(), b->size);
  out.emplace_back(tail.data(), tail.size());
  return out;
}

std::vector<std::shared_ptr<const byte_buffer>> png_pieces::shared_pieces() const {
  auto copy = [](const std::vector<uint8_t>& bytes) {
    byte_buffer b;
    b.data.reset(static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, bytes.size()))));
    if (!bytes.empty()) memcpy(b.data.get(), bytes.data(), bytes.size());
    b.size = bytes.size();
    return std::make_shared<const byte_buffer>(std::move(b));
  };
  std::vector<std::shared_ptr<const byte_buffer>> out;
  out.reserve(body.size() + 2);
  out.push_back(copy(head));
  out.insert(out.end(), body.begin(), body.end());
  out.push_back(copy(tail));
  return out;
}

byte_buffer png_pieces::join() const {
  byte_buffer out;
  out.data.reset(static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, size()))));
  uint8_t* q = out.data.get();
  for (std::span<const uint8_t> s : spans()) {
    if (!s.empty()) memcpy(q, s.data(), s.size());
    q += s.size();
  }
  out.size = size();
  return out;
}

const char* png_fastest_engine_name() { return CU_HAVE_ISAL ? "isa-l" : "libspng"; }

result<size2> png_header_size(std::span<const uint8_t> png) {
  // The signature, then IHDR, which must come first: its length (13), its
  // type, and the width and height, big-endian.
  static constexpr uint8_t kStart[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                         0,    0,   0,   13,  'I',  'H',  'D',  'R'};
  auto be32 = [&](size_t at) {
    return uint32_t(png[at]) << 24 | uint32_t(png[at + 1]) << 16 | uint32_t(png[at + 2]) << 8 |
           uint32_t(png[at + 3]);
  };
  if (png.size() < 24 || memcmp(png.data(), kStart, sizeof kStart) != 0) {
    return make_error(errc::invalid_argument,
                      "not a PNG this server can read (no PNG signature and header)");
  }
  const uint32_t w = be32(16), h = be32(20);
  // The PNG format's own limit; zero is not an image.
  if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu) {
    return make_error(errc::invalid_argument,
                      "not a PNG this server can read (its header gives a size of " +
                          std::to_string(w) + "x" + std::to_string(h) + ")");
  }
  return size2{int(w), int(h)};
}

result<rgb_pixels> decode_png_rgb(std::span<const uint8_t> png, uint32_t max_side) {
  std::unique_ptr<spng_ctx, spng_ctx_deleter> ctx(spng_ctx_new(0));
  if (!ctx) return make_error(errc::io, "cannot decode PNG: out of memory");
  spng_set_image_limits(ctx.get(), max_side, max_side);
  spng_set_chunk_limits(ctx.get(), 1u << 20, 8u << 20);
  spng_set_png_buffer(ctx.get(), png.data(), png.size());
  spng_ihdr ihdr{};
  int rc = spng_get_ihdr(ctx.get(), &ihdr);
  size_t bytes = 0;
  if (rc == 0) rc = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &bytes);
  rgb_pixels out;
  if (rc == 0) {
    out.rgb.resize(bytes);
    rc = spng_decode_image(ctx.get(), out.rgb.data(), out.rgb.size(), SPNG_FMT_RGB8, 0);
  }
  if (rc != 0) {
    return make_error(errc::invalid_argument,
                      std::string("not a PNG this server can read (") + spng_strerror(rc) + ")");
  }
  out.w = int(ihdr.width);
  out.h = int(ihdr.height);
  return out;
}

}  // namespace cu
