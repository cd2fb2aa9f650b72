#include "desktop/desktop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "util/log.h"
#include "util/str_cat.h"
#include "util/threads.h"

namespace cu {

namespace {

// How often the thread tries to connect while the display is down.
constexpr auto kReconnect = std::chrono::milliseconds(250);

}  // namespace

desktop::desktop(std::string display, server_generation& generation, completion_queue& done)
    : display_(std::move(display)),
      generations_(generation),
      done_(done),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread(&desktop::thread_main, this);
  name_thread(thread_, "cu-desktop");
}

desktop::~desktop() {
  stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void desktop::wake() {
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof one);
  (void)n;  // A full counter still wakes the thread.
}

void desktop::post(desktop_job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    incoming_.push_back(running{std::move(job)});
  }
  wake();
}

void desktop::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(seq);
  }
  wake();
}

void desktop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

void desktop::report(screen_report r) {
  completion c;  // seq 0: news for the loop, not an answer.
  c.screen = r;
  done_.push(std::move(c));
}

bool desktop::ensure_connected(std::string* why) {
  if (conn_ && !xcb_connection_has_error(conn_.get())) return true;
  if (conn_) drop_connection();
  conn_generation_ = generations_.current();
  int screen_number = 0;
  auto c = x11_connect(display_, &screen_number);
  if (!c) {
    *why = c.err().message;
    return false;
  }
  xcb_screen_t* screen = x11_screen(c->get(), screen_number);
  auto atoms = intern_atoms(c->get());
  if (screen == nullptr || !atoms) {
    *why = str_cat("cannot set up the X connection to ", display_);
    return false;
  }
  conn_ = std::move(*c);
  atoms_ = *atoms;
  root_ = screen->root;
  xcb_connection_t* conn = conn_.get();
  // An unmapped window to own selections and receive converted data on.
  window_ = xcb_generate_id(conn);
  const uint32_t values[] = {1, XCB_EVENT_MASK_PROPERTY_CHANGE};
  xcb_create_window(conn, XCB_COPY_FROM_PARENT, window_, root_, -10, -10, 1, 1, 0,
                    XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT,
                    XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
  const char title[] = "computer-use-mcp";
  xcb_change_property(conn, XCB_PROP_MODE_REPLACE, window_, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                      sizeof title - 1, title);
  // New top-level windows and root property changes (_NET_ACTIVE_WINDOW,
  // _NET_CLIENT_LIST) wake operations that wait for them; the root's own
  // ConfigureNotify says the screen was resized.
  const uint32_t root_mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY |
                             XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY | XCB_EVENT_MASK_PROPERTY_CHANGE;
  xcb_change_window_attributes(conn, root_, XCB_CW_EVENT_MASK, &root_mask);
  reply_ptr<xcb_get_geometry_reply_t> g(
      xcb_get_geometry_reply(conn, xcb_get_geometry(conn, root_), nullptr));
  if (g) {
    root_size_ = size2{g->width, g->height};
    report(screen_report{false, root_size_, conn_generation_});
  }
  clipboard_.attach(conn, &atoms_, window_);
  apps_.emplace(conn, root_);
  ctx_ = desktop_context{conn, root_, window_, &atoms_, &clipboard_, display_, &*apps_};
  return true;
}

void desktop::drop_connection() {
  if (conn_ && x11_server_gone(conn_.get())) {
    // The first thread to notice starts a new generation; the loop voids
    // the coordinate session and the actor ends its holds.
    generations_.lost(conn_generation_);
    report(screen_report{true, {}, conn_generation_});
  }
  ctx_ = desktop_context{};
  apps_.reset();
  conn_.reset();
  for (running& r : ops_) {
    if (r.started) {
      finish(r, desktop_result{
                    tool_result::failure(str_cat("lost the connection to X display ", display_)),
                    {}});
    }
  }
  ops_.remove_if([](const running& r) { return r.op == nullptr; });
}

void desktop::finish(running& r, std::optional<desktop_result> result) {
  completion c = job_done(r, result ? std::optional<tool_result>(std::move(result->result))
                                    : std::nullopt);
  if (result) c.display_area = std::move(result->display_area);
  done_.push(std::move(c));
  r.op.reset();
}

void desktop::dispatch(const xcb_generic_event_t* ev) {
  if (event_type(ev) == XCB_CONFIGURE_NOTIFY) {
    const auto* e = reinterpret_cast<const xcb_configure_notify_event_t*>(ev);
    if (e->window == root_ && size2{e->width, e->height} != root_size_) {
      root_size_ = size2{e->width, e->height};
      report(screen_report{false, root_size_, conn_generation_});
    }
  }
  if (clipboard_.handle(ev)) return;
  for (running& r : ops_) {
    if (!r.started || !r.op) continue;
    if (auto res = r.op->on_event(ctx_, ev)) finish(r, std::move(res));
  }
}

void desktop::start_ready() {
  // The keys of operations still running or waiting their turn: a later
  // operation with the same key waits behind them. An operation that
  // finished within this pass (at once, or for want of a connection)
  // blocks nothing, or the next one would wait for a wake-up that may
  // never come.
  std::vector<const char*> busy;
  for (running& r : ops_) {
    if (!r.op) continue;
    const char* key = r.op->serial_key();
    bool blocked = key != nullptr && std::any_of(busy.begin(), busy.end(), [&](const char* k) {
                     return strcmp(k, key) == 0;
                   });
    if (!r.started && !blocked) {
      std::string why;
      if (!ensure_connected(&why)) {
        finish(r, desktop_result{tool_result::failure(why), {}});
      } else {
        r.started = true;
        if (auto res = r.op->start(ctx_)) finish(r, std::move(res));
      }
    }
    if (key != nullptr && r.op) busy.push_back(key);
  }
  ops_.remove_if([](const running& r) { return r.op == nullptr; });
}

void desktop::thread_main() {
  std::string why;
  if (!ensure_connected(&why)) log(log_level::debug, "desktop: %s", why.c_str());
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (running& r : incoming_) ops_.push_back(std::move(r));
      incoming_.clear();
      for (uint64_t seq : cancels_) {
        for (running& r : ops_) {
          if (r.seq == seq && r.op) finish(r, std::nullopt);
        }
      }
      cancels_.clear();
      if (stopping_ && ops_.empty()) break;
    }
    ops_.remove_if([](const running& r) { return r.op == nullptr; });
    start_ready();

    // Events already read into xcb's queue (by a reply we waited for) would
    // never wake poll(): handle them first.
    if (conn_) {
      while (xcb_generic_event_t* ev = xcb_poll_for_queued_event(conn_.get())) {
        dispatch(ev);
        free(ev);
      }
      if (xcb_connection_has_error(conn_.get())) {
        log(log_level::warn, "desktop: lost the connection to %s", display_.c_str());
        drop_connection();
      }
    }
    ops_.remove_if([](const running& r) { return r.op == nullptr; });

    auto now = desktop_clock::now();
    if (!conn_ && now >= next_connect_) {
      // Watch the display again as soon as a server is back on it.
      std::string ignored;
      if (!ensure_connected(&ignored)) next_connect_ = now + kReconnect;
    }
    auto next = desktop_clock::time_point::max();
    if (!conn_) next = next_connect_;
    for (running& r : ops_) {
      if (r.started && r.op) next = std::min(next, r.op->wake_at);
    }
    if (auto e = clipboard_.next_expiry()) next = std::min(next, *e);
    int timeout = -1;
    if (next != desktop_clock::time_point::max()) {
      timeout = next <= now ? 0
                            : int(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
    }
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {conn_ ? xcb_get_file_descriptor(conn_.get()) : -1, POLLIN, 0}};
    int n = poll(fds, conn_ ? 2 : 1, timeout);
    if (n < 0 && errno != EINTR) {
      log(log_level::error, "desktop: poll: %s", strerror(errno));
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      ssize_t r = read(wake_fd_, &count, sizeof count);
      (void)r;
    }
    if (conn_) {
      while (xcb_generic_event_t* ev = xcb_poll_for_event(conn_.get())) {
        dispatch(ev);
        free(ev);
      }
    }
    now = desktop_clock::now();
    clipboard_.expire(now);
    for (running& r : ops_) {
      if (r.started && r.op && r.op->wake_at <= now) {
        if (auto res = r.op->on_wake(ctx_)) finish(r, std::move(res));
      }
    }
  }
}

}  // namespace cu
