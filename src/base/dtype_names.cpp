#include "dtype_names.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::dtypes {

const std::vector<dtype_info>& all() {
    static const std::vector<dtype_info> table = {
        {"float32", "fp32", 0x1p-24, 4},        {"bfloat16", "bf16", 0x1p-8, 2},
        {"float16", "fp16", 0x1p-11, 2},        {"fp8", "fp8", 0x1p-4, 1},
        {"float8_e4m3", "fp8_e4m3", 0x1p-4, 1}, {"float8_e5m2", "fp8_e5m2", 0x1p-3, 1}};
    return table;
}

const dtype_info* find(const std::string& text) {
    for (const dtype_info& d : all())
        if (text == d.name || text == d.short_name)
            return &d;
    return nullptr;
}

const std::vector<std::string>& spellings() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const dtype_info& d : all()) {
            v.emplace_back(d.name);
            if (std::find(v.begin(), v.end(), d.short_name) == v.end())
                v.emplace_back(d.short_name);
        }
        return v;
    }();
    return names;
}

double accuracy_allowance(const dtype_info& d, int p) {
    const double ranks = std::max(p, 1);
    if (d.bytes == 4)
        return 1e-5; // fp32: PyTorch's efficient-attention rtol, flat in P
    if (d.bytes == 2)
        return 1e-3 * ranks; // bf16, fp16: the flash kernels' rtol x world size
    return 1e-3 * ranks * (d.unit_roundoff / 0x1p-8);
}

std::string describe_allowances() {
    std::string s;
    for (const dtype_info& d : all()) {
        if (d.bytes == 2 && std::string(d.short_name) == "fp16")
            continue; // said with bf16
        const double per_p = accuracy_allowance(d, 1);
        const std::string who = d.bytes == 2 ? "bf16 and fp16" : d.short_name;
        s += fmt::format("{}{} {:g}{}", s.empty() ? "" : ", ", who, per_p,
                         d.bytes == 4 ? "" : " x P");
    }
    return s;
}

} // namespace ringscale::dtypes
