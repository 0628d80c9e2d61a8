/*
 * keras_graph.h - a Keras model's config (the JSON of a graph_keras_model
 * summary, what the Keras TensorBoard callback writes) as the conceptual
 * graph TensorBoard draws for it: the GraphDef of TensorBoard's
 * keras_util.keras_model_to_graph_def, one node per layer named by its
 * model scopes (functional_1/dense), attributes keras_class (the layer's
 * class_name) and dtype (its dtype as a DataType), inputs from the
 * layer's inbound_nodes (functional models, Keras 2's and 3's formats)
 * or the previous layer (Sequential), nested models wired through their
 * input and output layers.
 *
 * Pure function over the bytes given; thread-safe.
 */
#ifndef TFB_GRAPHS_KERAS_GRAPH_H
#define TFB_GRAPHS_KERAS_GRAPH_H

#include <stddef.h>

#include "base/buf.h"

/* JSON nesting past this is refused (TFB_ECORRUPT): the parser and the
 * walk over nested models recurse, and a hostile config could nest
 * without end; a real config nests about 10 deep per model level. */
#define TFB_KERAS_MAX_DEPTH 128

/* Appends to out the serialized GraphDef of the Keras model config
 * json[0..len). 0; TFB_ECORRUPT for text that is no JSON object of a
 * Keras model (*why, when not NULL, says what in a static string);
 * TFB_ETOOBIG past TFB_GRAPH_MAX_NODES layers; TFB_ENOMEM. */
int tfb_keras_graph_def(tfb_buf *out, const char *json, size_t len,
                        const char **why);

#endif
