#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

/// Asks the processor to start loading a value that a cursor has just reached, and the bytes
/// below it in its page, into its caches, so that reading them later does not wait for memory.
///
/// LMDB places each node it adds to a page below the ones already there, so in a page written
/// in key order (or rebuilt by a split) the entries after this one sit just below it. A prefetch
/// is only a hint: it never faults, and the range is kept inside the value's 4 KiB page.
static inline void reef_prefetch_entry(const void *value, size_t count) {
  uintptr_t start = (uintptr_t)value;
  uintptr_t page = start & ~(uintptr_t)4095;
  uintptr_t low = start - page > 1024 ? start - 1024 : page;
  uintptr_t high = start + (count < 512 ? count : 512);
  for (uintptr_t line = low & ~(uintptr_t)63; line < high; line += 64) {
    __builtin_prefetch((const void *)line, 0, 3);
  }
}
