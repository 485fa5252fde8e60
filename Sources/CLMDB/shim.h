#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

/// The header fields of an LMDB 0.9 page that the prefetch below reads (its on-disk format,
/// `MDB_page` in LMDB's mdb.c): 16 bytes, then the nodes' 2-byte offsets (`mp_ptrs`), in key order.
/// The nodes themselves are packed at the page's end, from `mp_upper` to the page's end.
enum {
  reef_page_size = 4096,
  reef_page_header_size = 16,
  reef_page_upper_offset = 14, /* mp_upper: where the nodes start */
};

/// The start of the 4 KiB block that holds `address`: its page, for a value in the map of a read
/// transaction. Every read below stays inside that block, which is mapped because `address` is,
/// so they are safe whatever the block holds (the first page of a large value, or a page of
/// another size): its fields then read as noise, and the prefetches they steer are only hints.
static inline uintptr_t reef_page_of(const void *address) {
  return (uintptr_t)address & ~(uintptr_t)(reef_page_size - 1);
}

static inline uint16_t reef_page_field(uintptr_t page, unsigned offset) {
  uint16_t value;
  __builtin_memcpy(&value, (const void *)(page + offset), sizeof value);
  return value;
}

/// Asks the processor to start loading every node of a page (keys and values), from `mp_upper`
/// to the page's end, at once: a cursor or a binary search then finds them in the caches
/// instead of waiting for each in turn.
static inline void reef_prefetch_nodes(uintptr_t page) {
  uint16_t upper = reef_page_field(page, reef_page_upper_offset);
  if (upper < reef_page_header_size || upper >= reef_page_size) return;
  for (uintptr_t line = (page + upper) & ~(uintptr_t)63; line < page + reef_page_size; line += 64) {
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

/// Asks the processor to start loading a value that a cursor has just reached, and, when the
/// cursor has just moved to another page (`*page` is the page of the value before), all of
/// that page's nodes: the entries after this one are then in the caches when the cursor and
/// its caller reach them, whatever the order of the nodes in the page (inserts in random key
/// order leave them scattered). The range of the value itself is at most its first 512 bytes
/// (a large value lives in overflow pages of its own).
static inline void reef_prefetch_entry(const void *value, size_t count, uintptr_t *page) {
  uintptr_t valuePage = reef_page_of(value);
  if (valuePage != *page) {
    *page = valuePage;
    reef_prefetch_nodes(valuePage);
  }
  reef_prefetch(value, count);
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
