/* The C API of an installed wattlab: wattlab::shared (libwattlab.so) and <wattlab/wattlab_c.h>.
 * Exit 0 when the loaded library serves the header's interface version. */
#include <stdio.h>
#include <string.h>

#include <wattlab/wattlab_c.h>

int main(void) {
  const char* version = wattlab_version();
  if (wattlab_api_version() != WATTLAB_C_API_VERSION || version == NULL || strlen(version) == 0) {
    fprintf(stderr, "c_consumer: libwattlab serves C API %d, the header is %d\n", wattlab_api_version(),
            WATTLAB_C_API_VERSION);
    return 1;
  }
  printf("c_consumer: libwattlab %s, C API %d\n", version, wattlab_api_version());
  return 0;
}
