/* tls.c with the library function skipped (tls_skip.options: --fn-skip=tls_bump). */
#include "tls.c"
