# Sourced by the memory scripts (store-memory.sh, query-memory.sh): samples a process's memory.

# sample_peak_memory TIMER_PID INTERVAL: while TIMER_PID (a `/usr/bin/time -v` running the
# measured command) lives, reads its child's RssAnon and RssFile from /proc every INTERVAL
# seconds and leaves their peaks, in kB, in `peak_anon` and `peak_file`. (`time`'s own maximum
# RSS counts the store's mapped file pages with the rest: these two tell them apart.)
sample_peak_memory() {
  local timer=$1 interval=$2 child="" a f
  peak_anon=0
  peak_file=0
  while kill -0 "$timer" 2>/dev/null; do
    [ -z "$child" ] && child="$(pgrep -P "$timer" || true)"
    if [ -n "$child" ] && [ -r "/proc/$child/status" ]; then
      a=$(awk '/^RssAnon:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
      f=$(awk '/^RssFile:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
      [ -n "$a" ] && [ "$a" -gt "$peak_anon" ] && peak_anon=$a
      [ -n "$f" ] && [ "$f" -gt "$peak_file" ] && peak_file=$f
    fi
    sleep "$interval"
  done
}
