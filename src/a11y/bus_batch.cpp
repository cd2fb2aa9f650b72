#include "a11y/bus_batch.h"

#include <algorithm>

#include "util/str_cat.h"

namespace cu::atspi {

namespace {

// Calls in flight at once. The application reads them from its socket one
// after another; more than this only grows both sides' buffers.
constexpr size_t kWindow = 256;
// The longest wait without looking at the job's cancellation and deadline.
constexpr int kSliceMs = 50;
// Answers handled between two looks at the job's cancellation (a lock on
// the a11y thread's queue) while they keep coming; 32 take well under a
// millisecond.
constexpr int kAnswersPerCheck = 32;

}  // namespace

bool app_gone_error(const std::string& name) {
  // NoReply: the bus daemon's answer to every call in flight when the
  // application's connection to it closes (a peer-to-peer socket that
  // closes is seen by run() as the connection closed).
  return name == DBUS_ERROR_NO_REPLY || name == DBUS_ERROR_SERVICE_UNKNOWN ||
         name == DBUS_ERROR_NAME_HAS_NO_OWNER || name == DBUS_ERROR_DISCONNECTED;
}

bus_batch::bus_batch(DBusConnection* conn, std::string bus_name, const a11y_control& c)
    : conn_(conn), bus_name_(std::move(bus_name)), c_(c) {}

bus_batch::~bus_batch() { drop_all(); }

void bus_batch::call(const std::string& path, const char* iface, const char* method,
                     const std::function<void(DBusMessageIter*)>& fill, handler on_answer) {
  DBusMessage* msg = dbus_message_new_method_call(bus_name_.c_str(), path.c_str(), iface, method);
  if (msg == nullptr) return;  // Out of memory, or a malformed path: as if gone.
  if (fill) {
    DBusMessageIter it;
    dbus_message_iter_init_append(msg, &it);
    fill(&it);
  }
  queue_.push_back(queued{msg, std::move(on_answer)});
}

status bus_batch::fill_window() {
  // libdbus drops what is sent on a closed connection without a word.
  if (!queue_.empty() && !dbus_connection_get_is_connected(conn_)) {
    return make_error(errc::not_found, "the application went away (its connection closed)");
  }
  bool sent = false;
  while (in_flight_.size() < kWindow && !queue_.empty()) {
    queued q = std::move(queue_.front());
    queue_.pop_front();
    // Sent without a pending call: the answer is matched by its reply
    // serial in take_answers. A pending call per message (an allocation,
    // the connection's table of replies, its completion in dispatch) was
    // a good part of our CPU per walk, and its timeout a GSource in
    // libatspi's main context; run() keeps the call timeout and the
    // deadline itself.
    dbus_uint32_t serial = 0;
    bool ok = dbus_connection_send(conn_, q.msg, &serial);
    dbus_message_unref(q.msg);
    if (!ok) return make_error(errc::a11y_unavailable, "out of memory sending a bus call");
    ++sent_;
    sent = true;
    in_flight_.push_back(flight{serial, nullptr, std::move(q.on_answer)});
  }
  if (sent) dbus_connection_flush(conn_);
  return {};
}

void bus_batch::take_answers() {
  while (DBusMessage* m = dbus_connection_borrow_message(conn_)) {
    int type = dbus_message_get_type(m);
    flight* f = nullptr;
    if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) {
      // Serials grow with each call sent, so the calls in flight are in
      // serial order.
      dbus_uint32_t serial = dbus_message_get_reply_serial(m);
      auto it = std::lower_bound(in_flight_.begin(), in_flight_.end(), serial,
                                 [](const flight& x, dbus_uint32_t s) { return x.serial < s; });
      if (it != in_flight_.end() && it->serial == serial && it->reply == nullptr) f = &*it;
    }
    if (f != nullptr) {
      dbus_connection_steal_borrowed_message(conn_, m);
      f->reply = m;
    } else {
      // Not ours (an event, the answer to one of libatspi's own calls, or
      // a late answer to a batch that ended): dispatched to libatspi's
      // filters and pending calls, as during its own blocking calls.
      dbus_connection_return_message(conn_, m);
      dbus_connection_dispatch(conn_);
    }
  }
}

void bus_batch::drop_all() {
  for (flight& f : in_flight_) {
    if (f.reply != nullptr) dbus_message_unref(f.reply);
  }
  in_flight_.clear();
  for (queued& q : queue_) dbus_message_unref(q.msg);
  queue_.clear();
}

status bus_batch::run() {
  auto last_answer = a11y_clock::now();
  int unchecked = 0;
  auto check = [&](bool always) -> status {
    if (always || ++unchecked >= kAnswersPerCheck) {
      unchecked = 0;
      if (c_.cancelled()) return make_error(errc::cancelled, "cancelled");
    }
    if (a11y_clock::now() >= c_.deadline) {
      return make_error(errc::timed_out, "the accessibility tree was not read before the deadline");
    }
    return {};
  };
  auto end = [&](status s) {
    drop_all();
    return s;
  };
  for (;;) {
    if (auto x = check(false); !x) return end(std::move(x));
    if (auto x = fill_window(); !x) return end(std::move(x));
    if (in_flight_.empty()) return {};
    // Everything already read is taken first, so one pass hands over many
    // answers.
    take_answers();
    // Answers are handed over in the order the calls were sent, so the
    // walk's order does not depend on how the replies were read.
    bool answered = false;
    while (!in_flight_.empty() && in_flight_.front().reply != nullptr) {
      flight f = std::move(in_flight_.front());
      in_flight_.pop_front();
      DBusMessage* reply = f.reply;
      bus_answer a;
      if (dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR) {
        const char* name = dbus_message_get_error_name(reply);
        a.error_name = name != nullptr ? name : DBUS_ERROR_FAILED;
      } else {
        a.reply = reply;
      }
      if (app_gone_error(a.error_name)) {
        dbus_message_unref(reply);
        return end(make_error(errc::not_found,
                              str_cat("the application went away during the walk (",
                                      a.error_name, ")")));
      }
      f.on_answer(a);
      dbus_message_unref(reply);
      answered = true;
      // The deadline after every answer, the cancellation after every
      // kAnswersPerCheck: a job never runs on for long after either,
      // however many answers are queued.
      if (auto x = check(false); !x) return end(std::move(x));
    }
    auto now = a11y_clock::now();
    if (answered) {
      last_answer = now;
      continue;
    }
    if (auto x = check(true); !x) return end(std::move(x));
    if (!dbus_connection_get_is_connected(conn_)) {
      return end(make_error(errc::not_found, "the application went away (its connection closed)"));
    }
    auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_answer).count();
    if (quiet >= c_.call_timeout_ms) {
      return end(make_error(errc::timed_out,
                            str_cat("the application did not answer within ",
                                    std::to_string(c_.call_timeout_ms),
                                    " ms (is it hung or stopped?)")));
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c_.deadline - now).count();
    int wait = int(std::clamp<int64_t>(std::min<int64_t>(left, c_.call_timeout_ms - quiet), 1,
                                       kSliceMs));
    // Waits for the socket, reads what it has and writes what is queued;
    // the next pass dispatches it.
    if (!dbus_connection_read_write(conn_, wait)) {
      return end(make_error(errc::not_found, "the application went away (its connection closed)"));
    }
  }
}

}  // namespace cu::atspi
