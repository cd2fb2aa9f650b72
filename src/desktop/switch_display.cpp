// switch_display as a desktop-thread operation: choose the monitor (or the
// whole screen) that screenshots, zooms and clicks cover from now on.
#include <xcb/xcb.h>

#include "core/json_writer.h"
#include "desktop/desktop_op.h"
#include "util/str_cat.h"
#include "x11/connection.h"
#include "x11/monitors.h"

namespace cu {
namespace {

class switch_display final : public desktop_op {
 public:
  switch_display(std::string requested, std::optional<rect> current)
      : requested_(std::move(requested)), current_(current) {}

  std::optional<desktop_result> start(desktop_context& d) override {
    auto monitors = list_monitors(d.conn, d.root);
    auto chosen = choose_monitor(monitors, requested_);
    if (!chosen) return desktop_result{tool_result::failure(chosen.err()), {}};
    reply_ptr<xcb_get_geometry_reply_t> g(
        xcb_get_geometry_reply(d.conn, xcb_get_geometry(d.conn, d.root), nullptr));
    if (!g) return desktop_result{tool_result::failure("lost the connection to the X display"), {}};
    rect whole{0, 0, g->width, g->height};
    std::optional<rect> area;
    if (*chosen) area = (*chosen)->geometry;
    bool switched = area != current_;
    std::string name = *chosen ? (*chosen)->name : "auto";
    std::string geometry = geometry_text(area ? *area : whole);
    std::string out;
    json_writer j(out);
    j.begin_object().key("display").string(d.display).key("switched").boolean(switched);
    j.key("requested").string(requested_).key("monitor").string(name);
    j.key("geometry").string(geometry);
    std::string note;
    std::string what = *chosen ? str_cat("monitor ", name, " (", geometry, ")")
                               : str_cat("the whole screen (", geometry, ")");
    if (switched) {
      note = str_cat("screenshot, zoom, clicks and cursor_position now cover ", what,
                     "; take a screenshot to see it");
    } else {
      note = str_cat("already on ", what);
    }
    j.key("note").string(note).end_object();
    return desktop_result{tool_result::json(std::move(out)), area};
  }

  std::optional<desktop_result> on_wake(desktop_context&) override { return std::nullopt; }

 private:
  std::string requested_;
  std::optional<rect> current_;
};

}  // namespace

std::unique_ptr<desktop_op> make_switch_display(std::string requested,
                                                std::optional<rect> current_area) {
  return std::make_unique<switch_display>(std::move(requested), current_area);
}

}  // namespace cu
