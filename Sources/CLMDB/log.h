/// Helpers for the store's commit log (Sources/ReefStore/CommitLog.swift, Specs/store/log.md):
/// CRC-32C over its records and headers, the byte-range locks its openers coordinate with, and
/// the atomic loads and stores of the shared block's fields.
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__) && !defined(F_OFD_SETLK)
/* Linux's open-file-description locks (fcntl(2)); glibc defines them only with _GNU_SOURCE. */
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif

/// `O_DIRECT` (glibc defines it only with _GNU_SOURCE; 0 where there is none).
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
static const int reef_o_direct = 040000;
#elif defined(__linux__) && (defined(__aarch64__) || defined(__arm__))
static const int reef_o_direct = 0200000;
#else
static const int reef_o_direct = 0;
#endif

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one byte at a time.
static const uint32_t reef_crc32c_table[256] = {
  0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c, 0x26a1e7e8, 0xd4ca64eb,
  0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b, 0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24,
  0x105ec76f, 0xe235446c, 0xf165b798, 0x030e349b, 0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
  0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54, 0x5d1d08bf, 0xaf768bbc, 0xbc267848, 0x4e4dfb4b,
  0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a, 0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35,
  0xaa64d611, 0x580f5512, 0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
  0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad, 0x1642ae59, 0xe4292d5a,
  0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a, 0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595,
  0x417b1dbc, 0xb3109ebf, 0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
  0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c, 0xfe53516f, 0xed03a29b, 0x1f682198,
  0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927, 0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38,
  0xdbfc821c, 0x2997011f, 0x3ac7f2eb, 0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
  0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e, 0x4767748a, 0xb50cf789,
  0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859, 0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46,
  0x7198540d, 0x83f3d70e, 0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
  0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de, 0xdde0eb2a, 0x2f8b6829,
  0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c, 0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93,
  0x082f63b7, 0xfa44e0b4, 0xe9141340, 0x1b7f9043, 0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
  0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3, 0x55326b08, 0xa759e80b, 0xb4091bff, 0x466298fc,
  0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c, 0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033,
  0xa24bb5a6, 0x502036a5, 0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
  0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975, 0x0e330a81, 0xfc588982,
  0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d, 0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622,
  0x38cc2a06, 0xcaa7a905, 0xd9f75af1, 0x2b9cd9f2, 0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
  0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530, 0x0417b1db, 0xf67c32d8, 0xe52cc12c, 0x1747422f,
  0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff, 0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0,
  0xd3d3e1ab, 0x21b862a8, 0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
  0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78, 0x7fab5e8c, 0x8dc0dd8f,
  0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee, 0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1,
  0x69e9f0d5, 0x9b8273d6, 0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
  0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a, 0xc69f7b69, 0xd5cf889d, 0x27a40b9e,
  0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e, 0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

static inline uint32_t reef_crc32c_bytes(uint32_t crc, const unsigned char *bytes, size_t count) {
  for (size_t i = 0; i < count; i++) crc = reef_crc32c_table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
/// The same with SSE 4.2's crc32 instruction, eight bytes at a time.
__attribute__((target("sse4.2"))) static inline uint32_t reef_crc32c_sse42(uint32_t crc, const unsigned char *bytes,
                                                                           size_t count) {
  uint64_t wide = crc;
  while (count >= 8) {
    uint64_t word;
    __builtin_memcpy(&word, bytes, 8);
    wide = __builtin_ia32_crc32di(wide, word);
    bytes += 8;
    count -= 8;
  }
  crc = (uint32_t)wide;
  while (count > 0) {
    crc = __builtin_ia32_crc32qi(crc, *bytes);
    bytes++;
    count--;
  }
  return crc;
}
#endif

/// Extends the CRC-32C state `state` (not inverted) over `count` bytes at `bytes`.
static inline uint32_t reef_crc32c_update(uint32_t state, const void *bytes, size_t count) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("sse4.2")) return reef_crc32c_sse42(state, (const unsigned char *)bytes, count);
#endif
  return reef_crc32c_bytes(state, (const unsigned char *)bytes, count);
}

/// The CRC-32C of `count` bytes at `bytes` (initial value and final inversion included):
/// 0xE3069283 for the nine bytes "123456789".
static inline uint32_t reef_crc32c(const void *bytes, size_t count) {
  return ~reef_crc32c_update(0xffffffffu, bytes, count);
}

/// The CRC-32C of the 8 bytes of `salt` (little-endian) followed by `count` bytes at `bytes`.
static inline uint32_t reef_crc32c_salted(uint64_t salt, const void *bytes, size_t count) {
  unsigned char prefix[8];
  for (int i = 0; i < 8; i++) prefix[i] = (unsigned char)(salt >> (8 * i));
  return ~reef_crc32c_update(reef_crc32c_update(0xffffffffu, prefix, 8), bytes, count);
}

/// A lock request of `type` for the one byte at `offset`.
static inline struct flock reef_byte_lock_request(short type, off_t offset) {
  struct flock lock = {0};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = offset;
  lock.l_len = 1;
  return lock;
}

/// Takes (`type` F_RDLCK or F_WRLCK) or releases (F_UNLCK) a lock on the one byte at `offset` of
/// the file open at `fd`, waiting for it when `wait` is non-zero. The lock belongs to the open
/// file (Linux's open-file-description locks), so two opens in one process exclude each other as
/// two processes do, and it goes when the file is closed or its process ends. Returns 0, or -1
/// with errno (EAGAIN or EACCES: held by another open, when not waiting).
static inline int reef_byte_lock(int fd, short type, off_t offset, int wait) {
  struct flock lock = reef_byte_lock_request(type, offset);
#if defined(F_OFD_SETLK)
  return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
#else
  return fcntl(fd, wait ? F_SETLKW : F_SETLK, &lock);
#endif
}

/// Whether a lock of `type` on the byte at `offset` could be taken now: 1 if nothing else holds a
/// conflicting lock, 0 if something does, -1 with errno on failure.
static inline int reef_byte_lock_free(int fd, short type, off_t offset) {
  struct flock lock = reef_byte_lock_request(type, offset);
#if defined(F_OFD_GETLK)
  if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
#else
  if (fcntl(fd, F_GETLK, &lock) != 0) return -1;
#endif
  return lock.l_type == F_UNLCK ? 1 : 0;
}

// MARK: Atomic accesses to memory that other threads or processes write

/* The fields of the shared block (`path-log-shared`, mapped by every writable opener) are read
   and written by several processes, and a process may die between any two of its stores. Plain
   loads and stores give no order at all (the compiler may reorder, merge or tear them), so every
   access goes through one of these, with the ordering the protocol of `Specs/store/log.md`
   needs at that step. `at` must be 8-byte aligned (the block is page-aligned and its fields are
   at multiples of 8). On x86-64 an acquire load and a release or relaxed store are plain `mov`s,
   a sequentially consistent store an `xchg`. */

/// The 8-byte field at `at`, with no ordering: for a first look that is checked again under a
/// lock, where a stale value is harmless.
static inline uint64_t reef_atomic_load_u64_relaxed(const void *at) {
  return __atomic_load_n((const uint64_t *)at, __ATOMIC_RELAXED);
}

/// The 8-byte field at `at`; the loads after it see at least what was stored before the release
/// store that stored the value read.
static inline uint64_t reef_atomic_load_u64_acquire(const void *at) {
  return __atomic_load_n((const uint64_t *)at, __ATOMIC_ACQUIRE);
}

/// Stores `value` at `at` with no ordering.
static inline void reef_atomic_store_u64_relaxed(void *at, uint64_t value) {
  __atomic_store_n((uint64_t *)at, value, __ATOMIC_RELAXED);
}

/// Stores `value` at `at` after every load and store before it: whoever sees the value also
/// sees them, and a process that dies after this store leaves them done.
static inline void reef_atomic_store_u64_release(void *at, uint64_t value) {
  __atomic_store_n((uint64_t *)at, value, __ATOMIC_RELEASE);
}

/// Stores `value` at `at` in the single total order of sequentially consistent operations: a full
/// barrier, so nothing after it (loads, stores, or a write to a file) is done before it is
/// visible.
static inline void reef_atomic_store_u64_seq_cst(void *at, uint64_t value) {
  __atomic_store_n((uint64_t *)at, value, __ATOMIC_SEQ_CST);
}
