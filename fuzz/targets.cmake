# The fuzz targets, one per parser, and the libraries each harness fuzz/fuzz_<name>.cpp links:
# fuzz/CMakeLists.txt builds them with libFuzzer, tests/fuzz/CMakeLists.txt replays their corpora.
set(WATTLAB_FUZZ_TARGETS recipe marks leaderboard_json leaderboard_csv sse prometheus_scrape sim_workload sim_faults store gemm_model npy)
set(WATTLAB_FUZZ_LIBS_recipe wattlab::lab)
set(WATTLAB_FUZZ_LIBS_marks wattlab::meter)
set(WATTLAB_FUZZ_LIBS_leaderboard_json wattlab::diagnose)
set(WATTLAB_FUZZ_LIBS_leaderboard_csv wattlab::diagnose)
set(WATTLAB_FUZZ_LIBS_sse wattlab::infer)
set(WATTLAB_FUZZ_LIBS_prometheus_scrape wattlab::infer)
set(WATTLAB_FUZZ_LIBS_sim_workload wattlab::sensors)
set(WATTLAB_FUZZ_LIBS_sim_faults wattlab::sensors)
set(WATTLAB_FUZZ_LIBS_store wattlab::store wattlab::diagnose SQLite::SQLite3)
set(WATTLAB_FUZZ_LIBS_gemm_model wattlab::lab)
set(WATTLAB_FUZZ_LIBS_npy wattlab::lab)
# Seed folders besides fuzz/corpus/<target>/, relative to the repository (one line per target,
# read by scripts/fuzz.sh too): the product's own files of that format, not copied into the corpus.
set(WATTLAB_FUZZ_SEEDS_gemm_model data/gemm-model)
