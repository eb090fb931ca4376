/* The C API from C (C99): the simulated GPU on a virtual clock, windows opened and closed from two
 * threads, results (SIMULATED, energy, uncertainty, counts), the run stored in SQLite and read back
 * with sqlite3, error codes for bad input, a forked child's inert meter, and one window on real
 * time through the sampler thread. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wattlab/wattlab_c.h"

static int g_failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__,   \
              __LINE__, #cond, wattlab_last_error());                            \
      ++g_failures;                                                              \
    }                                                                            \
  } while (0)
#define CHECK_STATUS(call, want)                                                             \
  do {                                                                                       \
    wattlab_status got_ = (call);                                                            \
    if (got_ != (want)) {                                                                    \
      fprintf(stderr, "%s:%d: %s returned %s, want %s (last error: %s)\n", __FILE__, __LINE__, \
              #call, wattlab_status_name(got_), wattlab_status_name(want), wattlab_last_error()); \
      ++g_failures;                                                                          \
    }                                                                                        \
  } while (0)
#define REQUIRE_OK(call)                                                                        \
  do {                                                                                          \
    wattlab_status got_ = (call);                                                               \
    if (got_ != WATTLAB_OK) {                                                                   \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,                 \
              wattlab_status_name(got_), wattlab_last_error());                                 \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

static const int64_t kS = 1000000000LL;

/* ---- bad input ---- */
static void test_errors(void) {
  wattlab_options* o = NULL;
  wattlab_meter* m = NULL;
  wattlab_window_id id = 0;
  wattlab_result* r = NULL;

  CHECK(wattlab_api_version() == WATTLAB_C_API_VERSION);
  CHECK(strlen(wattlab_version()) > 0);
  CHECK_STATUS(wattlab_options_new(NULL), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK(strstr(wattlab_last_error(), "out is NULL") != NULL);
  REQUIRE_OK(wattlab_options_new(&o));
  CHECK_STATUS(wattlab_options_set_devices(o, "gpu9000"), WATTLAB_ERR_UNKNOWN_DEVICE);
  CHECK(strstr(wattlab_last_error(), "gpu9000") != NULL);
  CHECK_STATUS(wattlab_options_set_devices(NULL, "sim"), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_options_set_devices(o, NULL), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_options_set_sim_gpus(o, 0), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_options_set_gpus(o, "0,,1"), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_options_set_virtual_clock(o, -1), WATTLAB_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(wattlab_options_set_devices(o, "sim"));
  CHECK_STATUS(wattlab_options_set_sim_workload(o, "this is not a workload"), WATTLAB_OK);
  CHECK_STATUS(wattlab_meter_open(o, &m), WATTLAB_ERR_INVALID_ARGUMENT); /* the script does not parse */
  CHECK(m == NULL);
  REQUIRE_OK(wattlab_options_set_sim_workload(o, NULL));
  REQUIRE_OK(wattlab_options_set_virtual_clock(o, 1000 * kS));
  CHECK_STATUS(wattlab_meter_open(o, NULL), WATTLAB_ERR_INVALID_ARGUMENT);
  /* A store that cannot be created. */
  REQUIRE_OK(wattlab_options_set_db(o, "/nonexistent-dir/x/runs.db"));
  CHECK_STATUS(wattlab_meter_open(o, &m), WATTLAB_ERR_STORE);
  CHECK(m == NULL);
  REQUIRE_OK(wattlab_options_set_db(o, NULL));
  REQUIRE_OK(wattlab_meter_open(o, &m));
  wattlab_options_free(o);

  CHECK_STATUS(wattlab_window_open(NULL, "w", &id), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_open(m, NULL, &id), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_open(m, "", &id), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_open(m, "w", NULL), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_close(m, 12345), WATTLAB_ERR_UNKNOWN_WINDOW);
  CHECK(strstr(wattlab_last_error(), "12345") != NULL);
  CHECK_STATUS(wattlab_window_close(m, 0), WATTLAB_ERR_UNKNOWN_WINDOW);
  CHECK_STATUS(wattlab_window_count(m, 777, "tokens", 1), WATTLAB_ERR_UNKNOWN_WINDOW);
  CHECK_STATUS(wattlab_window_result(m, 777, &r), WATTLAB_ERR_UNKNOWN_WINDOW);
  CHECK(r == NULL);
  CHECK_STATUS(wattlab_window_wait(m, 1, 10, NULL), WATTLAB_ERR_INVALID_ARGUMENT);
  REQUIRE_OK(wattlab_window_open(m, "w", &id));
  CHECK_STATUS(wattlab_window_count(m, id, "tokens", -1), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_count(m, id, NULL, 1), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_window_wait(m, id, -5, &r), WATTLAB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(wattlab_meter_advance(m, -1), WATTLAB_ERR_INVALID_ARGUMENT);
  /* Accessors of a NULL result say so and return NaN / NULL / 0. */
  CHECK(isnan(wattlab_result_energy_j(NULL, 0)));
  CHECK(strstr(wattlab_last_error(), "result is NULL") != NULL);
  CHECK(wattlab_result_name(NULL) == NULL);
  CHECK(wattlab_result_domain_count(NULL) == 0);
  CHECK(wattlab_meter_domain_id(m, 99) == NULL);
  CHECK(wattlab_status_name(WATTLAB_ERR_FORKED) != NULL && strcmp(wattlab_status_name(WATTLAB_ERR_FORKED), "WATTLAB_ERR_FORKED") == 0);
  CHECK(strcmp(wattlab_issue_code_name(WATTLAB_ISSUE_SHORTER_THAN_UPDATE), "shorter_than_update") == 0);
  CHECK(wattlab_telemetry_count() == 15);
  CHECK(strcmp(wattlab_telemetry_name(WATTLAB_TELEMETRY_POWER_LIMIT_W), "power_limit_w") == 0);
  REQUIRE_OK(wattlab_meter_close(m, 0));
  CHECK_STATUS(wattlab_meter_close(NULL, 0), WATTLAB_OK);
}

/* ---- two threads on the virtual clock ---- */
struct worker {
  wattlab_meter* meter;
  pthread_barrier_t* barrier;
  const char* name;
  double tokens;
  wattlab_window_id id;
  wattlab_status open_status, close_status, count_status;
};

/* Opens its window, lets the main thread move time 2 s, closes it with a count. */
static void* worker_main(void* arg) {
  struct worker* w = (struct worker*)arg;
  w->open_status = wattlab_window_open(w->meter, w->name, &w->id);
  pthread_barrier_wait(w->barrier); /* opened */
  pthread_barrier_wait(w->barrier); /* time moved */
  w->count_status = wattlab_window_count(w->meter, w->id, "tokens", w->tokens);
  if (w->count_status == WATTLAB_OK) w->count_status = wattlab_window_count(w->meter, w->id, "tokens", w->tokens);
  w->close_status = wattlab_window_close(w->meter, w->id);
  pthread_barrier_wait(w->barrier); /* closed */
  return NULL;
}

static int query_int(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = NULL;
  int v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite: %s: %s\n", sql, sqlite3_errmsg(db));
    ++g_failures;
    return -1;
  }
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void test_two_threads_stored(const char* db_path) {
  wattlab_options* o = NULL;
  wattlab_meter* m = NULL;
  struct worker w[2];
  pthread_t th[2];
  pthread_barrier_t barrier;
  int64_t run_id = 0, t0 = 0, t1 = 0;
  int i;

  REQUIRE_OK(wattlab_options_new(&o));
  REQUIRE_OK(wattlab_options_set_devices(o, "sim"));
  REQUIRE_OK(wattlab_options_set_sim_seed(o, 7));
  REQUIRE_OK(wattlab_options_set_sim_workload(o, "step 400W 600s"));
  REQUIRE_OK(wattlab_options_set_sim_gain_error(o, 0.0));
  REQUIRE_OK(wattlab_options_set_virtual_clock(o, 1000 * kS));
  REQUIRE_OK(wattlab_options_set_db(o, db_path));
  REQUIRE_OK(wattlab_options_add_command_arg(o, "capi_test"));
  REQUIRE_OK(wattlab_options_set_tag(o, "model", "c-test"));
  REQUIRE_OK(wattlab_meter_open(o, &m));
  wattlab_options_free(o);
  CHECK(wattlab_meter_simulated(m) == 1);
  CHECK(wattlab_meter_domain_count(m) == 1);
  CHECK(strcmp(wattlab_meter_domain_id(m, 0), "gpu:0") == 0);
  REQUIRE_OK(wattlab_meter_run_id(m, &run_id));
  CHECK(run_id > 0);
  REQUIRE_OK(wattlab_meter_advance(m, 3 * kS)); /* readings before the windows open */

  pthread_barrier_init(&barrier, NULL, 3);
  for (i = 0; i < 2; ++i) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].meter = m;
    w[i].barrier = &barrier;
    w[i].name = i == 0 ? "thread-a" : "thread-b";
    w[i].tokens = 100.0 * (i + 1);
    pthread_create(&th[i], NULL, worker_main, &w[i]);
  }
  pthread_barrier_wait(&barrier);
  REQUIRE_OK(wattlab_meter_now_ns(m, &t0));
  REQUIRE_OK(wattlab_meter_advance(m, 2 * kS));
  REQUIRE_OK(wattlab_meter_now_ns(m, &t1));
  CHECK(t1 - t0 == 2 * kS);
  pthread_barrier_wait(&barrier);
  pthread_barrier_wait(&barrier);
  for (i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  REQUIRE_OK(wattlab_meter_advance(m, 3 * kS)); /* the counter publishes past the windows' ends */

  CHECK(w[0].id != w[1].id);
  for (i = 0; i < 2; ++i) {
    wattlab_result* r = NULL;
    double e, u;
    CHECK_STATUS(w[i].open_status, WATTLAB_OK);
    CHECK_STATUS(w[i].count_status, WATTLAB_OK);
    CHECK_STATUS(w[i].close_status, WATTLAB_OK);
    REQUIRE_OK(wattlab_window_wait(m, w[i].id, 1000, &r));
    CHECK(wattlab_result_id(r) == w[i].id);
    CHECK(strcmp(wattlab_result_name(r), w[i].name) == 0);
    CHECK(wattlab_result_final(r) == 1);
    CHECK(wattlab_result_simulated(r) == 1);
    CHECK(fabs(wattlab_result_dur_s(r) - 2.0) < 1e-9);
    CHECK(wattlab_result_domain_count(r) == 1);
    CHECK(wattlab_result_domain_simulated(r, 0) == 1);
    CHECK(wattlab_result_available(r, 0) == 1);
    e = wattlab_result_energy_j(r, 0);
    u = wattlab_result_uncertainty_j(r, 0);
    CHECK(e > 0);
    CHECK(u > 0);
    CHECK(fabs(e - 800.0) < 40.0); /* 400 W for 2 s, exact gain */
    CHECK(fabs(e - 800.0) <= u + 1.0);
    CHECK(wattlab_result_systematic_j(r, 0) >= 0);
    CHECK(fabs(wattlab_result_mean_power_w(r, 0) - 400.0) < 20.0);
    CHECK(wattlab_result_peak_power_w(r, 0) >= wattlab_result_mean_power_w(r, 0) * 0.9);
    CHECK(strlen(wattlab_result_estimator(r, 0)) > 0);
    CHECK(wattlab_result_count_count(r) == 1);
    CHECK(strcmp(wattlab_result_count_key(r, 0), "tokens") == 0);
    CHECK(wattlab_result_count_value(r, 0) == 2 * w[i].tokens);
    CHECK(isnan(wattlab_result_count_value(r, 5)));
    CHECK(isnan(wattlab_result_energy_j(r, 1)));
    CHECK(strstr(wattlab_last_error(), "no domain 1") != NULL);
    wattlab_result_free(r);
  }
  REQUIRE_OK(wattlab_meter_close(m, 0));

  {
    sqlite3* db = NULL;
    char sql[256];
    CHECK(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    snprintf(sql, sizeof sql, "SELECT exit_status FROM runs WHERE run_id = %lld AND end_t_ns IS NOT NULL", (long long)run_id);
    CHECK(query_int(db, sql) == 0);
    snprintf(sql, sizeof sql, "SELECT simulated FROM runs WHERE run_id = %lld", (long long)run_id);
    CHECK(query_int(db, sql) == 1);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM windows WHERE run_id = %lld AND final = 1", (long long)run_id);
    CHECK(query_int(db, sql) == 2);
    snprintf(sql, sizeof sql,
             "SELECT CAST(c.value AS INTEGER) FROM window_counts c JOIN windows w ON w.window_row = c.window_row "
             "WHERE w.run_id = %lld AND w.name = 'thread-b' AND c.key = 'tokens'",
             (long long)run_id);
    CHECK(query_int(db, sql) == 400);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM run_tags WHERE run_id = %lld AND key = 'model' AND value = 'c-test'",
             (long long)run_id);
    CHECK(query_int(db, sql) == 1);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM readings WHERE run_id = %lld", (long long)run_id);
    CHECK(query_int(db, sql) > 0);
    sqlite3_close(db);
  }
}

/* ---- fork: the child's copy of the meter is inert ---- */
static void test_fork(void) {
  wattlab_options* o = NULL;
  wattlab_meter* m = NULL;
  wattlab_window_id id = 0;
  pid_t pid;
  int status = 0;

  REQUIRE_OK(wattlab_options_new(&o));
  REQUIRE_OK(wattlab_options_set_devices(o, "sim"));
  REQUIRE_OK(wattlab_options_set_virtual_clock(o, 1000 * kS));
  REQUIRE_OK(wattlab_meter_open(o, &m));
  wattlab_options_free(o);
  REQUIRE_OK(wattlab_window_open(m, "parent", &id));
  pid = fork();
  if (pid == 0) {
    wattlab_window_id child_id = 0;
    int bad = 0;
    bad += wattlab_window_open(m, "child", &child_id) != WATTLAB_ERR_FORKED;
    bad += strstr(wattlab_last_error(), "parent process") == NULL;
    bad += wattlab_window_close(m, id) != WATTLAB_ERR_FORKED;
    bad += wattlab_meter_close(m, 0) != WATTLAB_ERR_FORKED;
    _exit(bad);
  }
  CHECK(pid > 0);
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* The parent's meter goes on. */
  CHECK_STATUS(wattlab_meter_advance(m, kS), WATTLAB_OK);
  CHECK_STATUS(wattlab_window_close(m, id), WATTLAB_OK);
  REQUIRE_OK(wattlab_meter_close(m, 0));
}

/* ---- real time: the sampler thread makes a window's result final ---- */
static void test_real_time(void) {
  wattlab_options* o = NULL;
  wattlab_meter* m = NULL;
  wattlab_window_id id = 0;
  wattlab_result* r = NULL;

  REQUIRE_OK(wattlab_options_new(&o));
  REQUIRE_OK(wattlab_options_set_devices(o, "sim"));
  REQUIRE_OK(wattlab_meter_open(o, &m));
  wattlab_options_free(o);
  CHECK_STATUS(wattlab_meter_advance(m, kS), WATTLAB_ERR_NOT_VIRTUAL);
  REQUIRE_OK(wattlab_window_open(m, "real", &id));
  REQUIRE_OK(wattlab_window_close(m, id));
  REQUIRE_OK(wattlab_window_wait(m, id, 30000, &r));
  CHECK(wattlab_result_final(r) == 1);
  CHECK(wattlab_result_simulated(r) == 1);
  wattlab_result_free(r);
  REQUIRE_OK(wattlab_meter_close(m, 0));
}

int main(void) {
  char dir[] = "/tmp/wattlab-capi-XXXXXX";
  char db_path[256];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(db_path, sizeof db_path, "%s/runs.db", dir);
  test_errors();
  test_two_threads_stored(db_path);
  test_fork();
  test_real_time();
  remove(db_path);
  {
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", db_path);
    remove(wal);
    snprintf(wal, sizeof wal, "%s-shm", db_path);
    remove(wal);
  }
  rmdir(dir);
  if (g_failures) {
    fprintf(stderr, "%d checks failed\n", g_failures);
    return 1;
  }
  printf("capi_test: all checks passed\n");
  return 0;
}
