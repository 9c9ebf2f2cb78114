/*
 * libdeflate's whole-buffer compressor and raw-deflate decompressor for
 * common/deflate/raw-deflate.ts and common/deflate/raw-inflate.ts, through Node-API: faster
 * than zlib (about 1.9x deflating at level 1 on HTML and text here), and
 * without state between calls, so an output depends only on its input and
 * level (a reused zlib engine keeps bytes of earlier streams in its window).
 * Optional: built by node-gyp (binding.gyp) at install when libdeflate-dev is
 * there (common/deflate/native/build.mjs); without it sherlock uses node:zlib.
 *
 *   compressor(level)                   an opaque compressor (freed with its handle)
 *   compress(c, format, input, output)  bytes written to output, 0 when it is too small
 *   bound(c, format, length)            output bytes enough for any input of length bytes
 *   adler32(data)                       the Adler-32 of data (RFC 1950 §8.2)
 *   crc32Chunks(data, chunk, state, sums, at)
 *                                       CRC-32s (zlib's) of consecutive chunk-byte pieces of a
 *                                       stream fed in parts: state is [CRC so far, bytes so far]
 *                                       of the piece under way, updated; each finished piece's
 *                                       CRC goes big-endian to sums from at; returns how many
 *   decompressor()                      an opaque raw-deflate decompressor
 *   decompress(d, input, output, used)  libdeflate's result (0 success, 1 bad data,
 *                                       3 output too small); on success used[0] is the
 *                                       input bytes the stream took, used[1] its output bytes
 *
 * format: 0 raw deflate (RFC 1951), 1 zlib (RFC 1950), 2 gzip (RFC 1952).
 */

#include <libdeflate.h>
#include <node_api.h>

#define CHECK(call)                                                              \
  if ((call) != napi_ok) {                                                       \
    napi_throw_error(env, "SHERLOCK_NATIVE", "libdeflate binding: " #call); \
    return NULL;                                                                 \
  }

/* A JavaScript number; NULL (with an exception pending) if it cannot be made. */
static napi_value number(napi_env env, double value) {
  napi_value result;
  CHECK(napi_create_double(env, value, &result));
  return result;
}

static void free_compressor(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  libdeflate_free_compressor(data);
}

static napi_value compressor(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t level;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(napi_get_value_int32(env, argv[0], &level));
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
  if (c == NULL) {
    napi_throw_range_error(env, "SHERLOCK_NATIVE", "libdeflate: no compressor at this level (0-12), or out of memory");
    return NULL;
  }
  napi_value out;
  CHECK(napi_create_external(env, c, free_compressor, NULL, &out));
  return out;
}

/* The bytes of a Uint8Array argument. */
static napi_status bytes(napi_env env, napi_value v, void **data, size_t *length) {
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  napi_status s = napi_get_typedarray_info(env, v, &type, length, data, &buffer, &offset);
  return s == napi_ok && type != napi_uint8_array ? napi_invalid_arg : s;
}

/* The `argc` arguments of compress() or bound() into argv, and the compressor and format they both begin with. */
static napi_status compressor_args(napi_env env, napi_callback_info info, size_t argc, napi_value *argv, void **c, int32_t *format) {
  napi_status s = napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (s == napi_ok) s = napi_get_value_external(env, argv[0], c);
  if (s == napi_ok) s = napi_get_value_int32(env, argv[1], format);
  return s;
}

static napi_value compress(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  void *c, *in, *out;
  int32_t format;
  size_t in_length, out_length, n;
  CHECK(compressor_args(env, info, 4, argv, &c, &format));
  CHECK(bytes(env, argv[2], &in, &in_length));
  CHECK(bytes(env, argv[3], &out, &out_length));
  if (format == 0) n = libdeflate_deflate_compress(c, in, in_length, out, out_length);
  else if (format == 1) n = libdeflate_zlib_compress(c, in, in_length, out, out_length);
  else n = libdeflate_gzip_compress(c, in, in_length, out, out_length);
  return number(env, (double)n);
}

static napi_value bound(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  void *c;
  int32_t format;
  int64_t length;
  size_t n;
  CHECK(compressor_args(env, info, 3, argv, &c, &format));
  CHECK(napi_get_value_int64(env, argv[2], &length));
  if (format == 0) n = libdeflate_deflate_compress_bound(c, (size_t)length);
  else if (format == 1) n = libdeflate_zlib_compress_bound(c, (size_t)length);
  else n = libdeflate_gzip_compress_bound(c, (size_t)length);
  return number(env, (double)n);
}

static napi_value adler32(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data;
  size_t length;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(bytes(env, argv[0], &data, &length));
  napi_value result;
  CHECK(napi_create_uint32(env, libdeflate_adler32(1, data, length), &result));
  return result;
}

static napi_value crc32_chunks(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  unsigned char *data, *sums;
  void *state;
  size_t length, sums_length, state_length, offset;
  int64_t chunk, at;
  napi_typedarray_type type;
  napi_value buffer;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(bytes(env, argv[0], (void **)&data, &length));
  CHECK(napi_get_value_int64(env, argv[1], &chunk));
  CHECK(napi_get_typedarray_info(env, argv[2], &type, &state_length, &state, &buffer, &offset));
  CHECK(bytes(env, argv[3], (void **)&sums, &sums_length));
  CHECK(napi_get_value_int64(env, argv[4], &at));
  if (type != napi_float64_array || state_length < 2 || chunk < 1) {
    napi_throw_type_error(env, "SHERLOCK_NATIVE", "crc32Chunks: a chunk size and a Float64Array of 2 expected");
    return NULL;
  }
  double *s = state;
  uint32_t crc = (uint32_t)s[0];
  size_t partial = (size_t)s[1], done = 0;
  for (size_t pos = 0; pos < length;) {
    size_t n = (size_t)chunk - partial;
    if (n > length - pos) n = length - pos;
    crc = libdeflate_crc32(crc, data + pos, n);
    partial += n;
    pos += n;
    if (partial == (size_t)chunk) {
      size_t to = (size_t)at + 4 * done;
      if (to + 4 > sums_length) {
        napi_throw_range_error(env, "SHERLOCK_NATIVE", "crc32Chunks: no room left in sums");
        return NULL;
      }
      sums[to] = crc >> 24;
      sums[to + 1] = crc >> 16;
      sums[to + 2] = crc >> 8;
      sums[to + 3] = crc;
      done++;
      crc = 0;
      partial = 0;
    }
  }
  s[0] = crc;
  s[1] = (double)partial;
  return number(env, (double)done);
}

static void free_decompressor(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  libdeflate_free_decompressor(data);
}

static napi_value decompressor(napi_env env, napi_callback_info info) {
  (void)info;
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) {
    napi_throw_error(env, "SHERLOCK_NATIVE", "libdeflate: out of memory");
    return NULL;
  }
  napi_value out;
  CHECK(napi_create_external(env, d, free_decompressor, NULL, &out));
  return out;
}

static napi_value decompress(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  void *d, *in, *out, *used;
  size_t in_length, out_length, used_length, in_used = 0, out_used = 0;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(napi_get_value_external(env, argv[0], &d));
  CHECK(bytes(env, argv[1], &in, &in_length));
  CHECK(bytes(env, argv[2], &out, &out_length));
  CHECK(napi_get_typedarray_info(env, argv[3], &type, &used_length, &used, &buffer, &offset));
  if (type != napi_float64_array || used_length < 2) {
    napi_throw_type_error(env, "SHERLOCK_NATIVE", "decompress: a Float64Array of 2 expected");
    return NULL;
  }
  enum libdeflate_result r = libdeflate_deflate_decompress_ex(d, in, in_length, out, out_length, &in_used, &out_used);
  ((double *)used)[0] = (double)in_used;
  ((double *)used)[1] = (double)out_used;
  napi_value result;
  CHECK(napi_create_int32(env, (int32_t)r, &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"compressor", NULL, compressor, NULL, NULL, NULL, napi_default, NULL},
      {"compress", NULL, compress, NULL, NULL, NULL, napi_default, NULL},
      {"bound", NULL, bound, NULL, NULL, NULL, napi_default, NULL},
      {"adler32", NULL, adler32, NULL, NULL, NULL, napi_default, NULL},
      {"crc32Chunks", NULL, crc32_chunks, NULL, NULL, NULL, napi_default, NULL},
      {"decompressor", NULL, decompressor, NULL, NULL, NULL, napi_default, NULL},
      {"decompress", NULL, decompress, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
