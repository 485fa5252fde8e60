// The SQLite 3 side of StoreBenchmarks, written in C against SQLite's C API so that no Swift call
// overhead is counted against it. Every statement is prepared once and reused.
#ifndef CSQLITEBENCH_H
#define CSQLITEBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An open SQLite database and its prepared statements.
typedef struct csq_store csq_store;

/// Which table the BSON documents go in (`docs`, `_id BLOB PRIMARY KEY, doc BLOB`).
typedef enum {
  /// `WITHOUT ROWID`: the documents live in the primary key's B-tree (one lookup per `_id`).
  CSQ_WITHOUT_ROWID = 0,
  /// A rowid table, whose `_id` primary key is a separate index.
  CSQ_ROWID = 1,
} csq_layout;

/// Opens (creating) the database at `path`: `journal_mode=WAL`, `synchronous` 0 (OFF), 1 (NORMAL)
/// or 2 (FULL), a 256 MiB page cache, a 1 GiB memory map, and the tables `docs` (BSON blobs by
/// `_id`, `layout`) and `docs_json` (`_id TEXT PRIMARY KEY, doc TEXT`: the same documents as
/// JSON, a rowid table). NULL on failure, with the error printed to stderr.
csq_store *csq_open(const char *path, int synchronous, csq_layout layout);

/// Closes the database (SQLite checkpoints the WAL into the database file).
void csq_close(csq_store *store);

/// Inserts the `count` BSON documents of a stream (document `i` starts at `offsets[i]`) into
/// `docs` in one transaction, the `_id` (the 12 bytes of an ObjectId, or a string's UTF-8 bytes)
/// bound as the key and the document's bytes as the blob. 0, or -1 with the error printed.
int csq_bulk_insert_bson(csq_store *store, const uint8_t *stream, const size_t *offsets, size_t count,
                         size_t stream_length);

/// Inserts one BSON document into `docs` in a transaction of its own (autocommit). 0 or -1.
int csq_insert_bson(csq_store *store, const uint8_t *document, size_t length);

/// `SELECT doc FROM docs WHERE _id = ?`: the length of the document found (whose bytes are read),
/// or -1 when there is none.
int64_t csq_get_bson(csq_store *store, const uint8_t *id, size_t id_length);

/// Inserts JSON documents (`count` NUL-terminated strings, string `i` at `json + offsets[i]`) into
/// `docs_json` in one transaction, `_id` taken from `$._id.$oid`. 0 or -1.
int csq_bulk_insert_json(csq_store *store, const char *json, const size_t *offsets, size_t count);

/// `CREATE INDEX docs_json_city ON docs_json(json_extract(doc, '$.address.city'))`. 0 or -1.
int csq_create_city_index(csq_store *store);

/// `SELECT doc FROM docs_json WHERE json_extract(doc, '$.address.city') = ?`, through the
/// expression index (`indexed`) or with `NOT INDEXED` (a scan calling json_extract on every row).
/// Reads each row's document; returns the number of rows, or -1.
int64_t csq_query_city(csq_store *store, const char *city, size_t city_length, bool indexed);

/// The query plan SQLite reports for csq_query_city (EXPLAIN QUERY PLAN), into `out`.
void csq_explain_city(csq_store *store, bool indexed, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
