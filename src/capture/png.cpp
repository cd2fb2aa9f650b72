#include "capture/png.h"

#include <spng.h>

#include <cstring>
#include <string>
#include <vector>

#include "config.h"

#if CU_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

namespace cu {
namespace {

// The SUB filter in place: row[0] is the filter type byte, then RGB bytes.
// Walking backwards keeps each left neighbour unfiltered until it is used.
void sub_filter(uint8_t* row, size_t rgb_bytes) {
  row[0] = 1;
  uint8_t* p = row + 1;
  for (size_t i = rgb_bytes; i-- > 3;) p[i] = uint8_t(p[i] - p[i - 3]);
}

struct spng_ctx_deleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};

error spng_failure(const char* what, int rc) {
  std::string msg = "PNG encoding failed at ";
  msg.append(what).append(": ").append(spng_strerror(rc));
  return make_error(errc::io, std::move(msg));
}

result<byte_buffer> encode_spng(int width, int height,
                                const std::function<void(int, uint8_t*)>& fill_row) {
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

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

// Writes a PNG container around one IDAT chunk whose zlib stream ISA-L
// produces row by row, straight into the output buffer.
result<byte_buffer> encode_isal(int width, int height,
                                const std::function<void(int, uint8_t*)>& fill_row) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const size_t rgb_bytes = size_t(width) * 3;
  const size_t raw = (rgb_bytes + 1) * size_t(height);
  // Signature, IHDR (25), IDAT header (8); IDAT CRC and IEND (16) at the end.
  const size_t head = 8 + 25 + 8;
  // Screens deflate to well under half their raw size; noise that does not
  // makes the buffer grow below.
  size_t cap = head + raw / 2 + 4096 + 16;
  byte_buffer out;
  out.data.reset(static_cast<uint8_t*>(std::malloc(cap)));
  if (!out.data) return make_error(errc::io, "out of memory for the PNG");

  uint8_t* p = out.data.get();
  memcpy(p, kSignature, 8);
  put_be32(p + 8, 13);
  memcpy(p + 12, "IHDR", 4);
  put_be32(p + 16, uint32_t(width));
  put_be32(p + 20, uint32_t(height));
  p[24] = 8;  // Bit depth.
  p[25] = 2;  // Colour type: truecolour.
  p[26] = p[27] = p[28] = 0;  // Deflate, adaptive filtering, no interlace.
  put_be32(p + 29, crc32_gzip_refl(0, p + 12, 17));
  memcpy(p + 37, "IDAT", 4);

  auto z = std::make_unique<isal_zstream>();
  std::vector<uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  isal_deflate_init(z.get());
  z->level = 1;
  z->level_buf = level_buf.data();
  z->level_buf_size = uint32_t(level_buf.size());
  z->gzip_flag = IGZIP_ZLIB;
  z->flush = NO_FLUSH;
  z->next_out = p + head;
  z->avail_out = uint32_t(cap - head - 16);

  std::vector<uint8_t> row(rgb_bytes + 1);
  for (int y = 0; y < height; ++y) {
    fill_row(y, row.data() + 1);
    sub_filter(row.data(), rgb_bytes);
    z->next_in = row.data();
    z->avail_in = uint32_t(row.size());
    z->end_of_stream = y == height - 1;
    do {
      if (z->avail_out == 0) {
        // Incompressible content outgrew the estimate: grow and carry on.
        size_t used = size_t(z->next_out - out.data.get());
        cap = cap * 3 / 2;
        auto* grown = static_cast<uint8_t*>(std::realloc(out.data.get(), cap));
        if (grown == nullptr) return make_error(errc::io, "out of memory for the PNG");
        (void)out.data.release();
        out.data.reset(grown);
        z->next_out = grown + used;
        z->avail_out = uint32_t(cap - used - 16);
      }
      if (isal_deflate(z.get()) != COMP_OK) {
        return make_error(errc::io, "PNG encoding failed in igzip");
      }
    } while (z->avail_in > 0 || z->avail_out == 0 ||
             (z->end_of_stream && z->internal_state.state != ZSTATE_END));
  }
  p = out.data.get();
  const size_t idat_len = z->total_out;
  put_be32(p + 33, uint32_t(idat_len));
  uint8_t* end = p + head + idat_len;
  put_be32(end, crc32_gzip_refl(0, p + 37, 4 + idat_len));
  static constexpr uint8_t kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  memcpy(end + 4, kIend, 12);
  out.size = head + idat_len + 16;
  return out;
}

#endif

}  // namespace

result<byte_buffer> encode_png_rgb(int width, int height,
                                   const std::function<void(int, uint8_t*)>& fill_row,
                                   png_engine engine) {
  if (width <= 0 || height <= 0) return make_error(errc::invalid_argument, "empty image");
#if CU_HAVE_ISAL
  if (engine == png_engine::fastest) return encode_isal(width, height, fill_row);
#else
  (void)engine;
#endif
  return encode_spng(width, height, fill_row);
}

const char* png_fastest_engine_name() { return CU_HAVE_ISAL ? "isa-l" : "libspng"; }

}  // namespace cu
