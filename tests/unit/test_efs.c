/* app/e2b/efsform.c: an upload's multipart/form-data body (as undici's FormData and
 * httpx write it), envd's query parameter (+ is a space), and a supervisor's entry as
 * envd's EntryInfo (absolute path, size as a string, Go's permission string, owner). */
#include <stdlib.h>
#include <string.h>

#include "efsform.h"
#include "tests.h"

void suite_efs(void);

static void test_multipart(void)
{
	static const char body[] =
		"preamble\r\n"
		"--XyZ\r\n"
		"Content-Disposition: form-data; name=\"file\"; filename=\"/home/user/a \\\"q\\\".txt\"\r\n"
		"Content-Type: application/octet-stream\r\n\r\n"
		"one\r\n--XyZ\r\n"
		"content-disposition: form-data; name=file; filename=\"b%22%0A.bin\"\r\n\r\n"
		"\x00\r\n--X\xff\r\n--XyZ\r\n"
		"\r\n"
		"no headers\r\n--XyZ--\r\n";
	struct efs_part p[4];
	const char *why = NULL;
	int n = efs_multipart("multipart/form-data; boundary=XyZ", (const unsigned char *)body,
			      sizeof body - 1, p, 4, &why);

	CHECK_INT(n, 3);
	if (n != 3)
		return;
	CHECK_STR(p[0].field, "file");
	CHECK_STR(p[0].filename, "/home/user/a \"q\".txt");
	CHECK_INT((long long)p[0].len, 3);
	CHECK(memcmp(p[0].data, "one", 3) == 0, "part 1's bytes");
	CHECK_STR(p[1].field, "file");
	CHECK_STR(p[1].filename, "b\"\n.bin");
	CHECK_INT((long long)p[1].len, 7); /* NUL, CR, LF, "--X", 0xff: binary kept */
	CHECK(memcmp(p[1].data, "\x00\r\n--X\xff", 7) == 0, "part 2's bytes");
	CHECK_STR(p[2].field, "");
	CHECK_INT((long long)p[2].len, 10);
	/* quoted boundary; too many parts; no closing delimiter; not multipart */
	CHECK_INT(efs_multipart("multipart/form-data; boundary=\"XyZ\"", (const unsigned char *)body,
				sizeof body - 1, p, 4, &why), 3);
	CHECK_INT(efs_multipart("multipart/form-data; boundary=XyZ", (const unsigned char *)body,
				sizeof body - 1, p, 2, &why), -1);
	CHECK_HAS(why, "too many");
	CHECK_INT(efs_multipart("multipart/form-data; boundary=XyZ",
				(const unsigned char *)"--XyZ\r\n\r\nabc", 13, p, 4, &why), -1);
	CHECK_HAS(why, "closing boundary");
	CHECK_INT(efs_multipart("application/octet-stream", (const unsigned char *)body,
				sizeof body - 1, p, 4, &why), -1);
	CHECK_INT(efs_multipart("multipart/form-data", (const unsigned char *)body, sizeof body - 1,
				p, 4, &why), -1);
}

static void test_query(void)
{
	char v[32];

	CHECK_INT(efs_query("username=user&path=%2Fhome%2Fuser%2Fa+b%2Bc", "path", v, sizeof v), 1);
	CHECK_STR(v, "/home/user/a b+c");
	CHECK_INT(efs_query("xpath=1&path=", "path", v, sizeof v), 1);
	CHECK_STR(v, "");
	CHECK_INT(efs_query("username=user", "path", v, sizeof v), 0);
	CHECK_INT(efs_query("", "path", v, sizeof v), 0);
	CHECK_INT(efs_query("path=%zz", "path", v, sizeof v), -1);
	CHECK_INT(efs_query("path=0123456789012345678901234567890123456789", "path", v, sizeof v), -1);
}

static void test_entry_info(void)
{
	json_t *e = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:s}", "name", "d", "type", "dir",
			      "path", "x/d", "size", (json_int_t)4096, "mode", 0755, "uid", 1000,
			      "gid", 1000, "mtime", "2026-12-07T20:01:33.123456789Z");
	json_t *o = efs_entry_info(e);
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	CHECK_STR(text ? text : "(null)",
		  "{\"group\":\"user\",\"mode\":493,\"modifiedTime\":\"2026-12-07T20:01:33.123456789Z\","
		  "\"name\":\"d\",\"owner\":\"user\",\"path\":\"/home/user/x/d\",\"permissions\":"
		  "\"drwxr-xr-x\",\"size\":\"4096\",\"type\":\"FILE_TYPE_DIRECTORY\"}");
	free(text);
	json_decref(o);
	/* the home itself; a link with its target, someone else's; a fifo */
	json_object_set_new(e, "path", json_string(""));
	o = efs_entry_info(e);
	CHECK_STR(json_string_value(json_object_get(o, "name")), "user");
	CHECK_STR(json_string_value(json_object_get(o, "path")), "/home/user");
	json_decref(o);
	json_object_set_new(e, "type", json_string("symlink"));
	json_object_set_new(e, "mode", json_integer(0777));
	json_object_set_new(e, "uid", json_integer(65534));
	json_object_set_new(e, "symlink_target", json_string("/etc"));
	json_object_set_new(e, "path", json_string("ln"));
	o = efs_entry_info(e);
	CHECK_STR(json_string_value(json_object_get(o, "type")), "FILE_TYPE_SYMLINK");
	CHECK_STR(json_string_value(json_object_get(o, "symlinkTarget")), "/etc");
	CHECK_STR(json_string_value(json_object_get(o, "permissions")), "Lrwxrwxrwx");
	CHECK_STR(json_string_value(json_object_get(o, "owner")), "nobody");
	json_decref(o);
	json_object_set_new(e, "type", json_string("other"));
	o = efs_entry_info(e);
	CHECK_STR(json_string_value(json_object_get(o, "type")), "FILE_TYPE_UNSPECIFIED");
	json_decref(o);
	/* malformed: unknown type, bad time, negative size */
	json_object_set_new(e, "type", json_string("door"));
	CHECK(efs_entry_info(e) == NULL, "unknown type");
	json_object_set_new(e, "type", json_string("file"));
	json_object_set_new(e, "mtime", json_string("<script>"));
	CHECK(efs_entry_info(e) == NULL, "bad time");
	json_object_set_new(e, "mtime", json_string("2026-12-07T20:01:33Z"));
	json_object_set_new(e, "size", json_integer(-1));
	CHECK(efs_entry_info(e) == NULL, "negative size");
	json_decref(e);
}

void suite_efs(void)
{
	static const CU_TestInfo tests[] = {
		{ "multipart: parts, names, binary bytes, limits", test_multipart },
		{ "query: + is a space, percent-decoding, bounds", test_query },
		{ "entry as EntryInfo", test_entry_info },
		CU_TEST_INFO_NULL,
	};
	t_register("efs", tests);
}
