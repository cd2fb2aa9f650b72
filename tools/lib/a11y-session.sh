#!/bin/bash
# a11y-session.sh [--] COMMAND [ARG...]
#
# Runs COMMAND on an accessible desktop: a session bus with the AT-SPI bus
# and registry on it, so GTK 3 (and Qt) programs started under it show
# their widget trees over AT-SPI, and an AT-SPI client (libatspi, pyatspi,
# the a11y toolset) reads them. DISPLAY is whatever the caller set; the
# buses do not need it.
#
# The recipe, as measured on Debian 12 (at-spi2-core 2.46, GTK 3.24):
#  1. A session bus. Without DBUS_SESSION_BUS_ADDRESS (or with
#     A11Y_SESSION_PRIVATE=1) the script re-runs itself under
#     dbus-run-session, which ends the bus, and with it everything
#     started on it, when COMMAND exits.
#  2. The AT-SPI bus launcher, /usr/libexec/at-spi-bus-launcher
#     --launch-immediately: it owns org.a11y.Bus on the session bus and
#     starts the accessibility bus (a second dbus-daemon). Its socket is
#     $XDG_RUNTIME_DIR/at-spi/bus_<display number>, or ~/.cache/at-spi/...
#     without XDG_RUNTIME_DIR, so two sessions on one display (parallel
#     tests) would take each other's socket: the launcher gets a private
#     XDG_RUNTIME_DIR of its own (only the launcher: the caller's stays as
#     it is, for the server's lock path).
#  3. The registry, /usr/libexec/at-spi2-registryd, which owns
#     org.a11y.atspi.Registry on the accessibility bus. Debian's
#     accessibility bus can start it by D-Bus activation, but only when the
#     bus daemon's configuration names the service directory, and an
#     activated registry runs with --use-gnome-session and outlives a
#     killed launcher (it was seen reparented to init). Started here, it is
#     there before any application registers, and its pid is ours to end.
#  4. org.a11y.Status.IsEnabled set to true on the launcher: Qt and others
#     read it before turning their bridge on.
#  5. The environment COMMAND gets: NO_AT_BRIDGE unset (GTK 3 links its
#     AT-SPI bridge in and loads it unless NO_AT_BRIDGE=1; GTK_MODULES is
#     left alone: "atk-bridge" there is redundant with GTK 3.10+ and only
#     warns when the module file is missing),
#     QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 (Qt 5/6 otherwise wait for a
#     screen reader) and GNOME_ACCESSIBILITY=1 (older GTK 2 and
#     Mozilla programs). AT_SPI_BUS_ADDRESS is not set: clients find the
#     bus through org.a11y.Bus on the session bus.
#
# Everything the script starts it ends when COMMAND exits, and it exits
# with COMMAND's status. What it starts is said on stderr (stdout is
# COMMAND's; tools/run's is the protocol).
set -u

say() { echo "a11y-session: $*" >&2; }

if [ "${1:-}" = "--" ]; then shift; fi
if [ $# -eq 0 ]; then
  echo "usage: a11y-session.sh [--] COMMAND [ARG...]" >&2
  exit 2
fi

launcher=/usr/libexec/at-spi-bus-launcher
registryd=/usr/libexec/at-spi2-registryd
for f in "$launcher" "$registryd"; do
  if [ ! -x "$f" ]; then
    say "$f is missing (apt-get install at-spi2-core)"
    exit 127
  fi
done

session_ok() {
  [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] &&
    dbus-send --session --dest=org.freedesktop.DBus --type=method_call --print-reply \
      /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}

if [ -z "${A11Y_SESSION_INNER:-}" ] && { [ "${A11Y_SESSION_PRIVATE:-0}" = 1 ] || ! session_ok; }; then
  if ! command -v dbus-run-session >/dev/null; then
    say "dbus-run-session is missing (apt-get install dbus-daemon or dbus)"
    exit 127
  fi
  say "starting a session bus (dbus-run-session)"
  # dbus-daemon complains on stderr that it cannot raise its fd limit when
  # not privileged; that is harmless and would only be noise here.
  export A11Y_SESSION_INNER=1
  exec dbus-run-session -- "$0" "$@"
fi
unset A11Y_SESSION_INNER

bus_call() {  # bus_call DEST PATH METHOD [ARG...] on the session bus
  local dest=$1 path=$2 method=$3
  shift 3
  dbus-send --session --dest="$dest" --type=method_call --print-reply "$path" "$method" "$@" 2>/dev/null
}

# Polls COMMAND (a shell function) every 20 ms for up to 5 s.
wait_for() {
  local i
  for ((i = 0; i < 250; i++)); do
    "$@" && return 0
    sleep 0.02
  done
  return 1
}

pids=()
runtime=""
child=""
cleanup() {
  local p
  [ -n "$child" ] && kill "$child" 2>/dev/null
  for ((p = ${#pids[@]} - 1; p >= 0; p--)); do
    kill "${pids[p]}" 2>/dev/null
    wait "${pids[p]}" 2>/dev/null
  done
  [ -n "$runtime" ] && rm -rf "$runtime"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

a11y_address=""
a11y_bus_up() {
  a11y_address=$(bus_call org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress |
    sed -n 's/^ *string "\(.*\)"$/\1/p')
  [ -n "$a11y_address" ]
}

if bus_call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
    string:org.a11y.Bus | grep -q "boolean true"; then
  say "the session bus already has an AT-SPI bus launcher"
else
  runtime=$(mktemp -d /tmp/a11y-session.XXXXXX)
  # GSETTINGS_BACKEND=memory: the launcher reads one setting
  # (toolkit-accessibility), and through dconf that would activate a
  # dconf-service on the session bus for nothing.
  XDG_RUNTIME_DIR=$runtime GSETTINGS_BACKEND=memory "$launcher" --launch-immediately >/dev/null 2>&1 &
  pids+=($!)
  say "started at-spi-bus-launcher (pid $!)"
fi
# Asked before the launcher owns org.a11y.Bus, GetAddress would make the
# session bus start a second launcher by activation: wait for the owner.
launcher_up() {
  bus_call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
    string:org.a11y.Bus | grep -q "boolean true"
}
if ! wait_for launcher_up || ! a11y_bus_up; then
  say "the AT-SPI bus did not come up within 5 s"
  exit 1
fi

registry_up() {
  dbus-send --bus="$a11y_address" --dest=org.freedesktop.DBus --type=method_call --print-reply \
    /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.a11y.atspi.Registry \
    2>/dev/null | grep -q "boolean true"
}
if registry_up; then
  say "the AT-SPI registry is already running"
else
  "$registryd" >/dev/null 2>&1 &
  pids+=($!)
  say "started at-spi2-registryd (pid $!)"
  if ! wait_for registry_up; then
    say "the AT-SPI registry did not come up within 5 s"
    exit 1
  fi
fi

bus_call org.a11y.Bus /org/a11y/bus org.freedesktop.DBus.Properties.Set \
  string:org.a11y.Status string:IsEnabled variant:boolean:true >/dev/null ||
  say "could not set org.a11y.Status.IsEnabled (Qt programs may stay silent)"

unset NO_AT_BRIDGE
export QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 GNOME_ACCESSIBILITY=1
say "accessibility bus: $a11y_address"

# COMMAND runs in the background so the traps above still run on a signal;
# it keeps our stdin (a background job would otherwise get /dev/null: the
# server's stdin is the MCP protocol).
"$@" <&0 &
child=$!
wait "$child"
status=$?
exit "$status"
