// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small JSON writer for --json output (see json.h). Output is compact,
 * one top-level value per line, so that `mobioctl -j qnvram watch` is a
 * stream of JSON lines.
 */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"

/* Deepest nesting the tools produce is 3; errors beyond are not checked. */
#define JSON_MAX_DEPTH	16

/* Per open object or array: has a member been written yet (needs ",")? */
static bool json_nonempty[JSON_MAX_DEPTH];
static int json_depth;

static void json_escaped(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				printf("\\u%04x", *p);
			else
				putchar(*p);
		}
	}
	putchar('"');
}

/* Comma and key before a member. */
static void json_member(const char *key)
{
	if (json_depth > 0 && json_depth <= JSON_MAX_DEPTH) {
		if (json_nonempty[json_depth - 1])
			putchar(',');
		json_nonempty[json_depth - 1] = true;
	}
	if (key) {
		json_escaped(key);
		putchar(':');
	}
}

static void json_open(const char *key, char c)
{
	json_member(key);
	putchar(c);
	if (json_depth < JSON_MAX_DEPTH)
		json_nonempty[json_depth] = false;
	json_depth++;
}

static void json_close(char c)
{
	putchar(c);
	if (json_depth > 0)
		json_depth--;
}

void json_object_open(const char *key)
{
	json_open(key, '{');
}

void json_object_close(void)
{
	json_close('}');
}

void json_array_open(const char *key)
{
	json_open(key, '[');
}

void json_array_close(void)
{
	json_close(']');
}

void json_string(const char *key, const char *val)
{
	json_member(key);
	json_escaped(val);
}

void json_u64(const char *key, uint64_t val)
{
	json_member(key);
	printf("%" PRIu64, val);
}

void json_bool(const char *key, bool val)
{
	json_member(key);
	fputs(val ? "true" : "false", stdout);
}

void json_end(void)
{
	putchar('\n');
	fflush(stdout);
}
