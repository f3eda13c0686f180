/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - a small streaming JSON writer into a growable buffer.
 *
 * Used by the HTTP API, the `analyze --json` report and the alert hook.
 * The writer tracks nesting and inserts commas itself; callers just emit
 * keys and values in order.  Allocation failure or misuse (too deep, value
 * without a key inside an object) latches an error that json_error()
 * returns; later calls are then no-ops, so callers check once at the end.
 *
 *	struct json j;
 *	json_init(&j);
 *	json_object_begin(&j);
 *	json_kv_str(&j, "kind", "overload");
 *	json_key(&j, "cpus");
 *	json_array_begin(&j);
 *	json_uint(&j, 1);
 *	json_array_end(&j);
 *	json_object_end(&j);
 *	if (json_error(&j)) ...
 *	char *text = json_steal(&j, &len);	// caller frees text
 */
#ifndef IMB_JSON_H
#define IMB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64

struct json {
	char *buf;			/* NUL-terminated text so far */
	size_t len;			/* bytes, without the NUL */
	size_t cap;			/* bytes allocated */
	int depth;			/* open containers */
	int err;			/* 0 or -errno, latched */
	bool pretty;			/* newline + 2-space indent */
	bool after_key;			/* a key was written, value expected */
	uint8_t first[JSON_MAX_DEPTH + 1];	/* no element yet at this depth */
	uint8_t is_obj[JSON_MAX_DEPTH + 1];	/* container is an object */
};

/** json_init - start an empty document (compact output) */
void json_init(struct json *j);
/** json_init_pretty - start an empty document, indented for people */
void json_init_pretty(struct json *j);
/** json_free - release the buffer; accepts a zeroed or stolen writer */
void json_free(struct json *j);
/** json_reset - empty the document, keep the allocation */
void json_reset(struct json *j);
/**
 * json_steal - take the text (NUL-terminated); the caller frees it
 * @len: optional, receives the length
 *
 * Returns NULL when an error was latched (and frees the buffer).
 */
char *json_steal(struct json *j, size_t *len);
/** json_error - 0, -ENOMEM, or -EINVAL for misuse */
int json_error(const struct json *j);
/** json_text - borrow the text so far (owned by the writer) */
const char *json_text(const struct json *j);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);

/** json_key - write an object key; the next call writes its value */
void json_key(struct json *j, const char *key);

void json_str(struct json *j, const char *s);
/** json_strn - string of at most @n bytes (stops at NUL) */
void json_strn(struct json *j, const char *s, size_t n);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/** json_double - finite numbers with 17 significant digits max; NaN/inf as null */
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/**
 * json_raw - insert @text as a value verbatim (already valid JSON, e.g. a
 * finding's evidence object); empty or NULL text writes null
 */
void json_raw(struct json *j, const char *text);

/* key + value in one call */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_double(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);
void json_kv_raw(struct json *j, const char *key, const char *text);

/**
 * json_escape_append - append @s as a quoted JSON string to @j's buffer
 * without structure bookkeeping (for callers building text by hand)
 */
void json_escape_append(struct json *j, const char *s, size_t n);

/**
 * json_append_text - append @n bytes verbatim, outside the structure
 * bookkeeping (for framing such as server-sent events around documents)
 */
void json_append_text(struct json *j, const char *s, size_t n);

#endif /* IMB_JSON_H */
