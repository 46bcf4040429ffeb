/* The supervisor's reads of session columns that ss_load and ss_heartbeat (sstore.c)
 * do not cover: whether the session is an E2B sandbox (schema 012: its workspace is
 * the commands' /home/user), its idle timeout as the API last set it (an E2B
 * sandbox's follows its timeout, which setTimeout changes) and its lifetime (E2B's
 * setTimeout moves expires_at), for the end's words. */
#include "sesint.h"

#include "db.h"

int ss_load_e2b(struct db *db, const char *id, int *e2b)
{
	struct db_res *res = db_query_p(db, "SELECT e2b FROM sessions WHERE id = ?", db_str(id));

	if (res == NULL)
		return -1;
	*e2b = db_res_rows(res) == 1 && db_res_i(res, 0, "e2b", 0) != 0;
	db_res_free(res);
	return 0;
}

long long ss_lifetime(struct db *db, const char *id)
{
	struct db_res *res = db_query_p(db,
					"SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, created_at,"
					" expires_at) / 1000000) AS s FROM sessions WHERE id = ?",
					db_str(id));
	long long s;

	if (res == NULL)
		return -1;
	s = db_res_rows(res) == 1 ? db_res_i(res, 0, "s", -1) : -1;
	db_res_free(res);
	return s;
}

int ss_idle_seconds(struct db *db, const char *id, long long *idle)
{
	struct db_res *res = db_query_p(db, "SELECT idle_seconds FROM sessions WHERE id = ?",
					db_str(id));

	if (res == NULL)
		return -1;
	if (db_res_rows(res) == 1)
		*idle = db_res_i(res, 0, "idle_seconds", *idle);
	db_res_free(res);
	return 0;
}
