// Owns: reading the words on a grey image with Tesseract: loading
// libtesseract at run time (dlopen, through its stable C API, so neither the
// build nor the package needs it), the one recognizer handle kept between
// calls, the preparation of screen pixels for it (dark backgrounds made
// light, small glyphs enlarged), and the words it reads with their boxes and
// confidences.
// Thread affinity: none of its own. An ocr_engine is not thread-safe: one
// thread at a time may use it (capture/recognizer.h gives it a thread of
// its own). prepare_for_ocr is a pure function.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "util/result.h"
#include "vision/match.h"

namespace cu {

// What to install when Tesseract or its English data is missing (Debian's
// tesseract-ocr brings libtesseract5 and tesseract-ocr-eng).
inline constexpr const char* kTesseractInstall = "apt-get install tesseract-ocr";

// One word read, in the pixels of the image given to recognize().
struct ocr_word {
  std::string text;  // UTF-8, no spaces.
  rect box;
  double confidence = 0;  // 0 to 1.
};

struct ocr_options {
  // Enlarge the image this many times before reading (1 to 4): Tesseract's
  // models want glyphs about 20 pixels tall, screen fonts are 10 to 16.
  int scale = 2;
  // Make dark-background areas light (see prepare_for_ocr).
  bool fix_polarity = true;
  // Tesseract's page segmentation mode: 11 (sparse text), 3 (automatic)
  // or 6 (one uniform block).
  int page_seg_mode = 11;
};

// The image Tesseract is given: areas whose background is dark (a dark
// theme, a terminal's black, a menu bar or button of white on colour)
// inverted so that all text is dark on light,
// then enlarged scale times (bilinear). Tesseract's layout analysis treats a
// light window on a dark desktop as a picture and drops its text; with every
// background light the windows read as blocks of text.
gray_image prepare_for_ocr(const gray_view& src, const ocr_options& options);

// Call once, before any thread starts (it sets and unsets an environment
// variable). libtesseract runs parts of a recognition on OpenMP threads, as
// many as the machine has cores: on two cores that made a whole screen
// take 2.5 to 7 s instead of 0.6 (the threads spin against each other and
// against the capture workers). libgomp reads its thread limit from
// OMP_THREAD_LIMIT once, when it is loaded, and Tesseract asks for its
// threads with an explicit count that omp_set_num_threads cannot lower. So,
// when OMP_THREAD_LIMIT is not set and libgomp is installed, this loads
// libgomp with OMP_THREAD_LIMIT=1 and unsets the variable again (programs
// that open_application starts must not inherit it); libtesseract, loaded
// later, uses that libgomp. Returns whether the limit is in place.
bool limit_ocr_threads();

class ocr_engine {
 public:
  // Loads the library (library: a path or soname; empty for
  // "libtesseract.so.5"), finds the English data (tessdata: a directory;
  // empty for TESSDATA_PREFIX, else Debian's /usr/share/tesseract-ocr/5/
  // tessdata) and initialises a recognizer, which takes about 100 ms. An
  // error of code not_available names what to install.
  static result<std::unique_ptr<ocr_engine>> open(const std::string& library,
                                                  const std::string& tessdata);
  ~ocr_engine();
  ocr_engine(const ocr_engine&) = delete;
  ocr_engine& operator=(const ocr_engine&) = delete;

  // The words in image, their boxes in its pixels. When *stop becomes true
  // (another thread may set it), the recognition stops at the next word
  // Tesseract checks it at and the answer is an error of code cancelled.
  result<std::vector<ocr_word>> recognize(const gray_view& image, const ocr_options& options,
                                          const std::atomic<bool>* stop = nullptr);

  // libtesseract's version, e.g. "5.3.0".
  std::string version() const;

 private:
  struct api;
  explicit ocr_engine(std::unique_ptr<api> a);
  std::unique_ptr<api> api_;
};

}  // namespace cu
