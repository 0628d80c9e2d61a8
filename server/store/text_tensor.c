/*
 * text_tensor.c - string tensors as a text's Markdown (see text_tensor.h).
 */
#include "store/text_tensor.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "collector/event_decode.h"
#include "collector/pb.h"

/* One cell: '|' escaped, line breaks as spaces, empty as a space. */
static void cell(tfb_buf *b, const uint8_t *s, size_t n)
{
    tfb_buf_put(b, "| ", 2);
    for (size_t i = 0; i < n; i++) {
        char c = (char)s[i];
        if (c == '|')
            tfb_buf_put(b, "\\|", 2);
        else if (c == '\n' || c == '\r')
            tfb_buf_put(b, " ", 1);
        else
            tfb_buf_put(b, &c, 1);
    }
    tfb_buf_put(b, " ", 1);
}

int tfb_text_tensor(const tfb_value *v, tfb_strview *out, char **owned)
{
    *owned = NULL;
    out->ptr = "";
    out->len = 0;
    if (tfb_value_string(v, 0, out) != 1) {
        out->ptr = "";
        out->len = 0;
    }
    if (!v->tensor)
        return 0;
    /* The shape, and how many strings there are. */
    tfb_tensor_shape sh;
    (void)tfb_tensor_shape_parse(v->tensor, v->tensor_len, &sh);
    const int64_t *dims = sh.dims;
    int rank = sh.rank;
    const uint8_t *p = v->tensor, *end = p + v->tensor_len;
    pb_field f;
    size_t n = 0;
    while (pb_next(&p, end, &f) > 0)
        n += f.num == 8 && f.wt == PB_LEN;
    if (n < 2 || rank < 1 || rank > TFB_TENSOR_MAX_DIMS)
        return 0; /* a scalar or one element: its Markdown as it is */
    /* Strings per row (the last dimension), of which 64 are shown
     * (markdown.c's widest table). */
    size_t per_row = rank == 1 ? 1
                               : (size_t)(dims[rank - 1] > 0 ? dims[rank - 1]
                                                             : 1);
    size_t cols = per_row < 64 ? per_row : 64;
    tfb_buf b = {0};
    /* GFM needs a header row: TensorBoard's tables have none, so the
     * header is empty cells. */
    for (size_t c = 0; c < cols; c++)
        cell(&b, (const uint8_t *)"", 0);
    tfb_buf_put(&b, "|\n", 2);
    for (size_t c = 0; c < cols; c++)
        tfb_buf_put(&b, "| --- ", 6);
    tfb_buf_put(&b, "|\n", 2);
    p = v->tensor;
    size_t k = 0;
    while (pb_next(&p, end, &f) > 0) {
        if (f.num != 8 || f.wt != PB_LEN)
            continue;
        if (k % per_row < cols)
            cell(&b, f.p, f.len);
        k++;
        if (k % per_row == 0)
            tfb_buf_put(&b, "|\n", 2);
    }
    if (k % per_row) { /* a short last row */
        for (size_t c = k % per_row; c < cols; c++)
            cell(&b, (const uint8_t *)"", 0);
        tfb_buf_put(&b, "|\n", 2);
    }
    size_t len = b.n;
    char *text = tfb_buf_take(&b);
    if (!text)
        return TFB_ENOMEM;
    *owned = text;
    out->ptr = text;
    out->len = len;
    return 0;
}
