// The attention jobs' element types (jobs/attention_common.hpp): --dtype resolved for the
// device, the emulation mark, inputs uploaded in their type, and --dtype fp8's rules for a case
// (jobs/attention_fp8.hpp).
#include "jobs/attention_common.hpp"

#include "kernels/attention_path.hpp"
#include "src/base/error.hpp"
#include "src/base/results_schema.hpp"

namespace ringscale::jobs {

kernels::elem resolve_attention_dtype(const std::string& text, device_kind device) {
    const bool cuda = device == device_kind::cuda;
    if (text == "auto")
        return cuda ? kernels::elem::bf16 : kernels::elem::f32;
    const kernels::elem e = kernels::parse_elem(text);
    // The CPU takes every type: bf16 and fp16 emulated (kernels/cpu/attention_cpu.hpp).
    if (cuda && e == kernels::elem::f32)
        throw config_error("--dtype fp32 with --device cuda: the CUDA attention kernels take bf16 "
                           "or fp16 inputs (fp32 accumulation); use --dtype bf16 or fp16");
    if (!cuda && e == kernels::elem::e4m3) // cuDNN's alone (the rest: check_fp8_case)
        throw config_error(fp8_attention_problem({device, kernels::attn_path::automatic}));
    return e;
}

void add_dtype_emulation(attr_map& a, kernels::elem type, device_kind device) {
    if (type != kernels::elem::f32 && device == device_kind::cpu)
        a[schema::attr::dtype_emulation] = std::string("emulated");
}

kernels::dev_buffer<unsigned char> upload_as(kernels::executor& dev, kernels::elem type,
                                             const std::vector<float>& values, float scale) {
    kernels::dev_buffer<unsigned char> out(dev, values.size() * kernels::elem_bytes(type));
    if (type == kernels::elem::e4m3) { // scaled: encoded here (s·x is an E4M3 value again)
        std::vector<float> scaled(values);
        for (float& x : scaled)
            x *= scale;
        std::vector<unsigned char> bits(values.size());
        kernels::elem_encode(type, scaled.data(), bits.data(), bits.size());
        out.upload(bits.data(), bits.size());
        return out;
    }
    if (type == kernels::elem::f32) {
        out.upload(reinterpret_cast<const unsigned char*>(values.data()), out.size());
        return out;
    }
    const kernels::dev_buffer<float> staged(dev, values);
    kernels::convert(dev, type, values.size(), staged.data(), out.data());
    dev.synchronize();
    return out;
}

void check_fp8_case(const params& p, const launch_info& launch) {
    fp8_attention_request r;
    r.device = launch.device;
    r.kernel = kernels::attention_path();
    r.backward = p.has("pass") && p.text("pass") == "fwd+bwd";
    if (p.has("head-dim"))
        r.head_dim = static_cast<std::int64_t>(p.size("head-dim"));
    r.merge_in_dtype = p.has("merge") && p.text("merge") == "dtype";
    r.accuracy = launch.accuracy == accuracy_mode::on;
    r.cc_major = launch.gpu_cc_major;
    r.cc_minor = launch.gpu_cc_minor;
    if (const std::string why = fp8_attention_problem(r); !why.empty())
        throw config_error(why);
}

} // namespace ringscale::jobs
