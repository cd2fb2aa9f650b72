#include "desktop/clipboard.h"

#include <algorithm>
#include <cstdio>

#include "util/str_cat.h"
#include "util/utf8.h"
#include "x11/connection.h"
#include "x11/windows.h"

namespace cu {
namespace {

using namespace std::chrono_literals;

// How long an owner may take to answer a conversion, or to send the next
// INCR chunk, before a read gives up.
constexpr auto kReadPatience = 3s;
// How long the server may take to report the property change that gives a
// write its timestamp.
constexpr auto kWritePatience = 2s;
// An INCR transfer whose requestor has not asked for more in this long is
// abandoned.
constexpr auto kTransferIdle = 10s;

// A property's whole value, deleting it (which, for INCR, asks for more).
struct property_value {
  xcb_atom_t type = XCB_NONE;
  std::string bytes;
};

std::optional<property_value> take_property(xcb_connection_t* c, xcb_window_t w, xcb_atom_t p) {
  reply_ptr<xcb_get_property_reply_t> r(xcb_get_property_reply(
      c, xcb_get_property(c, 1, w, p, XCB_GET_PROPERTY_TYPE_ANY, 0, 0x3fffffff), nullptr));
  if (!r) return std::nullopt;
  property_value v;
  v.type = r->type;
  // The value length is in bytes already, whatever the format.
  size_t n = size_t(xcb_get_property_value_length(r.get()));
  v.bytes.assign(static_cast<const char*>(xcb_get_property_value(r.get())), n);
  return v;
}

// Reads the clipboard: asks the owner to convert it to UTF8_STRING (then
// STRING) into our window's property, and follows INCR when it comes in
// pieces.
class clipboard_read final : public desktop_op {
 public:
  explicit clipboard_read(view_ptr view) : view_(std::move(view)) {}
  const char* serial_key() const override { return "clipboard"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    if (d.clipboard->owned()) return done(d.clipboard->text());
    reply_ptr<xcb_get_selection_owner_reply_t> o(xcb_get_selection_owner_reply(
        d.conn, xcb_get_selection_owner(d.conn, d.atoms->CLIPBOARD), nullptr));
    if (!o) return failure("lost the connection to the X display");
    owner_ = o->owner;
    if (owner_ == XCB_NONE) return done(std::string());
    // What an application the grants keep from the agent copied (a
    // password manager's password) is its, not the agent's: the owner's
    // application is judged like a window the agent would touch.
    if (auto refused = refuse_window(d, view_, owner_, "read_clipboard")) return refused;
    xcb_delete_property(d.conn, d.window, d.atoms->CU_SELECTION);
    convert(d, d.atoms->UTF8_STRING);
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    if (event_type(ev) == XCB_SELECTION_NOTIFY) {
      auto* n = reinterpret_cast<const xcb_selection_notify_event_t*>(ev);
      if (n->requestor != d.window || n->selection != d.atoms->CLIPBOARD || incr_) {
        return std::nullopt;
      }
      if (n->property == XCB_NONE) {
        // The owner refused this target; older clients only know STRING.
        if (target_ == d.atoms->UTF8_STRING) {
          convert(d, XCB_ATOM_STRING);
          return std::nullopt;
        }
        return failure(str_cat("the clipboard owner (window ", window_id_text(owner_),
                               ") has no text to give"));
      }
      auto v = take_property(d.conn, d.window, n->property);
      if (!v) return failure("lost the connection to the X display");
      if (v->type == d.atoms->INCR) {
        // The data comes in pieces, each announced by a new property value;
        // deleting the INCR property (done above) asked for the first.
        incr_ = true;
        wake_at = desktop_clock::now() + kReadPatience;
        return std::nullopt;
      }
      return finish(d, *v);
    }
    if (event_type(ev) == XCB_PROPERTY_NOTIFY && incr_) {
      auto* p = reinterpret_cast<const xcb_property_notify_event_t*>(ev);
      if (p->window != d.window || p->atom != d.atoms->CU_SELECTION ||
          p->state != XCB_PROPERTY_NEW_VALUE) {
        return std::nullopt;
      }
      auto v = take_property(d.conn, d.window, d.atoms->CU_SELECTION);
      if (!v) return failure("lost the connection to the X display");
      if (v->bytes.empty()) {
        property_value all{type_, std::move(data_)};
        return finish(d, all);
      }
      type_ = v->type;
      data_ += v->bytes;
      wake_at = desktop_clock::now() + kReadPatience;
    }
    return std::nullopt;
  }

  std::optional<desktop_result> on_wake(desktop_context&) override {
    if (incr_) {
      return failure(str_cat("the clipboard owner (window ", window_id_text(owner_),
                             ") stopped sending after ", std::to_string(data_.size()), " bytes"));
    }
    return failure(str_cat("the clipboard owner (window ", window_id_text(owner_),
                           ") did not answer within ", seconds_text(kReadPatience), " s"));
  }

 private:
  void convert(desktop_context& d, xcb_atom_t target) {
    target_ = target;
    xcb_convert_selection(d.conn, d.window, d.atoms->CLIPBOARD, target, d.atoms->CU_SELECTION,
                          XCB_CURRENT_TIME);
    xcb_flush(d.conn);
    wake_at = desktop_clock::now() + kReadPatience;
  }

  desktop_result finish(desktop_context& d, const property_value& v) {
    if (v.type == XCB_ATOM_STRING) return done(latin1_to_utf8(v.bytes));
    (void)d;
    return done(v.bytes);
  }

  static desktop_result done(std::string text) { return {tool_result::text(std::move(text)), {}}; }
  static desktop_result failure(std::string message) {
    return {tool_result::failure(std::move(message)), {}};
  }

  view_ptr view_;
  xcb_window_t owner_ = XCB_NONE;
  xcb_atom_t target_ = XCB_NONE;
  bool incr_ = false;
  xcb_atom_t type_ = XCB_NONE;
  std::string data_;
};

// Writes the clipboard: learns the server time (ICCCM forbids CurrentTime
// for SetSelectionOwner) from the PropertyNotify of an empty append to our
// window, then takes CLIPBOARD with it.
class clipboard_write final : public desktop_op {
 public:
  clipboard_write(std::string text, size_t characters)
      : text_(std::move(text)), characters_(characters) {}

  const char* serial_key() const override { return "clipboard"; }

  std::optional<desktop_result> start(desktop_context& d) override {
    xcb_change_property(d.conn, XCB_PROP_MODE_APPEND, d.window, d.atoms->CU_TIMESTAMP,
                        XCB_ATOM_STRING, 8, 0, nullptr);
    xcb_flush(d.conn);
    wake_at = desktop_clock::now() + kWritePatience;
    return std::nullopt;
  }

  std::optional<desktop_result> on_event(desktop_context& d,
                                         const xcb_generic_event_t* ev) override {
    if (event_type(ev) != XCB_PROPERTY_NOTIFY) return std::nullopt;
    auto* p = reinterpret_cast<const xcb_property_notify_event_t*>(ev);
    if (p->window != d.window || p->atom != d.atoms->CU_TIMESTAMP) return std::nullopt;
    xcb_set_selection_owner(d.conn, d.window, d.atoms->CLIPBOARD, p->time);
    reply_ptr<xcb_get_selection_owner_reply_t> o(xcb_get_selection_owner_reply(
        d.conn, xcb_get_selection_owner(d.conn, d.atoms->CLIPBOARD), nullptr));
    if (!o || o->owner != d.window) {
      return desktop_result{tool_result::failure("the X server did not give us the clipboard"),
                            {}};
    }
    d.clipboard->own(std::move(text_), p->time);
    return desktop_result{
        tool_result::text(str_cat("wrote ", std::to_string(characters_), " characters to the clipboard")),
        {}};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override {
    return desktop_result{tool_result::failure("the X server did not answer in time"), {}};
  }

 private:
  std::string text_;
  size_t characters_;
};

}  // namespace

std::unique_ptr<desktop_op> make_clipboard_read(view_ptr view) {
  return std::make_unique<clipboard_read>(std::move(view));
}

std::unique_ptr<desktop_op> make_clipboard_write(std::string text, size_t characters) {
  return std::make_unique<clipboard_write>(std::move(text), characters);
}

void clipboard_owner::attach(xcb_connection_t* c, const x11_atoms* a, xcb_window_t window) {
  c_ = c;
  a_ = a;
  window_ = window;
  owned_ = false;
  transfers_.clear();
}

void clipboard_owner::own(std::string text, xcb_timestamp_t since) {
  owned_ = true;
  since_ = since;
  utf8_ = std::make_shared<const std::string>(std::move(text));
  latin1_.reset();
}

size_t clipboard_owner::chunk_bytes() const {
  // Well under the request size limit, which is 256 KiB without
  // BIG-REQUESTS; ICCCM asks for INCR above about that.
  size_t max_request = size_t(xcb_get_maximum_request_length(c_)) * 4;
  return std::min<size_t>(size_t{1} << 18, max_request > 1024 ? max_request - 1024 : 1024);
}

bool clipboard_owner::handle(const xcb_generic_event_t* ev) {
  switch (event_type(ev)) {
    case XCB_SELECTION_REQUEST: {
      auto* req = reinterpret_cast<const xcb_selection_request_event_t*>(ev);
      if (req->owner != window_) return false;
      serve(*req);
      return true;
    }
    case XCB_SELECTION_CLEAR: {
      auto* clr = reinterpret_cast<const xcb_selection_clear_event_t*>(ev);
      if (clr->owner != window_ || clr->selection != a_->CLIPBOARD) return false;
      // Another client took the clipboard. Transfers in progress keep their
      // own reference to the data and finish.
      owned_ = false;
      utf8_ = std::make_shared<const std::string>();
      latin1_.reset();
      return true;
    }
    case XCB_PROPERTY_NOTIFY: {
      auto* p = reinterpret_cast<const xcb_property_notify_event_t*>(ev);
      if (p->state != XCB_PROPERTY_DELETE) return false;
      auto it = std::find_if(transfers_.begin(), transfers_.end(), [&](const transfer& t) {
        return t.requestor == p->window && t.property == p->atom;
      });
      if (it == transfers_.end()) return false;
      // The requestor took the last piece: write the next, or the empty
      // one that ends the transfer.
      size_t n = std::min(chunk_bytes(), it->data->size() - it->offset);
      xcb_change_property(c_, XCB_PROP_MODE_REPLACE, it->requestor, it->property, it->type, 8,
                          uint32_t(n), it->data->data() + it->offset);
      xcb_flush(c_);
      if (n == 0) {
        transfers_.erase(it);
      } else {
        it->offset += n;
        it->last = desktop_clock::now();
      }
      return true;
    }
    default:
      return false;
  }
}

void clipboard_owner::serve(const xcb_selection_request_event_t& req) {
  // Obsolete clients leave the property None and mean the target's name.
  xcb_atom_t property = req.property != XCB_NONE ? req.property : req.target;
  const x11_atoms& a = *a_;
  if (req.selection != a.CLIPBOARD || !owned_ ||
      (req.time != XCB_CURRENT_TIME && req.time < since_)) {
    return notify(req, XCB_NONE);
  }
  if (req.target == a.TARGETS) {
    const xcb_atom_t targets[] = {a.TARGETS,     a.TIMESTAMP,       a.UTF8_STRING,
                                  a.TEXT,        a.text_plain_utf8, XCB_ATOM_STRING,
                                  a.text_plain};
    xcb_change_property(c_, XCB_PROP_MODE_REPLACE, req.requestor, property, XCB_ATOM_ATOM, 32,
                        uint32_t(std::size(targets)), targets);
    return notify(req, property);
  }
  if (req.target == a.TIMESTAMP) {
    xcb_change_property(c_, XCB_PROP_MODE_REPLACE, req.requestor, property, XCB_ATOM_INTEGER, 32,
                        1, &since_);
    return notify(req, property);
  }
  if (req.target == a.UTF8_STRING || req.target == a.TEXT || req.target == a.text_plain_utf8) {
    // TEXT lets the owner pick the encoding; UTF-8 it is.
    xcb_atom_t type = req.target == a.TEXT ? a.UTF8_STRING : req.target;
    return send_data(req, property, type, utf8_);
  }
  if (req.target == XCB_ATOM_STRING || req.target == a.text_plain) {
    if (!latin1_) latin1_ = std::make_shared<const std::string>(utf8_to_latin1(*utf8_));
    return send_data(req, property, req.target, latin1_);
  }
  notify(req, XCB_NONE);  // MULTIPLE and anything else: refused.
}

void clipboard_owner::send_data(const xcb_selection_request_event_t& req, xcb_atom_t property,
                                xcb_atom_t type, std::shared_ptr<const std::string> data) {
  if (data->size() > chunk_bytes()) {
    // INCR: announce the size, then write a piece each time the requestor
    // deletes the property, which we hear through PropertyNotify on its
    // window.
    transfers_.erase(std::remove_if(transfers_.begin(), transfers_.end(),
                                    [&](const transfer& t) {
                                      return t.requestor == req.requestor &&
                                             t.property == property;
                                    }),
                     transfers_.end());
    const uint32_t mask = XCB_EVENT_MASK_PROPERTY_CHANGE;
    xcb_change_window_attributes(c_, req.requestor, XCB_CW_EVENT_MASK, &mask);
    const uint32_t size = uint32_t(std::min<size_t>(data->size(), UINT32_MAX));
    xcb_change_property(c_, XCB_PROP_MODE_REPLACE, req.requestor, property, a_->INCR, 32, 1,
                        &size);
    transfers_.push_back(
        transfer{req.requestor, property, type, std::move(data), 0, desktop_clock::now()});
    return notify(req, property);
  }
  xcb_change_property(c_, XCB_PROP_MODE_REPLACE, req.requestor, property, type, 8,
                      uint32_t(data->size()), data->data());
  notify(req, property);
}

void clipboard_owner::notify(const xcb_selection_request_event_t& req, xcb_atom_t property) {
  xcb_selection_notify_event_t ev{};
  ev.response_type = XCB_SELECTION_NOTIFY;
  ev.time = req.time;
  ev.requestor = req.requestor;
  ev.selection = req.selection;
  ev.target = req.target;
  ev.property = property;
  xcb_send_event(c_, 0, req.requestor, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char*>(&ev));
  xcb_flush(c_);
}

std::optional<desktop_clock::time_point> clipboard_owner::next_expiry() const {
  if (transfers_.empty()) return std::nullopt;
  auto t = desktop_clock::time_point::max();
  for (const transfer& x : transfers_) t = std::min(t, x.last + kTransferIdle);
  return t;
}

void clipboard_owner::expire(desktop_clock::time_point now) {
  transfers_.erase(std::remove_if(transfers_.begin(), transfers_.end(),
                                  [&](const transfer& t) { return t.last + kTransferIdle <= now; }),
                   transfers_.end());
}

}  // namespace cu
