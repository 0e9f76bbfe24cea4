// Whether this process can use Intel AMX tiles (Advanced Matrix Extensions: 8 tile registers
// of up to 16 rows x 64 bytes, TDPBF16PS / TDPBSUD products into f32 / int32 tiles), for the
// kernels that have an AMX path (ops/matmul_bf16_activations.h, ops/matmul_q8_activations.h).
//
// AMX needs the CPU's features (CPUID.(7,0):EDX bit 24 AMX-TILE, 22 AMX-BF16, 25 AMX-INT8), the
// tile state enabled by the OS (XCR0 bits 17-18) and, on Linux, the process's permission to use
// the tile data (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, asked once). Without all
// of them the tile instructions fault, so the kernels take their AVX-512 paths. The first call
// also runs a tile instruction in a forked child (a host may report all of it and still fault);
// CORTIQ_DISABLE_AMX=1 in the environment turns AMX off.
#ifndef CORTIQ_OPS_AMX_H_
#define CORTIQ_OPS_AMX_H_

#include <stdint.h>

namespace cortiq {
namespace ops {

// The 64-byte operand of LDTILECFG (Intel SDM, "LDTILECFG"), palette 1: tile t has rows[t] rows
// of colsb[t] bytes (at most 16 x 64); unset tiles are unused (0 x 0).
struct alignas(64) AmxTileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};

  // Tiles [first, last] of num_rows rows of row_bytes bytes; returns *this.
  AmxTileConfig& Set(int first, int last, uint8_t num_rows, uint16_t row_bytes) {
    for (int t = first; t <= last; ++t) {
      rows[t] = num_rows;
      colsb[t] = row_bytes;
    }
    return *this;
  }
};

// True if the tile instructions of AMX-BF16 (resp. AMX-INT8) can run in this process. The first
// call asks the OS for the permission; later calls return the cached answer.
bool AmxBf16Available();
bool AmxInt8Available();

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_AMX_H_
