/*
 * text_tensor.h - a text summary's string tensor as the text the store
 * keeps. TensorBoard's text plugin shows a scalar (or one-element) string
 * tensor as its Markdown, and a vector or matrix of strings as a table of
 * cells; the store keeps one text per point, so a vector or matrix is kept
 * as the GFM pipe table that renders to that table (markdown.h renders
 * pipe tables, each cell's inline Markdown): a vector is one column, a
 * matrix one row per row; a cell's '|' is escaped and its line breaks
 * become spaces (a cell is one line of a pipe table). Higher ranks are
 * flattened to matrices of their last dimension, as TensorBoard does.
 *
 * Pure; thread-safe.
 */
#ifndef TFB_TEXT_TENSOR_H
#define TFB_TEXT_TENSOR_H

#include <stddef.h>

#include "tfboard.h"

/* The text of v (a TFB_VALUE_TEXT value): string 0 as it is for a scalar
 * or a one-element tensor (*out points into v, *owned NULL); else a pipe
 * table in a malloc'd buffer (*out == *owned; free it). Returns 0 or
 * TFB_ENOMEM (then *out is string 0). */
int tfb_text_tensor(const tfb_value *v, tfb_strview *out, char **owned);

#endif
