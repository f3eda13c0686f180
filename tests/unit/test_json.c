// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json.c - the JSON writer: nesting, commas, escaping, numbers,
 * invalid UTF-8 replacement and misuse detection.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sink/json.h"
#include "tests/unit/tap.h"

static void is_text(struct json *j, const char *want, const char *name)
{
	if (!ok(!json_error(j) && !strcmp(json_text(j), want), "%s", name))
		printf("#   got  '%s' (err %d)\n#   want '%s'\n", json_text(j),
		       json_error(j), want);
}

int main(void)
{
	struct json j;
	char *s;
	size_t len;

	json_init(&j);
	json_object_begin(&j);
	json_kv_str(&j, "a", "x");
	json_key(&j, "b");
	json_array_begin(&j);
	json_int(&j, -3);
	json_uint(&j, UINT64_MAX);
	json_double(&j, 0.1);
	json_double(&j, NAN);
	json_bool(&j, true);
	json_null(&j);
	json_object_begin(&j);
	json_object_end(&j);
	json_array_end(&j);
	json_kv_raw(&j, "ev", "{\"k\":1}");
	json_kv_raw(&j, "none", "");
	json_object_end(&j);
	is_text(&j, "{\"a\":\"x\",\"b\":[-3,18446744073709551615,0.1,null,true,null,{}],"
		"\"ev\":{\"k\":1},\"none\":null}", "nested object/array with commas and numbers");
	s = json_steal(&j, &len);
	ok(s && len == strlen(s), "steal hands over the text and its length");
	free(s);
	ok(j.buf == NULL, "writer is empty after steal");

	json_init(&j);
	json_str(&j, "q\"b\\n\n\t\x01 \xc3\xa9 \xff end");
	is_text(&j, "\"q\\\"b\\\\n\\n\\t\\u0001 \xc3\xa9 \xef\xbf\xbd end\"",
		"escapes quotes, backslash, controls; keeps UTF-8; replaces invalid bytes");
	json_free(&j);

	json_init(&j);
	json_strn(&j, "comm\0garbage", 16);
	is_text(&j, "\"comm\"", "strn stops at NUL");
	json_free(&j);

	json_init(&j);
	json_double(&j, 1.0 / 3.0);
	ok(strtod(json_text(&j), NULL) == 1.0 / 3.0, "doubles round-trip (%s)", json_text(&j));
	json_free(&j);

	json_init(&j);
	json_object_begin(&j);
	json_int(&j, 1);
	is_int(json_error(&j), -EINVAL, "a value without a key in an object is an error");
	json_free(&j);

	json_init(&j);
	json_array_begin(&j);
	json_object_end(&j);
	is_int(json_error(&j), -EINVAL, "mismatched close is an error");
	ok(json_steal(&j, NULL) == NULL, "steal returns NULL after an error");

	json_init(&j);
	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_array_begin(&j);
	is_int(json_error(&j), -EINVAL, "nesting deeper than JSON_MAX_DEPTH is refused");
	json_free(&j);

	json_init(&j);
	json_array_begin(&j);
	for (int i = 0; i < 100000; i++)
		json_uint(&j, i);
	json_array_end(&j);
	ok(!json_error(&j) && j.len > 500000, "buffer grows to large documents (%zu bytes)", j.len);
	json_free(&j);

	json_init_pretty(&j);
	json_object_begin(&j);
	json_kv_int(&j, "a", 1);
	json_key(&j, "b");
	json_array_begin(&j);
	json_array_end(&j);
	json_object_end(&j);
	is_text(&j, "{\n  \"a\": 1,\n  \"b\": []\n}", "pretty output indents by two spaces");
	json_reset(&j);
	json_str(&j, "x");
	is_text(&j, "\"x\"", "reset empties the document");
	json_free(&j);

	return tap_done();
}
