// libFuzzer's entry point for programs with a `main` of their own: SwiftPM links each
// executable with `main` set to `<Target>_main`, so the fuzz targets define that and hand over
// to libFuzzer here (it comes with -sanitize=fuzzer).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
