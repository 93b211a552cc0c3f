// GGUF's block formats, as the quantised kernels read them (shared by
// quant_simple.cl, quant.cl and quant_embedding.cl).
//
// A weight matrix W is (rows, cols). Each row is cut into nb = cols / 32
// blocks of 32 weights; a block stores one or two float16 numbers and 32
// small integer codes q. netcl_lite/core/quantized.py keeps a block's
// bytes on the device, split into two buffers of the file's own bytes:
//
//   format  scales (half)         quants (bytes)          weight c of a block
//   Q4_0    (rows, nb)     d      (rows, nb, 16) 4-bit q   d * (q - 8)
//   Q4_1    (rows, nb, 2)  d, m   (rows, nb, 16) 4-bit q   d * q + m
//   Q8_0    (rows, nb)     d      (rows, nb, 32) int8 q    d * q
//   F16     (unused)              (rows, cols) halves      the half itself
//
// A 4-bit block packs two codes a byte: byte j holds weight j in its low
// nibble and weight j + 16 in its high nibble (llama.cpp's order). For F16
// the kernels are handed the quants buffer twice and ignore `scales`.
//
// `half` appears only as a pointer type here: OpenCL C reads and writes
// halves (vload_half) on every device, whereas arithmetic on half needs
// the cl_khr_fp16 extension, which PoCL's CPU device does not have.
#ifndef QUANT_FORMAT_CL
#define QUANT_FORMAT_CL

#define QUANT_Q4_0 0   // the format codes (core/quantized.py: FORMATS)
#define QUANT_Q4_1 1
#define QUANT_Q8_0 2
#define QUANT_F16 3

// Weight (r, c) of W, decoded from its block: the reference every fast
// kernel is tested against. Each product is rounded before the sum, as
// gguf's numpy dequantiser rounds it, so the values match it bit for bit
// (a fused multiply-add, which clang would otherwise form from d * q + m,
// rounds once).
inline float quant_weight(const int qtype, __global const half *scales,
                          __global const uchar *quants, const int r,
                          const int c, const int cols) {
#pragma OPENCL FP_CONTRACT OFF
    int nb = cols / 32;
    long blk = (long)r * nb + c / 32;          // the block, in row-major order
    int j = c % 32;                            // the weight within it
    if (qtype == QUANT_F16)
        return vload_half((long)r * cols + c, (__global const half *)quants);
    if (qtype == QUANT_Q8_0)
        return vload_half(blk, scales) *
               (float)((__global const char *)quants)[blk * 32 + j];
    uchar byte = quants[blk * 16 + j % 16];
    int q = j < 16 ? byte & 15 : byte >> 4;
    if (qtype == QUANT_Q4_0)
        return vload_half(blk, scales) * (float)(q - 8);
    float dq = vload_half(2 * blk, scales) * (float)q;   // Q4_1
    return dq + vload_half(2 * blk + 1, scales);
}

#endif
