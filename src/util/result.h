// Owns: the one shape of an error inside the server: errc, error, result<T>,
// and status (result<void>) for a function that only acts. Errors become
// wire answers only at two edges: tool_result::failure (core/tool_result.h)
// for a tool's isError result, and render_error for a JSON-RPC error.
// Thread affinity: none; plain values, safe to move between threads.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cu {

// What went wrong, coarsely; the message says the rest.
enum class errc {
  invalid_argument,  // The caller sent something the contract forbids.
  no_session,        // A coordinate arrived before any screenshot.
  out_of_range,      // A coordinate or region lies outside the image.
  x_unavailable,     // The X display cannot be reached or was lost.
  x_failed,          // The X server refused a request.
  io,                // A file or system call failed.
  not_available,     // The tool exists but this build does not do it yet.
  cancelled,         // The request was cancelled or the server is stopping.
  a11y_unavailable,  // No accessibility bus or registry to ask.
  not_found,         // The application or element named is not there.
  timed_out,         // Another program did not answer before the deadline.
  refused,           // The grants keep the agent from that window (docs/grants.md).
};

struct error {
  errc code;
  std::string message;
};

// A value or an error; never both, never neither.
template <class T>
class result {
 public:
  result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design.
  result(error err) : v_(std::move(err)) {}   // NOLINT: implicit by design.

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const error& err() const { return std::get<1>(v_); }
  error take_error() { return std::move(std::get<1>(v_)); }

 private:
  std::variant<T, error> v_;
};

// Done, or an error: what a function that acts and hands nothing back
// returns (`return {};` on success).
template <>
class result<void> {
 public:
  result() = default;
  result(error err) : err_(std::move(err)) {}  // NOLINT: implicit by design.

  bool ok() const { return !err_.has_value(); }
  explicit operator bool() const { return ok(); }
  const error& err() const { return *err_; }
  error take_error() { return std::move(*err_); }

 private:
  std::optional<error> err_;
};

using status = result<void>;

inline error make_error(errc code, std::string message) {
  return error{code, std::move(message)};
}

}  // namespace cu
