#include "csqlitebench.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct csq_store {
  sqlite3 *db;
  sqlite3_stmt *insert_bson;
  sqlite3_stmt *get_bson;
  sqlite3_stmt *insert_json;
  sqlite3_stmt *query_indexed;
  sqlite3_stmt *query_scan;
};

static int fail(sqlite3 *db, const char *doing) {
  fprintf(stderr, "sqlite: %s: %s\n", doing, db ? sqlite3_errmsg(db) : "out of memory");
  return -1;
}

static int exec(sqlite3 *db, const char *sql) {
  char *message = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
    fprintf(stderr, "sqlite: %s: %s\n", sql, message ? message : "?");
    sqlite3_free(message);
    return -1;
  }
  return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **statement) {
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, statement, NULL) != SQLITE_OK) return fail(db, sql);
  return 0;
}

csq_store *csq_open(const char *path, int synchronous, csq_layout layout) {
  csq_store *store = calloc(1, sizeof *store);
  if (!store) return NULL;
  if (sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    fail(store->db, "open");
    csq_close(store);
    return NULL;
  }
  const char *level = synchronous == 0 ? "OFF" : synchronous == 1 ? "NORMAL" : "FULL";
  char pragma[64];
  snprintf(pragma, sizeof pragma, "PRAGMA synchronous=%s", level);
  const char *table = layout == CSQ_WITHOUT_ROWID
                          ? "CREATE TABLE IF NOT EXISTS docs(_id BLOB PRIMARY KEY, doc BLOB NOT NULL) WITHOUT ROWID"
                          : "CREATE TABLE IF NOT EXISTS docs(_id BLOB PRIMARY KEY, doc BLOB NOT NULL)";
  if (exec(store->db, "PRAGMA journal_mode=WAL") || exec(store->db, pragma) ||
      exec(store->db, "PRAGMA cache_size=-262144") || exec(store->db, "PRAGMA mmap_size=1073741824") ||
      exec(store->db, table) ||
      exec(store->db, "CREATE TABLE IF NOT EXISTS docs_json(_id TEXT PRIMARY KEY, doc TEXT NOT NULL)") ||
      prepare(store->db, "INSERT INTO docs(_id, doc) VALUES (?1, ?2)", &store->insert_bson) ||
      prepare(store->db, "SELECT doc FROM docs WHERE _id = ?1", &store->get_bson) ||
      prepare(store->db, "INSERT INTO docs_json(_id, doc) VALUES (json_extract(?1, '$._id.\"$oid\"'), ?1)",
              &store->insert_json) ||
      prepare(store->db, "SELECT doc FROM docs_json WHERE json_extract(doc, '$.address.city') = ?1",
              &store->query_indexed) ||
      prepare(store->db, "SELECT doc FROM docs_json NOT INDEXED WHERE json_extract(doc, '$.address.city') = ?1",
              &store->query_scan)) {
    csq_close(store);
    return NULL;
  }
  return store;
}

void csq_close(csq_store *store) {
  if (!store) return;
  sqlite3_finalize(store->insert_bson);
  sqlite3_finalize(store->get_bson);
  sqlite3_finalize(store->insert_json);
  sqlite3_finalize(store->query_indexed);
  sqlite3_finalize(store->query_scan);
  if (store->db && sqlite3_close(store->db) != SQLITE_OK) fail(store->db, "close");
  free(store);
}

/// The value bytes of the top-level `_id` (an ObjectId's 12 bytes or a string's UTF-8), or NULL.
static const uint8_t *find_id(const uint8_t *doc, size_t length, size_t *id_length) {
  size_t at = 4;
  while (at < length && doc[at] != 0) {
    uint8_t type = doc[at++];
    const char *key = (const char *)doc + at;
    size_t key_length = strnlen(key, length - at);
    at += key_length + 1;
    int is_id = key_length == 3 && memcmp(key, "_id", 3) == 0;
    if (type == 0x07) {
      if (is_id) { *id_length = 12; return doc + at; }
      at += 12;
    } else if (type == 0x02) {
      int32_t n;
      memcpy(&n, doc + at, 4);
      if (is_id) { *id_length = (size_t)n - 1; return doc + at + 4; }
      at += 4 + (size_t)n;
    } else {
      return NULL;  // the generated documents have their _id first
    }
  }
  return NULL;
}

static int insert_one(csq_store *store, const uint8_t *doc, size_t length) {
  size_t id_length = 0;
  const uint8_t *id = find_id(doc, length, &id_length);
  if (!id) {
    fprintf(stderr, "sqlite side: a document without an ObjectId or string _id first\n");
    return -1;
  }
  sqlite3_stmt *insert = store->insert_bson;
  sqlite3_bind_blob(insert, 1, id, (int)id_length, SQLITE_STATIC);
  sqlite3_bind_blob(insert, 2, doc, (int)length, SQLITE_STATIC);
  int code = sqlite3_step(insert);
  sqlite3_reset(insert);
  return code == SQLITE_DONE ? 0 : fail(store->db, "insert");
}

int csq_bulk_insert_bson(csq_store *store, const uint8_t *stream, const size_t *offsets, size_t count,
                         size_t stream_length) {
  if (exec(store->db, "BEGIN")) return -1;
  for (size_t i = 0; i < count; i++) {
    size_t end = i + 1 < count ? offsets[i + 1] : stream_length;
    if (insert_one(store, stream + offsets[i], end - offsets[i])) {
      exec(store->db, "ROLLBACK");
      return -1;
    }
  }
  return exec(store->db, "COMMIT");
}

int csq_insert_bson(csq_store *store, const uint8_t *document, size_t length) {
  return insert_one(store, document, length);
}

int64_t csq_get_bson(csq_store *store, const uint8_t *id, size_t id_length) {
  sqlite3_stmt *get = store->get_bson;
  sqlite3_bind_blob(get, 1, id, (int)id_length, SQLITE_STATIC);
  int64_t found = -1;
  if (sqlite3_step(get) == SQLITE_ROW) {
    const uint8_t *bytes = sqlite3_column_blob(get, 0);
    int length = sqlite3_column_bytes(get, 0);
    found = length > 4 && bytes[length - 1] == 0 ? length : -2;
  }
  sqlite3_reset(get);
  return found;
}

int csq_bulk_insert_json(csq_store *store, const char *json, const size_t *offsets, size_t count) {
  if (exec(store->db, "BEGIN")) return -1;
  for (size_t i = 0; i < count; i++) {
    sqlite3_bind_text(store->insert_json, 1, json + offsets[i], -1, SQLITE_STATIC);
    int code = sqlite3_step(store->insert_json);
    sqlite3_reset(store->insert_json);
    if (code != SQLITE_DONE) {
      fail(store->db, "insert json");
      exec(store->db, "ROLLBACK");
      return -1;
    }
  }
  return exec(store->db, "COMMIT");
}

int csq_create_city_index(csq_store *store) {
  return exec(store->db, "CREATE INDEX docs_json_city ON docs_json(json_extract(doc, '$.address.city')); ANALYZE");
}

int64_t csq_query_city(csq_store *store, const char *city, size_t city_length, bool indexed) {
  sqlite3_stmt *query = indexed ? store->query_indexed : store->query_scan;
  sqlite3_bind_text(query, 1, city, (int)city_length, SQLITE_STATIC);
  int64_t rows = 0;
  int code;
  while ((code = sqlite3_step(query)) == SQLITE_ROW) {
    const unsigned char *text = sqlite3_column_text(query, 0);
    int length = sqlite3_column_bytes(query, 0);
    if (text && length > 0 && text[0] == '{') rows++;
  }
  sqlite3_reset(query);
  return code == SQLITE_DONE ? rows : fail(store->db, "query");
}

void csq_explain_city(csq_store *store, bool indexed, char *out, size_t out_size) {
  char sql[256];
  snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", sqlite3_sql(indexed ? store->query_indexed : store->query_scan));
  sqlite3_stmt *explain;
  out[0] = 0;
  if (sqlite3_prepare_v2(store->db, sql, -1, &explain, NULL) != SQLITE_OK) return;
  size_t used = 0;
  while (sqlite3_step(explain) == SQLITE_ROW && used < out_size) {
    used += (size_t)snprintf(out + used, out_size - used, "%s%s", used ? "; " : "",
                             (const char *)sqlite3_column_text(explain, 3));
  }
  sqlite3_finalize(explain);
}
