// libbson anchors for Reef's benchmarks, written in C so that the comparison measures libbson
// itself rather than Swift calling into it element by element.
#ifndef CBENCH_H
#define CBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Walks every element of the document with bson_iter, recursing into documents, arrays and
/// code-with-scope scopes, and reads each value. Returns a checksum of what it read, or -1 when
/// libbson rejects the bytes.
int64_t cb_iter_walk(const uint8_t *data, size_t length);

/// bson_validate with BSON_VALIDATE_UTF8. Returns true when valid.
bool cb_validate_utf8(const uint8_t *data, size_t length);

/// bson_iter_init + bson_iter_find_descendant(path), then compares the value with `expected`
/// (a UTF-8 string of `expected_length` bytes). False when missing, of another type or different.
bool cb_path_equals_utf8(const uint8_t *data, size_t length, const char *path, const char *expected,
                         size_t expected_length);

/// The same for an int32 value.
bool cb_path_equals_int32(const uint8_t *data, size_t length, const char *path, int32_t expected);

/// A program that rebuilds a document with bson_append_*: one operation per element, plus
/// an end marker for each embedded document.
typedef enum {
  CB_OP_END = 0,
  CB_OP_DOCUMENT,
  CB_OP_ARRAY,
  CB_OP_UTF8,
  CB_OP_INT32,
  CB_OP_INT64,
  CB_OP_DOUBLE,
  CB_OP_BOOL,
  CB_OP_OID,
  CB_OP_NULL,
  CB_OP_DATETIME,
} cb_op_kind;

typedef struct {
  cb_op_kind kind;
  const char *key;
  int key_length;
  const char *string;
  int string_length;
  int64_t integer;
  double number;
  uint8_t oid[12];
} cb_op;

typedef struct cb_program cb_program;

/// Compiles the document into a program; NULL when it holds a type the program cannot express.
cb_program *cb_program_new(const uint8_t *data, size_t length);
void cb_program_free(cb_program *program);
size_t cb_program_count(const cb_program *program);
const cb_op *cb_program_ops(const cb_program *program);

/// Runs the program with bson_init + bson_append_* (embedded documents with
/// bson_append_document_begin/end) and bson_destroy. Returns the length of the built document.
size_t cb_program_build(const cb_program *program);

/// Runs the program and copies the built bytes into `out` (at most `capacity`); returns the length.
size_t cb_program_build_copy(const cb_program *program, uint8_t *out, size_t capacity);

/// Straight-line bson_init + bson_append_* + bson_destroy of flat_bson's and deep_bson's fields
/// (generated_build.c, written by Scripts/generate-build-code.py). When `out` is not NULL the
/// built bytes are copied there (at most `capacity`). Returns the length of the document.
size_t cb_build_flat(uint8_t *out, size_t capacity);
size_t cb_build_deep(uint8_t *out, size_t capacity);

/// bson_as_canonical_extended_json; returns the length of the text (freed before returning).
size_t cb_to_canonical_json(const uint8_t *data, size_t length);

/// bson_as_relaxed_extended_json; returns the length of the text.
size_t cb_to_relaxed_json(const uint8_t *data, size_t length);

/// Copies bson_as_canonical_extended_json's text into `out`; returns its full length.
size_t cb_to_canonical_json_copy(const uint8_t *data, size_t length, char *out, size_t capacity);

/// bson_new_from_json + bson_destroy; returns the length of the BSON produced, 0 on error.
size_t cb_from_json(const char *json, size_t length);

/// Copies bson_new_from_json's bytes into `out`; returns the length, 0 on error.
size_t cb_from_json_copy(const char *json, size_t length, uint8_t *out, size_t capacity);


#ifdef __cplusplus
}
#endif

#endif

// MARK: - Query scans (QueryBenchmarks)

/// Counts the documents of a stream (`count` documents starting at `offsets[i]`) whose value at
/// the dotted `path` is the UTF-8 string `expected`: bson_init_static + bson_iter_init +
/// bson_iter_find_descendant + compare, per document.
size_t cb_scan_path_equals_utf8(const uint8_t *stream, const size_t *offsets, size_t count, const char *path,
                                const char *expected, size_t expected_length);

/// Counts the documents whose `array_key` holds an array with a document element whose `field` is
/// the UTF-8 string `expected` (or a document whose `field` is), MongoDB's `{"addresses.city": …}`:
/// bson_iter_init_find + bson_iter_recurse over the elements + bson_iter_find + compare.
size_t cb_scan_array_field_equals_utf8(const uint8_t *stream, const size_t *offsets, size_t count,
                                       const char *array_key, const char *field, const char *expected,
                                       size_t expected_length);
