# Sourced by tools/serve and tools/run (and installed beside tools/serve by
# the Debian package): which toolsets the server is asked for. Pure shell,
# no package query.

# cu_wants_a11y ARGS...: whether CU_TOOLSETS, or a --toolsets among ARGS
# (the server's own arguments), names the a11y toolset or all.
cu_wants_a11y() {
  local list=${CU_TOOLSETS:-}
  while [ $# -gt 0 ]; do
    case $1 in
    --toolsets) list=${2:-} && shift ;;
    --toolsets=*) list=${1#--toolsets=} ;;
    esac
    shift
  done
  case ",${list// /}," in
  *,a11y,* | *,all,*) return 0 ;;
  esac
  return 1
}
