// Owns: many D-Bus calls to one application in flight at once, on the
// connection libatspi already has to it (a peer-to-peer socket since
// at-spi2-core 2.34, else the accessibility bus), with the job's bounds
// kept: each answer is handed to its handler in the order the calls were
// sent, and after every answer (and at least every 50 ms while waiting)
// the job's cancellation and deadline are checked. libatspi makes one
// blocking round trip per property; the application answers the same
// questions faster when they are queued at its socket, since it and the
// walker no longer wait for each other.
// Thread affinity: the a11y thread only (the connection is libatspi's,
// which is dispatched there), or a program's only thread (bench_a11y).
#pragma once

#include <dbus/dbus.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "a11y/walk.h"
#include "util/result.h"

namespace cu::atspi {

// One answer: the reply, or the error the application (or libdbus) gave.
struct bus_answer {
  DBusMessage* reply = nullptr;  // Borrowed for the handler's call; null on error.
  std::string error_name;        // "org.freedesktop.DBus.Error.UnknownMethod"; empty on success.
};

class bus_batch {
 public:
  using handler = std::function<void(const bus_answer&)>;

  // conn: the application's connection (libatspi's AtspiApplication::bus);
  // bus_name: its unique name, the calls' destination.
  bus_batch(DBusConnection* conn, std::string bus_name, const a11y_control& c);
  ~bus_batch();
  bus_batch(const bus_batch&) = delete;
  bus_batch& operator=(const bus_batch&) = delete;

  // Queues a call of method on object path; args appended by fill (may
  // be null). Handlers may queue more calls.
  void call(const std::string& path, const char* iface, const char* method,
            const std::function<void(DBusMessageIter*)>& fill, handler on_answer);

  // Sends and answers until nothing is queued or in flight. Errors:
  // cancelled; timed_out (out of the job's time, or no answer for the
  // per-call timeout: the application is hung or stopped); not_found (the
  // application went away: its connection closed, or the bus says it
  // has no such name). Calls still in flight are dropped.
  status run();

  // How many calls were sent (the benchmark's round-trip count).
  int sent() const { return sent_; }

 private:
  // A call sent and not yet handed to its handler; reply is set (owned)
  // once its answer is read.
  struct flight {
    dbus_uint32_t serial = 0;
    DBusMessage* reply = nullptr;
    handler on_answer;
  };
  struct queued {
    DBusMessage* msg = nullptr;
    handler on_answer;
  };

  status fill_window();
  // Takes the answers to this batch's calls off the connection's incoming
  // queue; everything else there is dispatched as libdbus would.
  void take_answers();
  void drop_all();

  DBusConnection* conn_;
  std::string bus_name_;
  const a11y_control& c_;
  std::deque<queued> queue_;
  std::deque<flight> in_flight_;
  int sent_ = 0;
};

// Whether an error name says the application itself is gone (rather than
// one of its objects, or a method it lacks).
bool app_gone_error(const std::string& name);

}  // namespace cu::atspi
