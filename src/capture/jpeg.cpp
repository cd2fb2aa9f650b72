#include "capture/jpeg.h"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "capture/task_runner.h"

namespace cu {
namespace {

// libjpeg reports errors by calling error_exit, which must not return:
// jump back out of the encoder with its message.
struct error_manager {
  jpeg_error_mgr pub;
  std::jmp_buf escape;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<error_manager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->escape, 1);
}

// Rows [y0, y0 + height) of an image, as a JPEG of their own whose
// restart interval is restart_mcus (0: none).
result<byte_buffer> encode_rows(int width, int height, int y0, const row_filler& fill_row,
                                int quality, unsigned restart_mcus);

// The number of MCU rows in a strip, at 4:2:0 (16 pixel rows per MCU row).
constexpr int kMcuRows = 16;

// Strips a parallel encode is cut into: one per capture worker.
constexpr int kJpegStrips = 2;

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

// The offset of the first byte of entropy-coded data (just after the SOS
// segment) in a JPEG file, and of its SOF0 segment; nothing if malformed.
struct layout {
  size_t sof = 0;
  size_t data = 0;
};
std::optional<layout> find_layout(const byte_buffer& j) {
  const uint8_t* p = j.data.get();
  layout l;
  size_t i = 2;  // After SOI.
  while (i + 4 <= j.size && p[i] == 0xff) {
    uint8_t marker = p[i + 1];
    size_t len = be16(p + i + 2);
    if (marker == 0xc0) l.sof = i;
    if (marker == 0xda) {
      l.data = i + 2 + len;
      return l.sof != 0 && l.data <= j.size ? std::optional<layout>(l) : std::nullopt;
    }
    i += 2 + len;
  }
  return std::nullopt;
}

}  // namespace

result<byte_buffer> encode_jpeg_rgb(int width, int height, const row_filler& fill_row,
                                    int quality) {
  return encode_rows(width, height, 0, fill_row, quality, 0);
}

result<byte_buffer> encode_jpeg_rgb_parallel(int width, int height,
                                             const std::function<row_filler()>& make_filler,
                                             int quality, task_runner& runner) {
  // Strips are whole MCU rows; a small image stays in one piece.
  const int strip_rows = (height / kJpegStrips + kMcuRows - 1) / kMcuRows * kMcuRows;
  if (width <= 0 || height < kJpegStrips * 4 * kMcuRows) {
    return encode_jpeg_rgb(width, height, make_filler(), quality);
  }
  const unsigned restart = unsigned((width + 15) / 16) * unsigned(strip_rows / kMcuRows);
  if (restart > 65535) return encode_jpeg_rgb(width, height, make_filler(), quality);
  std::vector<std::optional<result<byte_buffer>>> parts(kJpegStrips);
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < kJpegStrips; ++i) {
    tasks.emplace_back([&, i] {
      const int y0 = i * strip_rows;
      const int rows = i == kJpegStrips - 1 ? height - y0 : strip_rows;
      parts[size_t(i)] = encode_rows(width, rows, y0, make_filler(), quality, restart);
    });
  }
  runner.run_all(tasks);
  // The first strip's headers (its height made the whole image's), then
  // each strip's entropy-coded data, a restart marker between two.
  size_t total = 0;
  std::vector<layout> layouts;
  for (auto& p : parts) {
    if (!*p) return p->take_error();
    auto l = find_layout(**p);
    if (!l) return make_error(errc::io, "JPEG encoding failed: unexpected encoder output");
    layouts.push_back(*l);
    total += (*p)->size;
  }
  byte_buffer out;
  out.data.reset(static_cast<uint8_t*>(std::malloc(total)));
  if (!out.data) return make_error(errc::io, "out of memory for the JPEG");
  uint8_t* q = out.data.get();
  for (size_t i = 0; i < parts.size(); ++i) {
    const byte_buffer& b = **parts[i];
    const size_t from = i == 0 ? 0 : layouts[i].data;
    const size_t to = b.size - 2;  // Without EOI.
    if (i > 0) {
      *q++ = 0xff;
      *q++ = uint8_t(0xd0 + ((i - 1) & 7));
    }
    memcpy(q, b.data.get() + from, to - from);
    if (i == 0) {
      // SOF0: FF C0, length, precision, then the height.
      q[layouts[0].sof + 5] = uint8_t(height >> 8);
      q[layouts[0].sof + 6] = uint8_t(height);
    }
    q += to - from;
  }
  *q++ = 0xff;
  *q++ = 0xd9;
  out.size = size_t(q - out.data.get());
  return out;
}

namespace {

result<byte_buffer> encode_rows(int width, int height, int y0, const row_filler& fill_row,
                                int quality, unsigned restart_mcus) {
  if (width <= 0 || height <= 0) return make_error(errc::invalid_argument, "empty image");
  // Everything the jump skips over lives outside the encode's frame.
  jpeg_compress_struct cinfo;
  error_manager err;
  std::vector<uint8_t> row(size_t(width) * 3);
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error;
  if (setjmp(err.escape)) {
    jpeg_destroy_compress(&cinfo);
    free(out);
    std::string msg = "JPEG encoding failed: ";
    msg += err.message;
    return make_error(errc::io, std::move(msg));
  }
  jpeg_create_compress(&cinfo);
  // libjpeg allocates and grows the buffer with malloc, so it can become
  // a byte_buffer as it is.
  jpeg_mem_dest(&cinfo, &out, &out_size);
  cinfo.image_width = JDIMENSION(width);
  cinfo.image_height = JDIMENSION(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.restart_interval = restart_mcus;
  jpeg_start_compress(&cinfo, TRUE);
  JSAMPROW rows[1] = {row.data()};
  for (int y = 0; y < height; ++y) {
    fill_row(y0 + y, row.data());
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  byte_buffer buf;
  buf.data.reset(out);
  buf.size = out_size;
  return buf;
}

}  // namespace
}  // namespace cu
