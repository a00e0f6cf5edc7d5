// An emulated Hopper shared memory for the GPU-free tests of the sm90 attention kernels'
// operand layouts (test_cuda_attention_fwd_sm90_plan, test_cuda_attention_bwd_sm90_plan): the
// 128-byte swizzle (16-byte chunk c of a 128-byte row r is stored at chunk c ^ r % 8, on addresses
// from a 1024-byte aligned base), TMA box writes, and reads through the wgmma canonical operand
// layouts (PTX ISA, "Shared Memory Matrix Layout", 128B swizzle; K-major
// ((8,m),(T,2k)):((8T,SBO),(1,T)): row m at (m % 8) * 128 + (m / 8) * SBO; MN-major
// ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): index mn at (mn % 64) * 2 + (mn / 64) * LBO, k-row k
// at (k % 8) * 128 + (k / 8) * SBO; SBO = 1024). It checks our arithmetic against the
// documented layouts, not the hardware: a GPU run is still the proof.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringscale::test_sm90 {

struct smem_emu {
    std::vector<std::uint16_t> half_words;
    explicit smem_emu(int bytes) : half_words(static_cast<std::size_t>(bytes) / 2, 0) {}
    static int swz(int addr) { return addr ^ (((addr >> 7) & 7) << 4); }
    void write(int addr, std::uint16_t v) {
        half_words[static_cast<std::size_t>(swz(addr) / 2)] = v;
    }
    std::uint16_t read(int addr) const {
        return half_words[static_cast<std::size_t>(swz(addr) / 2)];
    }
    std::uint16_t k_major(int start, int m, int k) const {
        return read(start + (m % 8) * 128 + (m / 8) * 1024 + 2 * k);
    }
    std::uint16_t mn_major(int start, int lbo, int mn, int k) const {
        return read(start + (mn % 64) * 2 + (mn / 64) * lbo + (k % 8) * 128 + (k / 8) * 1024);
    }
};

/// A [rows][cols] tensor (one batch * head) whose element (r, c) is tagged
/// r * 256 + c + 1 + seed; rows past `valid` read 0, as TMA fills them.
struct tagged {
    int valid, seed;
    std::uint16_t at(int r, int c) const {
        return r < valid ? static_cast<std::uint16_t>((r * 256 + c + 1 + seed) & 0xFFFF) : 0;
    }
};

/// TMA: the box of 64 columns from col0 and box_rows rows from row0 of `t` into dst, swizzled.
inline void tma_box(smem_emu& sm, int dst, const tagged& t, int col0, int row0, int box_rows) {
    for (int r = 0; r < box_rows; ++r)
        for (int c = 0; c < 64; ++c)
            sm.write(dst + r * 128 + 2 * c, t.at(row0 + r, col0 + c));
}

} // namespace ringscale::test_sm90
