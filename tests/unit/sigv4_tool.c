/* sigv4_tool.c - signs one request given on the command line with
 * objstore's signer and prints the canonical request, the string to sign
 * and the Authorization value, for test_sigv4_botocore.py to compare with
 * botocore's.
 *
 * usage: sigv4_tool METHOD RAW_PATH AMZ_DATE REGION SERVICE AKID SECRET
 *                   PAYLOAD_HASH [q NAME VALUE]... [h NAME VALUE]...
 * RAW_PATH is encoded here as objstore encodes keys ('/' kept). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objstore/sigv4.h"

int main(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: see the source\n");
        return 2;
    }
    tfb_sigv4_kv q[64], h[64];
    size_t nq = 0, nh = 0;
    for (int i = 9; i + 2 < argc + 0 && nq < 64 && nh < 64; i += 3) {
        if (strcmp(argv[i], "q") == 0)
            q[nq++] = (tfb_sigv4_kv){argv[i + 1], argv[i + 2]};
        else
            h[nh++] = (tfb_sigv4_kv){argv[i + 1], argv[i + 2]};
    }
    char *path = tfb_sigv4_encode(argv[2], strlen(argv[2]), 1);
    tfb_sigv4_req r = {argv[1], path, q, nq, h, nh, argv[8], argv[3],
                       argv[4], argv[5], argv[6], argv[7]};
    tfb_sigv4_out o;
    if (!path || tfb_sigv4_sign(&r, &o) < 0)
        return 1;
    printf("%s\n----\n%s\n----\n%s\n", o.canonical_request,
           o.string_to_sign, o.authorization);
    tfb_sigv4_out_free(&o);
    free(path);
    return 0;
}
