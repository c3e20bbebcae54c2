# Sourced by the bench scripts: seconds COMMAND... prints the wall seconds of
# COMMAND (its output discarded), and exits the script if it fails.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "$(basename "$0"): failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
