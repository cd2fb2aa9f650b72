// Owns: the CLIPBOARD selection as this server holds it. After a
// write_clipboard the desktop thread's window owns CLIPBOARD and serves any
// client that asks (TARGETS, TIMESTAMP, UTF8_STRING, TEXT,
// text/plain;charset=utf-8, STRING, text/plain as Latin-1), using the INCR
// protocol for contents larger than one chunk, until another client takes
// the selection (ICCCM section 2). The read and write operations are in
// the .cpp, made through desktop_op.h.
// Thread affinity: the desktop thread.
#pragma once

#include <xcb/xcb.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "desktop/desktop_op.h"

namespace cu {

class clipboard_owner {
 public:
  // After (re)connecting: a new connection owns nothing.
  void attach(xcb_connection_t* c, const x11_atoms* a, xcb_window_t window);

  // Records that window owns CLIPBOARD since time with this text.
  void own(std::string text, xcb_timestamp_t since);
  bool owned() const { return owned_; }
  const std::string& text() const { return *utf8_; }

  // Handles the events of serving the selection (SelectionRequest,
  // SelectionClear, the PropertyNotify that asks for the next INCR chunk);
  // true when ev was one of those.
  bool handle(const xcb_generic_event_t* ev);

  // INCR transfers whose requestor stopped reading are dropped after a while.
  std::optional<desktop_clock::time_point> next_expiry() const;
  void expire(desktop_clock::time_point now);

  // The largest property written in one piece; more goes by INCR.
  size_t chunk_bytes() const;

 private:
  struct transfer {
    xcb_window_t requestor;
    xcb_atom_t property;
    xcb_atom_t type;
    std::shared_ptr<const std::string> data;
    size_t offset;
    desktop_clock::time_point last;
  };

  void serve(const xcb_selection_request_event_t& req);
  void send_data(const xcb_selection_request_event_t& req, xcb_atom_t property, xcb_atom_t type,
                 std::shared_ptr<const std::string> data);
  void notify(const xcb_selection_request_event_t& req, xcb_atom_t property);

  xcb_connection_t* c_ = nullptr;
  const x11_atoms* a_ = nullptr;
  xcb_window_t window_ = XCB_NONE;
  bool owned_ = false;
  xcb_timestamp_t since_ = 0;
  std::shared_ptr<const std::string> utf8_ = std::make_shared<const std::string>();
  std::shared_ptr<const std::string> latin1_;
  std::vector<transfer> transfers_;
};

}  // namespace cu
