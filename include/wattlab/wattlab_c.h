/* wattlab's stable C API (docs/c-api.md): measure the energy of code regions from inside a
 * program, over libwattlab.so. Pure C99; every binding (the Python package included) uses it.
 *
 *   wattlab_options* o = NULL;
 *   wattlab_options_new(&o);
 *   wattlab_options_set_devices(o, "auto");          // auto | sim | nvml | rapl
 *   wattlab_options_set_db(o, "runs.db");             // optional: store the run
 *   wattlab_meter* m = NULL;
 *   if (wattlab_meter_open(o, &m) != WATTLAB_OK) fprintf(stderr, "%s\n", wattlab_last_error());
 *   wattlab_options_free(o);
 *   wattlab_window_id w;
 *   wattlab_window_open(m, "step", &w);
 *   ... work ...
 *   wattlab_window_close(m, w);
 *   wattlab_result* r = NULL;
 *   wattlab_window_wait(m, w, 5000, &r);              // the final result, or a provisional one
 *   printf("%s: %.1f J\n", wattlab_result_domain_id(r, 0), wattlab_result_energy_j(r, 0));
 *   wattlab_result_free(r);
 *   wattlab_meter_close(m, 0);                         // ends the stored run with status 0
 *
 * Rules of the interface:
 * - Handles are opaque; everything is read through functions, so the ABI stays put as the
 *   library grows. WATTLAB_C_API_VERSION rises when functions are added (never removed or
 *   changed); wattlab_api_version() is the version of the library actually loaded.
 * - Functions that can fail return a wattlab_status; on failure wattlab_last_error() holds the
 *   message (per thread, valid until this thread's next failing call). No call aborts: C++
 *   exceptions never cross this interface.
 * - Accessors of a result return a plain value; out of range or NULL they return NaN, 0 or NULL
 *   and set the last error. Strings they return live as long as the result.
 * - Windows open and close from any thread. A meter opened before fork() is inert in the child:
 *   its calls fail with WATTLAB_ERR_FORKED and measure nothing (the parent measures).
 */
#ifndef WATTLAB_WATTLAB_C_H
#define WATTLAB_WATTLAB_C_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define WATTLAB_API
#elif defined(WATTLAB_C_BUILDING)
#define WATTLAB_API __attribute__((visibility("default")))
#else
#define WATTLAB_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's interface. */
#define WATTLAB_C_API_VERSION 1

typedef enum wattlab_status {
  WATTLAB_OK = 0,
  WATTLAB_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, an empty name, a value out of range */
  WATTLAB_ERR_UNKNOWN_DEVICE = 2,   /* a device selection that names no backend */
  WATTLAB_ERR_NO_DEVICE = 3,        /* nothing to measure: no backend loaded (the message says why) */
  WATTLAB_ERR_UNKNOWN_WINDOW = 4,   /* a window id this meter never handed out, or whose result is gone */
  WATTLAB_ERR_STORE = 5,            /* the SQLite store failed */
  WATTLAB_ERR_FORKED = 6,           /* the meter belongs to the parent process */
  WATTLAB_ERR_NOT_VIRTUAL = 7,      /* wattlab_meter_advance on a meter on real time */
  WATTLAB_ERR_ENDED = 8,            /* the run has ended */
  WATTLAB_ERR_INTERNAL = 99         /* anything else; the message says what */
} wattlab_status;

/* What an issue on a domain's energy is about. Values are stable; new ones may be added. */
typedef enum wattlab_issue_code {
  WATTLAB_ISSUE_OTHER = 0,
  WATTLAB_ISSUE_DEVICE_LOST = 1,
  WATTLAB_ISSUE_SOURCES_DISAGREE = 2,
  WATTLAB_ISSUE_COUNTER_NOT_PUBLISHED = 3,
  WATTLAB_ISSUE_COUNTER_NOT_HELD = 4,
  WATTLAB_ISSUE_NO_ESTIMATE = 5,
  WATTLAB_ISSUE_SHORTER_THAN_UPDATE = 6,
  WATTLAB_ISSUE_READING_FAILED = 7,
  WATTLAB_ISSUE_COUNTER_RESET = 8,
  WATTLAB_ISSUE_CAPPED_SHARE_FROM_REASONS = 9,
  WATTLAB_ISSUE_PROVISIONAL = 10,
  WATTLAB_ISSUE_SHORTER_THAN_AVERAGE = 11,
  WATTLAB_ISSUE_AVERAGE_GAP = 12
} wattlab_issue_code;

/* Telemetry summarized over a window (wattlab_result_telemetry). Values are stable. */
typedef enum wattlab_telemetry {
  WATTLAB_TELEMETRY_MEAN_SM_CLOCK_MHZ = 0,
  WATTLAB_TELEMETRY_MEAN_MEM_CLOCK_MHZ = 1,
  WATTLAB_TELEMETRY_MEAN_TEMPERATURE_C = 2,
  WATTLAB_TELEMETRY_TEMPERATURE_BEGIN_C = 3,
  WATTLAB_TELEMETRY_TEMPERATURE_END_C = 4,
  WATTLAB_TELEMETRY_MEAN_UTILIZATION_GPU_PCT = 5,
  WATTLAB_TELEMETRY_POWER_CAPPED_FRACTION = 6,
  WATTLAB_TELEMETRY_THERMAL_CAPPED_FRACTION = 7,
  WATTLAB_TELEMETRY_MEAN_SM_ACTIVITY_PCT = 8,
  WATTLAB_TELEMETRY_MEAN_SM_OCCUPANCY_PCT = 9,
  WATTLAB_TELEMETRY_MEAN_TENSOR_ACTIVITY_PCT = 10,
  WATTLAB_TELEMETRY_MEAN_DRAM_BW_PCT = 11,
  WATTLAB_TELEMETRY_POWER_LIMIT_W = 12,
  WATTLAB_TELEMETRY_MAX_MEMORY_USED_BYTES = 13,
  WATTLAB_TELEMETRY_CLOCK_EVENT_REASONS_SEEN = 14 /* a bit mask, as a double (exact below 2^53) */
} wattlab_telemetry;

typedef struct wattlab_options wattlab_options;
typedef struct wattlab_meter wattlab_meter;
typedef struct wattlab_result wattlab_result;
typedef uint64_t wattlab_window_id;

/* ---- versions and errors ---- */
WATTLAB_API int wattlab_api_version(void);      /* WATTLAB_C_API_VERSION of the loaded library */
WATTLAB_API const char* wattlab_version(void);  /* wattlab's version, "0.1.0" */
/* The message of this thread's last failed call ("" before any). */
WATTLAB_API const char* wattlab_last_error(void);
WATTLAB_API const char* wattlab_status_name(int status);          /* "WATTLAB_ERR_FORKED", ... */
WATTLAB_API const char* wattlab_issue_code_name(int code);        /* "shorter_than_update", ... */
WATTLAB_API const char* wattlab_telemetry_name(int field);        /* "mean_sm_clock_mhz", ... */
WATTLAB_API int wattlab_telemetry_count(void);                    /* fields this library knows */

/* ---- options: what to measure and where to store it ---- */
WATTLAB_API wattlab_status wattlab_options_new(wattlab_options** out);
WATTLAB_API void wattlab_options_free(wattlab_options* options);
/* "auto" (every real backend that loads: NVIDIA GPUs, CPU packages; never the simulator), "sim"
 * (the simulated GPU, results labelled SIMULATED), "nvml" or "rapl". Default "auto". */
WATTLAB_API wattlab_status wattlab_options_set_devices(wattlab_options* options, const char* device);
/* GPUs to measure, comma-separated indices or UUIDs ("0,2"); NULL or "": CUDA_VISIBLE_DEVICES, else all. */
WATTLAB_API wattlab_status wattlab_options_set_gpus(wattlab_options* options, const char* gpus);
/* Whether "auto" also measures the CPU packages (RAPL). Default 1. */
WATTLAB_API wattlab_status wattlab_options_set_cpu(wattlab_options* options, int include_cpu);
/* The simulated GPU: its seed, how many GPUs, its workload script (docs/sim.md; NULL: the demo
 * workload) and gain error (NaN: drawn from the seed). */
WATTLAB_API wattlab_status wattlab_options_set_sim_seed(wattlab_options* options, uint64_t seed);
WATTLAB_API wattlab_status wattlab_options_set_sim_gpus(wattlab_options* options, int count);
WATTLAB_API wattlab_status wattlab_options_set_sim_workload(wattlab_options* options, const char* script);
WATTLAB_API wattlab_status wattlab_options_set_sim_gain_error(wattlab_options* options, double gain_error);
/* Store the run in this SQLite file (created if missing). NULL or "": store nothing. */
WATTLAB_API wattlab_status wattlab_options_set_db(wattlab_options* options, const char* path);
/* The command recorded with the run (one argv entry per call) and run tags. */
WATTLAB_API wattlab_status wattlab_options_add_command_arg(wattlab_options* options, const char* arg);
WATTLAB_API wattlab_status wattlab_options_set_tag(wattlab_options* options, const char* key, const char* value);
/* Tests: run the meter on a virtual clock starting at start_ns; time moves only with
 * wattlab_meter_advance(). Only the simulated device is meaningful on it. */
WATTLAB_API wattlab_status wattlab_options_set_virtual_clock(wattlab_options* options, int64_t start_ns);

/* ---- the meter ---- */
/* Opens the sensors, begins the run in the store (when one is set) and starts the sampler thread.
 * options NULL: "auto", nothing stored. */
WATTLAB_API wattlab_status wattlab_meter_open(const wattlab_options* options, wattlab_meter** out);
/* Ends the run with exit_status (windows still open are closed there, each final result stored),
 * stops the sampler and frees the meter, also when it fails (the status says why). In a forked
 * child it frees nothing and returns WATTLAB_ERR_FORKED. NULL: WATTLAB_OK. */
WATTLAB_API wattlab_status wattlab_meter_close(wattlab_meter* meter, int exit_status);
/* 1 when the meter measures the simulated device (every number it gives is SIMULATED). */
WATTLAB_API int wattlab_meter_simulated(const wattlab_meter* meter);
/* The stored run's id (0 when nothing is stored). */
WATTLAB_API wattlab_status wattlab_meter_run_id(const wattlab_meter* meter, int64_t* out);
/* Domains measured, in result order: "gpu:0", "gpu:0/memory", "cpu:0/package", ... */
WATTLAB_API size_t wattlab_meter_domain_count(const wattlab_meter* meter);
WATTLAB_API const char* wattlab_meter_domain_id(const wattlab_meter* meter, size_t index);
/* The id of the domain that contains domain `index` ("gpu:0" for "gpu:0/memory"), "" for none:
 * a domain and its parent are never added up. */
WATTLAB_API const char* wattlab_meter_domain_parent(const wattlab_meter* meter, size_t index);
/* Notes the meter made (a backend that did not load, a sensor slow to answer, a store error). */
WATTLAB_API size_t wattlab_meter_note_count(const wattlab_meter* meter);
/* A copy of note `index` into buf (NUL-terminated, truncated to size); returns the note's length. */
WATTLAB_API size_t wattlab_meter_note(const wattlab_meter* meter, size_t index, char* buf, size_t size);
/* The meter's clock now (CLOCK_MONOTONIC ns on real time). */
WATTLAB_API wattlab_status wattlab_meter_now_ns(const wattlab_meter* meter, int64_t* out);
/* Virtual clock only: move time forward by dur_ns, running the sampler's schedule up to it, and
 * store what became final. */
WATTLAB_API wattlab_status wattlab_meter_advance(wattlab_meter* meter, int64_t dur_ns);

/* ---- windows ---- */
/* Records a timestamp and returns; no sensor is read on the caller's thread. Any thread. */
WATTLAB_API wattlab_status wattlab_window_open(wattlab_meter* meter, const char* name, wattlab_window_id* out);
WATTLAB_API wattlab_status wattlab_window_close(wattlab_meter* meter, wattlab_window_id id);
/* Adds n to the window's count `key` ("tokens", "requests"); the counts are kept with its result. */
WATTLAB_API wattlab_status wattlab_window_count(wattlab_meter* meter, wattlab_window_id id, const char* key, double n);
/* Sets the window's label `key` ("phase" = "decode"). */
WATTLAB_API wattlab_status wattlab_window_label(wattlab_meter* meter, wattlab_window_id id, const char* key,
                                                const char* value);
/* The window's result now: final once the timeline covers its end, else provisional. */
WATTLAB_API wattlab_status wattlab_window_result(wattlab_meter* meter, wattlab_window_id id, wattlab_result** out);
/* Waits up to timeout_ms for the final result; on timeout *out is the provisional one
 * (wattlab_result_final says which). Returns WATTLAB_OK in both cases. */
WATTLAB_API wattlab_status wattlab_window_wait(wattlab_meter* meter, wattlab_window_id id, int64_t timeout_ms,
                                               wattlab_result** out);

/* ---- results ---- */
WATTLAB_API void wattlab_result_free(wattlab_result* result);
WATTLAB_API wattlab_window_id wattlab_result_id(const wattlab_result* result);
WATTLAB_API const char* wattlab_result_name(const wattlab_result* result);
WATTLAB_API int64_t wattlab_result_t_begin_ns(const wattlab_result* result);
WATTLAB_API int64_t wattlab_result_t_end_ns(const wattlab_result* result);
WATTLAB_API double wattlab_result_dur_s(const wattlab_result* result);
WATTLAB_API int wattlab_result_final(const wattlab_result* result);      /* 0: provisional */
WATTLAB_API int wattlab_result_simulated(const wattlab_result* result);  /* 1: some domain is SIMULATED */
WATTLAB_API size_t wattlab_result_count_count(const wattlab_result* result);
WATTLAB_API const char* wattlab_result_count_key(const wattlab_result* result, size_t index);
WATTLAB_API double wattlab_result_count_value(const wattlab_result* result, size_t index);
WATTLAB_API size_t wattlab_result_label_count(const wattlab_result* result);
WATTLAB_API const char* wattlab_result_label_key(const wattlab_result* result, size_t index);
WATTLAB_API const char* wattlab_result_label_value(const wattlab_result* result, size_t index);
/* Per domain, d < wattlab_result_domain_count(). */
WATTLAB_API size_t wattlab_result_domain_count(const wattlab_result* result);
WATTLAB_API const char* wattlab_result_domain_id(const wattlab_result* result, size_t d);
WATTLAB_API int wattlab_result_domain_simulated(const wattlab_result* result, size_t d);
/* 0: no estimate (the issues say why; energy_j is then NaN, never a silent 0 J). */
WATTLAB_API int wattlab_result_available(const wattlab_result* result, size_t d);
WATTLAB_API double wattlab_result_energy_j(const wattlab_result* result, size_t d);
WATTLAB_API double wattlab_result_uncertainty_j(const wattlab_result* result, size_t d); /* expanded, ~95 % */
WATTLAB_API double wattlab_result_systematic_j(const wattlab_result* result, size_t d);  /* gain tolerance */
WATTLAB_API double wattlab_result_mean_power_w(const wattlab_result* result, size_t d);
WATTLAB_API double wattlab_result_peak_power_w(const wattlab_result* result, size_t d);
WATTLAB_API const char* wattlab_result_estimator(const wattlab_result* result, size_t d); /* "counter+samples", ... */
/* A second estimator's answer where one exists: NaN when none. */
WATTLAB_API double wattlab_result_cross_check_j(const wattlab_result* result, size_t d);
WATTLAB_API size_t wattlab_result_readings_used(const wattlab_result* result, size_t d);
WATTLAB_API size_t wattlab_result_issue_count(const wattlab_result* result, size_t d);
WATTLAB_API int wattlab_result_issue_code(const wattlab_result* result, size_t d, size_t i); /* wattlab_issue_code */
WATTLAB_API const char* wattlab_result_issue_text(const wattlab_result* result, size_t d, size_t i);
/* A telemetry summary of domain d: 1 and *out set when the domain has it, 0 when not. */
WATTLAB_API int wattlab_result_telemetry(const wattlab_result* result, size_t d, int field, double* out);

#ifdef __cplusplus
}
#endif

#endif /* WATTLAB_WATTLAB_C_H */
