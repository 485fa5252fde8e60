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

/// Asks the processor to start loading the first 512 bytes (at most) of a value into its caches.
static inline void reef_prefetch(const void *value, size_t count) {
  uintptr_t start = (uintptr_t)value;
  uintptr_t high = start + (count < 512 ? count : 512);
  for (uintptr_t line = start & ~(uintptr_t)63; line < high; line += 64) {
    __builtin_prefetch((const void *)line, 0, 3);
  }
}

/// LMDB's default key order (bytes compared as unsigned, a shorter key before its extensions),
/// eight bytes at a time and without a call to `memcmp` per comparison: a B-tree search compares
/// a key with about seven nodes per page, so the call overhead was most of a lookup's compares.
/// The order is exactly LMDB's default, so stores stay readable by any LMDB program.
static int reef_compare_keys(const MDB_val *a, const MDB_val *b) {
  const unsigned char *x = (const unsigned char *)a->mv_data;
  const unsigned char *y = (const unsigned char *)b->mv_data;
  size_t common = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
  size_t offset = 0;
  for (; offset + 8 <= common; offset += 8) {
    uint64_t u, v;
    __builtin_memcpy(&u, x + offset, 8);
    __builtin_memcpy(&v, y + offset, 8);
    if (u != v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      u = __builtin_bswap64(u);
      v = __builtin_bswap64(v);
#endif
      return u < v ? -1 : 1;
    }
  }
  for (; offset < common; offset++) {
    if (x[offset] != y[offset]) return x[offset] < y[offset] ? -1 : 1;
  }
  return a->mv_size < b->mv_size ? -1 : (a->mv_size > b->mv_size ? 1 : 0);
}

/// Sets `reef_compare_keys` as the key order of a database just opened in `txn`.
static inline int reef_set_compare(MDB_txn *txn, MDB_dbi dbi) {
  return mdb_set_compare(txn, dbi, reef_compare_keys);
}
