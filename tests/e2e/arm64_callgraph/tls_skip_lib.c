/* tls_lib.c for tls_skip.c. */
#include "tls_lib.c"
