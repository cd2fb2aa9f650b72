#include "capture/jpeg.h"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <mutex>
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

// Threads a strip encode uses: one per capture worker.
constexpr size_t kJpegParallel = 2;

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

jpeg_strips jpeg_strip_layout(int width, int height, int quality) {
  jpeg_strips j;
  j.width = width;
  j.height = height;
  j.quality = quality;
  for (int y = 0; y < height; y += kJpegStripRows) {
    png_strip s;
    s.y0 = y;
    s.y1 = std::min(height, y + kJpegStripRows);
    j.strips.push_back(std::move(s));
  }
  return j;
}

result<byte_buffer> encode_jpeg_strips(jpeg_strips& j,
                                       const std::function<row_filler()>& make_filler,
                                       task_runner& runner) {
  if (j.width <= 0 || j.height <= 0 || j.strips.empty()) {
    return make_error(errc::invalid_argument, "empty image");
  }
  // Every strip is one restart interval: a marker after each resets the
  // DC prediction, so strips encoded apart join exactly.
  const unsigned restart = unsigned((j.width + 15) / 16) * unsigned(kJpegStripRows / kMcuRows);
  if (restart > 65535) return make_error(errc::invalid_argument, "image too wide for JPEG strips");
  std::vector<size_t> todo;
  for (size_t i = 0; i < j.strips.size(); ++i) {
    if (!j.strips[i].deflated) todo.push_back(i);
  }
  std::mutex mu;
  std::optional<error> failure;
  auto run = [&](size_t from, size_t to) {
    row_filler fill = make_filler();
    for (size_t k = from; k < to; ++k) {
      png_strip& s = j.strips[todo[k]];
      auto whole = encode_rows(j.width, s.y1 - s.y0, s.y0, fill, j.quality, restart);
      std::optional<layout> l;
      if (whole) l = find_layout(*whole);
      std::lock_guard<std::mutex> lock(mu);
      if (!whole || !l) {
        failure = whole ? make_error(errc::io, "JPEG encoding failed: unexpected encoder output")
                        : whole.take_error();
        return;
      }
      // The headers are the same for every strip but the height.
      if (!j.header) {
        byte_buffer h;
        h.data.reset(static_cast<uint8_t*>(std::malloc(l->data)));
        if (!h.data) {
          failure = make_error(errc::io, "out of memory for the JPEG");
          return;
        }
        memcpy(h.data.get(), whole->data.get(), l->data);
        h.size = l->data;
        j.header = std::make_shared<const byte_buffer>(std::move(h));
        j.sof = l->sof;
      }
      // The entropy-coded data alone, without EOI.
      byte_buffer data;
      data.size = whole->size - 2 - l->data;
      data.data.reset(static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, data.size))));
      if (!data.data) {
        failure = make_error(errc::io, "out of memory for the JPEG");
        return;
      }
      memcpy(data.data.get(), whole->data.get() + l->data, data.size);
      s.deflated = std::make_shared<const byte_buffer>(std::move(data));
    }
  };
  run_in_parts(&runner, todo.size(), kJpegParallel, run);
  if (failure) return std::move(*failure);
  // The headers (with the whole image's height), each strip's data with a
  // restart marker between two, EOI.
  size_t total = j.header->size + 2;
  for (const png_strip& s : j.strips) total += s.deflated->size + 2;
  byte_buffer out;
  out.data.reset(static_cast<uint8_t*>(std::malloc(total)));
  if (!out.data) return make_error(errc::io, "out of memory for the JPEG");
  uint8_t* q = out.data.get();
  memcpy(q, j.header->data.get(), j.header->size);
  // SOF0: FF C0, length, precision, then the height.
  q[j.sof + 5] = uint8_t(j.height >> 8);
  q[j.sof + 6] = uint8_t(j.height);
  q += j.header->size;
  for (size_t i = 0; i < j.strips.size(); ++i) {
    if (i > 0) {
      *q++ = 0xff;
      *q++ = uint8_t(0xd0 + ((i - 1) & 7));
    }
    memcpy(q, j.strips[i].deflated->data.get(), j.strips[i].deflated->size);
    q += j.strips[i].deflated->size;
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
