#include <lmdb.h>
#include "log.h"
#include <stddef.h>
#include <stdint.h>

/// The fields of LMDB 0.9's on-disk formats that the prefetches and lookups below read (`MDB_page`,
/// `MDB_node` and `MDB_db` in LMDB's mdb.c). A page: 16 bytes of header, then the nodes' 2-byte
/// offsets (`mp_ptrs`) in key order, up to `mp_lower`; the nodes themselves are packed at the
/// page's end, from `mp_upper` to the page's end. Then the page and node flags, the size of a
/// node's header and of a database record.
enum {
  reef_page_size = 4096, /* the page size the prefetches assume; the lookups use the environment's */
  reef_page_header_size = 16,
  reef_page_flags_offset = 10,
  reef_page_lower_offset = 12, /* mp_lower: where the node offsets end */
  reef_page_upper_offset = 14, /* mp_upper: where the nodes start */
  reef_page_branch = 0x01,
  reef_page_leaf = 0x02,
  reef_page_leaf2 = 0x20,
  reef_node_header_size = 8,
  reef_node_big_data = 0x01,
  reef_node_sub_data = 0x02,
  reef_node_dup_data = 0x04,
  reef_db_record_size = 48,
};

/// The little-endian 2-byte field at `at` (unaligned).
static inline uint16_t reef_read16(const void *at) {
  uint16_t value;
  __builtin_memcpy(&value, at, sizeof value);
  return value;
}

/// The little-endian 8-byte field at `at` (unaligned).
static inline uint64_t reef_read64(const void *at) {
  uint64_t value;
  __builtin_memcpy(&value, at, sizeof value);
  return value;
}

/// The start of the 4 KiB block that holds `address`: its page, for a value in the map of a read
/// transaction. Every read below stays inside that block, which is mapped because `address` is,
/// so they are safe whatever the block holds (the first page of a large value, or a page of
/// another size): its fields then read as noise, and the prefetches they steer are only hints.
static inline uintptr_t reef_page_of(const void *address) {
  return (uintptr_t)address & ~(uintptr_t)(reef_page_size - 1);
}

/// Asks the processor to start loading the cache lines that hold the bytes from `start` up to
/// `end` into its caches. A prefetch is only a hint: it never faults.
static inline void reef_prefetch_range(uintptr_t start, uintptr_t end) {
  for (uintptr_t line = start & ~(uintptr_t)63; line < end; line += 64) {
    __builtin_prefetch((const void *)line, 0, 3);
  }
}

/// Asks the processor to start loading every node of a page (keys and values), from `mp_upper`
/// to the page's end, at once: a cursor or a binary search then finds them in the caches
/// instead of waiting for each in turn.
static inline void reef_prefetch_nodes(uintptr_t page) {
  uint16_t upper = reef_read16((const void *)(page + reef_page_upper_offset));
  if (upper < reef_page_header_size || upper >= reef_page_size) return;
  reef_prefetch_range(page + upper, page + reef_page_size);
}

/// Asks the processor to start loading the first 512 bytes (at most) of a value into its caches.
static inline void reef_prefetch(const void *value, size_t count) {
  uintptr_t start = (uintptr_t)value;
  reef_prefetch_range(start, start + (count < 512 ? count : 512));
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

// MARK: Lookups of many keys at once

/// How many lookups `reef_lookup_many` takes at once: enough independent searches for their
/// cache misses to overlap, few enough for their pages to stay in the caches until used.
enum { reef_lookup_batch = 64 };

/// What `reef_lookup_many` needs of a database in a read transaction, from `reef_tree_open`.
typedef struct {
  const unsigned char *map;  /* the environment's memory map */
  uint64_t page_size;
  uint64_t page_count;  /* pages that are both in use (as of the newest commit) and mapped */
  uint64_t root;        /* the root page of the database in this transaction's snapshot */
  unsigned depth;       /* levels of the tree, the leaves included */
} reef_tree;

/// One key to look up, and what was found.
typedef struct {
  const void *key;
  size_t key_size;
  const void *data; /* the value, in the map, when `status` is 1 */
  size_t data_size;
  int status; /* 1 found, 0 not in the database, -1 unknown: ask `mdb_get` (it reports damage) */
} reef_lookup;

/// Finds the root of database `dbi` (named `name`) in the snapshot of the read transaction `txn`,
/// through LMDB's public API only: the database's record as the main database stores it
/// (`MDB_db`: its depth, page counts, entries and root), checked against `mdb_stat`'s figures for
/// the same snapshot. Returns 0 when the tree can be searched by `reef_lookup_many`; otherwise
/// (another layout, an empty database, a write transaction's dirty pages) callers use `mdb_get`.
static inline int reef_tree_open(MDB_txn *txn, MDB_dbi dbi, const char *name, reef_tree *tree) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || __SIZEOF_SIZE_T__ != 8
  return -1;
#else
  int major = 0, minor = 0;
  mdb_version(&major, &minor, NULL);
  if (major != 0 || minor != 9) return -1;
  MDB_env *env = mdb_txn_env(txn);
  MDB_envinfo info;
  MDB_stat environment, database;
  MDB_dbi main_dbi;
  if (mdb_env_info(env, &info) != 0 || mdb_env_stat(env, &environment) != 0) return -1;
  if (mdb_stat(txn, dbi, &database) != 0 || mdb_dbi_open(txn, NULL, 0, &main_dbi) != 0) return -1;
  MDB_val key = {__builtin_strlen(name), (void *)name}, record;
  if (mdb_get(txn, main_dbi, &key, &record) != 0 || record.mv_size != reef_db_record_size) return -1;
  const unsigned char *fields = (const unsigned char *)record.mv_data;
  unsigned depth = reef_read16(fields + 6);
  if (depth == 0 || depth != database.ms_depth || reef_read64(fields + 8) != database.ms_branch_pages ||
      reef_read64(fields + 16) != database.ms_leaf_pages || reef_read64(fields + 24) != database.ms_overflow_pages ||
      reef_read64(fields + 32) != database.ms_entries) {
    return -1;
  }
  uint64_t page_size = environment.ms_psize;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0 || page_size > 65536) return -1;
  /* Where the map starts (`me_mapaddr` is only the address asked for with MDB_FIXEDMAP): the
     record is in a leaf page of the map, whose header holds its page number. */
  uintptr_t record_page = (uintptr_t)fields & ~(uintptr_t)(page_size - 1);
  uint64_t record_page_number = reef_read64((const unsigned char *)record_page);
  uint64_t mapped = info.me_mapsize / page_size, used = (uint64_t)info.me_last_pgno + 1;
  if (record_page_number >= mapped || record_page_number >= used ||
      (reef_read16((const unsigned char *)record_page + reef_page_flags_offset) & reef_page_leaf) == 0) {
    return -1;
  }
  tree->map = (const unsigned char *)(record_page - record_page_number * page_size);
  tree->page_size = page_size;
  tree->page_count = used < mapped ? used : mapped;
  tree->root = reef_read64(fields + 40);
  tree->depth = depth;
  return tree->root < tree->page_count ? 0 : -1;
#endif
}

/// Where a search of `reef_lookup_many` stands.
typedef struct {
  const unsigned char *page;
  uint64_t page_number;
  unsigned level;
  unsigned low, high; /* the binary search's range of node indexes */
  unsigned lower;     /* the page's `mp_lower`: the end of its node offsets */
  int phase;          /* 0 the page is on its way, 1 searching it, 2 done */
} reef_search;

/// How much of a page's head (its header and first node offsets) is asked for when a search
/// moves to it: one cache line (24 offsets, a leaf of documents holds fewer), the rest once the
/// header says how many there are. Few requests per search leave the processor room for many
/// searches' requests at once.
enum { reef_page_head = 64 };

/// The offset in its page of the node at index `index` of the page a search is in (`mp_ptrs`).
static inline uint16_t reef_node_offset(const reef_search *search, unsigned index) {
  return reef_read16(search->page + reef_page_header_size + 2 * index);
}

/// The node at index `index` of a page, once checked to lie in it; NULL if it does not.
static inline const unsigned char *reef_node(const reef_tree *tree, const reef_search *search, unsigned index) {
  uint16_t offset = reef_node_offset(search, index);
  if (offset < search->lower || offset + reef_node_header_size > tree->page_size) return NULL;
  const unsigned char *node = search->page + offset;
  if (offset + reef_node_header_size + reef_read16(node + 6) > tree->page_size) return NULL;
  return node;
}

/// Starts loading the node that the next probe of a search reads. Only its offset is read (the
/// offsets came with the page's head); the node itself is checked when the probe reads it.
static inline void reef_prefetch_probe(const reef_tree *tree, const reef_search *search) {
  if (search->low >= search->high) return;
  uint16_t offset = reef_node_offset(search, (search->low + search->high) / 2);
  if (offset >= search->lower && offset + 40 <= tree->page_size) {
    __builtin_prefetch(search->page + offset, 0, 3);
    __builtin_prefetch(search->page + offset + 32, 0, 3);
  }
}

/// Moves a search to a page (its number checked to be in use and mapped).
static inline int reef_search_enter(const reef_tree *tree, reef_search *search, uint64_t page_number) {
  if (page_number >= tree->page_count) return -1;
  search->page_number = page_number;
  search->page = tree->map + page_number * tree->page_size;
  search->phase = 0;
  __builtin_prefetch(search->page, 0, 3);
  return 0;
}

/// Ends a search that found its key at `node` of a leaf: the value is in the node, or in overflow
/// pages of its own (checked to be in use and mapped, as LMDB's `mdb_get` finds it).
static inline void reef_search_found(const reef_tree *tree, const reef_search *search, const unsigned char *node,
                                     reef_lookup *lookup) {
  uint16_t flags = reef_read16(node + 4);
  uint64_t size = (uint64_t)reef_read16(node) | (uint64_t)reef_read16(node + 2) << 16;
  uint64_t offset = (uint64_t)(node - search->page) + reef_node_header_size + reef_read16(node + 6);
  lookup->status = -1;
  if (flags & (reef_node_sub_data | reef_node_dup_data)) return;
  if (flags & reef_node_big_data) {
    if (offset + 8 > tree->page_size) return;
    uint64_t first = reef_read64(search->page + offset);
    uint64_t pages = (size + reef_page_header_size + tree->page_size - 1) / tree->page_size;
    if (first >= tree->page_count || pages > tree->page_count - first) return;
    lookup->data = tree->map + first * tree->page_size + reef_page_header_size;
  } else {
    if (offset + size > tree->page_size) return;
    lookup->data = search->page + offset;
  }
  lookup->data_size = size;
  lookup->status = 1;
  reef_prefetch(lookup->data, size);
}

/// Looks up `count` keys (at most `reef_lookup_batch`) in a database's tree in the map, the
/// searches taking turns one step at a time: each step asks the processor for what the search's
/// next step reads, so the cache misses of all the searches overlap, where `mdb_get` waits for
/// each miss of one search in turn. The search is LMDB's own (the same binary search in each page,
/// in the order of `reef_compare_keys`), and every page, offset and size is checked to lie in the
/// map before it is read: a damaged or unexpected page gives status -1, never a read outside the
/// map. Only for read transactions: a write transaction's changed pages are not in the map.
static inline void reef_lookup_many(const reef_tree *tree, reef_lookup *lookups, unsigned count) {
  reef_search searches[reef_lookup_batch];
  if (count > reef_lookup_batch) count = reef_lookup_batch;
  unsigned active = 0;
  for (unsigned index = 0; index < count; index++) {
    searches[index].level = 0;
    lookups[index].data = NULL;
    lookups[index].data_size = 0;
    lookups[index].status = -1;
    if (reef_search_enter(tree, &searches[index], tree->root) == 0) {
      active++;
    } else {
      searches[index].phase = 2;
    }
  }
  while (active > 0) {
    for (unsigned index = 0; index < count; index++) {
      reef_search *search = &searches[index];
      reef_lookup *lookup = &lookups[index];
      if (search->phase == 2) continue;
      int leaf = search->level + 1 == tree->depth;
      if (search->phase == 0) {
        /* The page has arrived: check its header, then ask for the middle node. */
        const unsigned char *page = search->page;
        uint16_t flags = reef_read16(page + reef_page_flags_offset);
        uint16_t lower = reef_read16(page + reef_page_lower_offset);
        uint16_t upper = reef_read16(page + reef_page_upper_offset);
        int expected = leaf ? (flags & (reef_page_leaf | reef_page_branch | reef_page_leaf2)) == reef_page_leaf
                            : (flags & (reef_page_leaf | reef_page_branch)) == reef_page_branch;
        unsigned first = leaf ? 0 : 1, nodes = (lower - reef_page_header_size) / 2;
        if (reef_read64(page) != search->page_number || !expected || lower < reef_page_header_size ||
            lower > upper || upper > tree->page_size || (lower & 1) != 0 || nodes < first) {
          search->phase = 2; /* status -1 */
          active--;
          continue;
        }
        reef_prefetch_range((uintptr_t)page + reef_page_head, (uintptr_t)page + lower);
        search->lower = lower;
        search->low = first;
        search->high = nodes;
        search->phase = 1;
        reef_prefetch_probe(tree, search);
        continue;
      }
      /* One probe of the binary search, for the first node whose key is above the key (in a
         branch page the child to follow is the node before it) or, in a leaf, equal to it. */
      if (search->low < search->high) {
        unsigned middle = (search->low + search->high) / 2;
        const unsigned char *node = reef_node(tree, search, middle);
        if (!node) {
          search->phase = 2;
          active--;
          continue;
        }
        MDB_val key = {lookup->key_size, (void *)lookup->key};
        MDB_val node_key = {reef_read16(node + 6), (void *)(node + reef_node_header_size)};
        int order = reef_compare_keys(&key, &node_key);
        if (leaf && order == 0) {
          reef_search_found(tree, search, node, lookup);
          search->phase = 2;
          active--;
          continue;
        }
        if (order < 0) {
          search->high = middle;
        } else {
          search->low = middle + 1;
        }
        if (search->low < search->high) {
          reef_prefetch_probe(tree, search);
          continue;
        }
      }
      if (leaf) {
        lookup->status = 0; /* no node holds the key */
        search->phase = 2;
        active--;
        continue;
      }
      /* The child page: a branch node's page number is in its size and flags fields. */
      const unsigned char *node = reef_node(tree, search, search->low - 1);
      search->level++;
      if (!node || reef_search_enter(tree, search, (uint64_t)reef_read16(node) | (uint64_t)reef_read16(node + 2) << 16 |
                                                       (uint64_t)reef_read16(node + 4) << 32) != 0) {
        search->phase = 2;
        active--;
      }
    }
  }
}
