#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
