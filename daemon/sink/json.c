// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json.c - a small streaming JSON writer (see json.h).
 *
 * Output is UTF-8 passed through; control characters, quotes and
 * backslashes are escaped, and bytes that are not valid UTF-8 are replaced
 * by U+FFFD so the document always parses (task names come from the kernel
 * and may hold anything).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void json_setup(struct json *j, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->pretty = pretty;
	j->first[0] = 1;
}

void json_init(struct json *j)
{
	json_setup(j, false);
}

void json_init_pretty(struct json *j)
{
	json_setup(j, true);
}

void json_free(struct json *j)
{
	if (!j)
		return;
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
}

void json_reset(struct json *j)
{
	char *buf = j->buf;
	size_t cap = j->cap;
	bool pretty = j->pretty;

	json_setup(j, pretty);
	j->buf = buf;
	j->cap = cap;
	if (buf)
		buf[0] = '\0';
}

char *json_steal(struct json *j, size_t *len)
{
	char *s;

	if (j->err) {
		json_free(j);
		return NULL;
	}
	if (!j->buf) {
		s = strdup("");
		if (!s)
			return NULL;
	} else {
		s = j->buf;
	}
	if (len)
		*len = j->len;
	j->buf = NULL;
	j->len = j->cap = 0;
	return s;
}

int json_error(const struct json *j)
{
	return j->err;
}

const char *json_text(const struct json *j)
{
	return j->buf ? j->buf : "";
}

static int json_reserve(struct json *j, size_t more)
{
	size_t need, cap;
	char *nb;

	if (j->err)
		return j->err;
	need = j->len + more + 1;
	if (need <= j->cap)
		return 0;
	cap = j->cap ? j->cap : 256;
	while (cap < need)
		cap *= 2;
	nb = realloc(j->buf, cap);
	if (!nb) {
		j->err = -ENOMEM;
		return j->err;
	}
	j->buf = nb;
	j->cap = cap;
	return 0;
}

static void json_put(struct json *j, const char *s, size_t n)
{
	if (json_reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void json_putc(struct json *j, char c)
{
	if (json_reserve(j, 1))
		return;
	j->buf[j->len++] = c;
	j->buf[j->len] = '\0';
}

static void json_indent(struct json *j)
{
	json_putc(j, '\n');
	for (int i = 0; i < j->depth; i++)
		json_put(j, "  ", 2);
}

/* Separator before a value (or before a key inside an object). */
static int json_before_value(struct json *j, bool is_key)
{
	if (j->err)
		return j->err;
	if (j->after_key) {
		if (is_key) {
			j->err = -EINVAL;
			return j->err;
		}
		j->after_key = false;
		return 0;
	}
	if (j->depth > 0 && j->is_obj[j->depth] && !is_key) {
		/* a value inside an object needs a key first */
		j->err = -EINVAL;
		return j->err;
	}
	if (is_key && !(j->depth > 0 && j->is_obj[j->depth])) {
		j->err = -EINVAL;
		return j->err;
	}
	if (!j->first[j->depth])
		json_putc(j, ',');
	j->first[j->depth] = 0;
	if (j->pretty && j->depth > 0)
		json_indent(j);
	return j->err;
}

static void json_open(struct json *j, char c, bool obj)
{
	if (json_before_value(j, false))
		return;
	if (j->depth >= JSON_MAX_DEPTH) {
		j->err = -EINVAL;
		return;
	}
	json_putc(j, c);
	j->depth++;
	j->first[j->depth] = 1;
	j->is_obj[j->depth] = obj;
}

static void json_close(struct json *j, char c, bool obj)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->is_obj[j->depth] != obj || j->after_key) {
		j->err = -EINVAL;
		return;
	}
	j->depth--;
	if (j->pretty && !j->first[j->depth + 1])
		json_indent(j);
	json_putc(j, c);
}

void json_object_begin(struct json *j)
{
	json_open(j, '{', true);
}

void json_object_end(struct json *j)
{
	json_close(j, '}', true);
}

void json_array_begin(struct json *j)
{
	json_open(j, '[', false);
}

void json_array_end(struct json *j)
{
	json_close(j, ']', false);
}

/* Length of a valid UTF-8 sequence at s (max n bytes), 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void json_escape_append(struct json *j, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	char esc[8];

	json_putc(j, '"');
	while (i < n && s[i] && !j->err) {
		unsigned char c = s[i];
		size_t run = i;

		/* copy the longest run that needs no escaping at once */
		while (run < n && s[run] >= 0x20 && s[run] < 0x80 &&
		       s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			json_put(j, (const char *)s + i, run - i);
			i = run;
			continue;
		}
		switch (c) {
		case '"':  json_put(j, "\\\"", 2); i++; continue;
		case '\\': json_put(j, "\\\\", 2); i++; continue;
		case '\n': json_put(j, "\\n", 2); i++; continue;
		case '\r': json_put(j, "\\r", 2); i++; continue;
		case '\t': json_put(j, "\\t", 2); i++; continue;
		case '\b': json_put(j, "\\b", 2); i++; continue;
		case '\f': json_put(j, "\\f", 2); i++; continue;
		default:
			break;
		}
		if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			json_put(j, esc, 6);
			i++;
			continue;
		}
		/* non-ASCII: pass valid UTF-8, replace the rest */
		{
			size_t k = utf8_valid_len(s + i, strnlen((const char *)s + i, n - i));

			if (k) {
				json_put(j, (const char *)s + i, k);
				i += k;
			} else {
				json_put(j, "\xef\xbf\xbd", 3);
				i++;
			}
		}
	}
	json_putc(j, '"');
}

void json_key(struct json *j, const char *key)
{
	if (json_before_value(j, true))
		return;
	json_escape_append(j, key, strlen(key));
	json_putc(j, ':');
	if (j->pretty)
		json_putc(j, ' ');
	j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t n)
{
	if (!s) {
		json_null(j);
		return;
	}
	if (json_before_value(j, false))
		return;
	json_escape_append(j, s, n);
}

void json_str(struct json *j, const char *s)
{
	json_strn(j, s, s ? strlen(s) : 0);
}

void json_int(struct json *j, int64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);

	if (json_before_value(j, false))
		return;
	json_put(j, tmp, n);
}

void json_uint(struct json *j, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);

	if (json_before_value(j, false))
		return;
	json_put(j, tmp, n);
}

void json_double(struct json *j, double v)
{
	char tmp[40];
	int n;

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	if (json_before_value(j, false))
		return;
	/* shortest of 15 or 17 digits that reads back exactly */
	n = snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		n = snprintf(tmp, sizeof(tmp), "%.17g", v);
	json_put(j, tmp, n);
}

void json_bool(struct json *j, bool v)
{
	if (json_before_value(j, false))
		return;
	if (v)
		json_put(j, "true", 4);
	else
		json_put(j, "false", 5);
}

void json_null(struct json *j)
{
	if (json_before_value(j, false))
		return;
	json_put(j, "null", 4);
}

void json_raw(struct json *j, const char *text)
{
	if (!text || !*text) {
		json_null(j);
		return;
	}
	if (json_before_value(j, false))
		return;
	json_put(j, text, strlen(text));
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}

void json_kv_raw(struct json *j, const char *key, const char *text)
{
	json_key(j, key);
	json_raw(j, text);
}

void json_append_text(struct json *j, const char *s, size_t n)
{
	json_put(j, s, n);
}
