# Sourced by tools/serve and tools/desktop (and installed beside them by the
# Debian package): what turns a bare X server into a desktop an agent can
# see. A bare Xvfb is all black, with no window manager to place, focus or
# decorate windows, so a first screenshot shows nothing and says nothing;
# this gives it a background and openbox. Pure shell, no package query.

# The background: a blue-grey two-tone grid (xsetroot -mod), plainly a
# desktop and not a blank screen, and plain enough that a model does not
# take it for content.
CU_DESKTOP_FG='#3d6a87'
CU_DESKTOP_BG='#335a73'

# cu_desktop_background DISPLAY: paints the root window. Returns 1 without
# xsetroot (x11-xserver-utils).
cu_desktop_background() {
  command -v xsetroot >/dev/null 2>&1 || return 1
  xsetroot -display "$1" -mod 16 16 -fg "$CU_DESKTOP_FG" -bg "$CU_DESKTOP_BG"
}

# cu_wm_running DISPLAY: whether an EWMH window manager has announced itself
# (_NET_SUPPORTING_WM_CHECK on the root names its check window).
cu_wm_running() {
  local got
  got=$(xprop -display "$1" -root _NET_SUPPORTING_WM_CHECK 2>/dev/null) &&
    [[ $got == *"window id"* ]]
}

# cu_start_wm DISPLAY [LOG] [TIMEOUT]: starts openbox on DISPLAY and returns
# once it has set _NET_SUPPORTING_WM_CHECK on the root (polled every 50 ms,
# for TIMEOUT seconds at most, default 20), with cu_wm_pid set. Its output
# goes to LOG (default /dev/null). Returns 1 without openbox or xprop, and
# 2 when openbox exited or did not announce itself in time (then it is
# stopped); cu_wm_problem says which in words.
cu_start_wm() {
  local display=$1 log=${2:-/dev/null} timeout=${3:-20} i
  cu_wm_pid=
  cu_wm_problem=
  if ! command -v openbox >/dev/null 2>&1; then
    cu_wm_problem="openbox is not installed (apt-get install openbox)"
    return 1
  fi
  if ! command -v xprop >/dev/null 2>&1; then
    cu_wm_problem="xprop is not installed (apt-get install x11-utils)"
    return 1
  fi
  # --sm-disable: there is no session manager to register with. Plain
  # openbox (not openbox-session) runs no autostart programs.
  DISPLAY=$display openbox --sm-disable </dev/null >>"$log" 2>&1 &
  cu_wm_pid=$!
  for ((i = 0; i < timeout * 20; i++)); do
    cu_wm_running "$display" && return 0
    if ! kill -0 "$cu_wm_pid" 2>/dev/null; then
      wait "$cu_wm_pid" 2>/dev/null
      cu_wm_pid=
      cu_wm_problem="openbox exited at start (another window manager on $display?)"
      return 2
    fi
    sleep 0.05
  done
  cu_stop_pid "$cu_wm_pid"
  cu_wm_pid=
  cu_wm_problem="openbox did not announce itself within $timeout s"
  return 2
}

# cu_stop_pid PID: ends a child of this shell (SIGTERM) and reaps it.
cu_stop_pid() {
  [ -n "${1:-}" ] || return 0
  kill "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}
