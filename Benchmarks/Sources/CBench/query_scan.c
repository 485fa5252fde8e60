#include "cbench.h"

#include <bson.h>
#include <string.h>

static uint32_t document_length(const uint8_t *data) {
  uint32_t length;
  memcpy(&length, data, 4);
  return BSON_UINT32_FROM_LE(length);
}

static bool utf8_equals(const bson_iter_t *it, const char *expected, size_t expected_length) {
  if (!BSON_ITER_HOLDS_UTF8(it)) return false;
  uint32_t n = 0;
  const char *s = bson_iter_utf8(it, &n);
  return n == expected_length && memcmp(s, expected, n) == 0;
}

size_t cb_scan_path_equals_utf8(const uint8_t *stream, const size_t *offsets, size_t count, const char *path,
                                const char *expected, size_t expected_length) {
  size_t matches = 0;
  for (size_t i = 0; i < count; i++) {
    const uint8_t *data = stream + offsets[i];
    bson_t doc;
    bson_iter_t it, found;
    if (!bson_init_static(&doc, data, document_length(data)) || !bson_iter_init(&it, &doc)) continue;
    if (bson_iter_find_descendant(&it, path, &found) && utf8_equals(&found, expected, expected_length)) matches++;
  }
  return matches;
}

size_t cb_scan_array_field_equals_utf8(const uint8_t *stream, const size_t *offsets, size_t count,
                                       const char *array_key, const char *field, const char *expected,
                                       size_t expected_length) {
  size_t matches = 0;
  for (size_t i = 0; i < count; i++) {
    const uint8_t *data = stream + offsets[i];
    bson_t doc;
    bson_iter_t it, elements, child;
    if (!bson_init_static(&doc, data, document_length(data)) || !bson_iter_init_find(&it, &doc, array_key)) continue;
    bool matched = false;
    if (BSON_ITER_HOLDS_DOCUMENT(&it)) {
      matched = bson_iter_recurse(&it, &child) && bson_iter_find(&child, field) &&
                utf8_equals(&child, expected, expected_length);
    } else if (BSON_ITER_HOLDS_ARRAY(&it) && bson_iter_recurse(&it, &elements)) {
      while (!matched && bson_iter_next(&elements)) {
        if (BSON_ITER_HOLDS_DOCUMENT(&elements) && bson_iter_recurse(&elements, &child) &&
            bson_iter_find(&child, field) && utf8_equals(&child, expected, expected_length)) {
          matched = true;
        }
      }
    }
    if (matched) matches++;
  }
  return matches;
}
