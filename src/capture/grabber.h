// Owns: one capture worker's X connection and its MIT-SHM segment, attached
// once and reused for every grab; xcb_get_image when SHM is unavailable.
// With a grant view that filters (docs/grants.md), every grab also reads
// which windows are where and blacks out those the view does not allow,
// with the X server grabbed between the two reads so that no window moves
// in between; a window capture of a window the view does not allow is
// refused.
// Thread affinity: the capture worker (or trace writer) thread that created
// it, only.
#pragma once

#include <xcb/xcb.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.h"
#include "core/grant_policy.h"
#include "capture/scale.h"
#include "util/result.h"
#include "x11/app_identity.h"
#include "x11/atoms.h"
#include "x11/connection.h"
#include "core/generation.h"

namespace cu {

// Pixels of one grab: 4 bytes per pixel, rows stride bytes apart. Valid until
// the next grab on the same grabber.
struct frame {
  const uint8_t* data = nullptr;
  size_t stride = 0;
  rect area;
  pixel_layout layout;
};

class grabber {
 public:
  grabber(std::string display, server_generation& generation);
  ~grabber();
  grabber(const grabber&) = delete;
  grabber& operator=(const grabber&) = delete;

  // The root window's current area, connecting first when not connected
  // (so a display that was down is tried again on every call). A
  // connection whose server went away since the last call is replaced at
  // once, so the first capture after an X server restart succeeds.
  result<rect> screen_rect();

  // The server generation of the last successful screen_rect(): what a
  // session captured now belongs to.
  uint64_t generation() const { return generation_now_; }

  // The grants every grab from now on applies (null, or a view that does
  // not filter: none, and a grab costs what it always did). A job sets it
  // once, so all its grabs hide alike.
  void use_view(std::shared_ptr<const grant_view> view) { view_ = std::move(view); }
  // Whether grabs hide windows now.
  bool filtering() const { return view_ && view_->filtering(); }

  // Copies area (inside the root window) into the reused buffer. When
  // filtering, the parts whose topmost window the view does not allow are
  // black (all four bytes zero), as the windows stood when the pixels were
  // read.
  result<frame> grab(const rect& area);

  // When filtering, a number for what the view hides on the whole screen
  // now (read with the server grabbed): equal numbers, equal hidden parts.
  // What hides changes with no drawing when a window's identity changes
  // (its WM_CLASS) or a hidden window's id is reused, so no X DAMAGE says
  // an image made under another print is stale; the print does. 0 when
  // not filtering.
  result<uint64_t> hidden_print();
  // The print of the windows the last grab (or hidden_print) read (0 when
  // not filtering):
  // what a capture keeps for reuse is marked with the print it was taken
  // under only when this is that print.
  uint64_t last_print() const { return last_print_; }
  // What that print is of: the hidden parts of the whole screen, in root
  // pixels.
  const std::vector<rect>& last_hidden() const { return last_hidden_; }

  // Asks, for every connection from now on, that each top-level window be
  // kept in a pixmap of its own (Composite's automatic redirection: the
  // server still paints the screen as before), so grab_window reads a
  // window's own pixels where other windows cover it. Call before the
  // first connection. Without the extension, grab_window reads the screen.
  void keep_window_pixels() { keep_window_pixels_ = true; }

  // One window's pixels, and where they were read from.
  struct window_frame {
    frame pixels;       // pixels.area: in the window's own coordinates.
    point origin;       // The window's inside top-left corner in root coordinates now.
    size2 size;         // The window's inside size now.
    const char* source;  // "composite": its own pixels; "screen": what the screen shows there.
  };

  // The inside of window (no border), or part of it (a rectangle in the
  // window's own coordinates, cut to the window), into the reused buffer.
  // A window that no longer exists, or is not viewable (minimized,
  // unmapped), is an x_failed error that says so and names it; an id that
  // is no application's window (the root, this server's own, an
  // override-redirect window, one list_windows would not list:
  // client_window_refusal) is an invalid_argument error saying which.
  // Read from the pixmap of its top-level window when keep_window_pixels
  // holds, else from the screen (only the part on screen, and with
  // whatever covers it). When filtering, a window whose application the
  // view does not allow is a refused error (grant_view::refusal's text),
  // and what the screen shows of an allowed one has the parts that
  // windows the view does not allow cover blacked out.
  result<window_frame> grab_window(uint32_t window, const std::optional<rect>& part);

  bool connected() const { return conn_ != nullptr; }
  const char* transport() const;

 private:
  result<bool> ensure_connected();
  error lost(const char* what);
  void disconnect();
  bool attach_shm(size_t bytes);
  void detach_shm();
  void redirect_windows();
  // Copies area of drawable (depth 24 or 32) into the reused buffer.
  result<frame> get_image(xcb_drawable_t drawable, const rect& area);
  // The windows shown now (the server must be grabbed, or they may move
  // before the pixels are read), identified on this connection.
  result<std::vector<shown_window>> layout();
  // Blacks out, in f (which is this grabber's own buffer), the parts of
  // f.area (root pixels, placed at on_root) that the view hides.
  void hide(frame& f, const std::vector<shown_window>& shown, point on_root) const;
  // Sets last_print_ and last_hidden_ from shown.
  void note_hidden(const std::vector<shown_window>& shown);

  std::string display_;
  server_generation& generations_;
  uint64_t conn_generation_ = 0;  // When conn_ was made.
  uint64_t generation_now_ = 0;
  xcb_ptr conn_;
  xcb_screen_t* screen_ = nullptr;
  pixel_layout layout_;
  // The atoms telling an application's window from others, interned on
  // the first grab_window of a connection.
  std::optional<x11_atoms> atoms_;
  bool keep_window_pixels_ = false;
  bool composite_ = false;  // This connection keeps top-level windows' pixels.
  bool shm_present_ = false;
  bool shm_fd_ = false;
  uint32_t seg_ = 0;
  uint8_t* addr_ = nullptr;
  size_t size_ = 0;
  int sysv_id_ = -1;
  reply_ptr<xcb_get_image_reply_t> fallback_reply_;
  std::shared_ptr<const grant_view> view_;
  // Which application each window is, on conn_ (made on first use when
  // filtering; its identities are kept per window while it lives).
  std::optional<app_identifier> ids_;
  uint64_t last_print_ = 0;
  std::vector<rect> last_hidden_;
};

}  // namespace cu
