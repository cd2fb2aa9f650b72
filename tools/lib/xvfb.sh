# Sourced by tools/serve and tools/desktop (and installed beside them by the
# Debian package) and by tests/package/test-deb: the one shell starter of a
# private Xvfb. Pure shell, no package query.

# cu_start_xvfb FIRST LAST [LOG] [TIMEOUT] [SIZE]: starts Xvfb at SIZE
# (WIDTHxHEIGHT, default 1920x1080) and 24 bits on the first display number
# from FIRST to LAST that starts, and sets cu_xvfb_pid and cu_xvfb_display
# (":N"). With a range, numbers whose socket or lock file
# exists are passed over; with one number it is tried as asked. Xvfb writes
# its display number to the pipe on its stdout once it accepts connections
# (-displayfd 1); if it cannot start (a display taken meanwhile) the pipe
# ends and the next number is tried. Its stderr goes to LOG (default
# /dev/null); each start may take TIMEOUT seconds (default 30). Returns 1
# when none started. -noreset: by default an X server resets when its last
# client leaves, and the reset takes the root's background and properties
# with it (a desktop painted by xsetroot, which exits at once, went black
# again before anything else connected).
cu_start_xvfb() {
  local first=$1 last=$2 log=${3:-/dev/null} timeout=${4:-30} size=${5:-1920x1080} n fd got
  cu_xvfb_pid=
  cu_xvfb_display=
  for n in $(seq "$first" "$last"); do
    if [ "$first" != "$last" ] && { [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; }; then
      continue
    fi
    exec {fd}< <(exec Xvfb ":$n" -screen 0 "${size}x24" -nolisten tcp -noreset -displayfd 1 \
      </dev/null 2>>"$log")
    cu_xvfb_pid=$!
    got=
    read -r -t "$timeout" got <&"$fd"
    exec {fd}<&-
    if [ "$got" = "$n" ]; then
      cu_xvfb_display=:$n
      return 0
    fi
    kill "$cu_xvfb_pid" 2>/dev/null
    wait "$cu_xvfb_pid" 2>/dev/null
    cu_xvfb_pid=
  done
  return 1
}
