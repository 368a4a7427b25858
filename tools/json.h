/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small JSON writer for --json output, to stdout: nested objects and
 * arrays, string and unsigned values, commas and escaping handled here.
 * @key is the member name inside an object and NULL inside an array or at
 * the top level.
 */
#ifndef MOBIO_TOOLS_JSON_H
#define MOBIO_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>

void json_object_open(const char *key);
void json_object_close(void);
void json_array_open(const char *key);
void json_array_close(void);
void json_string(const char *key, const char *val);
void json_u64(const char *key, uint64_t val);
void json_bool(const char *key, bool val);
/* End a top-level value: newline and flush (one document per line). */
void json_end(void);

#endif /* MOBIO_TOOLS_JSON_H */
