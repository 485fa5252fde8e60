#include "cbench.h"

#include <bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// MARK: - Walking every value

static int64_t walk(bson_iter_t *it, bool *failed);

static int64_t walk_document(const uint8_t *data, uint32_t length, bool *failed) {
  bson_t doc;
  bson_iter_t child;
  if (!bson_init_static(&doc, data, length) || !bson_iter_init(&child, &doc)) {
    *failed = true;
    return 0;
  }
  return walk(&child, failed);
}

static int64_t walk(bson_iter_t *it, bool *failed) {
  int64_t acc = 0;
  while (bson_iter_next(it)) {
    acc += (int64_t)bson_iter_key_len(it);
    switch (bson_iter_type(it)) {
    case BSON_TYPE_DOUBLE: {
      double d = bson_iter_double(it);
      int64_t bits;
      memcpy(&bits, &d, sizeof bits);
      acc += bits;
      break;
    }
    case BSON_TYPE_UTF8: {
      uint32_t n = 0;
      const char *s = bson_iter_utf8(it, &n);
      acc += n + (n ? (unsigned char)s[n - 1] : 0);
      break;
    }
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
      bson_iter_t child;
      if (!bson_iter_recurse(it, &child)) {
        *failed = true;
        return acc;
      }
      acc += walk(&child, failed);
      break;
    }
    case BSON_TYPE_BINARY: {
      bson_subtype_t subtype;
      uint32_t n = 0;
      const uint8_t *bytes = NULL;
      bson_iter_binary(it, &subtype, &n, &bytes);
      acc += n + subtype + (n ? bytes[n - 1] : 0);
      break;
    }
    case BSON_TYPE_OID:
      acc += bson_iter_oid(it)->bytes[11];
      break;
    case BSON_TYPE_BOOL:
      acc += bson_iter_bool(it);
      break;
    case BSON_TYPE_DATE_TIME:
      acc += bson_iter_date_time(it);
      break;
    case BSON_TYPE_REGEX: {
      const char *options = NULL;
      const char *pattern = bson_iter_regex(it, &options);
      acc += (unsigned char)pattern[0] + (unsigned char)options[0];
      break;
    }
    case BSON_TYPE_DBPOINTER: {
      uint32_t n = 0;
      const char *collection = NULL;
      const bson_oid_t *oid = NULL;
      bson_iter_dbpointer(it, &n, &collection, &oid);
      acc += n + oid->bytes[11];
      break;
    }
    case BSON_TYPE_CODE: {
      uint32_t n = 0;
      const char *code = bson_iter_code(it, &n);
      acc += n + (n ? (unsigned char)code[n - 1] : 0);
      break;
    }
    case BSON_TYPE_SYMBOL: {
      uint32_t n = 0;
      const char *symbol = bson_iter_symbol(it, &n);
      acc += n + (n ? (unsigned char)symbol[n - 1] : 0);
      break;
    }
    case BSON_TYPE_CODEWSCOPE: {
      uint32_t n = 0, scope_length = 0;
      const uint8_t *scope = NULL;
      const char *code = bson_iter_codewscope(it, &n, &scope_length, &scope);
      acc += n + (n ? (unsigned char)code[n - 1] : 0);
      acc += walk_document(scope, scope_length, failed);
      break;
    }
    case BSON_TYPE_INT32:
      acc += bson_iter_int32(it);
      break;
    case BSON_TYPE_TIMESTAMP: {
      uint32_t t = 0, i = 0;
      bson_iter_timestamp(it, &t, &i);
      acc += t + i;
      break;
    }
    case BSON_TYPE_INT64:
      acc += bson_iter_int64(it);
      break;
    case BSON_TYPE_DECIMAL128: {
      bson_decimal128_t d;
      bson_iter_decimal128(it, &d);
      acc += (int64_t)d.low;
      break;
    }
    case BSON_TYPE_UNDEFINED:
    case BSON_TYPE_NULL:
    case BSON_TYPE_MINKEY:
    case BSON_TYPE_MAXKEY:
      acc += 1;
      break;
    default:
      *failed = true;
      return acc;
    }
    if (*failed) return acc;
  }
  // bson_iter_next returns false both at the end and on corrupt data; err_off tells them apart.
  if (it->err_off != 0) *failed = true;
  return acc;
}

int64_t cb_iter_walk(const uint8_t *data, size_t length) {
  bool failed = false;
  int64_t acc = walk_document(data, (uint32_t)length, &failed);
  return failed ? -1 : (acc & INT64_MAX);
}

bool cb_validate_utf8(const uint8_t *data, size_t length) {
  bson_t doc;
  size_t offset = 0;
  if (!bson_init_static(&doc, data, length)) return false;
  return bson_validate(&doc, BSON_VALIDATE_UTF8, &offset);
}

// MARK: - Dotted-path lookup

bool cb_path_equals_utf8(const uint8_t *data, size_t length, const char *path, const char *expected,
                         size_t expected_length) {
  bson_t doc;
  bson_iter_t it, found;
  if (!bson_init_static(&doc, data, length) || !bson_iter_init(&it, &doc)) return false;
  if (!bson_iter_find_descendant(&it, path, &found) || !BSON_ITER_HOLDS_UTF8(&found)) return false;
  uint32_t n = 0;
  const char *s = bson_iter_utf8(&found, &n);
  return n == expected_length && memcmp(s, expected, n) == 0;
}

bool cb_path_equals_int32(const uint8_t *data, size_t length, const char *path, int32_t expected) {
  bson_t doc;
  bson_iter_t it, found;
  if (!bson_init_static(&doc, data, length) || !bson_iter_init(&it, &doc)) return false;
  if (!bson_iter_find_descendant(&it, path, &found) || !BSON_ITER_HOLDS_INT32(&found)) return false;
  return bson_iter_int32(&found) == expected;
}

// MARK: - Building

struct cb_program {
  cb_op *ops;
  size_t count;
  size_t capacity;
  // Keys and strings are copied here so that the program owns them.
  char **strings;
  size_t string_count;
  size_t string_capacity;
};

static cb_op *push_op(cb_program *p) {
  if (p->count == p->capacity) {
    p->capacity = p->capacity ? p->capacity * 2 : 64;
    p->ops = realloc(p->ops, p->capacity * sizeof(cb_op));
  }
  cb_op *op = &p->ops[p->count++];
  memset(op, 0, sizeof *op);
  return op;
}

static const char *keep(cb_program *p, const char *s, size_t n) {
  if (p->string_count == p->string_capacity) {
    p->string_capacity = p->string_capacity ? p->string_capacity * 2 : 64;
    p->strings = realloc(p->strings, p->string_capacity * sizeof(char *));
  }
  char *copy = malloc(n + 1);
  memcpy(copy, s, n);
  copy[n] = 0;
  p->strings[p->string_count++] = copy;
  return copy;
}

static bool compile(cb_program *p, bson_iter_t *it) {
  while (bson_iter_next(it)) {
    cb_op *op = push_op(p);
    uint32_t key_length = bson_iter_key_len(it);
    op->key = keep(p, bson_iter_key(it), key_length);
    op->key_length = (int)key_length;
    switch (bson_iter_type(it)) {
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
      op->kind = bson_iter_type(it) == BSON_TYPE_DOCUMENT ? CB_OP_DOCUMENT : CB_OP_ARRAY;
      bson_iter_t child;
      if (!bson_iter_recurse(it, &child) || !compile(p, &child)) return false;
      push_op(p)->kind = CB_OP_END;
      break;
    }
    case BSON_TYPE_UTF8: {
      uint32_t n = 0;
      const char *s = bson_iter_utf8(it, &n);
      // Re-read the pointer: push_op may have moved the array.
      op = &p->ops[p->count - 1];
      op->kind = CB_OP_UTF8;
      op->string = keep(p, s, n);
      op->string_length = (int)n;
      break;
    }
    case BSON_TYPE_INT32:
      op->kind = CB_OP_INT32;
      op->integer = bson_iter_int32(it);
      break;
    case BSON_TYPE_INT64:
      op->kind = CB_OP_INT64;
      op->integer = bson_iter_int64(it);
      break;
    case BSON_TYPE_DOUBLE:
      op->kind = CB_OP_DOUBLE;
      op->number = bson_iter_double(it);
      break;
    case BSON_TYPE_BOOL:
      op->kind = CB_OP_BOOL;
      op->integer = bson_iter_bool(it);
      break;
    case BSON_TYPE_OID:
      op->kind = CB_OP_OID;
      memcpy(op->oid, bson_iter_oid(it)->bytes, 12);
      break;
    case BSON_TYPE_NULL:
      op->kind = CB_OP_NULL;
      break;
    case BSON_TYPE_DATE_TIME:
      op->kind = CB_OP_DATETIME;
      op->integer = bson_iter_date_time(it);
      break;
    default:
      return false;
    }
  }
  return it->err_off == 0;
}

cb_program *cb_program_new(const uint8_t *data, size_t length) {
  bson_t doc;
  bson_iter_t it;
  if (!bson_init_static(&doc, data, length) || !bson_iter_init(&it, &doc)) return NULL;
  cb_program *p = calloc(1, sizeof *p);
  if (!compile(p, &it)) {
    cb_program_free(p);
    return NULL;
  }
  return p;
}

void cb_program_free(cb_program *p) {
  if (!p) return;
  for (size_t i = 0; i < p->string_count; i++) free(p->strings[i]);
  free(p->strings);
  free(p->ops);
  free(p);
}

size_t cb_program_count(const cb_program *p) { return p->count; }
const cb_op *cb_program_ops(const cb_program *p) { return p->ops; }

/// Appends operations from *i until an END (or the end of the program) to `b`.
static void run(const cb_program *p, size_t *i, bson_t *b) {
  while (*i < p->count) {
    const cb_op *op = &p->ops[(*i)++];
    switch (op->kind) {
    case CB_OP_END:
      return;
    case CB_OP_DOCUMENT: {
      bson_t child;
      bson_append_document_begin(b, op->key, op->key_length, &child);
      run(p, i, &child);
      bson_append_document_end(b, &child);
      break;
    }
    case CB_OP_ARRAY: {
      bson_t child;
      bson_append_array_begin(b, op->key, op->key_length, &child);
      run(p, i, &child);
      bson_append_array_end(b, &child);
      break;
    }
    case CB_OP_UTF8:
      bson_append_utf8(b, op->key, op->key_length, op->string, op->string_length);
      break;
    case CB_OP_INT32:
      bson_append_int32(b, op->key, op->key_length, (int32_t)op->integer);
      break;
    case CB_OP_INT64:
      bson_append_int64(b, op->key, op->key_length, op->integer);
      break;
    case CB_OP_DOUBLE:
      bson_append_double(b, op->key, op->key_length, op->number);
      break;
    case CB_OP_BOOL:
      bson_append_bool(b, op->key, op->key_length, op->integer != 0);
      break;
    case CB_OP_OID: {
      bson_oid_t oid;
      memcpy(oid.bytes, op->oid, 12);
      bson_append_oid(b, op->key, op->key_length, &oid);
      break;
    }
    case CB_OP_NULL:
      bson_append_null(b, op->key, op->key_length);
      break;
    case CB_OP_DATETIME:
      bson_append_date_time(b, op->key, op->key_length, op->integer);
      break;
    }
  }
}

size_t cb_program_build(const cb_program *p) {
  bson_t b;
  bson_init(&b);
  size_t i = 0;
  run(p, &i, &b);
  size_t length = b.len;
  bson_destroy(&b);
  return length;
}

size_t cb_program_build_copy(const cb_program *p, uint8_t *out, size_t capacity) {
  bson_t b;
  bson_init(&b);
  size_t i = 0;
  run(p, &i, &b);
  size_t length = b.len;
  memcpy(out, bson_get_data(&b), length < capacity ? length : capacity);
  bson_destroy(&b);
  return length;
}

// MARK: - Extended JSON

size_t cb_to_canonical_json(const uint8_t *data, size_t length) {
  bson_t doc;
  size_t n = 0;
  if (!bson_init_static(&doc, data, length)) return 0;
  char *json = bson_as_canonical_extended_json(&doc, &n);
  if (!json) return 0;
  bson_free(json);
  return n;
}

size_t cb_to_relaxed_json(const uint8_t *data, size_t length) {
  bson_t doc;
  size_t n = 0;
  if (!bson_init_static(&doc, data, length)) return 0;
  char *json = bson_as_relaxed_extended_json(&doc, &n);
  if (!json) return 0;
  bson_free(json);
  return n;
}

size_t cb_to_canonical_json_copy(const uint8_t *data, size_t length, char *out, size_t capacity) {
  bson_t doc;
  size_t n = 0;
  if (!bson_init_static(&doc, data, length)) return 0;
  char *json = bson_as_canonical_extended_json(&doc, &n);
  if (!json) return 0;
  memcpy(out, json, n < capacity ? n : capacity);
  bson_free(json);
  return n;
}

size_t cb_from_json(const char *json, size_t length) {
  bson_error_t error;
  bson_t *b = bson_new_from_json((const uint8_t *)json, (ssize_t)length, &error);
  if (!b) return 0;
  size_t n = b->len;
  bson_destroy(b);
  return n;
}

size_t cb_from_json_copy(const char *json, size_t length, uint8_t *out, size_t capacity) {
  bson_error_t error;
  bson_t *b = bson_new_from_json((const uint8_t *)json, (ssize_t)length, &error);
  if (!b) return 0;
  size_t n = b->len;
  memcpy(out, bson_get_data(b), n < capacity ? n : capacity);
  bson_destroy(b);
  return n;
}
