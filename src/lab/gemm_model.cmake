# The GEMM model (src/lab/gemm_model.h): Eigen for the fit, and the committed model
# file built into the library, so that `wattlab gemm predict` finds it after `cmake --install` too.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
target_sources(wattlab_lab PRIVATE gemm_features.cpp gemm_model_fit.cpp gemm_model_predict.cpp gemm_model_io.cpp
  ${CMAKE_CURRENT_BINARY_DIR}/generated/gemm_model_embedded.cpp)
target_link_libraries(wattlab_lab PRIVATE Eigen3::Eigen)
set(WATTLAB_GEMM_MODEL ${PROJECT_SOURCE_DIR}/data/gemm-model/h200-v1.json CACHE FILEPATH
  "The GEMM model file built into wattlab (gemm predict without --model)")
# The file's bytes as a C array (no string-length limit), regenerated when the file changes.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${WATTLAB_GEMM_MODEL})
file(READ ${WATTLAB_GEMM_MODEL} WATTLAB_GEMM_MODEL_HEX HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," WATTLAB_GEMM_MODEL_BYTES "${WATTLAB_GEMM_MODEL_HEX}")
get_filename_component(WATTLAB_GEMM_MODEL_NAME ${WATTLAB_GEMM_MODEL} NAME_WE)
configure_file(gemm_model_embedded.cpp.in ${CMAKE_CURRENT_BINARY_DIR}/generated/gemm_model_embedded.cpp @ONLY)
