#include "a11y/a11y.h"

#include <atspi/atspi.h>
#include <glib.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include "a11y/app_ops.h"
#include "a11y/app_window.h"
#include "util/log.h"
#include "util/str_cat.h"
#include "util/threads.h"

namespace cu {

namespace {

class function_op : public a11y_op {
 public:
  explicit function_op(std::function<std::optional<tool_result>(const a11y_control&)> f)
      : f_(std::move(f)) {}
  std::optional<tool_result> run(const a11y_control& c) override { return f_(c); }

 private:
  std::function<std::optional<tool_result>(const a11y_control&)> f_;
};

// The a11y thread's link to the accessibility bus, and its recovery when
// the bus goes away.
//
// libatspi keeps one connection for the process and never notices that it
// broke: once the bus daemon is gone, its calls fail without setting an
// error (_atspi_dbus_get_property drops it), so the desktop reads as having
// no children and list_apps would answer an empty list as a success. The
// link therefore asks libdbus itself whether the connection is up before
// and after every job.
//
// Coming back needs atspi_exit() and atspi_init(), and libatspi 2.46 then
// still remembers every application it met by its bus name, disposed (no
// connection): the registry's name first, so the new desktop would have no
// children, and on the new bus the unique names start again at ":1.0",
// so a new application whose name an old one had would read as gone. The
// link gives such an application object back a connection and an empty
// object table (the fields its own constructor sets; AtspiApplication's
// structure is public) before the first job on the new bus, and checks the
// desktop's children again before every job on it.
constexpr const char* kBusGone =
    "the accessibility bus went away (at-spi-bus-launcher or its bus ended); the toolset "
    "connects again by itself once a bus is back, so call again then (applications "
    "register again only when they are restarted, or their toolkit reconnects)";

class bus_link {
 public:
  ~bus_link() { forget(); }

  bool up() const { return conn_ != nullptr; }
  bool reconnected() const { return reconnected_; }

  // Every D-Bus connection a libatspi call of this thread can block on:
  // the accessibility bus, and each application's own. libatspi opens a
  // private peer-to-peer connection to an application (at-spi2-core 2.34
  // on) when the application answers GetApplicationBusAddress, which it
  // asks as soon as it meets the application; the answer is handled
  // whenever the bus is dispatched, so an application's connection can
  // appear between any two calls. Read from libatspi's structures only
  // (the desktop's children and their AtspiApplication), without a bus
  // call, so it is cheap enough to ask before every call.
  void connections(std::vector<DBusConnection*>& out) const {
    out.clear();
    if (conn_ == nullptr) return;
    out.push_back(conn_);
    GPtrArray* children = desktop_ != nullptr ? desktop_->children : nullptr;
    for (guint i = 0; children != nullptr && i < children->len; ++i) {
      auto* child = static_cast<AtspiAccessible*>(g_ptr_array_index(children, i));
      AtspiApplication* app = child != nullptr ? ATSPI_OBJECT(child)->app : nullptr;
      if (app == nullptr || app->bus == nullptr) continue;
      if (std::find(out.begin(), out.end(), app->bus) == out.end()) out.push_back(app->bus);
    }
  }

  // Connects (again, when a bus was lost). Errors say what is missing.
  status connect(GMainContext* context, bool x_bus_property) {
    if (lost_ && !launcher_present(x_bus_property)) {
      return make_error(errc::a11y_unavailable,
                        str_cat(kBusGone, "; no launcher owns org.a11y.Bus on the session bus yet"));
    }
    if (lost_) {
      // atspi_set_main_context does nothing when given the context it has:
      // point it elsewhere first, so that the new connection is moved.
      atspi_set_main_context(g_main_context_default());
    }
    auto c = a11y_connect(context, x_bus_property);
    if (!c) {
      if (lost_) atspi_exit();  // Lets the next job try atspi_init again.
      return c.take_error();
    }
    DBusConnection* bus = atspi_get_a11y_bus();
    if (bus == nullptr || !dbus_connection_get_is_connected(bus)) {
      atspi_exit();
      return make_error(errc::a11y_unavailable, "cannot connect to the accessibility bus");
    }
    conn_ = dbus_connection_ref(bus);
    if (lost_) {
      for (AtspiApplication* app : stale_) revive(app, conn_);
      reconnected_ = true;
      lost_ = false;
    }
    return {};
  }

  // The desktop, whose children are the applications connections() reads.
  // Asked of the registry once per connection (called before every job; a
  // no-op once it is held), on the bus (call_timeout_ms bounds it, and the
  // bus is already in connections() for the end's watchdog); libatspi keeps
  // it, and its children, up to date from then.
  void take_desktop(int call_timeout_ms) {
    if (conn_ == nullptr || desktop_ != nullptr) return;
    atspi_set_timeout(call_timeout_ms, call_timeout_ms);
    desktop_ = atspi_get_desktop(0);
  }

  // Whether the connection is still up; reads what the socket has (a
  // hang-up included) without blocking.
  bool alive() {
    if (conn_ == nullptr) return false;
    dbus_connection_read_write(conn_, 0);
    return dbus_connection_get_is_connected(conn_);
  }

  // After the bus went away: libatspi's state is ended, and the objects
  // it will find again by name are kept, to be revived on the next bus.
  void lose() {
    if (conn_ == nullptr) return;
    drop_desktop();
    if (atspi_is_initialized()) {
      gobj_ptr desktop(atspi_get_desktop(0));
      if (desktop) {
        keep(ATSPI_OBJECT(desktop.get())->app);
        GPtrArray* children = desktop->children;
        for (guint i = 0; children != nullptr && i < children->len; ++i) {
          auto* child = static_cast<AtspiAccessible*>(g_ptr_array_index(children, i));
          if (child != nullptr) keep(ATSPI_OBJECT(child)->app);
        }
      }
      atspi_exit();
    }
    dbus_connection_unref(conn_);
    conn_ = nullptr;
    lost_ = true;
  }

  // On a bus found again: the desktop's applications that libatspi took
  // from its old table get a connection back. Only registry calls.
  void revive_children() {
    if (!reconnected_ || conn_ == nullptr) return;
    gobj_ptr desktop(atspi_get_desktop(0));
    if (!desktop) return;
    atspi_accessible_clear_cache(desktop.get());
    GError* err = nullptr;
    int n = atspi_accessible_get_child_count(desktop.get(), &err);
    if (err != nullptr) {
      g_error_free(err);
      return;
    }
    for (int i = 0; i < n && i < 4096; ++i) {
      gobj_ptr child(atspi_accessible_get_child_at_index(desktop.get(), i, &err));
      if (err != nullptr) {
        g_error_free(err);
        err = nullptr;
        continue;
      }
      if (child) revive(ATSPI_OBJECT(child.get())->app, conn_);
    }
  }

 private:
  struct unref {
    void operator()(void* p) const { g_object_unref(p); }
  };
  using gobj_ptr = std::unique_ptr<AtspiAccessible, unref>;

  void keep(AtspiApplication* app) {
    if (app == nullptr) return;
    if (std::find(stale_.begin(), stale_.end(), app) != stale_.end()) return;
    stale_.push_back(static_cast<AtspiApplication*>(g_object_ref(app)));
  }

  // What _atspi_application_new and libatspi's get_application set up,
  // given back to an application object disposed with the old connection.
  static void revive(AtspiApplication* app, DBusConnection* bus) {
    if (app == nullptr || app->bus != nullptr) return;
    app->bus = dbus_connection_ref(bus);
    if (app->hash == nullptr) {
      app->hash = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
    }
    app->cache = ATSPI_CACHE_UNDEFINED;
    gettimeofday(&app->time_added, nullptr);
  }

  // Whether something can give the bus's address without side effects: a
  // fixed address, the X root's property, or a launcher owning org.a11y.Bus
  // (asking GetAddress of an unowned name would start one by activation).
  static bool launcher_present(bool x_bus_property) {
    if (getenv("AT_SPI_BUS_ADDRESS") != nullptr || x_bus_property) return true;
    DBusError e;
    dbus_error_init(&e);
    DBusConnection* session = dbus_bus_get_private(DBUS_BUS_SESSION, &e);
    if (session == nullptr) {
      dbus_error_free(&e);
      return false;
    }
    dbus_connection_set_exit_on_disconnect(session, FALSE);
    bool owned = dbus_bus_name_has_owner(session, "org.a11y.Bus", &e);
    dbus_error_free(&e);
    dbus_connection_close(session);
    dbus_connection_unref(session);
    return owned;
  }

  void drop_desktop() {
    if (desktop_ != nullptr) g_object_unref(desktop_);
    desktop_ = nullptr;
  }

  void forget() {
    drop_desktop();
    for (AtspiApplication* app : stale_) g_object_unref(app);
    stale_.clear();
    if (conn_ != nullptr) dbus_connection_unref(conn_);
    conn_ = nullptr;
  }

  DBusConnection* conn_ = nullptr;
  AtspiAccessible* desktop_ = nullptr;  // Referenced; null until take_desktop().
  bool lost_ = false;         // The last connection broke.
  bool reconnected_ = false;  // This process is on a bus found again.
  std::vector<AtspiApplication*> stale_;  // Referenced; revived on the next bus.
};

}  // namespace

std::unique_ptr<a11y_op> make_a11y_function(
    std::function<std::optional<tool_result>(const a11y_control&)> f) {
  return std::make_unique<function_op>(std::move(f));
}

a11y::a11y(std::string display, completion_queue& done)
    : display_(std::move(display)), done_(done), context_(g_main_context_new()) {
  thread_ = std::thread(&a11y::thread_main, this);
  name_thread(thread_, "cu-a11y");
}

a11y::~a11y() {
  stop();
  g_main_context_unref(context_);
}

void a11y::post(a11y_job job) {
  job.posted = a11y_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  g_main_context_wakeup(context_);
}

void a11y::cancel(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(seq);
  }
  g_main_context_wakeup(context_);
}

void a11y::end_soon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ending_) return;
    ending_ = true;
    end_at_ = (a11y_clock::now() + std::chrono::milliseconds(kEndGraceMs)).time_since_epoch().count();
    ending_flag_ = true;
    watchdog_ = std::thread(&a11y::watchdog_main, this);
    name_thread(watchdog_, "cu-a11y-end");
  }
  g_main_context_wakeup(context_);
}

void a11y::stop() {
  end_soon();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  running_done_.notify_all();
  g_main_context_wakeup(context_);
  if (thread_.joinable()) thread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

bool a11y::is_cancelled(uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::find(cancels_.begin(), cancels_.end(), seq) != cancels_.end();
}

bool a11y::past_end() const {
  return ending_flag_.load() &&
         a11y_clock::now().time_since_epoch().count() >= end_at_.load();
}

void a11y::watchdog_main() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto until = a11y_clock::time_point(a11y_clock::duration(end_at_.load()));
  // Until the grace ends, or everything is done and the server stops. No
  // job starts after the grace (the queue is answered instead), so a job
  // running then is the last one.
  running_done_.wait_until(lock, until,
                           [this] { return stopping_ && !running_ && queue_.empty(); });
  if (!running_ || connections_.empty()) return;
  // libdbus blocks in poll() on one connection's socket for the call's
  // whole timeout, and retries the poll when a signal interrupts it:
  // only the socket waking can end the call. Shutting it down (not closing
  // it: its connection still owns the descriptor) wakes that poll with a
  // hang-up, and the call returns "disconnected" at once. Which connection
  // a call waits on is libatspi's choice (the bus, or the application's
  // own peer-to-peer socket), so every connection the thread has is shut.
  // libdbus releases a connection's lock while it polls, so asking it for
  // its socket does not wait for the blocked call; a connection that has
  // closed since it was published has no socket, so no descriptor number
  // that was reused since is touched. None is used again: the server is
  // stopping.
  int cut = 0;
  for (DBusConnection* c : connections_) {
    int fd = -1;
    if (dbus_connection_get_socket(c, &fd) && fd >= 0 && shutdown(fd, SHUT_RDWR) == 0) ++cut;
  }
  log(log_level::info,
      "a11y: a bus call was still running %d ms after the server began to stop; "
      "shut down %d D-Bus connection(s) under it",
      kEndGraceMs, cut);
}

void a11y::publish(const std::vector<DBusConnection*>& now) {
  if (now == published_) return;
  std::vector<DBusConnection*> fresh;
  fresh.reserve(now.size());
  for (DBusConnection* c : now) fresh.push_back(dbus_connection_ref(c));
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.swap(fresh);
  }
  for (DBusConnection* c : fresh) dbus_connection_unref(c);
  published_ = now;
}

void a11y::thread_main() {
  // libatspi sets its connection up on the thread-default context when it
  // connects (atspi_init uses the global default; atspi_set_main_context
  // moves it here), and its blocking calls dispatch on that connection.
  g_main_context_push_thread_default(context_);
  // Made and destroyed on this thread: they hold libatspi objects and an
  // X connection of this thread's.
  app_windows windows(display_);
  std::shared_ptr<a11y_memory> memory = make_a11y_memory();
  auto link = std::make_unique<bus_link>();
  for (;;) {
    std::optional<a11y_job> job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A cancelled job still queued is answered with nothing, and never
      // runs; once the server's grace for stopping is over, no queued job
      // runs.
      const bool over = past_end();
      for (auto it = queue_.begin(); it != queue_.end();) {
        if (std::find(cancels_.begin(), cancels_.end(), it->seq) != cancels_.end()) {
          done_.push(job_done(*it, std::nullopt));
          std::erase(cancels_, it->seq);
          it = queue_.erase(it);
        } else if (over) {
          done_.push(job_done(*it, tool_result::failure(
                                       "the server is stopping: this a11y call was not run")));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      // Cancels of requests that already finished have nothing left to stop.
      if (queue_.empty()) cancels_.clear();
      if (!queue_.empty()) {
        job = std::move(queue_.front());
        queue_.pop_front();
        running_ = true;
      } else if (stopping_) {
        break;
      }
    }
    if (!job) {
      // Sleeps until a bus message, a timer of libatspi's, or a wake-up.
      g_main_context_iteration(context_, TRUE);
      continue;
    }
    std::optional<tool_result> r;
    auto deadline = job->posted + job->op->budget;
    if (ending_flag_.load()) {
      deadline = std::min(deadline, a11y_clock::time_point(a11y_clock::duration(end_at_.load())));
    }
    const auto now = a11y_clock::now();
    if (now >= deadline) {
      // Its whole budget went in the queue, behind calls to applications
      // that did not answer quickly.
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - job->posted);
      r = tool_result::failure(make_error(
          errc::timed_out,
          str_cat("timed out in the queue: this a11y call waited ", std::to_string(waited.count()),
                  " ms behind earlier ones (its budget is ",
                  std::to_string(job->op->budget.count()), " ms, queueing included); call it "
                  "again, and avoid applications that do not answer")));
    }
    if (!r) {
      if (auto refused = refuse_hung(*memory, job->op->app)) r = tool_result::failure(*refused);
    }
    std::vector<DBusConnection*> conns_now;
    auto publish_connections = [&] {
      link->connections(conns_now);
      publish(conns_now);
    };
    auto drop_bus = [&] {
      // Its objects mean nothing now; the watchdog has no business with
      // connections that are about to be closed.
      memory = make_a11y_memory();
      publish({});
      link->lose();
    };
    if (!r && link->up() && !link->alive()) {
      log(log_level::warn, "a11y: the accessibility bus went away; connecting again");
      drop_bus();
    }
    if (!r && !link->up()) {
      auto c = link->connect(context_, windows.root_names_a11y_bus());
      if (!c) r = tool_result::failure(c.err());
      publish_connections();
    }
    if (!r) {
      link->take_desktop(job->op->call_timeout_ms);
      link->revive_children();
      publish_connections();
      a11y_control control;
      control.deadline = deadline;
      control.call_timeout_ms = job->op->call_timeout_ms;
      uint64_t seq = job->seq;
      // Asked before every bus call of the job (bus_calls::before,
      // bus_batch's checks): the moment to publish a connection libatspi
      // opened since, before a call can block on it.
      control.cancelled = [this, seq, &publish_connections] {
        publish_connections();
        return past_end() || is_cancelled(seq);
      };
      control.windows = &windows;
      control.memory = memory.get();
      r = job->op->run(control);
      // Calls on a connection that broke during the job fail without an
      // error (see bus_link): what the job found cannot be trusted.
      if (!ending_flag_.load() && !link->alive()) {
        drop_bus();
        if (r) r = tool_result::failure(make_error(errc::a11y_unavailable, kBusGone));
      }
    }
    if (is_cancelled(job->seq)) {
      r.reset();
    } else if (ending_flag_.load() && !r) {
      r = tool_result::failure("the server is stopping: this a11y call was cut short");
    }
    done_.push(job_done(*job, std::move(r)));
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(cancels_, job->seq);
    running_ = false;
    running_done_.notify_all();
  }
  memory.reset();
  publish({});
  link.reset();
  g_main_context_pop_thread_default(context_);
}

}  // namespace cu
